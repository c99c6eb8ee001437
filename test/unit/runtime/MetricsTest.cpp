//===- MetricsTest.cpp - Tests of the evaluation metrics ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tfc::rt;

namespace {

TEST(Metrics, LanguageModel) {
  LmMetrics m;
  m.loss = std::log(256.0); // A uniform guess over bytes.
  EXPECT_DOUBLE_EQ(m.bitsPerChar(), 8.0);
  EXPECT_DOUBLE_EQ(m.perplexity(), 256.0);
  m.loss = 1.0;
  EXPECT_DOUBLE_EQ(m.bitsPerChar(), 1.0 / std::log(2.0));
  EXPECT_DOUBLE_EQ(m.perplexity(), std::exp(1.0));
  m.tokens = 64;
  m.batches = 2;
  EXPECT_EQ(jsonText(lmMetricsJson(m, "val")),
            "{\"task\":\"lm\",\"split\":\"val\",\"loss\":1,\"bits_per_char\":"
            "1.4426950408889634,\"perplexity\":2.718281828459045,\"tokens\":"
            "64,\"batches\":2}");
}

TEST(Metrics, ClassificationReportByHand) {
  // Ten examples, three classes.
  //   y_true: 0 0 0 0 1 1 1 2 2 2
  //   y_pred: 0 0 1 2 1 1 0 2 2 1
  // Per class (tp = hits, pred = predicted count, support = true count):
  //   class 0: tp 2, pred 3 (i=0,1,6), support 4 -> P 2/3, R 2/4 = 0.5,
  //            F1 = 2*2 / (3 + 4) = 4/7
  //   class 1: tp 2, pred 4 (i=2,4,5,9), support 3 -> P 0.5, R 2/3,
  //            F1 = 4 / 7
  //   class 2: tp 2, pred 3 (i=3,7,8), support 3 -> P 2/3, R 2/3, F1 2/3
  // accuracy = 6 / 10 = 0.6
  // macro:    P = (2/3 + 1/2 + 2/3) / 3 = 11/18
  //           R = (1/2 + 2/3 + 2/3) / 3 = 11/18
  //           F1 = (4/7 + 4/7 + 2/3) / 3 = (12 + 12 + 14) / 21 / 3 = 38/63
  // weighted: P = (4 * 2/3 + 3 * 1/2 + 3 * 2/3) / 10 = (8/3 + 3/2 + 2) / 10
  //             = (16 + 9 + 12) / 6 / 10 = 37/60
  //           R = (4 * 1/2 + 3 * 2/3 + 3 * 2/3) / 10 = 6/10 (= accuracy)
  //           F1 = (4 * 4/7 + 3 * 4/7 + 3 * 2/3) / 10 = (4 + 2) / 10 = 0.6
  std::vector<int32_t> yTrue = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
  std::vector<int32_t> yPred = {0, 0, 1, 2, 1, 1, 0, 2, 2, 1};
  ClassificationReport r = classificationReport(yTrue, yPred);
  ASSERT_EQ(r.labels, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(r.total, 10);
  EXPECT_DOUBLE_EQ(r.accuracy, 0.6);
  EXPECT_DOUBLE_EQ(r.perClass[0].precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.perClass[0].recall, 0.5);
  EXPECT_DOUBLE_EQ(r.perClass[0].f1, 4.0 / 7);
  EXPECT_EQ(r.perClass[0].support, 4);
  EXPECT_DOUBLE_EQ(r.perClass[1].precision, 0.5);
  EXPECT_DOUBLE_EQ(r.perClass[1].recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.perClass[1].f1, 4.0 / 7);
  EXPECT_EQ(r.perClass[1].support, 3);
  EXPECT_DOUBLE_EQ(r.perClass[2].precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.perClass[2].recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.perClass[2].f1, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.macro.precision, 11.0 / 18);
  EXPECT_DOUBLE_EQ(r.macro.recall, 11.0 / 18);
  EXPECT_DOUBLE_EQ(r.macro.f1, 38.0 / 63);
  EXPECT_EQ(r.macro.support, 10);
  EXPECT_DOUBLE_EQ(r.weighted.precision, 37.0 / 60);
  EXPECT_DOUBLE_EQ(r.weighted.recall, 0.6);
  EXPECT_DOUBLE_EQ(r.weighted.f1, 0.6);
  EXPECT_EQ(r.weighted.support, 10);
}

TEST(Metrics, ZeroDivisionIsZero) {
  // Everything predicted as 0:
  //   class 0: tp 2, pred 4, support 2 -> P 0.5, R 1, F1 = 4/6 = 2/3
  //   class 1: tp 0, pred 0, support 2 -> P 0 (0/0), R 0, F1 0
  // macro P 0.25, R 0.5, F1 1/3; weighted = macro (equal supports).
  ClassificationReport r = classificationReport({0, 0, 1, 1}, {0, 0, 0, 0});
  ASSERT_EQ(r.labels, (std::vector<int32_t>{0, 1}));
  EXPECT_DOUBLE_EQ(r.perClass[1].precision, 0.0);
  EXPECT_DOUBLE_EQ(r.perClass[1].recall, 0.0);
  EXPECT_DOUBLE_EQ(r.perClass[1].f1, 0.0);
  EXPECT_DOUBLE_EQ(r.perClass[0].f1, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.macro.precision, 0.25);
  EXPECT_DOUBLE_EQ(r.macro.f1, 1.0 / 3);
  EXPECT_DOUBLE_EQ(r.weighted.recall, 0.5);
  // A label only predicted, never true: in the report with support 0.
  r = classificationReport({0, 0}, {0, 3});
  ASSERT_EQ(r.labels, (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(r.perClass[1].support, 0);
  EXPECT_DOUBLE_EQ(r.perClass[1].precision, 0.0);
  EXPECT_DOUBLE_EQ(r.perClass[0].recall, 0.5);
  // Nothing at all.
  r = classificationReport({}, {});
  EXPECT_EQ(r.total, 0);
  EXPECT_DOUBLE_EQ(r.accuracy, 0.0);
}

TEST(Metrics, ReportJson) {
  ClassificationReport r = classificationReport({0, 1}, {0, 0});
  EXPECT_EQ(jsonText(classifyMetricsJson(r, 0.5)),
            "{\"task\":\"classify\",\"examples\":2,\"loss\":0.5,\"accuracy\":"
            "0.5,\"report\":{\"0\":{\"precision\":0.5,\"recall\":1,"
            "\"f1-score\":0.6666666666666666,\"support\":1},\"1\":{"
            "\"precision\":0,\"recall\":0,\"f1-score\":0,\"support\":1},"
            "\"accuracy\":0.5,\"macro avg\":{\"precision\":0.25,\"recall\":"
            "0.5,\"f1-score\":0.3333333333333333,\"support\":2},"
            "\"weighted avg\":{\"precision\":0.25,\"recall\":0.5,\"f1-score\":"
            "0.3333333333333333,\"support\":2}}}");
}

TEST(Metrics, CrossEntropyAndArgmax) {
  float logits[3] = {1.0f, 3.0f, 3.0f};
  EXPECT_EQ(predictClass(logits, 3), 1); // First of the tied maxima.
  // -log softmax: log(e + 2 e^3) - 3.
  double expected = std::log(std::exp(1.0) + 2 * std::exp(3.0)) - 3.0;
  EXPECT_NEAR(crossEntropy(logits, 3, 2), expected, 1e-12);
  float big[2] = {1000.0f, 0.0f}; // Stable with large logits.
  EXPECT_NEAR(crossEntropy(big, 2, 0), 0.0, 1e-12);
  EXPECT_NEAR(crossEntropy(big, 2, 1), 1000.0, 1e-9);
  // One logit: binary cross-entropy of sigmoid(z).
  float z[1] = {0.0f};
  EXPECT_NEAR(crossEntropy(z, 1, 1), std::log(2.0), 1e-12);
  z[0] = 2.0f;
  EXPECT_EQ(predictClass(z, 1), 1);
  EXPECT_NEAR(crossEntropy(z, 1, 0), std::log1p(std::exp(2.0)), 1e-12);
  EXPECT_NEAR(crossEntropy(z, 1, 1), std::log1p(std::exp(-2.0)), 1e-12);
}

TEST(Metrics, ReportText) {
  ClassificationReport r =
      classificationReport({0, 1, 0, 0, 1}, {0, 0, 0, 0, 0});
  EXPECT_EQ(classificationReportText(r),
            "             precision    recall  f1-score   support\n"
            "\n"
            "           0    0.6000    1.0000    0.7500         3\n"
            "           1    0.0000    0.0000    0.0000         2\n"
            "\n"
            "    accuracy                        0.6000         5\n"
            "   macro avg    0.3000    0.5000    0.3750         5\n"
            "weighted avg    0.3600    0.6000    0.4500         5\n");
}

TEST(Metrics, SampleToken) {
  float logits[4] = {0.0f, 2.0f, 1.0f, 2.0f};
  // Temperature 0: argmax, first on ties, whatever u is.
  EXPECT_EQ(sampleToken(logits, 4, 0.0, 0, 0.99), 1);
  // Top-1 is greedy too.
  EXPECT_EQ(sampleToken(logits, 4, 1.0, 1, 0.99), 1);
  // Top-2 keeps ids 1 and 3 (equal logits): half the mass each.
  EXPECT_EQ(sampleToken(logits, 4, 1.0, 2, 0.49), 1);
  EXPECT_EQ(sampleToken(logits, 4, 1.0, 2, 0.51), 3);
  // All four: order 1, 3, 2, 0 by decreasing logit; cumulative
  // probabilities e^2, 2e^2, 2e^2 + e, 2e^2 + e + 1 over the total.
  double total = 2 * std::exp(2.0) + std::exp(1.0) + 1.0;
  double c2 = (2 * std::exp(2.0)) / total, c3 = c2 + std::exp(1.0) / total;
  EXPECT_EQ(sampleToken(logits, 4, 1.0, 0, c2 + 1e-6), 2);
  EXPECT_EQ(sampleToken(logits, 4, 1.0, 0, c3 + 1e-6), 0);
  EXPECT_EQ(sampleToken(logits, 4, 1.0, 0, 0.0), 1);
  // A high temperature flattens: u just below 3/4 then picks id 2.
  EXPECT_EQ(sampleToken(logits, 4, 1e6, 0, 0.74), 2);
}

} // namespace
