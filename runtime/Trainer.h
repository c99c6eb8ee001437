//===- Trainer.h - The state of a training run ------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What `./model train` (runTrain, Train.cpp) keeps from its set-up to its
/// final test: the settings, the four flat buffers, the data, the run
/// directory and the books of the step loop. The set-up that fills it is in
/// TrainSetup.cpp; the step loop, validation, checkpoints and the final
/// test are in Train.cpp. Internal to libtfcrt_main.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TRAINER_H
#define TFC_RUNTIME_TRAINER_H

#include "runtime/Commands.h"
#include "runtime/JsonText.h"
#include "runtime/Params.h"
#include "runtime/Support.h"
#include "runtime/TrainState.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// A --target=cuda executable keeps the training state in device memory
// between the train and optimizer steps (runtime/CudaDriver.cpp); the
// host asks for its copy before it reads one and says when it writes one.
// Absent from CPU executables.
extern "C" {
void tfc_device_keep(const void *host, int64_t bytes);
void tfc_device_read(const void *host);
void tfc_device_write(void *host);
}
#pragma weak tfc_device_keep
#pragma weak tfc_device_read
#pragma weak tfc_device_write

namespace tfc::rt {

/// The data of a run. lm: spans into `bytes` (and into `valBytes`,
/// `testBytes` when validation or test data are files of their own).
/// classify: lines.
struct RunData {
  std::string trainPath, valPath, testPath;
  std::string bytes, valBytes, testBytes;
  ByteSpan train, val, test;
  std::vector<Example> trainLines, valLines, testLines;
  std::string valWhat, testWhat; ///< For the header, e.g. "val split".
};

/// One line of progress: a bar on a terminal (redrawn in place), plain log
/// lines otherwise.
struct Progress {
  bool terminal = false;
  bool barShown = false;
  int64_t logEvery = 1;
  double logSeconds = 60; ///< Plain lines: at least one per logSeconds.
  double lastLine = 0;

  /// Removes the bar, if one is shown.
  void clearBar();
  /// Prints a line of its own (evaluations, notes).
  void line(const std::string &text);
  /// Shows step `t` of `total`: the bar, or a plain line now and then.
  void step(int64_t t, int64_t total, double loss, double lr, double gradNorm,
            double tokensPerSecond, double eta, double now);
};

/// A training run from its set-up to its final test.
struct Trainer {
  Trainer(const Manifest &m, const Options &o);

  const Manifest &m;
  const Options &o;
  const bool lm;       ///< A language model (else a classifier).
  const bool resuming; ///< --resume: continues a run.
  const int64_t B, S;  ///< Batch rows of one rank, sequence length.
  const int64_t N, G;  ///< Ranks, global batch (N x B rows).
  const bool writer;   ///< Rank 0 alone writes the run's files.
  /// Why the last phase that returned false failed.
  std::string err;

  // The four flat buffers: parameters, gradients (and the loss after them,
  // for the all-reduce), Adam m and v.
  FloatBuffer params, grads, adamM, adamV;
  TrainState state;

  // The settings: the command line, else the run being resumed, else the
  // spec. They are also recorded in `state`.
  int64_t steps = 0, evalEvery = 0, evalBatches = 0, testBatches = 0;
  int64_t patience = 0, warmup = 0, checkpointEvery = 0;
  uint64_t seed = 0;
  double budget = 0; ///< --minutes in seconds; 0: no time limit.

  RunData data;
  Vocab vocab;                     ///< classify: the word vocabulary.
  const Vocab *runVocab = nullptr; ///< classify: &vocab, saved beside files.

  // The run directory.
  std::string dir, lastPath, bestPath, logPath, svgPath;
  /// best.safetensors holds the best weights that `state` records.
  bool bestOnDisk = false;
  LossHistory history;
  /// The metrics log. Every record and every drawing of the curves is
  /// checked: after a failed write (`err` says which) nothing more is
  /// written and the run stops. Ranks other than 0 write nothing.
  AppendFile log;
  bool writeFailed = false;

  // The step loop.
  Progress progress;
  BatchBuffers io;
  std::optional<EpochSampler> sampler; ///< classify: the lines of a batch.
  std::vector<int64_t> rows;
  /// Under mpirun, the global batch of G rows, of which this rank trains
  /// rows rank * B .. rank * B + B - 1.
  std::vector<int32_t> globalTokens, globalTargets;
  double reduceTime = 0; ///< Seconds in the all-reduce, this step.
  double start = 0;      ///< When the loop started.
  double stepTime = 0;   ///< Seconds in the steps themselves, so far.
  int64_t firstStep = 1;
  /// The step of the checkpoint at lastPath that this run started from or
  /// wrote, -1 if none: what a failure leaves in place.
  int64_t lastSaved = -1;
  bool stoppedEarly = false;
  /// The exit status when a step ends the run.
  int exitStatus = 0;

  /// Appends `record` to the metrics log.
  void logLine(const Json &record);
  /// Redraws DIR/curves.svg.
  void writeCurves();
  /// What a failure leaves of the last checkpoint, for its message.
  std::string checkpointNote() const;
  /// The message of a failed write at step `step`.
  std::string failedWriteMessage(int64_t step) const;
};

/// Seconds on a monotonic clock.
double seconds();

/// "1h02m", "4m05s", "12s".
std::string duration(double s);

/// `path` made absolute (symbolic links resolved) when it exists.
std::string absolutePath(const std::string &path);

/// Everything before the first step (TrainSetup.cpp): the starting state
/// (a checkpoint, weights or a fresh init), the settings, the data, the
/// vocabulary, the ranks' agreement, the run directory and its log, and
/// the header the run prints. On failure `t.err` says why.
bool setUpRun(Trainer &t);

} // namespace tfc::rt

#endif // TFC_RUNTIME_TRAINER_H
