//===- Evaluate.cpp - Evaluation loops over tfc_forward -------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The evaluation loops shared by `eval` and `train`: language models walk
/// a byte span in sequential windows (Data.h), classifiers walk their lines
/// in batches whose last one is padded with empty texts.
///
//===----------------------------------------------------------------------===//

#include "runtime/Commands.h"
#include "runtime/Distributed.h"
#include "runtime/ModelABI.h"

#include <algorithm>
#include <cstdio>

namespace tfc::rt {

std::string programName = "model";

int fail(const std::string &message) {
  if (world.size > 1)
    return failOnRank(message);
  fprintf(stderr, "tfc: %s\n", message.c_str());
  return 1;
}

BatchBuffers::BatchBuffers(const Manifest &m)
    : tokens(size_t(m.batch * m.seqLen)), targets(size_t(m.targetsCount())),
      mask(size_t(m.batch * m.seqLen), 1.0f), logits(size_t(m.logitsCount())) {}

void BatchBuffers::forward(float *params) {
  tfc_forward(params, tokens.data(), targets.data(), mask.data(), logits.data(),
              &loss);
}

void fillClassifyRow(const Manifest &m, const Vocab &vocab,
                     const Example *example, int64_t b, BatchBuffers &io) {
  const int64_t S = m.seqLen;
  encode(vocab, example ? example->text : std::string(), S,
         &io.tokens[size_t(b * S)], &io.mask[size_t(b * S)]);
  io.targets[size_t(b)] = example ? example->label : 0;
}

bool evaluateLm(const Manifest &m, float *params, ByteSpan span,
                int64_t maxBatches, LmMetrics &metrics) {
  // Under mpirun a batch is the global batch of N * B windows, of which
  // rank r evaluates windows r * B .. r * B + B - 1 (Distributed.h).
  const int64_t N = world.size, G = N * m.batch;
  int64_t batches = evalWindowCount(span, m.seqLen) / G;
  if (batches == 0)
    return false;
  if (maxBatches > 0 && maxBatches < batches)
    batches = maxBatches;
  BatchBuffers io(m);
  double lossSum = 0;
  for (int64_t i = 0; i < batches; ++i) {
    evalBatch(span, m.batch, m.seqLen, i * N + world.rank, io.tokens.data(),
              io.targets.data());
    io.forward(params);
    lossSum += io.loss;
  }
  sumAcrossRanks(&lossSum, 1);
  metrics = LmMetrics();
  metrics.loss = lossSum / double(batches * N);
  metrics.batches = batches;
  metrics.tokens = batches * G * m.seqLen;
  return true;
}

void evaluateClassify(const Manifest &m, const Vocab &vocab, float *params,
                      const std::vector<Example> &examples, int64_t maxBatches,
                      ClassificationReport &report, double &loss) {
  // Under mpirun a batch is the global batch of N * B lines, of which rank
  // r evaluates lines r * B .. r * B + B - 1 (Distributed.h).
  const int64_t B = m.batch, C = m.outputs, G = B * world.size;
  int64_t batches = (int64_t(examples.size()) + G - 1) / G;
  if (maxBatches > 0 && maxBatches < batches)
    batches = maxBatches;
  BatchBuffers io(m);
  std::vector<int32_t> yTrue, yPred;
  double lossSum = 0;
  for (int64_t i = 0; i < batches; ++i) {
    int64_t first = i * G + world.rank * B;
    int64_t real = std::min<int64_t>(B, int64_t(examples.size()) - first);
    if (real <= 0)
      break;
    for (int64_t b = 0; b < B; ++b)
      fillClassifyRow(m, vocab,
                      b < real ? &examples[size_t(first + b)] : nullptr, b, io);
    io.forward(params);
    for (int64_t b = 0; b < real; ++b) {
      const float *row = &io.logits[size_t(b * C)];
      int32_t label = io.targets[size_t(b)];
      yTrue.push_back(label);
      yPred.push_back(predictClass(row, C));
      lossSum += crossEntropy(row, C, label);
    }
  }
  gatherAcrossRanks(yTrue);
  gatherAcrossRanks(yPred);
  sumAcrossRanks(&lossSum, 1);
  report = classificationReport(yTrue, yPred);
  loss = yTrue.empty() ? 0.0 : lossSum / double(yTrue.size());
}

} // namespace tfc::rt
