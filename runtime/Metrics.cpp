//===- Metrics.cpp - Evaluation metrics -----------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tfc::rt {

double LmMetrics::bitsPerChar() const { return loss / std::log(2.0); }

double LmMetrics::perplexity() const { return std::exp(loss); }

static double ratio(double num, double den) {
  return den > 0 ? num / den : 0.0;
}

ClassificationReport classificationReport(const std::vector<int32_t> &yTrue,
                                          const std::vector<int32_t> &yPred) {
  ClassificationReport r;
  r.labels = yTrue;
  r.labels.insert(r.labels.end(), yPred.begin(), yPred.end());
  std::sort(r.labels.begin(), r.labels.end());
  r.labels.erase(std::unique(r.labels.begin(), r.labels.end()), r.labels.end());
  size_t k = r.labels.size();
  std::vector<int64_t> truePos(k, 0), predicted(k, 0), actual(k, 0);
  auto indexOf = [&](int32_t label) {
    return size_t(std::lower_bound(r.labels.begin(), r.labels.end(), label) -
                  r.labels.begin());
  };
  size_t n = std::min(yTrue.size(), yPred.size());
  int64_t correct = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t t = indexOf(yTrue[i]), p = indexOf(yPred[i]);
    ++actual[t];
    ++predicted[p];
    if (t == p) {
      ++truePos[t];
      ++correct;
    }
  }
  r.total = int64_t(n);
  r.accuracy = ratio(double(correct), double(n));
  for (size_t c = 0; c < k; ++c) {
    ClassScores s;
    s.precision = ratio(double(truePos[c]), double(predicted[c]));
    s.recall = ratio(double(truePos[c]), double(actual[c]));
    // As scikit-learn >= 1.3: F1 = 2 tp / (2 tp + fp + fn), which equals
    // 2 p r / (p + r) and is 0 when there is nothing to count.
    s.f1 = ratio(2.0 * double(truePos[c]), double(actual[c] + predicted[c]));
    s.support = actual[c];
    r.perClass.push_back(s);
    r.macro.precision += s.precision;
    r.macro.recall += s.recall;
    r.macro.f1 += s.f1;
    r.weighted.precision += s.precision * double(s.support);
    r.weighted.recall += s.recall * double(s.support);
    r.weighted.f1 += s.f1 * double(s.support);
  }
  r.macro.precision = ratio(r.macro.precision, double(k));
  r.macro.recall = ratio(r.macro.recall, double(k));
  r.macro.f1 = ratio(r.macro.f1, double(k));
  r.macro.support = int64_t(n);
  r.weighted.precision = ratio(r.weighted.precision, double(n));
  r.weighted.recall = ratio(r.weighted.recall, double(n));
  r.weighted.f1 = ratio(r.weighted.f1, double(n));
  r.weighted.support = int64_t(n);
  return r;
}

int32_t predictClass(const float *logits, int64_t classes) {
  if (classes == 1)
    return logits[0] > 0 ? 1 : 0;
  int32_t best = 0;
  for (int64_t c = 1; c < classes; ++c)
    if (logits[c] > logits[best])
      best = int32_t(c);
  return best;
}

double crossEntropy(const float *logits, int64_t classes, int32_t target) {
  if (classes == 1) {
    // -log sigmoid(z) for target 1, -log(1 - sigmoid(z)) for target 0, both
    // as softplus of the signed logit.
    double z = target == 1 ? -double(logits[0]) : double(logits[0]);
    return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
  }
  double maxLogit = logits[0];
  for (int64_t c = 1; c < classes; ++c)
    maxLogit = std::max(maxLogit, double(logits[c]));
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(double(logits[c]) - maxLogit);
  return maxLogit + std::log(sum) - double(logits[target]);
}

Json lmMetricsJson(const LmMetrics &m, const std::string &split) {
  return {{"task", "lm"},
          {"split", split},
          {"loss", jsonNumber(m.loss)},
          {"bits_per_char", jsonNumber(m.bitsPerChar())},
          {"perplexity", jsonNumber(m.perplexity())},
          {"tokens", m.tokens},
          {"batches", m.batches}};
}

int32_t sampleToken(const float *logits, int64_t n, double temperature,
                    int64_t topK, double u) {
  if (n <= 0)
    return 0;
  if (!(temperature > 0)) {
    int32_t best = 0;
    for (int64_t i = 1; i < n; ++i)
      if (logits[i] > logits[best])
        best = int32_t(i);
    return best;
  }
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ids[size_t(i)] = int32_t(i);
  int64_t k = topK > 0 && topK < n ? topK : n;
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  double maxLogit = logits[ids[0]];
  std::vector<double> weights(static_cast<size_t>(k));
  double total = 0;
  for (int64_t i = 0; i < k; ++i) {
    weights[size_t(i)] =
        std::exp((double(logits[ids[size_t(i)]]) - maxLogit) / temperature);
    total += weights[size_t(i)];
  }
  double target = u * total, sum = 0;
  for (int64_t i = 0; i < k; ++i) {
    sum += weights[size_t(i)];
    if (target < sum)
      return ids[size_t(i)];
  }
  return ids[size_t(k - 1)];
}

std::string classificationReportText(const ClassificationReport &r) {
  // Rows are right-aligned to the widest label, at least as wide as
  // "weighted avg", as scikit-learn does.
  size_t width = 12;
  for (int32_t label : r.labels)
    width = std::max(width, std::to_string(label).size());
  auto row = [&](const std::string &name, const ClassScores &s) {
    char line[160];
    snprintf(line, sizeof(line), "%*s %9.4f %9.4f %9.4f %9lld\n", int(width),
             name.c_str(), s.precision, s.recall, s.f1, (long long)s.support);
    return std::string(line);
  };
  char line[160];
  snprintf(line, sizeof(line), "%*s %9s %9s %9s %9s\n\n", int(width), "",
           "precision", "recall", "f1-score", "support");
  std::string out = line;
  for (size_t c = 0; c < r.labels.size(); ++c)
    out += row(std::to_string(r.labels[c]), r.perClass[c]);
  snprintf(line, sizeof(line), "\n%*s %9s %9s %9.4f %9lld\n", int(width),
           "accuracy", "", "", r.accuracy, (long long)r.total);
  out += line;
  out += row("macro avg", r.macro);
  out += row("weighted avg", r.weighted);
  return out;
}

static Json scoresJson(const ClassScores &s) {
  return {{"precision", jsonNumber(s.precision)},
          {"recall", jsonNumber(s.recall)},
          {"f1-score", jsonNumber(s.f1)},
          {"support", s.support}};
}

Json classifyMetricsJson(const ClassificationReport &r, double loss) {
  Json report = Json::object();
  for (size_t c = 0; c < r.labels.size(); ++c)
    report[std::to_string(r.labels[c])] = scoresJson(r.perClass[c]);
  report["accuracy"] = jsonNumber(r.accuracy);
  report["macro avg"] = scoresJson(r.macro);
  report["weighted avg"] = scoresJson(r.weighted);
  return {{"task", "classify"},
          {"examples", r.total},
          {"loss", jsonNumber(loss)},
          {"accuracy", jsonNumber(r.accuracy)},
          {"report", report}};
}

} // namespace tfc::rt
