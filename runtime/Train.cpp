//===- Train.cpp - The training loop of a compiled model ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `./model train`. Four flat buffers of `params` floats each (parameters,
/// gradients, Adam m, Adam v) laid out as the manifest says, and per step t:
///
///   fill the batch of step t            (TrainState.h: a function of seed, t)
///   tfc_train_step(params, batch, dropoutSeed(seed, t)) -> grads, loss
///   under mpirun: grads, loss averaged over the ranks (one MPI_Allreduce;
///                 the batch is this rank's share of the global batch,
///                 see Distributed.h)
///   stop if the loss is not finite      (nothing is saved)
///   tfc_optimizer_step(params, grads, m, v, t, {lr, steps, warmup})
///                                                        -> params, m, v
///                                       (in place)
///   every eval_every steps: validation, best checkpoint, early stopping
///   every checkpoint_every steps and at the end: DIR/last.safetensors
///   --minutes M: the end is the first step that ends M minutes or more
///   after the loop started (elapsed_s >= 60 M); --resume continues
///
/// The model's math, the optimizer and its learning-rate schedule are all
/// generated code; this file only moves data and keeps the books.
///
/// Files in the run directory (--out DIR):
///   last.safetensors   parameters + Adam m, v (optimizer.m.<name>,
///                      optimizer.v.<name>) + the run state as metadata
///                      (TrainState.h); `--resume` continues from it exactly
///   best.safetensors   parameters at the best validation loss so far
///   *.vocab            classify: the word vocabulary beside each checkpoint
///   metrics.jsonl      one JSON object per step:
///                        {"step", "loss", "lr", "grad_norm", "tokens_per_s",
///                         "elapsed_s"[, "val": {eval metrics}]}
///                      and per event: {"step", "event": "early_stop" |
///                      "time_limit" | "interrupted" | "precision" (at the
///                      start of a bf16 build's run), ...}; at the end
///                      {"step", "test": {...},
///                      "weights": "best" | "last", "weights_step"}
///   curves.svg         training and validation loss, redrawn at each
///                      evaluation and at the end
///
/// The run holds a lock (flock) on DIR while it trains. Every write is
/// checked; one that fails stops the run, leaving what was saved before.
///
/// The run's state is a Trainer (Trainer.h), set up by TrainSetup.cpp; this
/// file holds the step loop, validation, checkpoints and the final test.
///
//===----------------------------------------------------------------------===//

#include "runtime/Distributed.h"
#include "runtime/ModelABI.h"
#include "runtime/Safetensors.h"
#include "runtime/Trainer.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/ioctl.h>
#include <unistd.h>

// A model compiled without its training functions still links: the runtime
// then reports that it cannot train.
#pragma weak tfc_train_step
#pragma weak tfc_optimizer_step

namespace tfc::rt {

double seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string duration(double s) {
  if (!(s >= 0) || s > 1e8)
    return "?";
  long long t = (long long)(s + 0.5);
  if (t >= 3600)
    return format("%lldh%02lldm", t / 3600, (t / 60) % 60);
  if (t >= 60)
    return format("%lldm%02llds", t / 60, t % 60);
  return format("%llds", t);
}

namespace {

/// The host's copy of a buffer kept on the device, current for reading.
void hostRead(const float *host) {
  if (tfc_device_read)
    tfc_device_read(host);
}

/// The host's copy of a buffer kept on the device, current and about to be
/// written: the device's copy is refreshed at its next use.
void hostWrite(float *host) {
  if (tfc_device_write)
    tfc_device_write(host);
}

/// The signal that asked the run to stop (SIGINT, SIGTERM), or 0.
volatile sig_atomic_t stopSignal = 0;

void onStopSignal(int signal) {
  stopSignal = signal;
  static const char note[] =
      "\nstopping after this step (a second signal quits at once)\n";
  ssize_t ignored = write(STDERR_FILENO, note, sizeof(note) - 1);
  (void)ignored;
}

/// "12.3k", "1.25M".
std::string shortCount(double n) {
  if (n >= 1e6)
    return format("%.2fM", n / 1e6);
  if (n >= 1e3)
    return format("%.1fk", n / 1e3);
  return format("%.0f", n);
}

/// A float as the shortest JSON number that reads back as the same float
/// (null when not finite).
Json jsonFloat(float value) {
  if (!std::isfinite(value))
    return nullptr;
  std::string text = format("%.9g", double(value));
  for (int digits = 6; digits < 9; ++digits) {
    std::string shorter = format("%.*g", digits, double(value));
    if (strtof(shorter.c_str(), nullptr) == value) {
      text = shorter;
      break;
    }
  }
  return jsonNumber(strtod(text.c_str(), nullptr));
}

/// `value` rounded to `digits` decimals, as a JSON number.
Json jsonRounded(double value, int digits) {
  return jsonNumber(strtod(format("%.*f", digits, value).c_str(), nullptr));
}

} // namespace

void Progress::clearBar() {
  if (barShown) {
    printf("\r\033[K");
    barShown = false;
  }
}

void Progress::line(const std::string &text) {
  clearBar();
  printf("%s\n", text.c_str());
  fflush(stdout);
}

void Progress::step(int64_t t, int64_t total, double loss, double lr,
                    double gradNorm, double tokensPerSecond, double eta,
                    double now) {
  std::string stats =
      format("loss %.4f | lr %.2e | grad %.3f | %s tok/s | "
             "ETA %s",
             loss, lr, gradNorm, shortCount(tokensPerSecond).c_str(),
             duration(eta).c_str());
  std::string count = format("%lld/%lld", (long long)t, (long long)total);
  if (!terminal) {
    if (t % logEvery == 0 || t == total || t == 1 ||
        now - lastLine >= logSeconds) {
      printf("step %s | %s\n", count.c_str(), stats.c_str());
      lastLine = now;
    }
    fflush(stdout);
    return;
  }
  winsize ws;
  int columns = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0
                    ? int(ws.ws_col)
                    : 80;
  int barWidth = columns - int(count.size() + stats.size()) - 6;
  std::string bar;
  if (barWidth >= 10) {
    barWidth = std::min(barWidth, 40);
    int filled = int(double(barWidth) * double(t) / double(total));
    bar = "[" + std::string(size_t(filled), '#') +
          std::string(size_t(barWidth - filled), '.') + "] ";
  }
  std::string text = bar + count + " " + stats;
  if (int(text.size()) >= columns)
    text.resize(size_t(std::max(columns - 1, 1)));
  printf("\r\033[K%s", text.c_str());
  fflush(stdout);
  barShown = true;
}

std::string Trainer::checkpointNote() const {
  return lastSaved >= 0 ? format("%s, step %lld, is kept as it was",
                                 lastPath.c_str(), (long long)lastSaved)
                        : std::string("no checkpoint was written");
}

std::string Trainer::failedWriteMessage(int64_t step) const {
  return format("%s; the run stops at step %lld (%s)", err.c_str(),
                (long long)step, checkpointNote().c_str());
}

namespace {

/// What the run does after a step.
enum class StepOutcome {
  Continue, ///< The next step, if there is one.
  Finish,   ///< No more steps: the final test follows.
  Exit,     ///< The run ends now with Trainer::exitStatus.
};

/// Ends the run at a step: clears the progress bar and prints `message`.
StepOutcome failStep(Trainer &t, const std::string &message) {
  t.progress.clearBar();
  t.exitStatus = fail(message);
  return StepOutcome::Exit;
}

/// Saves the training checkpoint (parameters, Adam m and v, run state) and,
/// for classifiers, the vocabulary beside it.
bool saveTrainCheckpoint(const std::string &path, const Manifest &m,
                         const float *params, const float *adamM,
                         const float *adamV, const TrainState &state,
                         const Vocab *vocab, std::string &err) {
  if (vocab && !saveVocab(path + ".vocab", *vocab, err))
    return false;
  std::vector<TensorView> extra = manifestViews(m, adamM, kAdamMPrefix);
  std::vector<TensorView> v = manifestViews(m, adamV, kAdamVPrefix);
  extra.insert(extra.end(), v.begin(), v.end());
  return saveCheckpoint(path, m, params, extra, trainStateMetadata(state), err);
}

/// Readies the step loop: the progress line, the batch sources, the
/// checkpoint a failure leaves, and the time the loop starts.
void startLoop(Trainer &t) {
  Progress &progress = t.progress;
  // mpirun gives rank 0 a terminal of its own even when its output goes
  // to a file: plain lines under mpirun.
  progress.terminal = isatty(STDOUT_FILENO) && t.N == 1;
  progress.logEvery = std::max<int64_t>(1, t.steps / 100);
  if (t.budget > 0)
    progress.logSeconds = std::max(1.0, t.budget / 20);
  t.sampler.emplace(int64_t(t.data.trainLines.size()), t.seed);
  if (t.lm && t.N > 1) {
    t.globalTokens.resize(size_t(t.G * t.S));
    t.globalTargets.resize(size_t(t.G * t.S));
  }
  t.lastSaved =
      t.resuming && absolutePath(t.o.resume) == absolutePath(t.lastPath)
          ? t.state.step
          : -1;
  t.stoppedEarly = t.patience > 0 && t.state.badEvals >= t.patience;
  if (t.stoppedEarly && t.state.step < t.steps)
    progress.line(format("the run stopped early at step %lld (%lld "
                         "validations without improvement); nothing to train",
                         (long long)t.state.step, (long long)t.state.badEvals));
  t.start = seconds();
  progress.lastLine = t.start;
  t.firstStep = t.state.step + 1;
}

/// Fills the batch of step `step`, after redrawing the random features when
/// they are due.
void fillBatch(Trainer &t, int64_t step) {
  const Manifest &m = t.m;
  const int64_t B = t.B, S = t.S;
  if (redrawBefore(step, m.redraw)) {
    hostWrite(t.params.data());
    redrawFeatures(m, t.params.data(),
                   redrawSeed(t.seed, (step - 1) / m.redraw));
  }
  BatchBuffers &io = t.io;
  if (t.lm && t.N > 1) {
    sampleBatch(t.data.train, t.G, S, t.seed, uint64_t(step - 1),
                t.globalTokens.data(), t.globalTargets.data());
    size_t first = size_t(world.rank * B * S);
    std::copy_n(&t.globalTokens[first], B * S, io.tokens.data());
    std::copy_n(&t.globalTargets[first], B * S, io.targets.data());
  } else if (t.lm) {
    sampleBatch(t.data.train, B, S, t.seed, uint64_t(step - 1),
                io.tokens.data(), io.targets.data());
  } else {
    t.sampler->batch(step, t.G, t.rows);
    for (int64_t b = 0; b < B; ++b)
      fillClassifyRow(
          m, t.vocab,
          &t.data.trainLines[size_t(t.rows[size_t(world.rank * B + b)])], b,
          io);
  }
}

/// The loss and gradients of step `step` (under mpirun, their means over
/// the global batch). False when the loss is not finite.
bool computeGradients(Trainer &t, int64_t step, float &loss) {
  const Manifest &m = t.m;
  BatchBuffers &io = t.io;
  // Each rank draws its own dropout masks (rank 0 those of one process).
  int64_t stepSeed =
      dropoutSeed(t.seed + 0x9e3779b97f4a7c15ull * uint64_t(world.rank), step);
  tfc_train_step(t.params.data(), io.tokens.data(), io.targets.data(),
                 io.mask.data(), &stepSeed, t.grads.data(), &loss);
  if (t.N > 1) {
    // The mean over the global batch: each rank's loss and gradients are
    // means over B of its G rows. One all-reduce carries both.
    double r0 = seconds();
    hostWrite(t.grads.data());
    t.grads.data()[m.params] = loss;
    sumAcrossRanks(t.grads.data(), m.params + 1);
    t.reduceTime = seconds() - r0;
    const float scale = 1.0f / float(t.N);
    float *g = t.grads.data();
    for (int64_t i = 0; i <= m.params; ++i)
      g[i] *= scale;
    loss = g[m.params];
  }
  if (std::isfinite(loss))
    return true;
  world.agreed = true;
  t.err =
      format("train: step %lld: the loss is %s; stopping (%s)", (long long)step,
             std::isnan(loss) ? "nan" : "infinite", t.checkpointNote().c_str());
  return false;
}

/// The optimizer update of step `step`; `stats` gets the gradient norm and
/// the learning rate. False when the gradient norm is not finite.
bool updateParameters(Trainer &t, int64_t step, float stats[2]) {
  int64_t update = step;
  float schedule[3] = {float(t.state.lr), float(t.steps), float(t.warmup)};
  tfc_optimizer_step(t.params.data(), t.grads.data(), t.adamM.data(),
                     t.adamV.data(), &update, schedule, t.params.data(),
                     t.adamM.data(), t.adamV.data(), stats);
  if (std::isfinite(stats[0]))
    return true;
  world.agreed = true;
  t.err = format("train: step %lld: the gradient norm is %s; stopping (%s)",
                 (long long)step, std::isnan(stats[0]) ? "nan" : "infinite",
                 t.checkpointNote().c_str());
  return false;
}

/// Books step `step`, which took `stepSeconds` and ended at `now`: the run
/// state, the loss history and the progress line. Returns its record for
/// the metrics log.
Json bookStep(Trainer &t, int64_t step, float loss, const float stats[2],
              double stepSeconds, double now) {
  const int64_t tokens = t.G * t.S;
  t.state.step = step;
  t.state.tokens += tokens;
  t.history.train.push_back({step, double(loss)});
  double tokensPerSecond = stepSeconds > 0 ? double(tokens) / stepSeconds : 0;
  Json record = {{"step", step},
                 {"loss", jsonFloat(loss)},
                 {"lr", jsonFloat(stats[1])},
                 {"grad_norm", jsonFloat(stats[0])},
                 {"tokens_per_s", jsonRounded(tokensPerSecond, 1)},
                 {"elapsed_s", jsonRounded(now - t.start, 3)}};
  if (t.N > 1) {
    record["allreduce_s"] = jsonRounded(t.reduceTime, 6);
    record["step_s"] = jsonRounded(stepSeconds, 6);
  }
  // Throughput over the steps' own time; the ETA over the wall clock
  // (evaluations and checkpoints included).
  t.stepTime += stepSeconds;
  double done = double(step - t.firstStep + 1);
  double eta = (now - t.start) / done * double(t.steps - step);
  if (t.budget > 0)
    eta = std::min(eta, std::max(0.0, t.budget - (now - t.start)));
  t.progress.step(step, t.steps, loss, stats[1], stats[0],
                  double(tokens) * done / std::max(t.stepTime, 1e-9), eta, now);
  return record;
}

/// Validation after step `step`, its metrics added to `record`; then the
/// best checkpoint and early stopping. False when the validation loss is
/// not finite or the best checkpoint cannot be saved.
bool validate(Trainer &t, int64_t step, Json &record) {
  const Manifest &m = t.m;
  TrainState &state = t.state;
  double valLoss = 0;
  Json valJson;
  std::string valText;
  if (t.lm) {
    LmMetrics metrics;
    evaluateLm(m, t.params.data(), t.data.val, t.evalBatches, metrics);
    valLoss = metrics.loss;
    valJson = lmMetricsJson(metrics, "val");
    valText = format("val loss %.4f, %.4f bits/byte", metrics.loss,
                     metrics.bitsPerChar());
  } else {
    ClassificationReport report;
    evaluateClassify(m, t.vocab, t.params.data(), t.data.valLines,
                     t.evalBatches, report, valLoss);
    valJson = classifyMetricsJson(report, valLoss);
    valText = format("val loss %.4f, accuracy %.4f, macro F1 %.4f", valLoss,
                     report.accuracy, report.macro.f1);
  }
  if (!std::isfinite(valLoss)) {
    t.err = format("train: step %lld: the validation loss is %s; stopping "
                   "(%s)",
                   (long long)step, std::isnan(valLoss) ? "nan" : "infinite",
                   t.checkpointNote().c_str());
    return false;
  }
  record["val"] = valJson;
  t.history.val.push_back({step, valLoss});
  if (!state.hasBest || valLoss < state.bestValLoss) {
    state.hasBest = true;
    state.bestValLoss = valLoss;
    state.bestStep = step;
    state.badEvals = 0;
    Metadata best = {{"tfc.best_step", std::to_string(step)},
                     {"tfc.best_val_loss", format("%.17g", valLoss)},
                     {"tfc.seed", std::to_string(t.seed)}};
    hostRead(t.params.data());
    if (t.writer &&
        ((t.runVocab && !saveVocab(t.bestPath + ".vocab", t.vocab, t.err)) ||
         !saveCheckpoint(t.bestPath, m, t.params.data(), {}, best, t.err)))
      return false;
    t.bestOnDisk = true;
    valText += " (best)";
  } else {
    ++state.badEvals;
    valText += format(" (best %.4f at step %lld; %lld without improvement)",
                      state.bestValLoss, (long long)state.bestStep,
                      (long long)state.badEvals);
    t.stoppedEarly = t.patience > 0 && state.badEvals >= t.patience;
  }
  t.progress.line(format("step %lld: %s", (long long)step, valText.c_str()));
  return true;
}

/// Saves DIR/last.safetensors at step `step`, after checking that the
/// ranks' parameters are the same: a difference would be a fault of the
/// run (different OpenMP reductions, memory errors).
bool saveLastCheckpoint(Trainer &t, int64_t step) {
  const Manifest &m = t.m;
  hostRead(t.params.data());
  hostRead(t.adamM.data());
  hostRead(t.adamV.data());
  std::string why;
  if (t.N > 1 &&
      !ranksAgree("parameters",
                  hashBytes(t.params.data(), size_t(m.params) * sizeof(float)),
                  format("step %lld", (long long)step), why)) {
    world.agreed = true;
    t.err = "train: " + why + "; the data-parallel ranks diverged";
    return false;
  }
  if (t.writer &&
      !saveTrainCheckpoint(t.lastPath, m, t.params.data(), t.adamM.data(),
                           t.adamV.data(), t.state, t.runVocab, t.err))
    return false;
  t.lastSaved = step;
  return true;
}

/// What ends the run after step `step`, logged and told: a stop signal
/// (the run exits with 128 + the signal), early stopping, the time limit
/// (`elapsed` seconds of training).
StepOutcome handleStopEvents(Trainer &t, int64_t step, int signal, bool timeUp,
                             double elapsed) {
  const TrainState &state = t.state;
  if (signal) {
    t.logLine({{"step", step},
               {"event", "interrupted"},
               {"signal", signal == SIGINT ? "SIGINT" : "SIGTERM"}});
    t.writeCurves();
    if (t.writeFailed || !t.log.close(t.err))
      return failStep(t, t.failedWriteMessage(step));
    t.progress.line(format("interrupted: saved %s at step %lld; continue "
                           "with '%s train --resume %s'",
                           t.lastPath.c_str(), (long long)step,
                           programName.c_str(), t.lastPath.c_str()));
    world.agreed = true;
    t.exitStatus = 128 + signal;
    return StepOutcome::Exit;
  }
  if (t.stoppedEarly) {
    t.logLine({{"step", step},
               {"event", "early_stop"},
               {"best_step", state.bestStep},
               {"best_val_loss", jsonNumber(state.bestValLoss)}});
    if (t.writeFailed)
      return failStep(t, t.failedWriteMessage(step));
    t.progress.line(format("early stop at step %lld: no better validation "
                           "loss in %lld evaluations (best %.4f at step %lld)",
                           (long long)step, (long long)t.patience,
                           state.bestValLoss, (long long)state.bestStep));
  }
  if (!timeUp)
    return StepOutcome::Continue;
  t.logLine({{"step", step},
             {"event", "time_limit"},
             {"minutes", jsonNumber(t.o.minutes)},
             {"elapsed_s", jsonRounded(elapsed, 3)}});
  if (t.writeFailed)
    return failStep(t, t.failedWriteMessage(step));
  t.progress.line(format("time limit: stopping at step %lld of %lld after %s "
                         "(--minutes %g); continue with '%s train --resume "
                         "%s'",
                         (long long)step, (long long)t.steps,
                         duration(elapsed).c_str(), t.o.minutes,
                         programName.c_str(), t.lastPath.c_str()));
  return StepOutcome::Finish;
}

/// One step of the loop: the batch, the gradients, the update, the books,
/// validation when due, the last checkpoint when due, and what ends the
/// run.
StepOutcome trainStep(Trainer &t, int64_t step) {
  fillBatch(t, step);
  float loss = 0;
  float stats[2] = {0, 0};
  double t0 = seconds();
  if (!computeGradients(t, step, loss) || !updateParameters(t, step, stats))
    return failStep(t, t.err);
  double now = seconds();
  Json record = bookStep(t, step, loss, stats, now - t0, now);
  bool evaluated = t.evalEvery > 0 && step % t.evalEvery == 0;
  if (evaluated && !validate(t, step, record))
    return failStep(t, t.err);
  t.logLine(record);
  if (evaluated)
    t.writeCurves();
  if (t.writeFailed)
    return failStep(t, t.failedWriteMessage(step));

  // The time limit: this step ends the run (not when it is the last
  // step anyway, or early stopping ended it).
  double elapsed = seconds() - t.start;
  bool timeUp =
      t.budget > 0 && elapsed >= t.budget && step < t.steps && !t.stoppedEarly;
  int signal = stopSignal;
  if (t.N > 1) {
    // The ranks stop together: at any rank's signal or time limit.
    int64_t flags[2] = {signal, timeUp};
    maxAcrossRanks(flags, 2);
    signal = int(flags[0]);
    timeUp = flags[1] != 0;
  }
  if (((t.checkpointEvery > 0 && step % t.checkpointEvery == 0) ||
       step == t.steps || t.stoppedEarly || timeUp || signal) &&
      !saveLastCheckpoint(t, step))
    return failStep(t, t.err);
  return handleStopEvents(t, step, signal, timeUp, elapsed);
}

/// The final test, on the best weights when validation found some; its
/// metrics end the metrics log.
int runFinalTest(Trainer &t) {
  const Manifest &m = t.m;
  const RunData &data = t.data;
  std::string weightsName = "last";
  int64_t weightsStep = t.state.step;
  if (t.state.hasBest && t.bestOnDisk) {
    hostWrite(t.params.data());
    if (t.writer && !loadCheckpoint(t.bestPath, m, t.params.data(), t.err))
      return fail(t.err);
    broadcastFromRank0(t.params.data(), m.params);
    weightsName = "best";
    weightsStep = t.state.bestStep;
  }
  Json testJson;
  if (t.lm) {
    LmMetrics metrics;
    if (evaluateLm(m, t.params.data(), data.test, t.testBatches, metrics)) {
      testJson = lmMetricsJson(metrics, "test");
      printf("test (%s weights, step %lld, %s): loss %.4f, %.4f bits/byte, "
             "perplexity %.3f\n",
             weightsName.c_str(), (long long)weightsStep, data.testWhat.c_str(),
             metrics.loss, metrics.bitsPerChar(), metrics.perplexity());
    } else {
      printf("test: skipped, %s holds no full evaluation batch\n",
             data.testWhat.c_str());
    }
  } else if (!data.testLines.empty()) {
    ClassificationReport report;
    double loss = 0;
    evaluateClassify(m, t.vocab, t.params.data(), data.testLines, t.testBatches,
                     report, loss);
    testJson = classifyMetricsJson(report, loss);
    printf("test (%s weights, step %lld, %s): loss %.4f\n\n%s",
           weightsName.c_str(), (long long)weightsStep, data.testWhat.c_str(),
           loss, classificationReportText(report).c_str());
  } else {
    printf("test: skipped, no test data (pass --test PATH)\n");
  }
  if (!testJson.is_null()) {
    t.logLine({{"step", t.state.step},
               {"test", testJson},
               {"weights", weightsName},
               {"weights_step", weightsStep}});
    if (t.writeFailed)
      return fail(t.failedWriteMessage(t.state.step));
    printf("%s\n", jsonText(testJson).c_str());
  }
  if (!t.log.close(t.err))
    return fail(t.failedWriteMessage(t.state.step));
  world.agreed = true;
  return 0;
}

} // namespace

std::string trainHelp() {
  return format(
      "usage: %s train [options]\n"
      "\n"
      "Trains the model with its compiled optimizer and learning-rate\n"
      "schedule. Every setting defaults to the spec's [training] and [data]\n"
      "sections, recorded in the executable ('%s info').\n"
      "\n"
      "  --data PATH       training data (lm: a byte file, split train/val/\n"
      "                    test by position; classify: JSONL)\n"
      "  --val PATH        validation data (lm: a whole byte file instead of\n"
      "                    the val split; classify: JSONL; default: the\n"
      "                    spec's data.val, else the spec's val_fraction of\n"
      "                    the training lines held out)\n"
      "  --test PATH       test data for the final evaluation (lm: instead of\n"
      "                    the test split)\n"
      "  --out DIR         run directory (default: runs/<model>, or the\n"
      "                    directory of --resume)\n"
      "  --steps N         optimizer updates in the run (resumed runs: the\n"
      "                    total, counting the steps already done)\n"
      "  --minutes M       time budget (M may be fractional): the first step\n"
      "                    that ends M minutes or more after training\n"
      "                    started (wall time, validations included) ends\n"
      "                    the run as its last step would: DIR/last.\n"
      "                    safetensors, then the test; --resume continues\n"
      "                    towards --steps\n"
      "  --seed S          run seed: initialisation, batches, dropout,\n"
      "                    feature redraws\n"
      "  --resume PATH     continue from a training checkpoint of this\n"
      "                    model (DIR/last.safetensors); the result is the\n"
      "                    same as an uninterrupted run\n"
      "  --weights PATH    start from these weights with fresh optimizer\n"
      "                    state instead of a seeded initialisation (every\n"
      "                    tensor of the file must be one of this model's)\n"
      "  --eval-every N    validate every N steps (0: never)\n"
      "  --eval-batches N  batches per validation (0: all)\n"
      "  --test-batches N  batches of the final test (0: all, the default)\n"
      "  --patience N      stop after N validations without a better loss\n"
      "                    (0: never stop early)\n"
      "  --checkpoint-every N  save DIR/last.safetensors every N steps\n"
      "                    (0: only at the end)\n"
      "  --threads N       worker threads of the generated code (default:\n"
      "                    one per core, or OMP_NUM_THREADS)\n"
      "  --batch N         must equal the compiled batch size; to change it,\n"
      "                    recompile ('tfc compile --batch N')\n"
      "  --lr R            base learning rate of the compiled schedule\n"
      "                    (its decay keeps the spec's shape; linear and\n"
      "                    cosine decay reach 0 at --steps)\n"
      "  --warmup N        steps of linear warm-up from 0 to the base rate\n"
      "                    (0: none)\n"
      "\n"
      "Writes DIR/last.safetensors (with optimizer state), DIR/best.\n"
      "safetensors (best validation loss), DIR/metrics.jsonl and\n"
      "DIR/curves.svg; classify models also <checkpoint>.vocab. Ctrl-C\n"
      "finishes the step, saves DIR/last.safetensors and exits (status 130).\n"
      "A non-finite loss (training or validation) stops the run with\n"
      "status 1 and saves nothing.\n"
      "A run holds a lock on DIR: a second run into it is refused. A\n"
      "metrics line or curves that cannot be written (a full disk) stop\n"
      "the run with status 1; the checkpoints saved before stay.\n"
      "At the end the best weights are evaluated on the test data.\n"
      "\n"
      "Under 'mpirun -np N' (Open MPI), N ranks train data-parallel: each\n"
      "step's global batch is N x the compiled batch, rank r training its\n"
      "share; the gradients are averaged with MPI_Allreduce, so every rank\n"
      "keeps the same parameters. --lr, --steps and --warmup are not scaled\n"
      "by N. Rank 0 writes the run's files and prints; every rank reads the\n"
      "data (and --resume, --weights) at the same path. Ranks that run\n"
      "different executables, data or settings stop at start-up. Without\n"
      "--threads or OMP_NUM_THREADS, the ranks on one machine share its\n"
      "cores.\n",
      programName.c_str(), programName.c_str());
}

int runTrain(const Manifest &m, const Options &o) {
  if (!tfc_train_step || !tfc_optimizer_step)
    return fail("train: this executable was compiled without its training "
                "functions (tfc_train_step, tfc_optimizer_step); recompile it "
                "with a tfc that generates them");
  if (o.batch > 0 && o.batch != m.batch)
    return fail(format("train: --batch %lld: the batch size is compiled into "
                       "the model (batch %lld); recompile with 'tfc compile "
                       "--batch %lld'",
                       (long long)o.batch, (long long)m.batch,
                       (long long)o.batch));
  if (!o.resume.empty() && !o.weights.empty())
    return fail("train: --resume and --weights exclude each other (--resume "
                "continues a run, --weights starts a new one)");
  Trainer t(m, o);
  if (!setUpRun(t))
    return fail(t.err);

  // Ctrl-C and SIGTERM finish the step and save; a second one kills.
  struct sigaction action, oldInt, oldTerm;
  memset(&action, 0, sizeof(action));
  action.sa_handler = onStopSignal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &oldInt);
  sigaction(SIGTERM, &action, &oldTerm);

  startLoop(t);
  for (int64_t step = t.state.step + 1; step <= t.steps && !t.stoppedEarly;
       ++step) {
    StepOutcome outcome = trainStep(t, step);
    if (outcome == StepOutcome::Exit)
      return t.exitStatus;
    if (outcome == StepOutcome::Finish)
      break;
  }
  t.progress.clearBar();
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  t.writeCurves();
  if (t.writeFailed)
    return fail(t.failedWriteMessage(t.state.step));
  printf("trained to step %lld in %s; %s\n", (long long)t.state.step,
         duration(seconds() - t.start).c_str(), t.lastPath.c_str());
  return runFinalTest(t);
}

} // namespace tfc::rt
