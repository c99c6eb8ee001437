//===- ParamsTest.cpp - Tests of the parameter buffer and init ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Params.h"
#include "runtime/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace tfc::rt;

namespace {

TEST(Params, BufferIsAlignedAndZero) {
  std::string err;
  FloatBuffer small;
  ASSERT_TRUE(small.allocate(1000, "small", err)) << err;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
  EXPECT_EQ(small.size(), 1000);
  for (int64_t i = 0; i < small.size(); ++i)
    ASSERT_EQ(small.data()[i], 0.0f);
  FloatBuffer large;
  ASSERT_TRUE(large.allocate(3 << 20, "large", err)) << err;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % (2 << 20), 0u);
  large.data()[large.size() - 1] = 1.0f; // Writable to the last element.
  FloatBuffer moved = std::move(large);
  EXPECT_EQ(large.data(), nullptr);
  EXPECT_EQ(moved.data()[moved.size() - 1], 1.0f);
  FloatBuffer empty;
  ASSERT_TRUE(empty.allocate(0, "empty", err)) << err;
  EXPECT_NE(empty.data(), nullptr);
  EXPECT_FALSE(empty.allocate(-1, "negative", err));
  EXPECT_EQ(err, "negative: cannot allocate -1 floats");
}

TensorInfo tensor(const std::string &name, int64_t offset, InitKind kind,
                  double scale, std::vector<int64_t> shape) {
  TensorInfo t;
  t.name = name;
  t.offset = offset;
  t.init.kind = kind;
  t.init.scale = scale;
  t.shape = shape;
  t.count = 1;
  for (int64_t d : shape)
    t.count *= d;
  return t;
}

TEST(Params, InitIsDeterministicAndDependsOnNameNotOffset) {
  Manifest m;
  m.params = 3000;
  m.tensors.push_back(tensor("a", 0, InitKind::Normal, 0.02, {10, 100}));
  m.tensors.push_back(tensor("b", 1000, InitKind::Normal, 0.02, {10, 100}));
  std::vector<float> p1(3000), p2(3000), p3(3000);
  initParams(m, p1.data(), 7);
  initParams(m, p2.data(), 7);
  initParams(m, p3.data(), 8);
  EXPECT_EQ(0, memcmp(p1.data(), p2.data(), p1.size() * sizeof(float)));
  EXPECT_NE(0, memcmp(p1.data(), p3.data(), 1000 * sizeof(float)));
  // Different names, different values.
  EXPECT_NE(0, memcmp(p1.data(), p1.data() + 1000, 1000 * sizeof(float)));
  // The same tensor moved elsewhere keeps its values.
  Manifest moved;
  moved.params = 3000;
  moved.tensors.push_back(tensor("a", 2000, InitKind::Normal, 0.02, {10, 100}));
  initParams(moved, p3.data(), 7);
  EXPECT_EQ(0, memcmp(p1.data(), p3.data() + 2000, 1000 * sizeof(float)));
}

TEST(Params, LargeTensorsGiveTheSameValuesWhateverTheThreads) {
  // Above 1M elements init runs on several threads; the values must equal
  // the element-wise definition.
  const int64_t n = (int64_t(1) << 21) + 3;
  std::vector<float> p(static_cast<size_t>(n));
  TensorInfo t = tensor("big", 0, InitKind::Normal, 0.5, {n});
  initTensor(t, p.data(), 11);
  for (int64_t i :
       {int64_t(0), int64_t(1), n / 2 - 1, n / 2, n / 2 + 1, n - 2, n - 1})
    EXPECT_EQ(p[size_t(i)], float(0.5 * normal(11, streamId("big"), i)));
}

TEST(Params, SimpleSchemes) {
  std::vector<float> p(400, -7.0f);
  initTensor(tensor("z", 0, InitKind::Zeros, 0, {100}), p.data(), 1);
  initTensor(tensor("o", 100, InitKind::Ones, 0, {100}), p.data(), 1);
  initTensor(tensor("u", 200, InitKind::Uniform, 0.25, {200}), p.data(), 1);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(p[size_t(i)], 0.0f);
    EXPECT_EQ(p[size_t(100 + i)], 1.0f);
  }
  double sum = 0;
  for (int i = 200; i < 400; ++i) {
    EXPECT_GE(p[size_t(i)], -0.25f);
    EXPECT_LE(p[size_t(i)], 0.25f);
    sum += p[size_t(i)];
  }
  EXPECT_NEAR(sum / 200, 0.0, 0.05);
  // Normal with a given std.
  std::vector<float> q(100000);
  initTensor(tensor("n", 0, InitKind::Normal, 0.02, {100000}), q.data(), 1);
  double sq = 0;
  for (float x : q)
    sq += double(x) * x;
  EXPECT_NEAR(std::sqrt(sq / double(q.size())), 0.02, 0.0005);
}

double dot(const float *a, const float *b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += double(a[i]) * double(b[i]);
  return s;
}

/// Checks one M x d slab of orthogonal random features.
void checkFeatureSlab(const float *w, int64_t rows, int64_t d) {
  for (int64_t i = 0; i < rows; ++i) {
    double ni = std::sqrt(dot(w + i * d, w + i * d, d));
    ASSERT_GT(ni, 0.0) << "row " << i;
    // Rows of the same block of d are orthogonal.
    for (int64_t j = (i / d) * d; j < i; ++j) {
      double nj = std::sqrt(dot(w + j * d, w + j * d, d));
      EXPECT_LT(std::fabs(dot(w + i * d, w + j * d, d) / (ni * nj)), 1e-6)
          << "rows " << i << " and " << j;
    }
  }
}

TEST(Params, FeaturesBlocksAreOrthogonal) {
  // M = 20 rows of d = 8: blocks of 8, 8 and 4 rows; two slabs.
  const int64_t M = 20, d = 8;
  TensorInfo t =
      tensor("layers.0.attn.features", 0, InitKind::Features, 0, {2, M, d});
  t.init.featureRows = M;
  t.init.featureCols = d;
  std::vector<float> w(size_t(t.count));
  initTensor(t, w.data(), 5);
  checkFeatureSlab(w.data(), M, d);
  checkFeatureSlab(w.data() + M * d, M, d);
  // The two slabs are independent draws.
  EXPECT_NE(0, memcmp(w.data(), w.data() + M * d, size_t(M * d) * 4));
  // Rows across blocks are not orthogonal in general (they are independent).
  double n0 = std::sqrt(dot(&w[0], &w[0], d));
  double n8 = std::sqrt(dot(&w[8 * d], &w[8 * d], d));
  EXPECT_GT(std::fabs(dot(&w[0], &w[8 * d], d) / (n0 * n8)), 1e-6);
  // Deterministic.
  std::vector<float> again(size_t(t.count));
  initTensor(t, again.data(), 5);
  EXPECT_EQ(0, memcmp(w.data(), again.data(), w.size() * 4));
}

TEST(Params, FeatureRowNormsFollowChi) {
  // Row norms are norms of N(0, I_d) vectors: mean of chi(d) is
  // sqrt(2) * Gamma((d+1)/2) / Gamma(d/2), about 3.9896 for d = 16.
  const int64_t M = 4096, d = 16;
  std::vector<float> w(size_t(M * d));
  orthogonalFeatures(w.data(), M, d, 3, streamId("f"), 0);
  checkFeatureSlab(w.data(), 64, d);
  double mean = 0;
  for (int64_t i = 0; i < M; ++i)
    mean += std::sqrt(dot(&w[size_t(i * d)], &w[size_t(i * d)], d));
  mean /= double(M);
  double expected = std::sqrt(2.0) *
                    std::exp(std::lgamma((d + 1) / 2.0) - std::lgamma(d / 2.0));
  EXPECT_NEAR(mean, expected, 0.05);
}

TEST(Params, FeaturesWithOneColumn) {
  std::vector<float> w(3);
  orthogonalFeatures(w.data(), 3, 1, 1, 2, 0);
  for (float x : w)
    EXPECT_GT(std::fabs(x), 0.0f);
}

} // namespace
