//===- Metrics.h - Evaluation metrics ---------------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Language modelling: mean loss in nats per token, bits per character
/// (loss / ln 2; per byte for byte-level models) and perplexity exp(loss).
///
/// Classification: accuracy, and per-class precision, recall, F1 and support
/// with macro and weighted averages, computed as scikit-learn's
/// classification_report(y_true, y_pred, output_dict=True, zero_division=0)
/// does: the classes are the sorted union of the labels in y_true and
/// y_pred; a ratio with a zero denominator is 0; macro = unweighted mean over
/// those classes; weighted = mean weighted by support.
///
/// Reading logits for reporting (softmax cross-entropy, argmax) is metrics,
/// not model math: the model's own loss comes from the generated code.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_METRICS_H
#define TFC_RUNTIME_METRICS_H

#include "runtime/JsonText.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

struct LmMetrics {
  double loss = 0; ///< Mean nats per token.
  int64_t tokens = 0;
  int64_t batches = 0;

  double bitsPerChar() const;
  double perplexity() const;
};

/// Precision, recall, F1 and support of one class or one average.
struct ClassScores {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  int64_t support = 0;
};

struct ClassificationReport {
  std::vector<int32_t> labels;       ///< Sorted.
  std::vector<ClassScores> perClass; ///< Parallel to `labels`.
  ClassScores macro;
  ClassScores weighted;
  double accuracy = 0;
  int64_t total = 0;
};

ClassificationReport classificationReport(const std::vector<int32_t> &yTrue,
                                          const std::vector<int32_t> &yPred);

/// Index of the largest logit, the first on ties (as numpy's argmax). With
/// a single logit (a binary classifier with one output): 1 if it is > 0.
int32_t predictClass(const float *logits, int64_t classes);

/// Cross-entropy of one row of logits against `target`, in nats, computed
/// stably as logsumexp(logits) - logits[target]; with a single logit, binary
/// cross-entropy of sigmoid(logit).
double crossEntropy(const float *logits, int64_t classes, int32_t target);

/// Draws a token from one row of `n` logits for generation: with
/// temperature <= 0, the argmax (first on ties); otherwise softmax of
/// logits / temperature over the `topK` largest logits (all when topK <= 0
/// or >= n), then, with the kept tokens ordered by decreasing logit (ties:
/// lower index first), the first one whose cumulative probability exceeds
/// u (u in [0, 1), e.g. uniform01).
int32_t sampleToken(const float *logits, int64_t n, double temperature,
                    int64_t topK, double u);

/// The report as scikit-learn prints it (classification_report with
/// digits=4): a table of precision, recall, F1 and support per class, then
/// accuracy, macro and weighted averages; lines end in '\n'.
std::string classificationReportText(const ClassificationReport &report);

/// The metrics as JSON objects, printed (jsonText) by eval and the final
/// test and recorded in metrics.jsonl. Non-finite numbers are null.
Json lmMetricsJson(const LmMetrics &metrics, const std::string &split);
Json classifyMetricsJson(const ClassificationReport &report, double loss);

} // namespace tfc::rt

#endif // TFC_RUNTIME_METRICS_H
