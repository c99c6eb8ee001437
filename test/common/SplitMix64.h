//===- SplitMix64.h - The generator of the numerical tests ------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// SplitMix64, the generator behind the random weights and inputs of the
/// gradient check (test/gradcheck/GradCheck.cpp) and of the float64
/// reference (test/numerics/Reference.cpp): small and deterministic, so that
/// a seed gives the same values with every C++ library. Each tool derives
/// its own real-valued draws from it.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_TEST_COMMON_SPLITMIX64_H
#define TFC_TEST_COMMON_SPLITMIX64_H

#include <cstdint>

namespace tfc::test {

/// SplitMix64 (Steele, Lea and Flood 2014) over a state seeded with
/// `seed * golden + 1`.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed)
      : state(seed * 0x9E3779B97F4A7C15ull + 1) {}

  /// The next 64 random bits.
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  /// Uniform integer in [0, n).
  int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }

private:
  uint64_t state;
};

} // namespace tfc::test

#endif // TFC_TEST_COMMON_SPLITMIX64_H
