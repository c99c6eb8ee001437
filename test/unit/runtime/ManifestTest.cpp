//===- ManifestTest.cpp - Tests of the manifest parser --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Manifest.h"

#include <gtest/gtest.h>

using namespace tfc::rt;

namespace {

const char *kLm = "tfc-manifest 1\n"
                  "model tiny-lm\n"
                  "task lm\n"
                  "vocab 256\n"
                  "batch 2\n"
                  "seq_len 8\n"
                  "d_model 4\n"
                  "layers 1\n"
                  "heads 2\n"
                  "params 1100\n"
                  "flops_per_token 1234.5\n"
                  "activation_bytes 4096\n"
                  "split 0.8 0.1\n"
                  "tensor embed.weight 0 param normal:0.02 2 256 4\n"
                  "tensor layers.0.attn.features 1024 buffer features:8:4 3 "
                  "2 8 4\n"
                  "tensor norm.weight 1088 param ones 1 4\n"
                  "tensor norm.bias 1092 param zeros 1 4\n"
                  "tensor head.scale 1096 param uniform:0.5 0\n"
                  "end\n";

/// kLm with `from` replaced by `to`.
std::string edited(const std::string &from, const std::string &to) {
  std::string text = kLm;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string parseError(const std::string &text) {
  Manifest m;
  std::string err;
  EXPECT_FALSE(parseManifest(text.c_str(), m, err));
  return err;
}

TEST(Manifest, ParsesAllRecords) {
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(kLm, m, err)) << err;
  EXPECT_EQ(m.model, "tiny-lm");
  EXPECT_EQ(m.task, Task::LanguageModel);
  EXPECT_EQ(m.vocab, 256);
  EXPECT_EQ(m.batch, 2);
  EXPECT_EQ(m.seqLen, 8);
  EXPECT_EQ(m.dModel, 4);
  EXPECT_EQ(m.layers, 1);
  EXPECT_EQ(m.heads, 2);
  EXPECT_EQ(m.params, 1100);
  EXPECT_DOUBLE_EQ(m.flopsPerToken, 1234.5);
  EXPECT_EQ(m.activationBytes, 4096);
  EXPECT_DOUBLE_EQ(m.trainFraction, 0.8);
  EXPECT_DOUBLE_EQ(m.valFraction, 0.1);
  EXPECT_EQ(m.minFreq, 1);
  ASSERT_EQ(m.tensors.size(), 5u);
  const TensorInfo *features = m.find("layers.0.attn.features");
  ASSERT_NE(features, nullptr);
  EXPECT_EQ(features->offset, 1024);
  EXPECT_EQ(features->kind, TensorKind::Buffer);
  EXPECT_EQ(features->init.kind, InitKind::Features);
  EXPECT_EQ(features->init.featureRows, 8);
  EXPECT_EQ(features->init.featureCols, 4);
  EXPECT_EQ(features->shape, (std::vector<int64_t>{2, 8, 4}));
  EXPECT_EQ(features->count, 64);
  EXPECT_EQ(m.find("embed.weight")->init.kind, InitKind::Normal);
  EXPECT_DOUBLE_EQ(m.find("embed.weight")->init.scale, 0.02);
  EXPECT_EQ(m.find("embed.weight")->init.text, "normal:0.02");
  EXPECT_EQ(m.find("head.scale")->init.kind, InitKind::Uniform);
  EXPECT_EQ(m.find("head.scale")->count, 1); // Rank 0: a scalar.
  EXPECT_EQ(m.find("nope"), nullptr);
  EXPECT_EQ(m.trainableCount(), 1024 + 4 + 4 + 1);
  EXPECT_EQ(m.outputs, 256);
  EXPECT_EQ(m.logitsCount(), 2 * 8 * 256);
  EXPECT_EQ(m.targetsCount(), 2 * 8);
}

TEST(Manifest, ClassifyNeedsVocabAndClasses) {
  std::string text = edited("task lm\n", "task classify\nclasses 3\n");
  text = text.substr(0, text.find("vocab 256\n")) +
         text.substr(text.find("vocab 256\n") + 10);
  EXPECT_EQ(parseError(text), "manifest:19: a classify model needs 'vocab' and "
                              "'classes'");
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(
      edited("task lm\n", "task classify\nclasses 3\nmin_freq 2\n").c_str(), m,
      err))
      << err;
  EXPECT_EQ(m.classes, 3);
  EXPECT_EQ(m.outputs, 3);
  EXPECT_EQ(m.minFreq, 2);
  EXPECT_EQ(m.logitsCount(), 2 * 3);
  EXPECT_EQ(m.targetsCount(), 2);
  // A binary classifier with one logit.
  ASSERT_TRUE(parseManifest(
      edited("task lm\n", "task classify\nclasses 2\noutputs 1\n").c_str(), m,
      err))
      << err;
  EXPECT_EQ(m.outputs, 1);
  EXPECT_EQ(m.logitsCount(), 2);
  EXPECT_EQ(
      parseError(edited("task lm\n", "task classify\nclasses 3\noutputs 2\n")),
      "manifest:21: 2 outputs for 3 classes (expected one output per "
      "class, or 1 for 2 classes)");
  EXPECT_EQ(parseError(edited("task lm\n", "task classify\nclasses 0\n")),
            "manifest:20: a classify model needs classes >= 1");
  // A language model may carry `classes 0` (ignored) but its outputs are V.
  ASSERT_TRUE(parseManifest(
      edited("task lm\n", "task lm\nclasses 0\noutputs 256\n").c_str(), m, err))
      << err;
  EXPECT_EQ(parseError(edited("task lm\n", "task lm\noutputs 10\n")),
            "manifest:20: a language model has one output per vocabulary "
            "entry: 10 outputs for vocab 256");
}

TEST(Manifest, OptionalAndUnknownRecords) {
  // flops_per_token and activation_bytes may be missing; records this
  // runtime does not know are skipped.
  std::string text = edited("flops_per_token 1234.5\nactivation_bytes 4096\n",
                            "dropout 0.1\nnorm_eps 1e-05\n");
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(text.c_str(), m, err)) << err;
  EXPECT_EQ(m.flopsPerToken, 0.0);
  EXPECT_EQ(m.activationBytes, 0);
  EXPECT_EQ(m.trainActivationBytes, 0);
  EXPECT_EQ(m.tensors.size(), 5u);
}

TEST(Manifest, TrainingWorkingMemory) {
  std::string text =
      edited("activation_bytes 4096\n", "activation_bytes 4096\n"
                                        "train_activation_bytes 12288\n");
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(text.c_str(), m, err)) << err;
  EXPECT_EQ(m.activationBytes, 4096);
  EXPECT_EQ(m.trainActivationBytes, 12288);
  EXPECT_EQ(m.arenaBytes, 0);
  Manifest shared;
  ASSERT_TRUE(parseManifest(edited("activation_bytes 4096\n",
                                   "activation_bytes 4096\n"
                                   "train_activation_bytes 12288\n"
                                   "arena_bytes 12288\n"
                                   "thread_heap_bytes 2048\n")
                                .c_str(),
                            shared, err))
      << err;
  EXPECT_EQ(shared.arenaBytes, 12288);
  EXPECT_EQ(shared.threadHeapBytes, 2048);
  EXPECT_EQ(m.threadHeapBytes, 0);
  EXPECT_EQ(
      parseError(edited("activation_bytes 4096\n", "thread_heap_bytes many\n")),
      "manifest:12: record 'thread_heap_bytes': expected an "
      "integer >= 0, got 'many'");
  EXPECT_EQ(parseError(edited("activation_bytes 4096\n",
                              "train_activation_bytes -1\n")),
            "manifest:12: record 'train_activation_bytes': expected an "
            "integer >= 0, got '-1'");
}

TEST(Manifest, Precision) {
  // Absent: f32; `precision bf16` from a --precision=bf16 build.
  Manifest f32;
  std::string err;
  std::string text = kLm;
  ASSERT_TRUE(parseManifest(text.c_str(), f32, err)) << err;
  EXPECT_EQ(f32.precision, "f32");
  text = edited("params 1100\n", "params 1100\nprecision bf16\n");
  Manifest bf16;
  ASSERT_TRUE(parseManifest(text.c_str(), bf16, err)) << err;
  EXPECT_EQ(bf16.precision, "bf16");
  EXPECT_EQ(parseError(edited("params 1100\n", "params 1100\nprecision fp8\n")),
            "manifest:11: record 'precision': expected f32 or bf16, got 'fp8'");
}

TEST(Manifest, CpuFeatures) {
  // Absent: none needed, and every CPU runs the code.
  Manifest plain;
  std::string err;
  std::string text = kLm;
  ASSERT_TRUE(parseManifest(text.c_str(), plain, err)) << err;
  EXPECT_TRUE(plain.cpuFeatures.empty());
  EXPECT_TRUE(checkCpuFeatures(plain, err)) << err;
  // A bf16 build on vdpbf16ps: checked against this CPU, which may or may
  // not have it; the error names the feature and the way out.
  text = edited("params 1100\n", "params 1100\ncpu_features avx512bf16\n");
  Manifest dot;
  ASSERT_TRUE(parseManifest(text.c_str(), dot, err)) << err;
  ASSERT_EQ(dot.cpuFeatures, std::vector<std::string>{"avx512bf16"});
  err.clear();
  EXPECT_EQ(checkCpuFeatures(dot, err), cpuHasFeature("avx512bf16"));
  if (!cpuHasFeature("avx512bf16"))
    EXPECT_EQ(err.rfind("this CPU lacks avx512bf16, ", 0), 0u) << err;
  EXPECT_EQ(
      parseError(edited("params 1100\n", "params 1100\ncpu_features amx\n")),
      "manifest:11: record 'cpu_features': unknown feature 'amx' "
      "(expected avx512bf16)");
  EXPECT_EQ(parseError(edited("params 1100\n", "params 1100\ncpu_features\n")),
            "manifest:11: record 'cpu_features' takes one or more features");
}

/// kLm with `from` replaced by `to`, and the error it must give.
struct EditError {
  const char *from;
  const char *to;
  const char *error;
};

/// Expects each edit of kLm to fail to parse with its error.
void expectEditErrors(std::initializer_list<EditError> edits) {
  for (const EditError &edit : edits)
    EXPECT_EQ(parseError(edited(edit.from, edit.to)), edit.error)
        << edit.from << " -> " << edit.to;
}

TEST(Manifest, ErrorsNameTheLine) {
  EXPECT_EQ(parseError("model x\n"),
            "manifest:1: expected 'tfc-manifest 1' as the first record");
  expectEditErrors({
      {"tfc-manifest 1", "tfc-manifest 2",
       "manifest:1: unsupported manifest version (this runtime reads "
       "'tfc-manifest 1')"},
      {"batch 2\n", "batch 2\nbatch 3\n",
       "manifest:6: record 'batch' repeats line 5"},
      {"batch 2\n", "batch zero\n",
       "manifest:5: record 'batch': expected an integer >= 1, got 'zero'"},
      {"batch 2\n", "batch 2 3\n", "manifest:5: record 'batch' takes 1 value"},
      {"task lm", "task translate",
       "manifest:3: task 'translate' is not lm or classify"},
      {"end\n", "", "manifest:19: missing 'end' (manifest truncated)"},
      {"d_model 4\n", "", "manifest:18: missing record 'd_model'"},
      {"split 0.8 0.1", "split 0.9 0.2",
       "manifest:13: record 'split': expected <train> <val> fractions with "
       "train > 0, val >= 0, train + val <= 1"},
  });
}

TEST(Manifest, TensorErrors) {
  expectEditErrors({
      {"normal:0.02", "gaussian",
       "manifest:14: tensor 'embed.weight': unknown init 'gaussian' "
       "(expected normal:<std>, zeros, ones, uniform:<a> or "
       "features:<M>:<d>)"},
      {"normal:0.02", "normal:-1",
       "manifest:14: tensor 'embed.weight': init 'normal:-1': expected a "
       "non-negative number after ':'"},
      {"features:8:4", "features:8:0",
       "manifest:15: tensor 'layers.0.attn.features': init 'features:8:0': "
       "expected features:<M>:<d> with M, d >= 1"},
      {"features:8:4 3 2 8 4", "features:8:4 2 3 4",
       "manifest:15: tensor 'layers.0.attn.features': 12 elements is not a "
       "multiple of the 8 x 4 feature matrix"},
      {"param normal:0.02 2 256 4", "param normal:0.02 3 256 4",
       "manifest:14: tensor 'embed.weight': rank 3 but 2 dimensions"},
      {"2 256 4", "2 256 0",
       "manifest:14: tensor 'embed.weight': bad dimension '0'"},
      {"tensor norm.bias 1092 param", "tensor norm.bias 1090 param",
       "manifest:17: tensors 'norm.weight' and 'norm.bias' overlap"},
      {"tensor norm.bias 1092 param", "tensor norm.weight 1092 param",
       "manifest:17: tensor 'norm.weight' listed twice"},
      {"params 1100", "params 1096",
       "manifest:18: tensor 'head.scale' [1096, 1097) runs past the end of "
       "the 1096-float buffer"},
      {"norm.weight 1088 param", "norm.weight 1088 weight",
       "manifest:16: tensor 'norm.weight': kind 'weight' is not param or "
       "buffer"},
  });
}

TEST(Manifest, TrainingRecords) {
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(kLm, m, err)) << err;
  // Defaults when the compiler records none.
  EXPECT_EQ(m.trainSteps, 0);
  EXPECT_EQ(m.evalEvery, 0);
  EXPECT_EQ(m.seed, 0u);
  EXPECT_EQ(m.redraw, 0);
  EXPECT_DOUBLE_EQ(m.holdoutFraction, 0.1);
  EXPECT_EQ(m.dataTrain, "");
  std::string text =
      edited("task lm\n", "task lm\ntrain_steps 2250\neval_every 225\n"
                          "eval_batches 25\ncheckpoint_every 100\npatience 3\n"
                          "seed 18446744073709551615\nredraw 1000\n"
                          "val_fraction 0.2\ndata_train /data/my corpus.txt\n"
                          "data_val -\ndata_test /data/test.txt\n");
  ASSERT_TRUE(parseManifest(text.c_str(), m, err)) << err;
  EXPECT_EQ(m.trainSteps, 2250);
  EXPECT_EQ(m.evalEvery, 225);
  EXPECT_EQ(m.evalBatches, 25);
  EXPECT_EQ(m.checkpointEvery, 100);
  EXPECT_EQ(m.patience, 3);
  EXPECT_EQ(m.seed, UINT64_MAX);
  EXPECT_EQ(m.redraw, 1000);
  EXPECT_DOUBLE_EQ(m.holdoutFraction, 0.2);
  EXPECT_EQ(m.dataTrain, "/data/my corpus.txt"); // Spaces kept.
  EXPECT_EQ(m.dataVal, "");
  EXPECT_EQ(m.dataTest, "/data/test.txt");
  // The compiler writes the seed as a signed integer.
  text = edited("task lm\n", "task lm\nseed -1\n");
  ASSERT_TRUE(parseManifest(text.c_str(), m, err)) << err;
  EXPECT_EQ(m.seed, UINT64_MAX);
  expectEditErrors({
      {"task lm\n", "task lm\npatience -1\n",
       "manifest:4: record 'patience': expected an integer >= 0, got '-1'"},
      {"task lm\n", "task lm\nval_fraction 1\n",
       "manifest:4: record 'val_fraction': expected a number in [0, 1), got "
       "'1'"},
      {"task lm\n", "task lm\ndata_train\n",
       "manifest:4: record 'data_train' takes a path"},
  });
}

} // namespace
