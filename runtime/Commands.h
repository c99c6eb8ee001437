//===- Commands.h - The commands of a compiled model ------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the files of libtfcrt_main share: the parsed command line, the
/// evaluation loops over tfc_forward, and the commands that live in their
/// own files (Train.cpp, Generate.cpp). Only libtfcrt_main calls the model.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_COMMANDS_H
#define TFC_RUNTIME_COMMANDS_H

#include "runtime/Data.h"
#include "runtime/Manifest.h"
#include "runtime/Metrics.h"
#include "runtime/Tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

/// The program name as the user typed it, for usage texts.
extern std::string programName;

/// Prints `tfc: <message>` on stderr and returns 1.
int fail(const std::string &message);

/// Parsed command-line options; which are allowed depends on the command.
/// Integers left at -1 were not given.
struct Options {
  std::string output;
  std::string weights;
  std::string data;
  std::string split;
  std::string val;
  std::string test;
  std::string outDir;
  std::string resume;
  std::string prompt;
  std::string tokens;  ///< forward: int32 [B, S] file.
  std::string targets; ///< forward: int32 targets file.
  std::string mask;    ///< forward: float32 [B, S] file.
  std::string logits;  ///< forward: where to write the logits.
  bool hasSeed = false;
  uint64_t seed = 0;
  int64_t batches = 0; ///< 0 = all.
  int64_t steps = -1;
  int64_t batch = -1;
  int64_t threads = -1;
  int64_t evalEvery = -1;
  int64_t evalBatches = -1;
  int64_t testBatches = -1;
  int64_t patience = -1;
  int64_t checkpointEvery = -1;
  int64_t warmup = -1;     ///< train: warm-up steps; -1 = the spec's.
  int64_t tokenCount = -1; ///< generate: --tokens N.
  int64_t topK = -1;
  double temperature = 1.0;
  double minutes = 0; ///< train: the wall-time budget; 0 = none.
  double lr = 0;      ///< train: the base learning rate; 0 = the spec's.
};

/// Buffers of one batch for tfc_forward (and tfc_train_step).
struct BatchBuffers {
  std::vector<int32_t> tokens, targets;
  std::vector<float> mask, logits;
  float loss = 0;

  explicit BatchBuffers(const Manifest &m);
  void forward(float *params);
};

/// Fills row `b` of a classify batch with `example` (nullptr: an empty
/// padding text with label 0).
void fillClassifyRow(const Manifest &m, const Vocab &vocab,
                     const Example *example, int64_t b, BatchBuffers &io);

/// Evaluates sequential windows of `span` (at most `maxBatches` batches, 0 =
/// all). Returns false when the span holds no full batch.
bool evaluateLm(const Manifest &m, float *params, ByteSpan span,
                int64_t maxBatches, LmMetrics &metrics);

/// Evaluates `examples` in batches (at most `maxBatches`, 0 = all); padding
/// rows are left out of the report and the loss (the mean cross-entropy of
/// the logits over real lines).
void evaluateClassify(const Manifest &m, const Vocab &vocab, float *params,
                      const std::vector<Example> &examples, int64_t maxBatches,
                      ClassificationReport &report, double &loss);

int runTrain(const Manifest &m, const Options &o);
int runGenerate(const Manifest &m, const Options &o);
/// The texts of `train --help` and `generate --help`.
std::string trainHelp();
std::string generateHelp();

} // namespace tfc::rt

#endif // TFC_RUNTIME_COMMANDS_H
