//===- Params.h - The flat parameter buffer and its init --------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One flat float buffer holds every tensor of the model at the offsets the
/// manifest gives (the same layout serves later for gradients and Adam's m
/// and v). Initialisation is seeded and counter-based (see Random.h): a
/// tensor's values depend only on (seed, tensor name, element index).
///
/// Init schemes:
///   normal:<std>       N(0, std^2)
///   uniform:<a>        U(-a, a)
///   zeros, ones
///   features:<M>:<d>   Performer FAVOR+ positive orthogonal random features
///                      (Choromanski et al. 2021, "Rethinking attention with
///                      Performers"): an M x d matrix whose rows come in
///                      blocks of d mutually orthogonal rows; each row is
///                      rescaled to the norm of an independent N(0, I_d)
///                      vector, so row norms follow the chi(d) distribution
///                      as rows of a Gaussian matrix do. A tensor with k*M*d
///                      elements holds k independent such matrices (slabs),
///                      e.g. one per layer.
///
/// Random streams of `features` for tensor `name`, slab s, with
/// B = ceil(M / d) blocks per slab:
///   block Gaussians: stream streamId(name), element (s*B + b)*d*d + r*d + c
///   norm vectors:    stream mixStream(streamId(name), 1),
///                    element (s*M + i)*d + c for row i
/// Each block is orthonormalised by modified Gram–Schmidt over its rows in
/// order, run twice, in double precision; the last block of a slab keeps its
/// first M - (B-1)*d rows.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_PARAMS_H
#define TFC_RUNTIME_PARAMS_H

#include "runtime/Manifest.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tfc::rt {

/// A zero-filled float array in its own anonymous mapping, allocated once.
/// It is page aligned (so 64-byte aligned for vector loads); from 2 MiB up it
/// is 2 MiB aligned and advised for transparent huge pages, and its pages are
/// populated at allocation time (a first touch of a fresh page is slow).
class FloatBuffer {
public:
  FloatBuffer() = default;
  ~FloatBuffer();
  FloatBuffer(const FloatBuffer &) = delete;
  FloatBuffer &operator=(const FloatBuffer &) = delete;
  FloatBuffer(FloatBuffer &&other) noexcept;
  FloatBuffer &operator=(FloatBuffer &&other) noexcept;

  /// Allocates `count` floats, releasing any earlier allocation. `what`
  /// names the buffer in the error message.
  bool allocate(int64_t count, const std::string &what, std::string &err);
  void release();

  float *data() const { return data_; }
  int64_t size() const { return count_; }

private:
  void *mapping_ = nullptr;
  size_t mappedBytes_ = 0;
  float *data_ = nullptr;
  int64_t count_ = 0;
};

/// Fills `rows` x `cols` floats at `dst` with one slab of orthogonal random
/// features (see the file comment), slab index `slab` of stream `stream`.
void orthogonalFeatures(float *dst, int64_t rows, int64_t cols, uint64_t seed,
                        uint64_t stream, int64_t slab);

/// Initialises one tensor inside `params` per its init scheme.
void initTensor(const TensorInfo &tensor, float *params, uint64_t seed);

/// Initialises every tensor of the manifest. Floats not covered by any
/// tensor are left as they are (zero in a fresh FloatBuffer).
void initParams(const Manifest &manifest, float *params, uint64_t seed);

} // namespace tfc::rt

#endif // TFC_RUNTIME_PARAMS_H
