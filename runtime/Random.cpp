//===- Random.cpp - Counter-based random numbers --------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Random.h"

#include <cmath>

namespace tfc::rt {

void philox4x32(const uint32_t counter[4], const uint32_t key[2],
                uint32_t out[4]) {
  const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  const uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(M0) * c0;
    uint64_t p1 = uint64_t(M1) * c2;
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += W0;
    k1 += W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

uint64_t streamId(const std::string &name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t mixStream(uint64_t a, uint64_t b) {
  uint64_t z = a ^ ((b << 29) | (b >> 35));
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The two 64-bit words of Philox block `block`.
static void block64(uint64_t seed, uint64_t stream, uint64_t block,
                    uint64_t words[2]) {
  uint32_t counter[4] = {uint32_t(block), uint32_t(block >> 32),
                         uint32_t(stream), uint32_t(stream >> 32)};
  uint32_t key[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  uint32_t x[4];
  philox4x32(counter, key, x);
  words[0] = uint64_t(x[0]) | (uint64_t(x[1]) << 32);
  words[1] = uint64_t(x[2]) | (uint64_t(x[3]) << 32);
}

static double toUnit(uint64_t bits) {
  return (double(bits >> 11) + 0.5) * 0x1.0p-53;
}

uint64_t randomBits(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t words[2];
  block64(seed, stream, index / 2, words);
  return words[index % 2];
}

double uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  return toUnit(randomBits(seed, stream, index));
}

/// Both uniform numbers in (0, 1) of pair `pair`.
static void unitPair(uint64_t seed, uint64_t stream, uint64_t pair,
                     double u[2]) {
  uint64_t words[2];
  block64(seed, stream, pair, words);
  u[0] = toUnit(words[0]);
  u[1] = toUnit(words[1]);
}

/// Both Box–Muller outputs of pair `pair`.
static void normalPair(uint64_t seed, uint64_t stream, uint64_t pair,
                       double z[2]) {
  double u[2];
  unitPair(seed, stream, pair, u);
  double r = std::sqrt(-2.0 * std::log(u[0]));
  double theta = 2.0 * M_PI * u[1];
  z[0] = r * std::cos(theta);
  z[1] = r * std::sin(theta);
}

double normal(uint64_t seed, uint64_t stream, uint64_t index) {
  double z[2];
  normalPair(seed, stream, index / 2, z);
  return z[index % 2];
}

uint64_t uniformInt(uint64_t seed, uint64_t stream, uint64_t index,
                    uint64_t n) {
  unsigned __int128 wide =
      (unsigned __int128)randomBits(seed, stream, index) * n;
  return uint64_t(wide >> 64);
}

/// Fills dst[0, n) with `offset + scale * x` for the values x of indices
/// first .. first + n - 1 of a stream whose values come in pairs:
/// `pairValues(seed, stream, pair, values)` gives both values of pair
/// `pair`, and both are used where both fall inside the range.
static void fillFromPairs(float *dst, int64_t n, uint64_t seed, uint64_t stream,
                          uint64_t first,
                          void (*pairValues)(uint64_t, uint64_t, uint64_t,
                                             double[2]),
                          double offset, double scale) {
  int64_t k = 0;
  while (k < n) {
    uint64_t index = first + uint64_t(k);
    double values[2];
    pairValues(seed, stream, index / 2, values);
    for (uint64_t j = index % 2; j < 2 && k < n; ++j, ++k)
      dst[k] = float(offset + scale * values[j]);
  }
}

void fillNormal(float *dst, int64_t n, uint64_t seed, uint64_t stream,
                uint64_t first, double mean, double stddev) {
  fillFromPairs(dst, n, seed, stream, first, normalPair, mean, stddev);
}

void fillUniform(float *dst, int64_t n, uint64_t seed, uint64_t stream,
                 uint64_t first, double lo, double hi) {
  fillFromPairs(dst, n, seed, stream, first, unitPair, lo, hi - lo);
}

} // namespace tfc::rt
