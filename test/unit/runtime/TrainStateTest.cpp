//===- TrainStateTest.cpp - Seeds, data order and run state ---------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/TrainState.h"
#include "TestUtil.h"
#include "runtime/Params.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>

using namespace tfc::rt;
using tfc::rt::test::readText;
using tfc::rt::test::TempDir;
using tfc::rt::test::writeText;

namespace {

TEST(TrainState, SeedsPerStep) {
  // Deterministic, different per step and per run seed, non-negative.
  std::set<int64_t> seen;
  for (int64_t step = 1; step <= 1000; ++step) {
    int64_t s = dropoutSeed(7, step);
    EXPECT_GE(s, 0);
    EXPECT_EQ(s, dropoutSeed(7, step));
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_NE(dropoutSeed(7, 1), dropoutSeed(8, 1));
  EXPECT_NE(redrawSeed(7, 1), redrawSeed(7, 2));
  EXPECT_NE(redrawSeed(7, 1), 7u);
}

TEST(TrainState, RedrawSchedule) {
  // Interval 3: before steps 4, 7, 10, ... (after 3, 6, 9 updates).
  std::vector<int64_t> steps;
  for (int64_t t = 1; t <= 10; ++t)
    if (redrawBefore(t, 3))
      steps.push_back(t);
  EXPECT_EQ(steps, (std::vector<int64_t>{4, 7, 10}));
  EXPECT_FALSE(redrawBefore(1, 1));
  EXPECT_TRUE(redrawBefore(2, 1));
  EXPECT_FALSE(redrawBefore(5, 0));
}

TEST(TrainState, RedrawFeaturesTouchesOnlyFeatureBuffers) {
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest("tfc-manifest 1\nmodel x\ntask lm\nbatch 1\n"
                            "seq_len 4\nd_model 4\nlayers 1\nheads 1\n"
                            "params 48\n"
                            "tensor w 0 param normal:1 1 16\n"
                            "tensor f 16 buffer features:8:4 2 8 4\nend\n",
                            m, err))
      << err;
  std::vector<float> params(48), before;
  initParams(m, params.data(), 5);
  before = params;
  EXPECT_EQ(redrawFeatures(m, params.data(), redrawSeed(5, 1)), 1);
  EXPECT_TRUE(std::equal(params.begin(), params.begin() + 16, before.begin()));
  EXPECT_FALSE(
      std::equal(params.begin() + 16, params.end(), before.begin() + 16));
  // The same draw gives the same features.
  std::vector<float> again = before;
  redrawFeatures(m, again.data(), redrawSeed(5, 1));
  EXPECT_EQ(again, params);
}

TEST(TrainState, PermutationsAndEpochs) {
  std::vector<int64_t> a, b;
  epochOrder(100, 1, 0, a);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i)
    EXPECT_EQ(sorted[size_t(i)], i);
  epochOrder(100, 1, 1, b);
  EXPECT_NE(a, b); // Another epoch, another order.
  epochOrder(100, 1, 0, b);
  EXPECT_EQ(a, b);
  epochOrder(100, 2, 0, b);
  EXPECT_NE(a, b);

  // The sampler walks epochs: 10 lines, batch 4, steps 1..5 cover 20
  // positions = epochs 0 and 1, each a permutation.
  EpochSampler sampler(10, 1);
  std::vector<int64_t> rows, all;
  for (int64_t t = 1; t <= 5; ++t) {
    sampler.batch(t, 4, rows);
    all.insert(all.end(), rows.begin(), rows.end());
  }
  std::vector<int64_t> e0, e1;
  epochOrder(10, 1, 0, e0);
  epochOrder(10, 1, 1, e1);
  EXPECT_TRUE(std::equal(e0.begin(), e0.end(), all.begin()));
  EXPECT_TRUE(std::equal(e1.begin(), e1.end(), all.begin() + 10));
  // Random access gives the same batch as walking there (resume).
  EpochSampler fresh(10, 1);
  fresh.batch(5, 4, rows);
  EXPECT_TRUE(std::equal(rows.begin(), rows.end(), all.begin() + 16));
}

TEST(TrainState, Holdout) {
  std::vector<int64_t> train, val;
  holdoutSplit(4000, 0.1, train, val);
  EXPECT_EQ(val.size(), 400u);
  EXPECT_EQ(train.size(), 3600u);
  EXPECT_TRUE(std::is_sorted(val.begin(), val.end()));
  EXPECT_TRUE(std::is_sorted(train.begin(), train.end()));
  std::vector<int64_t> all = train;
  all.insert(all.end(), val.begin(), val.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), 4000u);
  // Not simply the tail of the file.
  EXPECT_LT(val.front(), 3600);
  // At least one line each way; none for fraction 0.
  holdoutSplit(3, 0.01, train, val);
  EXPECT_EQ(val.size(), 1u);
  holdoutSplit(3, 0.99, train, val);
  EXPECT_EQ(train.size(), 1u);
  holdoutSplit(5, 0, train, val);
  EXPECT_TRUE(val.empty());
  EXPECT_EQ(train.size(), 5u);
}

/// A model of one tensor of 4 floats.
Manifest oneTensorManifest() {
  Manifest m;
  std::string err;
  EXPECT_TRUE(parseManifest("tfc-manifest 1\nmodel x\ntask lm\nbatch 1\n"
                            "seq_len 4\nd_model 4\nlayers 1\nheads 1\n"
                            "params 4\ntensor w 0 param zeros 1 4\nend\n",
                            m, err))
      << err;
  return m;
}

TEST(TrainState, MetadataRoundTrip) {
  TempDir dir;
  Manifest m = oneTensorManifest();
  std::string err;
  TrainState s;
  s.step = 120;
  s.totalSteps = 5000;
  s.lr = 3e-4;
  s.seed = UINT64_MAX;
  s.hasBest = true;
  s.bestValLoss = 1.0 / 3.0;
  s.bestStep = 100;
  s.badEvals = 2;
  s.tokens = 491520;
  s.dataTrain = "/data/train file.txt";
  s.evalEvery = 250;
  s.testBatches = 8;
  s.patience = 0;
  float w[4] = {1, 2, 3, 4};
  std::string path = dir.file("ckpt.safetensors");
  ASSERT_TRUE(saveCheckpoint(path, m, w, {}, trainStateMetadata(s), err));
  SafetensorsFile file;
  ASSERT_TRUE(file.open(path, err)) << err;
  TrainState r;
  ASSERT_TRUE(readTrainState(file, r, err)) << err;
  EXPECT_EQ(r.step, 120);
  EXPECT_EQ(r.totalSteps, 5000);
  EXPECT_EQ(r.lr, 3e-4);
  EXPECT_EQ(r.seed, UINT64_MAX);
  EXPECT_TRUE(r.hasBest);
  EXPECT_EQ(r.bestValLoss, 1.0 / 3.0); // Exact.
  EXPECT_EQ(r.bestStep, 100);
  EXPECT_EQ(r.badEvals, 2);
  EXPECT_EQ(r.tokens, 491520);
  EXPECT_EQ(r.dataTrain, "/data/train file.txt");
  EXPECT_EQ(r.dataVal, "");
  EXPECT_EQ(r.evalEvery, 250);
  EXPECT_EQ(r.evalBatches, -1);
  EXPECT_EQ(r.testBatches, 8);
  EXPECT_EQ(r.patience, 0);

  // Weights only: not a training checkpoint.
  std::string weights = dir.file("w.safetensors");
  ASSERT_TRUE(saveCheckpoint(weights, m, w, {}, {}, err));
  SafetensorsFile plain;
  ASSERT_TRUE(plain.open(weights, err));
  EXPECT_FALSE(readTrainState(plain, r, err));
  EXPECT_EQ(err, weights + ": not a training checkpoint (no tfc.step in its "
                           "metadata); to start from these weights use "
                           "--weights");
}

TEST(TrainState, BadMetadataSaysWhatAndWhy) {
  TempDir dir;
  Manifest m = oneTensorManifest();
  std::string err;
  float w[4] = {1, 2, 3, 4};
  TrainState s;
  s.step = 4;
  s.bestStep = 2;
  /// The error of reading back `s`'s metadata with `key` set to `value`.
  auto readError = [&](const std::string &key, const std::string &value) {
    Metadata metadata = trainStateMetadata(s);
    for (auto &[k, v] : metadata)
      if (k == key)
        v = value;
    std::string path = dir.file("bad.safetensors");
    EXPECT_TRUE(saveCheckpoint(path, m, w, {}, metadata, err)) << err;
    SafetensorsFile file;
    EXPECT_TRUE(file.open(path, err)) << err;
    TrainState r;
    EXPECT_FALSE(readTrainState(file, r, err));
    return err.substr(path.size());
  };
  EXPECT_EQ(readError("tfc.bad_evals", "lots"),
            ": bad training state: metadata 'tfc.bad_evals' is 'lots', "
            "expected a non-negative integer");
  // The best weights cannot come from a step after the checkpoint's.
  EXPECT_EQ(readError("tfc.best_step", "100"),
            ": bad training state: metadata 'tfc.best_step' is '100', "
            "expected at most tfc.step (4)");
}

TEST(TrainState, MetricsLogTruncation) {
  TempDir dir;
  std::string path = dir.file("metrics.jsonl");
  LossHistory h;
  std::string err;
  // A missing log is an empty one.
  ASSERT_TRUE(truncateMetricsLog(path, 5, h, err)) << err;
  EXPECT_TRUE(h.train.empty());
  writeText(path, "{\"step\":1,\"loss\":3}\n"
                  "{\"step\":2,\"loss\":2.5,\"val\":{\"loss\":2.75}}\n"
                  "{\"step\":2,\"event\":\"interrupted\"}\n"
                  "{\"step\":3,\"loss\":2}\n"
                  "{\"step\":3,\"test\":{\"loss\":1}}\n"
                  "{\"step\":4,\"loss\":1.5}\n"
                  "{\"step\":5,\"lo"); // Cut short by a kill.
  ASSERT_TRUE(truncateMetricsLog(path, 3, h, err)) << err;
  // The event stays (it records how the earlier run went); the test goes.
  EXPECT_EQ(readText(path),
            "{\"step\":1,\"loss\":3}\n"
            "{\"step\":2,\"loss\":2.5,\"val\":{\"loss\":2.75}}\n"
            "{\"step\":2,\"event\":\"interrupted\"}\n"
            "{\"step\":3,\"loss\":2}\n");
  ASSERT_EQ(h.train.size(), 3u);
  EXPECT_EQ(h.train[2].step, 3);
  EXPECT_EQ(h.train[2].loss, 2.0);
  ASSERT_EQ(h.val.size(), 1u);
  EXPECT_EQ(h.val[0].step, 2);
  EXPECT_EQ(h.val[0].loss, 2.75);
}

} // namespace
