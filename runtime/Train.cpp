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
//===----------------------------------------------------------------------===//

#include "runtime/Commands.h"
#include "runtime/Distributed.h"
#include "runtime/ModelABI.h"
#include "runtime/Params.h"
#include "runtime/Plot.h"
#include "runtime/Safetensors.h"
#include "runtime/Support.h"
#include "runtime/TrainState.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

// A model compiled without its training functions still links: the runtime
// then reports that it cannot train.
#pragma weak tfc_train_step
#pragma weak tfc_optimizer_step

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

double seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// "1h02m", "4m05s", "12s".
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

/// Creates `path` and its missing parents.
bool makeDirs(const std::string &path, std::string &err) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/')
      continue;
    std::string prefix = path.substr(0, i);
    if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      err = prefix + ": cannot create directory: " + strerror(errno);
      return false;
    }
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    err = path + ": not a directory";
    return false;
  }
  return true;
}

/// `path` made absolute (symbolic links resolved) when it exists.
std::string absolutePath(const std::string &path) {
  if (path.empty())
    return path;
  char *resolved = realpath(path.c_str(), nullptr);
  if (!resolved)
    return path;
  std::string out = resolved;
  free(resolved);
  return out;
}

std::string dirName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

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

bool loadLmData(const Manifest &m, RunData &d, std::string &err) {
  if (m.vocab < 256) {
    err = format("train: byte-level data needs a vocabulary of 256, the model "
                 "has %lld",
                 (long long)m.vocab);
    return false;
  }
  if (!loadBytes(d.trainPath, d.bytes, err))
    return false;
  SplitBounds bounds =
      splitBounds(int64_t(d.bytes.size()), m.trainFraction, m.valFraction);
  d.train = splitSpan(d.bytes, bounds, Split::Train);
  d.val = splitSpan(d.bytes, bounds, Split::Val);
  d.test = splitSpan(d.bytes, bounds, Split::Test);
  d.valWhat = "val split of " + d.trainPath;
  d.testWhat = "test split of " + d.trainPath;
  if (!d.valPath.empty()) {
    if (!loadBytes(d.valPath, d.valBytes, err))
      return false;
    d.val = {reinterpret_cast<const uint8_t *>(d.valBytes.data()),
             int64_t(d.valBytes.size())};
    d.valWhat = d.valPath;
  }
  if (!d.testPath.empty()) {
    if (!loadBytes(d.testPath, d.testBytes, err))
      return false;
    d.test = {reinterpret_cast<const uint8_t *>(d.testBytes.data()),
              int64_t(d.testBytes.size())};
    d.testWhat = d.testPath;
  }
  if (d.train.size <= m.seqLen) {
    err = format("%s: the train split has %lld bytes; a training window needs "
                 "%lld (seq_len + 1)",
                 d.trainPath.c_str(), (long long)d.train.size,
                 (long long)(m.seqLen + 1));
    return false;
  }
  return true;
}

bool loadClassifyData(const Manifest &m, RunData &d, std::string &err) {
  std::vector<Example> all;
  if (!loadJsonl(d.trainPath, m.classes, all, err))
    return false;
  if (!d.valPath.empty()) {
    if (!loadJsonl(d.valPath, m.classes, d.valLines, err))
      return false;
    d.trainLines = std::move(all);
    d.valWhat = d.valPath;
  } else {
    std::vector<int64_t> trainIdx, valIdx;
    holdoutSplit(int64_t(all.size()), m.holdoutFraction, trainIdx, valIdx);
    for (int64_t i : trainIdx)
      d.trainLines.push_back(all[size_t(i)]);
    for (int64_t i : valIdx)
      d.valLines.push_back(all[size_t(i)]);
    d.valWhat = format("%zu lines held out of %s (%g%%)", d.valLines.size(),
                       d.trainPath.c_str(), m.holdoutFraction * 100);
  }
  if (!d.testPath.empty()) {
    if (!loadJsonl(d.testPath, m.classes, d.testLines, err))
      return false;
    d.testWhat = d.testPath;
  }
  return true;
}

/// One line of progress: a bar on a terminal (redrawn in place), plain log
/// lines otherwise.
struct Progress {
  bool terminal = false;
  bool barShown = false;
  int64_t logEvery = 1;
  double logSeconds = 60; ///< Plain lines: at least one per logSeconds.
  double lastLine = 0;

  void clearBar() {
    if (barShown) {
      printf("\r\033[K");
      barShown = false;
    }
  }
  /// Prints a line of its own (evaluations, notes).
  void line(const std::string &text) {
    clearBar();
    printf("%s\n", text.c_str());
    fflush(stdout);
  }
  void step(int64_t t, int64_t total, double loss, double lr, double gradNorm,
            double tokensPerSecond, double eta, double now) {
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
};

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
  const bool lm = m.task == Task::LanguageModel;
  const bool resuming = !o.resume.empty();
  const int64_t B = m.batch, S = m.seqLen;
  std::string err;

  // The four flat buffers.
  FloatBuffer params, grads, adamM, adamV;
  if (!params.allocate(m.params, "parameters", err) ||
      !grads.allocate(m.params + 1, "gradients", err) ||
      !adamM.allocate(m.params, "Adam m", err) ||
      !adamV.allocate(m.params, "Adam v", err))
    return fail(err);

  // Where the run starts: a training checkpoint, weights, or a fresh init.
  TrainState state;
  state.seed = o.hasSeed ? o.seed : m.seed;
  if (resuming) {
    SafetensorsFile file;
    if (!file.open(o.resume, err) || !readTrainState(file, state, err))
      return fail(err);
    // A resume continues a run of this model, and writes into its folder.
    const std::string *model = file.metadataValue("tfc.model");
    if (model && *model != m.model)
      return fail(o.resume + ": the checkpoint is of model '" + *model +
                  "', this executable is model '" + m.model +
                  "'; --resume continues a run of the same model (--weights "
                  "starts from another model's weights of the same shapes)");
    if (!readManifestTensors(file, m, params.data(), "", err) ||
        !readManifestTensors(file, m, adamM.data(), kAdamMPrefix, err) ||
        !readManifestTensors(file, m, adamV.data(), kAdamVPrefix, err))
      return fail(err);
    if (o.hasSeed && o.seed != state.seed)
      return fail(format("train: --seed %llu: the run being resumed has seed "
                         "%llu (a resumed run keeps its seed)",
                         (unsigned long long)o.seed,
                         (unsigned long long)state.seed));
  } else if (!o.weights.empty()) {
    if (!loadCheckpoint(o.weights, m, params.data(), err))
      return fail(err);
  } else {
    initParams(m, params.data(), state.seed);
  }
  int64_t steps = o.steps > 0 ? o.steps
                  : resuming  ? state.totalSteps
                              : m.trainSteps;
  if (steps < 1)
    return fail("train: the model records no number of training steps; pass "
                "--steps N");
  state.totalSteps = steps;
  // The base learning rate: the command line, else the run being resumed,
  // else the spec.
  state.lr = o.lr > 0 ? o.lr : resuming && state.lr > 0 ? state.lr : m.lr;
  if (!(state.lr > 0))
    return fail("train: the model records no learning rate; pass --lr R");
  // Settings: the command line, else the run being resumed, else the spec.
  auto setting = [](int64_t given, int64_t resumed, int64_t spec) {
    return given >= 0 ? given : resumed >= 0 ? resumed : spec;
  };
  const int64_t evalEvery = state.evalEvery =
      setting(o.evalEvery, state.evalEvery, m.evalEvery);
  const int64_t evalBatches = state.evalBatches =
      setting(o.evalBatches, state.evalBatches, m.evalBatches);
  const int64_t testBatches = state.testBatches =
      setting(o.testBatches, state.testBatches, 0);
  const int64_t patience = state.patience =
      setting(o.patience, state.patience, m.patience);
  const int64_t warmup = state.warmup =
      setting(o.warmup, state.warmup, m.warmup);
  const int64_t checkpointEvery = state.checkpointEvery =
      setting(o.checkpointEvery, state.checkpointEvery, m.checkpointEvery);
  const uint64_t seed = state.seed;

  // Data: the command line, else the run being resumed, else the spec.
  RunData data;
  data.trainPath = !o.data.empty() ? o.data
                   : resuming      ? state.dataTrain
                                   : m.dataTrain;
  data.valPath = !o.val.empty() ? o.val : resuming ? state.dataVal : m.dataVal;
  data.testPath = !o.test.empty() ? o.test
                  : resuming      ? state.dataTest
                                  : m.dataTest;
  state.dataTrain = absolutePath(data.trainPath);
  state.dataVal = absolutePath(data.valPath);
  state.dataTest = absolutePath(data.testPath);
  if (data.trainPath.empty())
    return fail("train: no training data: the spec sets no data.train; pass "
                "--data PATH");
  if (!(lm ? loadLmData(m, data, err) : loadClassifyData(m, data, err)))
    return fail(err);
  // Test data that was asked for must hold a batch; the default test split
  // of a short corpus is skipped at the end instead.
  if (lm && !data.testPath.empty() && evalWindowCount(data.test, S) < B)
    return fail(format("train: the test data (%s) has %lld bytes; one "
                       "evaluation batch needs %lld (batch * seq_len + 1)",
                       data.testWhat.c_str(), (long long)data.test.size,
                       (long long)(B * S + 1)));
  if (evalEvery > 0) {
    if (lm && evalWindowCount(data.val, S) < B)
      return fail(format("train: the validation data (%s) has %lld bytes; one "
                         "evaluation batch needs %lld (batch * seq_len + 1); "
                         "pass --val PATH or --eval-every 0",
                         data.valWhat.c_str(), (long long)data.val.size,
                         (long long)(B * S + 1)));
    if (!lm && data.valLines.empty())
      return fail("train: no validation lines (val_fraction is 0 and no "
                  "data.val); pass --val PATH or --eval-every 0");
  }

  // The vocabulary of a classifier: the run's own, or the one beside the
  // checkpoint or weights it starts from.
  Vocab vocab;
  if (!lm) {
    if (resuming || !o.weights.empty()) {
      std::string from = (resuming ? o.resume : o.weights) + ".vocab";
      if (!loadVocab(from, m.vocab, vocab, err))
        return fail(err);
    } else {
      vocab = buildVocab(data.trainLines, m.vocab, m.minFreq);
    }
  }
  const Vocab *runVocab = lm ? nullptr : &vocab;

  // Under mpirun: the ranks must train on the same data with the same
  // settings, from rank 0's parameters (Distributed.h).
  if (world.size > 1) {
    uint64_t dataHash = hashBytes(nullptr, 0);
    for (ByteSpan span : {data.train, data.val, data.test})
      dataHash = hashBytes(span.data, size_t(span.size),
                           hashBytes(&span.size, sizeof(span.size), dataHash));
    for (const auto *lines : {&data.trainLines, &data.valLines,
                              &data.testLines})
      for (const Example &e : *lines)
        dataHash = hashBytes(e.text.data(), e.text.size(),
                             hashBytes(&e.label, sizeof(e.label), dataHash));
    for (const std::string &token : vocab.tokens)
      dataHash = hashBytes(token.data(), token.size() + 1, dataHash);
    int64_t settings[] = {steps,    evalEvery, evalBatches,     testBatches,
                          patience, warmup,    checkpointEvery, state.step,
                          int64_t(seed)};
    uint64_t settingsHash = hashBytes(settings, sizeof(settings));
    settingsHash = hashBytes(&state.lr, sizeof(state.lr), settingsHash);
    settingsHash = hashBytes(&o.minutes, sizeof(o.minutes), settingsHash);
    std::string settingsText =
        format("step %lld of %lld, lr %g, seed %llu, minutes %g",
               (long long)state.step, (long long)steps, state.lr,
               (unsigned long long)seed, o.minutes);
    if (!ranksAgree("training data", dataHash, data.trainPath, err) ||
        !ranksAgree("run configuration", settingsHash, settingsText, err)) {
      world.agreed = true;
      return fail("train: " + err);
    }
    broadcastFromRank0(params.data(), m.params);
    if (resuming) {
      broadcastFromRank0(adamM.data(), m.params);
      broadcastFromRank0(adamV.data(), m.params);
    }
  }
  const int64_t N = world.size, G = N * B; // Ranks, global batch.
  // The parameters, gradients and Adam moments stay on the device (if
  // any) from here to the end of the run.
  if (tfc_device_keep) {
    tfc_device_keep(params.data(), m.params * int64_t(sizeof(float)));
    tfc_device_keep(grads.data(), (m.params + 1) * int64_t(sizeof(float)));
    tfc_device_keep(adamM.data(), m.params * int64_t(sizeof(float)));
    tfc_device_keep(adamV.data(), m.params * int64_t(sizeof(float)));
  }

  // The run directory and its metrics log.
  std::string dir = !o.outDir.empty() ? o.outDir
                    : resuming        ? dirName(o.resume)
                                      : "runs/" + m.model;
  const bool writer = world.rank == 0; // Rank 0 alone writes the run's files.
  if (writer && (!makeDirs(dir, err) || !lockRunDirectory(dir, err)))
    return fail(err);
  const std::string lastPath = dir + "/last.safetensors";
  const std::string bestPath = dir + "/best.safetensors";
  const std::string logPath = dir + "/metrics.jsonl";
  const std::string svgPath = dir + "/curves.svg";
  // A new run does not write over another run's checkpoints.
  struct stat info;
  if (!resuming && writer)
    for (const std::string &path : {lastPath, bestPath})
      if (stat(path.c_str(), &info) == 0)
        return fail(path +
                    ": the directory holds a run already; continue it "
                    "with --resume " +
                    lastPath + ", or choose another --out DIR");
  // The best weights that the checkpoint records are in best.safetensors
  // only if that file was written at the same best step: a run killed
  // after a later best (or a resume into another --out) leaves other or no
  // weights there. Then the final test uses the last weights unless this
  // run's validation saves a best of its own.
  bool bestOnDisk = state.hasBest;
  if (resuming && state.hasBest) {
    float found = 0;
    if (writer) {
      SafetensorsFile best;
      std::string ignored;
      const std::string *step = best.open(bestPath, ignored)
                                    ? best.metadataValue("tfc.best_step")
                                    : nullptr;
      found = step && *step == std::to_string(state.bestStep);
      if (!found)
        printf("note: %s %s, not the best weights of step %lld that the "
               "checkpoint records; the final test uses the last weights "
               "unless validation finds better ones\n",
               bestPath.c_str(),
               !step ? "is missing or has no tfc.best_step"
                     : ("holds the weights of step " + *step).c_str(),
               (long long)state.bestStep);
    }
    broadcastFromRank0(&found, 1);
    bestOnDisk = found != 0;
  }
  LossHistory history;
  if (writer && resuming) {
    if (!truncateMetricsLog(logPath, state.step, history, err))
      return fail(err);
  } else if (writer && !writeFileAtomic(logPath, {}, err)) {
    return fail(err);
  }
  // Every record and every drawing of the curves is checked: after a
  // failed write (`err` says which) nothing more is written and the run
  // stops (failedWrite below). Ranks other than 0 write nothing.
  AppendFile log;
  if (writer && !log.open(logPath, err))
    return fail(err);
  bool writeFailed = false;
  auto logLine = [&](const Json &record) {
    if (writer)
      writeFailed = writeFailed || !log.append(jsonText(record) + "\n", err);
  };
  auto writeCurves = [&]() {
    if (!writer)
      return;
    std::string svg = lossCurvesSvg(history, m.model + " — loss");
    writeFailed = writeFailed ||
                  !writeFileAtomic(svgPath, {{svg.data(), svg.size()}}, err);
  };

  printf("model %s (%s): %lld parameters (%lld trainable), batch %lld x "
         "%lld\n",
         m.model.c_str(), toString(m.task), (long long)m.params,
         (long long)m.trainableCount(), (long long)B, (long long)S);
  // The precision, when not float32 (absent: f32).
  if (m.precision != "f32")
    logLine({{"step", state.step},
             {"event", "precision"},
             {"precision", m.precision}});
  if (N > 1) {
    printf("data parallel: %lld ranks x batch %lld = global batch %lld; base "
           "lr %g, %lld steps, warmup %lld (not scaled by the rank count)\n",
           (long long)N, (long long)B, (long long)G, state.lr, (long long)steps,
           (long long)warmup);
    logLine({{"step", state.step},
             {"event", "data_parallel"},
             {"ranks", N},
             {"batch", B},
             {"global_batch", G},
             {"lr", jsonNumber(state.lr)},
             {"steps", steps},
             {"warmup", warmup}});
  }
  if (lm)
    printf("train: %s (%lld bytes)\nval: %s\n", data.trainPath.c_str(),
           (long long)data.train.size, data.valWhat.c_str());
  else
    printf("train: %s (%zu lines), vocabulary %lld words\nval: %s\n",
           data.trainPath.c_str(), data.trainLines.size(),
           (long long)vocab.size(), data.valWhat.c_str());
  printf("steps %lld, lr %g, warmup %lld, eval every %lld (%s batches), "
         "checkpoint every %lld, patience %lld, seed %llu\n",
         (long long)steps, state.lr, (long long)warmup, (long long)evalEvery,
         evalBatches > 0 ? std::to_string(evalBatches).c_str() : "all",
         (long long)checkpointEvery, (long long)patience,
         (unsigned long long)seed);
  const double budget = o.minutes * 60; // Seconds; 0: no time limit.
  if (budget > 0)
    printf("time limit %s (--minutes %g)\n", duration(budget).c_str(),
           o.minutes);
  if (resuming)
    printf("resuming %s at step %lld\n", o.resume.c_str(),
           (long long)state.step);
  printf("writing to %s/\n", dir.c_str());
  fflush(stdout);

  // Ctrl-C and SIGTERM finish the step and save; a second one kills.
  struct sigaction action, oldInt, oldTerm;
  memset(&action, 0, sizeof(action));
  action.sa_handler = onStopSignal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &oldInt);
  sigaction(SIGTERM, &action, &oldTerm);

  Progress progress;
  // mpirun gives rank 0 a terminal of its own even when its output goes
  // to a file: plain lines under mpirun.
  progress.terminal = isatty(STDOUT_FILENO) && N == 1;
  progress.logEvery = std::max<int64_t>(1, steps / 100);
  if (budget > 0)
    progress.logSeconds = std::max(1.0, budget / 20);
  BatchBuffers io(m);
  EpochSampler sampler(int64_t(data.trainLines.size()), seed);
  std::vector<int64_t> rows;
  // Under mpirun, the global batch of G rows, of which this rank trains
  // rows rank * B .. rank * B + B - 1.
  std::vector<int32_t> globalTokens, globalTargets;
  if (lm && N > 1) {
    globalTokens.resize(size_t(G * S));
    globalTargets.resize(size_t(G * S));
  }
  double reduceTime = 0; // Seconds in the all-reduce, this step.
  // The step of the checkpoint at lastPath that this run started from, if
  // any: what a failure leaves in place.
  int64_t lastSaved =
      resuming && absolutePath(o.resume) == absolutePath(lastPath) ? state.step
                                                                   : -1;
  bool stoppedEarly = patience > 0 && state.badEvals >= patience;
  if (stoppedEarly && state.step < steps)
    progress.line(format("the run stopped early at step %lld (%lld "
                         "validations without improvement); nothing to train",
                         (long long)state.step, (long long)state.badEvals));
  const double start = seconds();
  progress.lastLine = start;
  const int64_t firstStep = state.step + 1;
  double stepTime = 0;
  auto checkpointNote = [&]() {
    return lastSaved >= 0 ? format("%s, step %lld, is kept as it was",
                                   lastPath.c_str(), (long long)lastSaved)
                          : std::string("no checkpoint was written");
  };
  auto failedWrite = [&](int64_t t) {
    progress.clearBar();
    return fail(format("%s; the run stops at step %lld (%s)", err.c_str(),
                       (long long)t, checkpointNote().c_str()));
  };

  for (int64_t t = state.step + 1; t <= steps && !stoppedEarly; ++t) {
    if (redrawBefore(t, m.redraw)) {
      hostWrite(params.data());
      redrawFeatures(m, params.data(), redrawSeed(seed, (t - 1) / m.redraw));
    }
    if (lm && N > 1) {
      sampleBatch(data.train, G, S, seed, uint64_t(t - 1), globalTokens.data(),
                  globalTargets.data());
      size_t first = size_t(world.rank * B * S);
      std::copy_n(&globalTokens[first], B * S, io.tokens.data());
      std::copy_n(&globalTargets[first], B * S, io.targets.data());
    } else if (lm) {
      sampleBatch(data.train, B, S, seed, uint64_t(t - 1), io.tokens.data(),
                  io.targets.data());
    } else {
      sampler.batch(t, G, rows);
      for (int64_t b = 0; b < B; ++b)
        fillClassifyRow(
            m, vocab,
            &data.trainLines[size_t(rows[size_t(world.rank * B + b)])], b, io);
    }
    // Each rank draws its own dropout masks (rank 0 those of one process).
    int64_t stepSeed =
        dropoutSeed(seed + 0x9e3779b97f4a7c15ull * uint64_t(world.rank), t);
    float loss = 0;
    double t0 = seconds();
    tfc_train_step(params.data(), io.tokens.data(), io.targets.data(),
                   io.mask.data(), &stepSeed, grads.data(), &loss);
    if (N > 1) {
      // The mean over the global batch: each rank's loss and gradients are
      // means over B of its G rows. One all-reduce carries both.
      double r0 = seconds();
      hostWrite(grads.data());
      grads.data()[m.params] = loss;
      sumAcrossRanks(grads.data(), m.params + 1);
      reduceTime = seconds() - r0;
      const float scale = 1.0f / float(N);
      float *g = grads.data();
      for (int64_t i = 0; i <= m.params; ++i)
        g[i] *= scale;
      loss = g[m.params];
    }
    if (!std::isfinite(loss)) {
      progress.clearBar();
      world.agreed = true;
      return fail(format("train: step %lld: the loss is %s; stopping (%s)",
                         (long long)t, std::isnan(loss) ? "nan" : "infinite",
                         checkpointNote().c_str()));
    }
    int64_t update = t;
    float stats[2] = {0, 0};
    float schedule[3] = {float(state.lr), float(steps), float(warmup)};
    tfc_optimizer_step(params.data(), grads.data(), adamM.data(), adamV.data(),
                       &update, schedule, params.data(), adamM.data(),
                       adamV.data(), stats);
    if (!std::isfinite(stats[0])) {
      progress.clearBar();
      world.agreed = true;
      return fail(format("train: step %lld: the gradient norm is %s; stopping "
                         "(%s)",
                         (long long)t,
                         std::isnan(stats[0]) ? "nan" : "infinite",
                         checkpointNote().c_str()));
    }
    double now = seconds();
    double stepSeconds = now - t0;
    state.step = t;
    state.tokens += G * S;
    history.train.push_back({t, double(loss)});
    double tokensPerSecond = stepSeconds > 0 ? double(G * S) / stepSeconds : 0;
    Json record = {{"step", t},
                   {"loss", jsonFloat(loss)},
                   {"lr", jsonFloat(stats[1])},
                   {"grad_norm", jsonFloat(stats[0])},
                   {"tokens_per_s", jsonRounded(tokensPerSecond, 1)},
                   {"elapsed_s", jsonRounded(now - start, 3)}};
    if (N > 1) {
      record["allreduce_s"] = jsonRounded(reduceTime, 6);
      record["step_s"] = jsonRounded(stepSeconds, 6);
    }
    // Throughput over the steps' own time; the ETA over the wall clock
    // (evaluations and checkpoints included).
    stepTime += stepSeconds;
    double done = double(t - firstStep + 1);
    double eta = (now - start) / done * double(steps - t);
    if (budget > 0)
      eta = std::min(eta, std::max(0.0, budget - (now - start)));
    progress.step(t, steps, loss, stats[1], stats[0],
                  double(G * S) * done / std::max(stepTime, 1e-9), eta, now);

    // Validation, the best checkpoint and early stopping.
    bool evaluated = evalEvery > 0 && t % evalEvery == 0;
    if (evaluated) {
      double valLoss = 0;
      Json valJson;
      std::string valText;
      if (lm) {
        LmMetrics metrics;
        evaluateLm(m, params.data(), data.val, evalBatches, metrics);
        valLoss = metrics.loss;
        valJson = lmMetricsJson(metrics, "val");
        valText = format("val loss %.4f, %.4f bits/byte", metrics.loss,
                         metrics.bitsPerChar());
      } else {
        ClassificationReport report;
        evaluateClassify(m, vocab, params.data(), data.valLines, evalBatches,
                         report, valLoss);
        valJson = classifyMetricsJson(report, valLoss);
        valText = format("val loss %.4f, accuracy %.4f, macro F1 %.4f", valLoss,
                         report.accuracy, report.macro.f1);
      }
      if (!std::isfinite(valLoss)) {
        progress.clearBar();
        return fail(format("train: step %lld: the validation loss is %s; "
                           "stopping (%s)",
                           (long long)t,
                           std::isnan(valLoss) ? "nan" : "infinite",
                           checkpointNote().c_str()));
      }
      record["val"] = valJson;
      history.val.push_back({t, valLoss});
      if (!state.hasBest || valLoss < state.bestValLoss) {
        state.hasBest = true;
        state.bestValLoss = valLoss;
        state.bestStep = t;
        state.badEvals = 0;
        Metadata best = {{"tfc.best_step", std::to_string(t)},
                         {"tfc.best_val_loss", format("%.17g", valLoss)},
                         {"tfc.seed", std::to_string(seed)}};
        hostRead(params.data());
        if (writer &&
            ((runVocab && !saveVocab(bestPath + ".vocab", vocab, err)) ||
             !saveCheckpoint(bestPath, m, params.data(), {}, best, err))) {
          progress.clearBar();
          return fail(err);
        }
        bestOnDisk = true;
        valText += " (best)";
      } else {
        ++state.badEvals;
        valText += format(" (best %.4f at step %lld; %lld without "
                          "improvement)",
                          state.bestValLoss, (long long)state.bestStep,
                          (long long)state.badEvals);
        stoppedEarly = patience > 0 && state.badEvals >= patience;
      }
      progress.line(format("step %lld: %s", (long long)t, valText.c_str()));
    }
    logLine(record);
    if (evaluated)
      writeCurves();
    if (writeFailed)
      return failedWrite(t);

    // The time limit: this step ends the run (not when it is the last
    // step anyway, or early stopping ended it).
    double elapsed = seconds() - start;
    bool timeUp = budget > 0 && elapsed >= budget && t < steps && !stoppedEarly;

    // The last checkpoint.
    int signal = stopSignal;
    if (N > 1) {
      // The ranks stop together: at any rank's signal or time limit.
      int64_t flags[2] = {signal, timeUp};
      maxAcrossRanks(flags, 2);
      signal = int(flags[0]);
      timeUp = flags[1] != 0;
    }
    if ((checkpointEvery > 0 && t % checkpointEvery == 0) || t == steps ||
        stoppedEarly || timeUp || signal) {
      hostRead(params.data());
      hostRead(adamM.data());
      hostRead(adamV.data());
      // The ranks' parameters must be the same; a difference would be a
      // fault of the run (different OpenMP reductions, memory errors).
      if (N > 1 &&
          !ranksAgree("parameters", hashBytes(params.data(),
                                              size_t(m.params) * sizeof(float)),
                      format("step %lld", (long long)t), err)) {
        progress.clearBar();
        world.agreed = true;
        return fail("train: " + err + "; the data-parallel ranks diverged");
      }
      if (writer && !saveTrainCheckpoint(lastPath, m, params.data(),
                                         adamM.data(), adamV.data(), state,
                                         runVocab, err)) {
        progress.clearBar();
        return fail(err);
      }
      lastSaved = t;
    }
    if (signal) {
      logLine({{"step", t},
               {"event", "interrupted"},
               {"signal", signal == SIGINT ? "SIGINT" : "SIGTERM"}});
      writeCurves();
      if (writeFailed || !log.close(err))
        return failedWrite(t);
      progress.line(format("interrupted: saved %s at step %lld; continue "
                           "with '%s train --resume %s'",
                           lastPath.c_str(), (long long)t, programName.c_str(),
                           lastPath.c_str()));
      world.agreed = true;
      return 128 + signal;
    }
    if (stoppedEarly) {
      logLine({{"step", t},
               {"event", "early_stop"},
               {"best_step", state.bestStep},
               {"best_val_loss", jsonNumber(state.bestValLoss)}});
      if (writeFailed)
        return failedWrite(t);
      progress.line(format("early stop at step %lld: no better validation "
                           "loss in %lld evaluations (best %.4f at step %lld)",
                           (long long)t, (long long)patience, state.bestValLoss,
                           (long long)state.bestStep));
    }
    if (timeUp) {
      logLine({{"step", t},
               {"event", "time_limit"},
               {"minutes", jsonNumber(o.minutes)},
               {"elapsed_s", jsonRounded(elapsed, 3)}});
      if (writeFailed)
        return failedWrite(t);
      progress.line(format("time limit: stopping at step %lld of %lld after "
                           "%s (--minutes %g); continue with '%s train "
                           "--resume %s'",
                           (long long)t, (long long)steps,
                           duration(elapsed).c_str(), o.minutes,
                           programName.c_str(), lastPath.c_str()));
      break;
    }
  }
  progress.clearBar();
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  writeCurves();
  if (writeFailed)
    return failedWrite(state.step);
  printf("trained to step %lld in %s; %s\n", (long long)state.step,
         duration(seconds() - start).c_str(), lastPath.c_str());

  // The final test, on the best weights when validation found some.
  std::string weightsName = "last";
  int64_t weightsStep = state.step;
  if (state.hasBest && bestOnDisk) {
    hostWrite(params.data());
    if (writer && !loadCheckpoint(bestPath, m, params.data(), err))
      return fail(err);
    broadcastFromRank0(params.data(), m.params);
    weightsName = "best";
    weightsStep = state.bestStep;
  }
  Json testJson;
  if (lm) {
    LmMetrics metrics;
    if (evaluateLm(m, params.data(), data.test, testBatches, metrics)) {
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
    evaluateClassify(m, vocab, params.data(), data.testLines, testBatches,
                     report, loss);
    testJson = classifyMetricsJson(report, loss);
    printf("test (%s weights, step %lld, %s): loss %.4f\n\n%s",
           weightsName.c_str(), (long long)weightsStep, data.testWhat.c_str(),
           loss, classificationReportText(report).c_str());
  } else {
    printf("test: skipped, no test data (pass --test PATH)\n");
  }
  if (!testJson.is_null()) {
    logLine({{"step", state.step},
             {"test", testJson},
             {"weights", weightsName},
             {"weights_step", weightsStep}});
    if (writeFailed)
      return failedWrite(state.step);
    printf("%s\n", jsonText(testJson).c_str());
  }
  if (!log.close(err))
    return failedWrite(state.step);
  world.agreed = true;
  return 0;
}

} // namespace tfc::rt
