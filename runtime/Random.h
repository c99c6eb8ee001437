//===- Random.h - Counter-based random numbers ------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// All randomness of the runtime (parameter initialisation, batch sampling)
/// comes from Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random
/// numbers: as easy as 1, 2, 3", SC 2011), a counter-based generator: the
/// value at a position is a pure function of (seed, stream, position), so
/// results do not depend on thread count, call order or machine.
///
/// Definitions (everything else is derived from these):
///
///   block(seed, stream, b) = philox4x32_10(
///       counter = {lo32(b), hi32(b), lo32(stream), hi32(stream)},
///       key     = {lo32(seed), hi32(seed)})            -> x0 x1 x2 x3
///   randomBits(seed, stream, i): 64-bit word i % 2 of block i / 2, where
///       word 0 = x0 | x1 << 32 and word 1 = x2 | x3 << 32
///   uniform01(i) = ((randomBits(i) >> 11) + 0.5) * 2^-53, in (0, 1)
///   normal(i), Box–Muller on the pair p = i / 2:
///       u1 = uniform01(2p), u2 = uniform01(2p + 1), r = sqrt(-2 ln u1)
///       normal(2p) = r cos(2 pi u2), normal(2p + 1) = r sin(2 pi u2)
///   uniformInt(i, n) = (randomBits(i) * n) >> 64, in [0, n)
///
/// The arithmetic is IEEE double with glibc's log/sin/cos, rounded to float
/// at the end, so the same seed gives the same bits on any x86-64 or AArch64
/// Linux machine.
///
/// Streams: a tensor's stream is streamId(tensor name) (FNV-1a, 64-bit), so a
/// tensor's initial values depend on the seed and its name only, not on
/// where it sits in the parameter buffer.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_RANDOM_H
#define TFC_RUNTIME_RANDOM_H

#include <cstdint>
#include <string>

namespace tfc::rt {

/// Philox4x32 with 10 rounds, exactly as Random123's philox4x32_R(10, ...).
void philox4x32(const uint32_t counter[4], const uint32_t key[2],
                uint32_t out[4]);

/// FNV-1a 64-bit hash of `name`, used as a stream id.
uint64_t streamId(const std::string &name);

/// Mixes two 64-bit values (splitmix64 finaliser of a ^ rotated b); used to
/// derive sub-streams, e.g. the normalising vectors of random features.
uint64_t mixStream(uint64_t a, uint64_t b);

uint64_t randomBits(uint64_t seed, uint64_t stream, uint64_t index);
double uniform01(uint64_t seed, uint64_t stream, uint64_t index);
double normal(uint64_t seed, uint64_t stream, uint64_t index);
uint64_t uniformInt(uint64_t seed, uint64_t stream, uint64_t index, uint64_t n);

/// dst[k] = mean + stddev * normal(first + k), k in [0, n).
void fillNormal(float *dst, int64_t n, uint64_t seed, uint64_t stream,
                uint64_t first, double mean, double stddev);

/// dst[k] = lo + (hi - lo) * uniform01(first + k), k in [0, n).
void fillUniform(float *dst, int64_t n, uint64_t seed, uint64_t stream,
                 uint64_t first, double lo, double hi);

} // namespace tfc::rt

#endif // TFC_RUNTIME_RANDOM_H
