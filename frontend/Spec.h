//===- Spec.h - The model spec as plain structs -----------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A parsed and validated TOML model spec. The parser lives in its own small
/// library built with C++ exceptions (toml++ throws); everything it returns is
/// a plain struct, so the MLIR side (built without exceptions) can use it.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SPEC_H
#define TFC_FRONTEND_SPEC_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfc::spec {

/// A position in the spec file, 1-based, for diagnostics.
struct Loc {
  uint32_t line = 0;
  uint32_t column = 0;
};

enum class Task { LanguageModel, Classify };
enum class Positions { None, Sinusoidal, Learned, Rotary };
enum class AttentionKind { Softmax, Performer, Longformer };
enum class Activation { Relu, Gelu, SquaredRelu };
enum class ShortenKind { Avg, Linear, Attention };
enum class UpsampleKind { Naive, Linear, Attention };
enum class ClassifyLoss { CrossEntropy, BinaryCrossEntropy };
enum class Optimizer { Adam, AdamW };
enum class Schedule { Constant, Linear, Cosine, InverseSqrt };
/// The arithmetic of the generated step (docs/precision.md).
enum class Precision { F32, BF16 };
enum class DataFormat { Bytes, Jsonl };

struct Model {
  std::string name;
  Task task = Task::LanguageModel;
  int64_t vocab = 256; ///< LM: byte vocabulary; classify: word vocabulary
                       ///< size including the special tokens.
  int64_t dModel = 256;
  int64_t heads = 8;
  int64_t dFF = 1024;
  int64_t layers = 6; ///< Without [hourglass]: the layer count; with
                      ///< it, the parser sets it to totalLayers().
  double dropout = 0.0;
  double normEps = 1e-5;
  Positions positions = Positions::Sinusoidal;
  int64_t classes = 2;                            ///< classify only.
  ClassifyLoss loss = ClassifyLoss::CrossEntropy; ///< classify only.
  bool tieEmbeddings = false;
};

struct Attention {
  AttentionKind kind = AttentionKind::Softmax;
  bool causal = true; ///< Defaults to true for lm, false for classify.
  // Performer.
  int64_t features = 256;
  int64_t redraw = 1000; ///< Redraw interval in steps; 0 = never.
  bool orthogonal = true;
  // Longformer; one entry per layer after expansion of a scalar.
  std::vector<int64_t> window;
  std::vector<int64_t> dilation;
  std::vector<int64_t> globalTokens; ///< Token positions with global attention.
  // Primer EZ.
  bool dconv = false; ///< Depth-wise conv after the Q/K/V projections.
  int64_t dconvKernel = 3;
};

struct Ffn {
  Activation activation = Activation::Gelu;
};

/// One level of the hourglass layout `layers@factor`, factor absolute
/// (relative to the input sequence).
struct HourglassLevel {
  int64_t layers = 0;
  int64_t factor = 1;
};

struct Hourglass {
  bool enabled = false;
  /// The full palindrome, e.g. "2@1 4@3 2@1" gives {2,1},{4,3},{2,1}.
  std::vector<HourglassLevel> levels;
  ShortenKind shortening = ShortenKind::Avg;
  UpsampleKind upsampling = UpsampleKind::Naive;
};

struct Training {
  Optimizer optimizer = Optimizer::Adam;
  double lr = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0.0;
  Schedule schedule = Schedule::Constant;
  int64_t warmup = 0;
  double clip = 0.0; ///< Global-norm clip; 0 = off.
  /// f32, or bf16 contraction operands (`tfc compile --precision` wins).
  Precision precision = Precision::F32;
  int64_t batch = 16;
  int64_t seqLen = 256;
  /// Where training.batch and training.seq_len are written (the section
  /// header, or 1:1, when they are not), for messages about sizes.
  Loc batchLoc;
  Loc seqLenLoc;
  int64_t steps = 1000;
  int64_t evalEvery = 100;
  int64_t evalBatches = 20;
  int64_t checkpointEvery = 500;
  int64_t patience = 0; ///< Early stopping: evaluations without
                        ///< improvement; 0 = off.
  uint64_t seed = 0;
};

struct Data {
  DataFormat format = DataFormat::Bytes;
  std::string train; ///< Paths as written in the spec (relative to it).
  std::string val;
  std::string test;
  double trainFraction = 0.9; ///< Bytes: train/val/test split of one file.
  double valFraction = 0.05;
  int64_t minFreq = 1; ///< Word vocabulary (classify).
};

struct Spec {
  std::string path; ///< The file it was read from.
  Model model;
  Attention attention;
  Ffn ffn;
  Hourglass hourglass;
  Training training;
  Data data;

  /// Number of transformer layers in total (hourglass: sum over levels).
  int64_t totalLayers() const;

  /// The absolute shortening factor each layer runs at, in execution order
  /// (hourglass: level by level, down then up; otherwise all 1). Has
  /// totalLayers() entries; indexes attention.window and attention.dilation.
  std::vector<int64_t> layerFactors() const;

  /// Resolves a data path from the spec: absolute paths are returned as they
  /// are, relative ones are taken relative to the folder of `path`.
  std::string resolvePath(const std::string &dataPath) const;
};

/// A spec error: `path:line:col: error: key: message`; or, for a value given
/// on the command line (`flag` set), `tfc: error: flag: message`.
struct Diagnostic {
  std::string path;
  Loc loc;
  std::string key;
  std::string message;
  std::string flag; ///< The command-line flag at fault, e.g. "--seq-len".
  /// The one-line rendering.
  std::string str() const;
};

/// Values given on the command line (`tfc compile --batch/--seq-len`) in place
/// of the spec's own. The spec is validated with them applied: they take the
/// spec's ranges, and every check that involves them (hourglass factors,
/// windows, global tokens, ...) runs again on the new values.
struct Overrides {
  std::optional<int64_t> batch;  ///< --batch, for training.batch.
  std::optional<int64_t> seqLen; ///< --seq-len, for training.seq_len.
};

/// The largest training.batch and training.seq_len a spec (or an override)
/// may give.
constexpr int64_t kMaxBatch = int64_t(1) << 20;
constexpr int64_t kMaxSeqLen = int64_t(1) << 22;

/// Parses and validates a spec, with `overrides` applied. On failure returns
/// std::nullopt and fills `diag`. Never throws, never aborts, whatever the
/// input bytes.
std::optional<Spec> parseSpecFile(const std::string &path, Diagnostic &diag,
                                  const Overrides &overrides = {});
std::optional<Spec> parseSpecString(const std::string &text,
                                    const std::string &path, Diagnostic &diag,
                                    const Overrides &overrides = {});

const char *toString(Task);
const char *toString(Positions);
const char *toString(AttentionKind);
const char *toString(Activation);
const char *toString(ShortenKind);
const char *toString(UpsampleKind);
const char *toString(ClassifyLoss);
const char *toString(Optimizer);
const char *toString(Schedule);
const char *toString(Precision);
const char *toString(DataFormat);

/// Renders hourglass levels in the paper's notation, e.g. "2@1 4@3 2@1".
std::string layoutString(const std::vector<HourglassLevel> &levels);

} // namespace tfc::spec

#endif // TFC_FRONTEND_SPEC_H
