//===- TrainState.h - The state of a training run ---------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pieces of `./model train` that are pure functions of the run seed and
/// the step number, and the state a checkpoint carries besides the buffers.
/// Nothing here calls the model.
///
/// All randomness of a run derives from (run seed, step) through the
/// counter-based generator of Random.h, so the run's random state *is*
/// (seed, step) and a resumed run replays the uninterrupted one bit for bit:
///   lm batches       step t (1-based) reads sampleBatch(seed, t - 1) of the
///                    train split (Data.h)
///   classify batches the training lines in epochs; epoch e visits them in
///                    the order epochOrder(n, seed, e); step t takes
///                    positions (t - 1) * B ... t * B - 1 of that endless
///                    sequence
///   dropout          tfc_train_step's seed for step t is dropoutSeed(seed, t)
///   Performer        before step t with t - 1 a positive multiple of R (the
///                    redraw interval), every features:<M>:<d> buffer is
///                    drawn afresh as Params.h's init with seed
///                    redrawSeed(seed, (t - 1) / R); draw 0 is the init itself
///
/// Checkpoint metadata of a training run (beside Safetensors.h's format,
/// tfc.model, tfc.task, tfc.params), every value a decimal string:
///   tfc.step          optimizer updates done
///   tfc.steps         the run's planned number of updates
///   tfc.lr            the run's base learning rate (17 significant digits;
///                     "" = not recorded)
///   tfc.seed          the run seed
///   tfc.best_val_loss the best validation loss so far ("" = none yet),
///                     written with 17 significant digits (exact for a double)
///   tfc.best_step     the step of that validation
///   tfc.bad_evals     validations since the best one (the patience counter)
///   tfc.tokens        training tokens seen (B * S per step)
///   tfc.data_train, tfc.data_val, tfc.data_test
///                     the run's data files ("" = none)
///   tfc.eval_every, tfc.eval_batches, tfc.test_batches, tfc.patience,
///   tfc.checkpoint_every, tfc.warmup
///                     the run's settings
/// A resumed run keeps the data files and settings of the run unless the
/// command line overrides them.
///
/// The metrics log (DIR/metrics.jsonl) has one JSON object per line, each
/// with a "step"; see runtime/Train.cpp for the members.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TRAINSTATE_H
#define TFC_RUNTIME_TRAINSTATE_H

#include "runtime/Manifest.h"
#include "runtime/Safetensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

/// Everything of a run's progress that is not a buffer.
struct TrainState {
  int64_t step = 0;
  int64_t totalSteps = 0;
  double lr = 0; ///< Base learning rate; 0: not recorded.
  uint64_t seed = 0;
  bool hasBest = false;
  double bestValLoss = 0;
  int64_t bestStep = 0;
  int64_t badEvals = 0;
  int64_t tokens = 0;
  std::string dataTrain, dataVal, dataTest;
  int64_t evalEvery = -1; ///< -1: not recorded.
  int64_t evalBatches = -1;
  int64_t testBatches = -1;
  int64_t patience = -1;
  int64_t checkpointEvery = -1;
  int64_t warmup = -1;
};

/// The tfc.* metadata of `state` (see the file comment).
Metadata trainStateMetadata(const TrainState &state);

/// Reads the state back from a checkpoint's metadata. A file without
/// tfc.step is not a training checkpoint; the error says so.
bool readTrainState(const SafetensorsFile &file, TrainState &state,
                    std::string &err);

/// Prefixes of the optimizer state's tensors in a training checkpoint:
/// Adam's m and v of manifest tensor `name` are `optimizer.m.<name>` and
/// `optimizer.v.<name>`.
extern const char *const kAdamMPrefix;
extern const char *const kAdamVPrefix;

/// The dropout seed of step `step` (1-based), a non-negative int64.
int64_t dropoutSeed(uint64_t runSeed, int64_t step);

/// The seed of Performer feature draw `draw` (>= 1).
uint64_t redrawSeed(uint64_t runSeed, int64_t draw);

/// True when the features are redrawn before step `step` (1-based).
bool redrawBefore(int64_t step, int64_t interval);

/// Re-initialises every buffer with init features:<M>:<d> with `seed`.
/// Returns the number of tensors drawn.
int64_t redrawFeatures(const Manifest &manifest, float *params, uint64_t seed);

/// A permutation of [0, n): Fisher–Yates from the last index down, swapping
/// i with uniformInt(seed, mixStream(streamId(name), round), i, i + 1).
void permutation(int64_t n, uint64_t seed, const std::string &name,
                 uint64_t round, std::vector<int64_t> &order);

/// The order of the training lines in epoch `epoch`:
/// permutation(n, seed, "epochs", epoch).
void epochOrder(int64_t n, uint64_t seed, uint64_t epoch,
                std::vector<int64_t> &order);

/// Splits line indices [0, n) into training and held-out validation lines:
/// k = round(n * fraction) lines, at least 1 and at most n - 1 when
/// fraction > 0 and n >= 2, chosen as the first k of
/// permutation(n, 0, "holdout", 0) (fixed, so runs with different seeds
/// validate on the same lines). Both lists come out in file order.
void holdoutSplit(int64_t n, double fraction, std::vector<int64_t> &train,
                  std::vector<int64_t> &val);

/// The training line indices of one classify batch, for steps taken in
/// order (it caches the current epoch's order).
class EpochSampler {
public:
  EpochSampler(int64_t lines, uint64_t seed) : lines_(lines), seed_(seed) {}
  /// Indices into the training lines for batch row 0..batch-1 of `step`.
  void batch(int64_t step, int64_t batch, std::vector<int64_t> &rows);

private:
  int64_t lines_;
  uint64_t seed_;
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;
};

/// (step, loss) points for the loss curves.
struct CurvePoint {
  int64_t step = 0;
  double loss = 0;
};

struct LossHistory {
  std::vector<CurvePoint> train; ///< Training loss of every step.
  std::vector<CurvePoint> val;   ///< Validation loss at each evaluation.
};

/// Adds a metrics-log line's losses to `history`: "loss" as a training
/// point, "val"."loss" as a validation point. Lines without "step" or with
/// "event" or "test" add nothing.
void addToHistory(const std::string &line, LossHistory &history);

/// Prepares the metrics log at `path` for a run resumed at `step`: keeps the
/// lines of steps <= `step`, events included (how the earlier run ended, its
/// ranks), drops "test" lines (the continued run writes its own, as an
/// uninterrupted run would), rewrites the file atomically and fills
/// `history` from it. A missing file is an empty log.
bool truncateMetricsLog(const std::string &path, int64_t step,
                        LossHistory &history, std::string &err);

} // namespace tfc::rt

#endif // TFC_RUNTIME_TRAINSTATE_H
