//===- Params.cpp - The flat parameter buffer and its initialisation -----===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Params.h"
#include "runtime/Random.h"
#include "runtime/Support.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sys/mman.h>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace tfc::rt {

static const size_t kHugePage = size_t(2) << 20;

FloatBuffer::~FloatBuffer() { release(); }

FloatBuffer::FloatBuffer(FloatBuffer &&other) noexcept {
  *this = std::move(other);
}

FloatBuffer &FloatBuffer::operator=(FloatBuffer &&other) noexcept {
  if (this != &other) {
    release();
    mapping_ = other.mapping_;
    mappedBytes_ = other.mappedBytes_;
    data_ = other.data_;
    count_ = other.count_;
    other.mapping_ = nullptr;
    other.mappedBytes_ = 0;
    other.data_ = nullptr;
    other.count_ = 0;
  }
  return *this;
}

void FloatBuffer::release() {
  if (mapping_)
    munmap(mapping_, mappedBytes_);
  mapping_ = nullptr;
  mappedBytes_ = 0;
  data_ = nullptr;
  count_ = 0;
}

bool FloatBuffer::allocate(int64_t count, const std::string &what,
                           std::string &err) {
  release();
  if (count < 0 || uint64_t(count) > (uint64_t(1) << 60) / sizeof(float)) {
    err = format("%s: cannot allocate %lld floats", what.c_str(),
                 (long long)count);
    return false;
  }
  size_t bytes = std::max<size_t>(size_t(count) * sizeof(float), 1);
  bool huge = bytes >= kHugePage;
  size_t alignment = huge ? kHugePage : 0;
  size_t mapped = bytes + alignment;
  void *mapping = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    err = format("%s: cannot allocate %zu bytes: %s", what.c_str(), bytes,
                 strerror(errno));
    return false;
  }
  uintptr_t start = reinterpret_cast<uintptr_t>(mapping);
  if (huge)
    start = (start + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  // Both advices are hints; older kernels refuse them and nothing is lost.
  if (huge)
    madvise(reinterpret_cast<void *>(start), bytes, MADV_HUGEPAGE);
  madvise(reinterpret_cast<void *>(start), bytes, MADV_POPULATE_WRITE);
  mapping_ = mapping;
  mappedBytes_ = mapped;
  data_ = reinterpret_cast<float *>(start);
  count_ = count;
  return true;
}

void orthogonalFeatures(float *dst, int64_t rows, int64_t cols, uint64_t seed,
                        uint64_t stream, int64_t slab) {
  const int64_t d = cols;
  const int64_t blocks = (rows + d - 1) / d;
  const uint64_t normStream = mixStream(stream, 1);
  std::vector<double> q(size_t(d * d));
  for (int64_t b = 0; b < blocks; ++b) {
    // A d x d Gaussian block, row-major.
    uint64_t first = uint64_t((slab * blocks + b) * d * d);
    for (int64_t k = 0; k < d * d; ++k)
      q[size_t(k)] = normal(seed, stream, first + uint64_t(k));
    // Modified Gram–Schmidt over the rows, twice for orthogonality to
    // rounding precision.
    for (int64_t r = 0; r < d; ++r) {
      double *v = &q[size_t(r * d)];
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t k = 0; k < r; ++k) {
          const double *u = &q[size_t(k * d)];
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += v[c] * u[c];
          for (int64_t c = 0; c < d; ++c)
            v[c] -= dot * u[c];
        }
      }
      double norm = 0;
      for (int64_t c = 0; c < d; ++c)
        norm += v[c] * v[c];
      norm = std::sqrt(norm);
      for (int64_t c = 0; c < d; ++c)
        v[c] = norm > 0 ? v[c] / norm : 0.0;
    }
    // Rows of this block, each scaled to the norm of a fresh N(0, I_d).
    for (int64_t r = 0; r < d && b * d + r < rows; ++r) {
      int64_t row = b * d + r;
      uint64_t normFirst = uint64_t((slab * rows + row) * d);
      double scale = 0;
      for (int64_t c = 0; c < d; ++c) {
        double z = normal(seed, normStream, normFirst + uint64_t(c));
        scale += z * z;
      }
      scale = std::sqrt(scale);
      for (int64_t c = 0; c < d; ++c)
        dst[row * d + c] = float(scale * q[size_t(r * d + c)]);
    }
  }
}

/// Runs fill(begin, end) over [0, n) on a few threads when n is large. The
/// result does not depend on the split: every element is a pure function of
/// its index.
template <typename Fill>
static void parallelFill(int64_t n, Fill fill) {
  const int64_t minPerThread = int64_t(1) << 20;
  int64_t threads =
      std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), 16);
  threads = std::max<int64_t>(1, std::min(threads, n / minPerThread));
  if (threads == 1) {
    fill(0, n);
    return;
  }
  std::vector<std::thread> pool;
  int64_t chunk = (n + threads - 1) / threads;
  chunk += chunk % 2; // Keep Box–Muller pairs whole.
  for (int64_t begin = 0; begin < n; begin += chunk)
    pool.emplace_back(fill, begin, std::min(n, begin + chunk));
  for (std::thread &t : pool)
    t.join();
}

void initTensor(const TensorInfo &tensor, float *params, uint64_t seed) {
  float *dst = params + tensor.offset;
  const int64_t n = tensor.count;
  const uint64_t stream = streamId(tensor.name);
  const TensorInit &init = tensor.init;
  switch (init.kind) {
  case InitKind::Zeros:
    std::fill(dst, dst + n, 0.0f);
    break;
  case InitKind::Ones:
    std::fill(dst, dst + n, 1.0f);
    break;
  case InitKind::Normal:
    parallelFill(n, [&](int64_t begin, int64_t end) {
      fillNormal(dst + begin, end - begin, seed, stream, uint64_t(begin), 0.0,
                 init.scale);
    });
    break;
  case InitKind::Uniform:
    parallelFill(n, [&](int64_t begin, int64_t end) {
      fillUniform(dst + begin, end - begin, seed, stream, uint64_t(begin),
                  -init.scale, init.scale);
    });
    break;
  case InitKind::Features: {
    int64_t slabSize = init.featureRows * init.featureCols;
    for (int64_t s = 0; s < n / slabSize; ++s)
      orthogonalFeatures(dst + s * slabSize, init.featureRows, init.featureCols,
                         seed, stream, s);
    break;
  }
  }
}

void initParams(const Manifest &manifest, float *params, uint64_t seed) {
  for (const TensorInfo &t : manifest.tensors)
    initTensor(t, params, seed);
}

} // namespace tfc::rt
