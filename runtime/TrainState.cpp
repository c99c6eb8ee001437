//===- TrainState.cpp - The state of a training run -----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/TrainState.h"
#include "runtime/JsonText.h"
#include "runtime/Params.h"
#include "runtime/Random.h"
#include "runtime/Support.h"

#include <algorithm>
#include <cmath>
#include <sys/stat.h>

namespace tfc::rt {

const char *const kAdamMPrefix = "optimizer.m.";
const char *const kAdamVPrefix = "optimizer.v.";

Metadata trainStateMetadata(const TrainState &s) {
  return {
      {"tfc.step", std::to_string(s.step)},
      {"tfc.steps", std::to_string(s.totalSteps)},
      {"tfc.lr", s.lr > 0 ? format("%.17g", s.lr) : ""},
      {"tfc.seed", std::to_string(s.seed)},
      {"tfc.best_val_loss", s.hasBest ? format("%.17g", s.bestValLoss) : ""},
      {"tfc.best_step", std::to_string(s.bestStep)},
      {"tfc.bad_evals", std::to_string(s.badEvals)},
      {"tfc.tokens", std::to_string(s.tokens)},
      {"tfc.data_train", s.dataTrain},
      {"tfc.data_val", s.dataVal},
      {"tfc.data_test", s.dataTest},
      {"tfc.eval_every", std::to_string(s.evalEvery)},
      {"tfc.eval_batches", std::to_string(s.evalBatches)},
      {"tfc.test_batches", std::to_string(s.testBatches)},
      {"tfc.patience", std::to_string(s.patience)},
      {"tfc.checkpoint_every", std::to_string(s.checkpointEvery)},
      {"tfc.warmup", std::to_string(s.warmup)}};
}

bool readTrainState(const SafetensorsFile &file, TrainState &s,
                    std::string &err) {
  s = TrainState();
  auto get = [&](const char *key) { return file.metadataValue(key); };
  if (!get("tfc.step")) {
    err = file.path() + ": not a training checkpoint (no tfc.step in its "
                        "metadata); to start from these weights use "
                        "--weights";
    return false;
  }
  // "<path>: bad training state: metadata 'KEY' is 'VALUE', expected ...".
  auto bad = [&](const char *key, const std::string &expected) {
    const std::string *text = get(key);
    err = file.path() + ": bad training state: metadata '" + key + "' " +
          (text ? "is '" + *text + "'" : std::string("is missing")) +
          ", expected " + expected;
    return false;
  };
  const char *count = "a non-negative integer";
  auto readInt = [&](const char *key, int64_t &value) {
    const std::string *text = get(key);
    return text && parseInt64(*text, value) && value >= 0;
  };
  if (!readInt("tfc.step", s.step))
    return bad("tfc.step", count);
  if (!readInt("tfc.steps", s.totalSteps))
    return bad("tfc.steps", count);
  const std::string *seed = get("tfc.seed");
  if (!seed || !parseUInt64(*seed, s.seed))
    return bad("tfc.seed", count);
  const std::string *best = get("tfc.best_val_loss");
  if (!best)
    return bad("tfc.best_val_loss", "a number, or empty before a validation");
  s.hasBest = !best->empty();
  if (s.hasBest && !parseDouble(*best, s.bestValLoss))
    return bad("tfc.best_val_loss", "a number, or empty before a validation");
  if (!readInt("tfc.best_step", s.bestStep))
    return bad("tfc.best_step", count);
  if (s.bestStep > s.step)
    return bad("tfc.best_step",
               "at most tfc.step (" + std::to_string(s.step) + ")");
  if (!readInt("tfc.bad_evals", s.badEvals))
    return bad("tfc.bad_evals", count);
  if (!readInt("tfc.tokens", s.tokens))
    return bad("tfc.tokens", count);
  // Optional: the base learning rate.
  if (const std::string *lr = get("tfc.lr"); lr && !lr->empty())
    if (!parseDouble(*lr, s.lr) || !(s.lr > 0))
      return bad("tfc.lr", "a positive learning rate");
  // Optional: the data files.
  if (const std::string *path = get("tfc.data_train"))
    s.dataTrain = *path;
  if (const std::string *path = get("tfc.data_val"))
    s.dataVal = *path;
  if (const std::string *path = get("tfc.data_test"))
    s.dataTest = *path;
  // Optional: the settings (-1 when absent).
  for (auto [key, value] :
       {std::pair<const char *, int64_t *>{"tfc.eval_every", &s.evalEvery},
        {"tfc.eval_batches", &s.evalBatches},
        {"tfc.test_batches", &s.testBatches},
        {"tfc.patience", &s.patience},
        {"tfc.checkpoint_every", &s.checkpointEvery},
        {"tfc.warmup", &s.warmup}}) {
    const std::string *text = get(key);
    if (text && (!parseInt64(*text, *value) || *value < -1))
      return bad(key, "an integer of at least -1");
  }
  return true;
}

int64_t dropoutSeed(uint64_t runSeed, int64_t step) {
  static const uint64_t stream = streamId("dropout");
  return int64_t(mixStream(mixStream(runSeed, stream), uint64_t(step)) >> 1);
}

uint64_t redrawSeed(uint64_t runSeed, int64_t draw) {
  static const uint64_t stream = streamId("redraw");
  return mixStream(mixStream(runSeed, stream), uint64_t(draw));
}

bool redrawBefore(int64_t step, int64_t interval) {
  return interval > 0 && step > 1 && (step - 1) % interval == 0;
}

int64_t redrawFeatures(const Manifest &manifest, float *params, uint64_t seed) {
  int64_t drawn = 0;
  for (const TensorInfo &t : manifest.tensors)
    if (t.kind == TensorKind::Buffer && t.init.kind == InitKind::Features) {
      initTensor(t, params, seed);
      ++drawn;
    }
  return drawn;
}

void permutation(int64_t n, uint64_t seed, const std::string &name,
                 uint64_t round, std::vector<int64_t> &order) {
  uint64_t stream = mixStream(streamId(name), round);
  order.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    order[size_t(i)] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = int64_t(uniformInt(seed, stream, uint64_t(i), uint64_t(i + 1)));
    std::swap(order[size_t(i)], order[size_t(j)]);
  }
}

void epochOrder(int64_t n, uint64_t seed, uint64_t epoch,
                std::vector<int64_t> &order) {
  permutation(n, seed, "epochs", epoch, order);
}

void holdoutSplit(int64_t n, double fraction, std::vector<int64_t> &train,
                  std::vector<int64_t> &val) {
  train.clear();
  val.clear();
  int64_t k = int64_t(std::llround(double(n) * fraction));
  if (fraction > 0 && n >= 2)
    k = std::min(std::max<int64_t>(k, 1), n - 1);
  else
    k = 0;
  std::vector<int64_t> order;
  permutation(n, 0, "holdout", 0, order);
  std::vector<char> held(size_t(n), 0);
  for (int64_t i = 0; i < k; ++i)
    held[size_t(order[size_t(i)])] = 1;
  for (int64_t i = 0; i < n; ++i)
    (held[size_t(i)] ? val : train).push_back(i);
}

void EpochSampler::batch(int64_t step, int64_t batch,
                         std::vector<int64_t> &rows) {
  rows.resize(size_t(batch));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t position = (step - 1) * batch + b;
    int64_t epoch = position / lines_;
    if (epoch != epoch_) {
      epochOrder(lines_, seed_, uint64_t(epoch), order_);
      epoch_ = epoch;
    }
    rows[size_t(b)] = order_[size_t(position % lines_)];
  }
}

/// The log line parsed, or false for a line that is not a JSON object with
/// an integer "step".
static bool parseLogLine(const std::string &line, Json &value, int64_t &step) {
  std::string why;
  size_t at = 0;
  if (!parseJson(line.data(), line.size(), value, why, at) ||
      !value.is_object())
    return false;
  auto s = value.find("step");
  if (s == value.end() || !s->is_number_integer() ||
      (s->is_number_unsigned() && s->get<uint64_t>() > INT64_MAX))
    return false;
  step = s->get<int64_t>();
  return true;
}

void addToHistory(const std::string &line, LossHistory &history) {
  Json value;
  int64_t step = 0;
  if (!parseLogLine(line, value, step) || value.contains("event") ||
      value.contains("test"))
    return;
  auto loss = value.find("loss");
  if (loss != value.end() && loss->is_number())
    history.train.push_back({step, loss->get<double>()});
  auto val = value.find("val");
  if (val != value.end() && val->is_object()) {
    auto valLoss = val->find("loss");
    if (valLoss != val->end() && valLoss->is_number())
      history.val.push_back({step, valLoss->get<double>()});
  }
}

bool truncateMetricsLog(const std::string &path, int64_t step,
                        LossHistory &history, std::string &err) {
  history = LossHistory();
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return writeFileAtomic(path, {}, err); // A resume into another --out.
  std::string text;
  if (!readFile(path, text, err))
    return false;
  std::string kept;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos)
      eol = text.size(); // A line cut short by a kill: dropped below.
    std::string line = text.substr(pos, eol - pos);
    bool complete = eol < text.size();
    pos = eol + 1;
    Json value;
    int64_t lineStep = 0;
    if (!complete || !parseLogLine(line, value, lineStep) || lineStep > step ||
        value.contains("test"))
      continue;
    kept += line + "\n";
    addToHistory(line, history);
  }
  return writeFileAtomic(path, {{kept.data(), kept.size()}}, err);
}

} // namespace tfc::rt
