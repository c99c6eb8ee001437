//===- TrainSetup.cpp - Everything a training run does before its steps ---===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The set-up of `./model train` (Train.cpp): where the run starts (a
/// training checkpoint, weights or a fresh init), its settings, its data
/// and vocabulary, the ranks' agreement under mpirun, its run directory
/// with the metrics log, and the header it prints. Each phase returns false
/// with `Trainer::err` set when it fails.
///
//===----------------------------------------------------------------------===//

#include "runtime/Distributed.h"
#include "runtime/Plot.h"
#include "runtime/Safetensors.h"
#include "runtime/Trainer.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace tfc::rt {

Trainer::Trainer(const Manifest &m, const Options &o)
    : m(m), o(o), lm(m.task == Task::LanguageModel),
      resuming(!o.resume.empty()), B(m.batch), S(m.seqLen), N(world.size),
      G(world.size * m.batch), writer(world.rank == 0), io(m) {}

void Trainer::logLine(const Json &record) {
  if (writer)
    writeFailed = writeFailed || !log.append(jsonText(record) + "\n", err);
}

void Trainer::writeCurves() {
  if (!writer)
    return;
  std::string svg = lossCurvesSvg(history, m.model + " — loss");
  writeFailed =
      writeFailed || !writeFileAtomic(svgPath, {{svg.data(), svg.size()}}, err);
}

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

namespace {

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

/// The directory part of `path`: "." when it has none.
std::string dirName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Loads byte data: the train, val and test splits of the training file,
/// or the files given for validation and test.
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

/// Loads JSONL lines: the training lines, and the validation lines of their
/// own file or held out of the training lines.
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

/// The four flat buffers, filled from the checkpoint being resumed, from
/// --weights, or by a seeded initialisation.
bool loadStartingPoint(Trainer &t) {
  const Manifest &m = t.m;
  const Options &o = t.o;
  std::string &err = t.err;
  if (!t.params.allocate(m.params, "parameters", err) ||
      !t.grads.allocate(m.params + 1, "gradients", err) ||
      !t.adamM.allocate(m.params, "Adam m", err) ||
      !t.adamV.allocate(m.params, "Adam v", err))
    return false;
  t.state.seed = o.hasSeed ? o.seed : m.seed;
  if (!t.resuming) {
    if (!o.weights.empty())
      return loadCheckpoint(o.weights, m, t.params.data(), err);
    initParams(m, t.params.data(), t.state.seed);
    return true;
  }
  SafetensorsFile file;
  if (!file.open(o.resume, err) || !readTrainState(file, t.state, err))
    return false;
  // A resume continues a run of this model, and writes into its folder.
  const std::string *model = file.metadataValue("tfc.model");
  if (model && *model != m.model) {
    err = o.resume + ": the checkpoint is of model '" + *model +
          "', this executable is model '" + m.model +
          "'; --resume continues a run of the same model (--weights "
          "starts from another model's weights of the same shapes)";
    return false;
  }
  if (!readManifestTensors(file, m, t.params.data(), "", err) ||
      !readManifestTensors(file, m, t.adamM.data(), kAdamMPrefix, err) ||
      !readManifestTensors(file, m, t.adamV.data(), kAdamVPrefix, err))
    return false;
  if (o.hasSeed && o.seed != t.state.seed) {
    err = format("train: --seed %llu: the run being resumed has seed %llu (a "
                 "resumed run keeps its seed)",
                 (unsigned long long)o.seed, (unsigned long long)t.state.seed);
    return false;
  }
  return true;
}

/// The steps, learning rate and the other settings of the run: the command
/// line, else the run being resumed, else the spec.
bool resolveSettings(Trainer &t) {
  const Manifest &m = t.m;
  const Options &o = t.o;
  TrainState &state = t.state;
  t.steps = o.steps > 0  ? o.steps
            : t.resuming ? state.totalSteps
                         : m.trainSteps;
  if (t.steps < 1) {
    t.err = "train: the model records no number of training steps; pass "
            "--steps N";
    return false;
  }
  state.totalSteps = t.steps;
  state.lr = o.lr > 0 ? o.lr : t.resuming && state.lr > 0 ? state.lr : m.lr;
  if (!(state.lr > 0)) {
    t.err = "train: the model records no learning rate; pass --lr R";
    return false;
  }
  auto setting = [](int64_t given, int64_t resumed, int64_t spec) {
    return given >= 0 ? given : resumed >= 0 ? resumed : spec;
  };
  t.evalEvery = state.evalEvery =
      setting(o.evalEvery, state.evalEvery, m.evalEvery);
  t.evalBatches = state.evalBatches =
      setting(o.evalBatches, state.evalBatches, m.evalBatches);
  t.testBatches = state.testBatches =
      setting(o.testBatches, state.testBatches, 0);
  t.patience = state.patience = setting(o.patience, state.patience, m.patience);
  t.warmup = state.warmup = setting(o.warmup, state.warmup, m.warmup);
  t.checkpointEvery = state.checkpointEvery =
      setting(o.checkpointEvery, state.checkpointEvery, m.checkpointEvery);
  t.seed = state.seed;
  t.budget = o.minutes * 60;
  return true;
}

/// The data (the command line, else the run being resumed, else the spec),
/// checked to hold what training, validation and the test need; then a
/// classifier's vocabulary: the run's own, or the one beside the
/// checkpoint or weights it starts from.
bool loadTrainingData(Trainer &t) {
  const Manifest &m = t.m;
  const Options &o = t.o;
  TrainState &state = t.state;
  RunData &data = t.data;
  const int64_t B = t.B, S = t.S;
  data.trainPath = !o.data.empty() ? o.data
                   : t.resuming    ? state.dataTrain
                                   : m.dataTrain;
  data.valPath = !o.val.empty() ? o.val
                 : t.resuming   ? state.dataVal
                                : m.dataVal;
  data.testPath = !o.test.empty() ? o.test
                  : t.resuming    ? state.dataTest
                                  : m.dataTest;
  state.dataTrain = absolutePath(data.trainPath);
  state.dataVal = absolutePath(data.valPath);
  state.dataTest = absolutePath(data.testPath);
  if (data.trainPath.empty()) {
    t.err = "train: no training data: the spec sets no data.train; pass "
            "--data PATH";
    return false;
  }
  if (!(t.lm ? loadLmData(m, data, t.err) : loadClassifyData(m, data, t.err)))
    return false;
  // Test data that was asked for must hold a batch; the default test split
  // of a short corpus is skipped at the end instead.
  if (t.lm && !data.testPath.empty() && evalWindowCount(data.test, S) < B) {
    t.err = format("train: the test data (%s) has %lld bytes; one evaluation "
                   "batch needs %lld (batch * seq_len + 1)",
                   data.testWhat.c_str(), (long long)data.test.size,
                   (long long)(B * S + 1));
    return false;
  }
  if (t.evalEvery > 0 && t.lm && evalWindowCount(data.val, S) < B) {
    t.err = format("train: the validation data (%s) has %lld bytes; one "
                   "evaluation batch needs %lld (batch * seq_len + 1); pass "
                   "--val PATH or --eval-every 0",
                   data.valWhat.c_str(), (long long)data.val.size,
                   (long long)(B * S + 1));
    return false;
  }
  if (t.evalEvery > 0 && !t.lm && data.valLines.empty()) {
    t.err = "train: no validation lines (val_fraction is 0 and no data.val); "
            "pass --val PATH or --eval-every 0";
    return false;
  }
  if (t.lm)
    return true;
  t.runVocab = &t.vocab;
  if (!t.resuming && o.weights.empty()) {
    t.vocab = buildVocab(data.trainLines, m.vocab, m.minFreq);
    return true;
  }
  std::string from = (t.resuming ? o.resume : o.weights) + ".vocab";
  return loadVocab(from, m.vocab, t.vocab, t.err);
}

/// Under mpirun: the ranks must train on the same data with the same
/// settings, from rank 0's parameters (Distributed.h).
bool agreeAcrossRanks(Trainer &t) {
  const RunData &data = t.data;
  uint64_t dataHash = hashBytes(nullptr, 0);
  for (ByteSpan span : {data.train, data.val, data.test})
    dataHash = hashBytes(span.data, size_t(span.size),
                         hashBytes(&span.size, sizeof(span.size), dataHash));
  for (const auto *lines : {&data.trainLines, &data.valLines, &data.testLines})
    for (const Example &e : *lines)
      dataHash = hashBytes(e.text.data(), e.text.size(),
                           hashBytes(&e.label, sizeof(e.label), dataHash));
  for (const std::string &token : t.vocab.tokens)
    dataHash = hashBytes(token.data(), token.size() + 1, dataHash);
  const TrainState &state = t.state;
  int64_t settings[] = {t.steps,           t.evalEvery, t.evalBatches,
                        t.testBatches,     t.patience,  t.warmup,
                        t.checkpointEvery, state.step,  int64_t(t.seed)};
  uint64_t settingsHash = hashBytes(settings, sizeof(settings));
  settingsHash = hashBytes(&state.lr, sizeof(state.lr), settingsHash);
  settingsHash = hashBytes(&t.o.minutes, sizeof(t.o.minutes), settingsHash);
  std::string settingsText = format(
      "step %lld of %lld, lr %g, seed %llu, minutes %g", (long long)state.step,
      (long long)t.steps, state.lr, (unsigned long long)t.seed, t.o.minutes);
  std::string why;
  if (!ranksAgree("training data", dataHash, data.trainPath, why) ||
      !ranksAgree("run configuration", settingsHash, settingsText, why)) {
    world.agreed = true;
    t.err = "train: " + why;
    return false;
  }
  broadcastFromRank0(t.params.data(), t.m.params);
  if (t.resuming) {
    broadcastFromRank0(t.adamM.data(), t.m.params);
    broadcastFromRank0(t.adamV.data(), t.m.params);
  }
  return true;
}

/// Whether best.safetensors holds the best weights that the checkpoint
/// records: only if that file was written at the same best step. A run
/// killed after a later best (or a resume into another --out) leaves other
/// or no weights there; then the final test uses the last weights unless
/// this run's validation saves a best of its own.
bool bestWeightsOnDisk(const Trainer &t) {
  if (!t.resuming || !t.state.hasBest)
    return t.state.hasBest;
  float found = 0;
  if (t.writer) {
    SafetensorsFile best;
    std::string ignored;
    const std::string *step = best.open(t.bestPath, ignored)
                                  ? best.metadataValue("tfc.best_step")
                                  : nullptr;
    found = step && *step == std::to_string(t.state.bestStep);
    if (!found)
      printf("note: %s %s, not the best weights of step %lld that the "
             "checkpoint records; the final test uses the last weights "
             "unless validation finds better ones\n",
             t.bestPath.c_str(),
             !step ? "is missing or has no tfc.best_step"
                   : ("holds the weights of step " + *step).c_str(),
             (long long)t.state.bestStep);
  }
  broadcastFromRank0(&found, 1);
  return found != 0;
}

/// The run directory, locked, and its metrics log: cut back to the step
/// being resumed, or new.
bool openRunDirectory(Trainer &t) {
  std::string &err = t.err;
  t.dir = !t.o.outDir.empty() ? t.o.outDir
          : t.resuming        ? dirName(t.o.resume)
                              : "runs/" + t.m.model;
  if (t.writer && (!makeDirs(t.dir, err) || !lockRunDirectory(t.dir, err)))
    return false;
  t.lastPath = t.dir + "/last.safetensors";
  t.bestPath = t.dir + "/best.safetensors";
  t.logPath = t.dir + "/metrics.jsonl";
  t.svgPath = t.dir + "/curves.svg";
  // A new run does not write over another run's checkpoints.
  struct stat info;
  if (!t.resuming && t.writer)
    for (const std::string &path : {t.lastPath, t.bestPath})
      if (stat(path.c_str(), &info) == 0) {
        err = path +
              ": the directory holds a run already; continue it with "
              "--resume " +
              t.lastPath + ", or choose another --out DIR";
        return false;
      }
  t.bestOnDisk = bestWeightsOnDisk(t);
  if (t.writer && t.resuming) {
    if (!truncateMetricsLog(t.logPath, t.state.step, t.history, err))
      return false;
  } else if (t.writer && !writeFileAtomic(t.logPath, {}, err)) {
    return false;
  }
  return !t.writer || t.log.open(t.logPath, err);
}

/// What the run prints (and logs) before its first step.
void printHeader(Trainer &t) {
  const Manifest &m = t.m;
  const TrainState &state = t.state;
  printf("model %s (%s): %lld parameters (%lld trainable), batch %lld x "
         "%lld\n",
         m.model.c_str(), toString(m.task), (long long)m.params,
         (long long)m.trainableCount(), (long long)t.B, (long long)t.S);
  // The precision, when not float32 (absent: f32).
  if (m.precision != "f32")
    t.logLine({{"step", state.step},
               {"event", "precision"},
               {"precision", m.precision}});
  if (t.N > 1) {
    printf("data parallel: %lld ranks x batch %lld = global batch %lld; base "
           "lr %g, %lld steps, warmup %lld (not scaled by the rank count)\n",
           (long long)t.N, (long long)t.B, (long long)t.G, state.lr,
           (long long)t.steps, (long long)t.warmup);
    t.logLine({{"step", state.step},
               {"event", "data_parallel"},
               {"ranks", t.N},
               {"batch", t.B},
               {"global_batch", t.G},
               {"lr", jsonNumber(state.lr)},
               {"steps", t.steps},
               {"warmup", t.warmup}});
  }
  if (t.lm)
    printf("train: %s (%lld bytes)\nval: %s\n", t.data.trainPath.c_str(),
           (long long)t.data.train.size, t.data.valWhat.c_str());
  else
    printf("train: %s (%zu lines), vocabulary %lld words\nval: %s\n",
           t.data.trainPath.c_str(), t.data.trainLines.size(),
           (long long)t.vocab.size(), t.data.valWhat.c_str());
  printf("steps %lld, lr %g, warmup %lld, eval every %lld (%s batches), "
         "checkpoint every %lld, patience %lld, seed %llu\n",
         (long long)t.steps, state.lr, (long long)t.warmup,
         (long long)t.evalEvery,
         t.evalBatches > 0 ? std::to_string(t.evalBatches).c_str() : "all",
         (long long)t.checkpointEvery, (long long)t.patience,
         (unsigned long long)t.seed);
  if (t.budget > 0)
    printf("time limit %s (--minutes %g)\n", duration(t.budget).c_str(),
           t.o.minutes);
  if (t.resuming)
    printf("resuming %s at step %lld\n", t.o.resume.c_str(),
           (long long)state.step);
  printf("writing to %s/\n", t.dir.c_str());
  fflush(stdout);
}

} // namespace

bool setUpRun(Trainer &t) {
  if (!loadStartingPoint(t) || !resolveSettings(t) || !loadTrainingData(t))
    return false;
  if (world.size > 1 && !agreeAcrossRanks(t))
    return false;
  // The parameters, gradients and Adam moments stay on the device (if
  // any) from here to the end of the run.
  if (tfc_device_keep) {
    const int64_t bytes = t.m.params * int64_t(sizeof(float));
    tfc_device_keep(t.params.data(), bytes);
    tfc_device_keep(t.grads.data(), bytes + int64_t(sizeof(float)));
    tfc_device_keep(t.adamM.data(), bytes);
    tfc_device_keep(t.adamV.data(), bytes);
  }
  if (!openRunDirectory(t))
    return false;
  printHeader(t);
  return true;
}

} // namespace tfc::rt
