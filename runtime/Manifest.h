//===- Manifest.h - The model manifest as a struct --------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The manifest embedded in every compiled model (format in ModelABI.h),
/// parsed into plain structs.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MANIFEST_H
#define TFC_RUNTIME_MANIFEST_H

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

enum class Task { LanguageModel, Classify };
enum class TensorKind { Param, Buffer };
enum class InitKind { Normal, Zeros, Ones, Uniform, Features };

/// How a tensor is initialised.
struct TensorInit {
  std::string text; ///< As written, e.g. "normal:0.02".
  InitKind kind = InitKind::Zeros;
  double scale = 0.0;      ///< normal: standard deviation; uniform: bound a.
  int64_t featureRows = 0; ///< features: M.
  int64_t featureCols = 0; ///< features: d.
};

struct TensorInfo {
  std::string name;
  int64_t offset = 0; ///< In floats from the start of the buffer.
  TensorKind kind = TensorKind::Param;
  TensorInit init;
  std::vector<int64_t> shape;
  int64_t count = 1; ///< Product of `shape`.
};

struct Manifest {
  std::string model;
  Task task = Task::LanguageModel;
  int64_t vocab = 256;
  int64_t classes = 0; ///< classify: number of labels; lm: unused.
  int64_t outputs = 0; ///< Logits per position (lm) or row (classify):
                       ///< V, C, or 1 for a single-logit binary
                       ///< classifier.
  int64_t batch = 0;
  int64_t seqLen = 0;
  int64_t dModel = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t params = 0; ///< Floats in the flat parameter buffer.
  double flopsPerToken = 0;
  int64_t activationBytes = 0;      ///< Working memory of tfc_forward.
  int64_t trainActivationBytes = 0; ///< Of the training entry points.
  /// Of all entry points together (they share one arena); 0 when the
  /// manifest does not say, then the sum of the two above bounds it.
  int64_t arenaBytes = 0;
  /// Heap buffers of one iteration of a parallel loop, held by each worker
  /// thread while it runs one, besides the arenas; 0 when there are none.
  int64_t threadHeapBytes = 0;
  /// Loop nests (kernels) one training step runs; 0 when not recorded.
  int64_t kernelsPerStep = 0;
  /// The arithmetic of the step: "f32", or "bf16" (contraction operands
  /// rounded to bf16; docs/precision.md).
  std::string precision = "f32";
  /// CPU features the generated code needs (`avx512bf16`); checked by
  /// checkCpuFeatures at start-up.
  std::vector<std::string> cpuFeatures;
  int64_t minFreq = 1;        ///< Word vocabulary: minimum count of a word.
  double trainFraction = 0.9; ///< Byte data: train/val/test split.
  double valFraction = 0.05;
  /// Classify without a validation file: the fraction of the training lines
  /// held out for validation (record `val_fraction`).
  double holdoutFraction = 0.1;

  // The training loop's settings ([training] and [data] of the spec); each
  // can be overridden on the command line of `train`.
  double lr = 0;               ///< Base learning rate of the schedule.
  int64_t trainSteps = 0;      ///< Optimizer updates of a run.
  int64_t warmup = 0;          ///< Linear warm-up steps; 0 = none.
  int64_t evalEvery = 0;       ///< Validate every N steps; 0 = never.
  int64_t evalBatches = 0;     ///< Batches per validation; 0 = all.
  int64_t checkpointEvery = 0; ///< Checkpoint every N steps; 0 = at the end.
  int64_t patience = 0;        ///< Early stopping; 0 = off.
  uint64_t seed = 0;           ///< Run seed: init, batches, dropout, redraw.
  int64_t redraw = 0; ///< Performer: redraw features every N steps; 0 = never.
  std::string dataTrain, dataVal, dataTest; ///< Absolute paths; "" = unset.

  std::vector<TensorInfo> tensors; ///< In manifest order.

  /// The tensor called `name`, or nullptr.
  const TensorInfo *find(const std::string &name) const;
  /// Number of floats in tensors of kind param.
  int64_t trainableCount() const;
  /// Elements of the logits: lm [B, S, outputs], classify [B, outputs].
  int64_t logitsCount() const;
  /// Elements of the targets: lm [B, S], classify [B].
  int64_t targetsCount() const;
};

/// Parses the manifest text. On failure `err` is `manifest:<line>: <reason>`.
bool parseManifest(const char *text, Manifest &manifest, std::string &err);

/// Whether this CPU has the feature `feature` of a `cpu_features` record.
bool cpuHasFeature(const std::string &feature);

/// Whether this CPU has every feature the manifest's `cpu_features` lists;
/// if not, `err` names the first it lacks and what to do.
bool checkCpuFeatures(const Manifest &manifest, std::string &err);

const char *toString(Task task);
const char *toString(TensorKind kind);

} // namespace tfc::rt

#endif // TFC_RUNTIME_MANIFEST_H
