//===- Main.cpp - The command line of a compiled model --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `main` of every executable that `tfc compile` produces. The model itself
/// (tfc_model_manifest, tfc_forward) comes from the generated object file;
/// this file only reads arguments, data and weights, calls the model, and
/// prints results.
///
///   ./model info
///   ./model init --seed S -o w.safetensors [--data train.jsonl]
///   ./model eval --weights w.safetensors --data PATH [--split S] [--batches N]
///   ./model train [--steps N] [--minutes M] [--data PATH] [--out DIR]
///                 [--resume CKPT] [--threads N] ...
///   ./model generate --weights w.safetensors --prompt TEXT [--tokens N] ...
///   ./model forward --weights w.safetensors --tokens T.bin [--targets Y.bin]
///                   [--mask M.bin] --logits OUT.bin
///
/// eval, train, generate and forward take --threads N, the worker threads of
/// the generated code. CLI11 reads the command line (CommandLine below).
///
/// Errors are one line on stderr, `tfc: <path or command>: <reason>`, with
/// exit status 1; a bad option value names the flag and what was expected,
/// `tfc: <command>: --flag: expected ..., got 'VALUE'`.
///
//===----------------------------------------------------------------------===//

#include "runtime/Commands.h"
#include "runtime/Data.h"
#include "runtime/Distributed.h"
#include "runtime/Manifest.h"
#include "runtime/Metrics.h"
#include "runtime/ModelABI.h"
#include "runtime/Params.h"
#include "runtime/Safetensors.h"
#include "runtime/Support.h"
#include "runtime/Tokenizer.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <string>
#include <vector>

using namespace tfc::rt;

// The OpenMP runtime of the generated code, when the model links one; the
// runtime itself does not depend on it.
extern "C" void omp_set_num_threads(int) __attribute__((weak));
extern "C" int omp_get_max_threads() __attribute__((weak));

namespace {

/// The most worker threads --threads accepts.
constexpr int kMaxThreads = 4096;

std::string usageHelp() {
  return format(
      "usage: %s <command> [options]\n"
      "\n"
      "A model compiled by tfc. Commands:\n"
      "  info      print the model's configuration, tensors, parameter\n"
      "            count, FLOPs per token and memory plan\n"
      "  init      write freshly initialised weights (safetensors)\n"
      "  eval      evaluate weights on data and print metrics as JSON\n"
      "  train     train the model: checkpoints, metrics log, loss curves,\n"
      "            early stopping, exact resume\n"
      "  generate  sample bytes from a language model\n"
      "  forward   run the model once on one batch given as raw files, write\n"
      "            the logits and print the loss as JSON\n"
      "\n"
      "Run '%s <command> --help' for the options of a command.\n",
      programName.c_str(), programName.c_str());
}

std::string infoHelp() {
  return format(
      "usage: %s info\n"
      "\n"
      "Prints the model name, task and configuration, every tensor with its\n"
      "shape, element count, kind and init scheme, the parameter count, the\n"
      "forward FLOPs per token and the memory plan.\n",
      programName.c_str());
}

std::string initHelp() {
  return format(
      "usage: %s init -o PATH [--seed S] [--data PATH]\n"
      "\n"
      "Writes freshly initialised weights to PATH as safetensors (written\n"
      "to a temporary file beside it, then renamed; PATH must be a\n"
      "regular file or not exist).\n"
      "\n"
      "  -o, --output PATH  the weights file to write\n"
      "  --seed S           initialisation seed, a non-negative integer\n"
      "                     (default 0); the same seed gives the same\n"
      "                     weights on any machine\n"
      "  --data PATH        classify models: JSONL training data; the word\n"
      "                     vocabulary is built from it and written beside\n"
      "                     the weights as <weights>.vocab (required for\n"
      "                     classify, ignored for lm)\n",
      programName.c_str());
}

std::string evalHelp() {
  return format(
      "usage: %s eval --weights PATH --data PATH [--split S] [--batches N]\n"
      "\n"
      "Evaluates the weights and prints the metrics as one JSON object.\n"
      "\n"
      "  --weights PATH  safetensors weights (classify: <weights>.vocab,\n"
      "                  written by init, must be beside them)\n"
      "  --data PATH     lm: a raw byte file, split train/val/test by byte\n"
      "                  position; classify: a JSONL file ({\"text\", "
      "\"label\"}\n"
      "                  or Amazon Reviews {\"rating\", \"text\"}), all lines\n"
      "  --split S       lm only: train, val or test (default val)\n"
      "  --batches N     evaluate at most N batches (default: all)\n"
      "  --threads N     worker threads of the generated code (default: one\n"
      "                  per core, or OMP_NUM_THREADS)\n"
      "\n"
      "lm: sequential non-overlapping windows of seq_len + 1 bytes, in full\n"
      "batches; reports loss (nats/byte), bits_per_char and perplexity.\n"
      "classify: batches of `batch` lines, the last one padded with empty\n"
      "texts that are left out of the metrics; reports the cross-entropy\n"
      "of the logits over real lines, accuracy and per-class precision,\n"
      "recall, F1 and support as scikit-learn's classification_report.\n"
      "Exits with status 1 if the loss is not finite (it is then printed\n"
      "as null).\n",
      programName.c_str());
}

std::string forwardHelp() {
  return format(
      "usage: %s forward --weights PATH --tokens PATH [--targets PATH]\n"
      "           [--mask PATH] --logits PATH [--threads N]\n"
      "\n"
      "Runs the model's forward pass once on one batch given as raw\n"
      "little-endian files, writes the logits and prints the loss as one\n"
      "JSON object, {\"loss\": ...}. Shapes are the compiled ones (see\n"
      "'%s info'): B = batch, S = seq_len, V = vocab, O = outputs.\n"
      "\n"
      "  --weights PATH  safetensors weights (e.g. written by init)\n"
      "  --tokens PATH   int32 [B, S] token ids, each in [0, V)\n"
      "  --targets PATH  lm: int32 [B, S] next-token ids in [0, V);\n"
      "                  classify: int32 [B] labels in [0, classes)\n"
      "                  (default: all zeros)\n"
      "  --mask PATH     float32 [B, S], 1 for real tokens and 0 for padding\n"
      "                  (default: all ones; classify models mask padding\n"
      "                  keys out of attention, lm models ignore it)\n"
      "  --logits PATH   where to write the float32 logits: lm [B, S, V],\n"
      "                  classify [B, O] (written to a temporary file, then\n"
      "                  renamed; PATH must be a regular file or not exist)\n"
      "  --threads N     worker threads of the generated code\n"
      "\n"
      "The file sizes must match the shapes exactly. Exits with status 1 if\n"
      "the loss is not finite (it is then printed as null).\n",
      programName.c_str(), programName.c_str());
}

std::string humanBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return format(u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
}

std::string humanFlops(double flops) {
  const char *units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"};
  int u = 0;
  while (flops >= 1000 && u < 4) {
    flops /= 1000;
    ++u;
  }
  return format(u == 0 ? "%.0f %s" : "%.2f %s", flops, units[u]);
}

int runInfo(const Manifest &m) {
  printf("model: %s\n", m.model.c_str());
  printf("task: %s\n", toString(m.task));
  if (m.task == Task::Classify)
    printf("vocab: %lld  classes: %lld  outputs: %lld  min_freq: %lld\n",
           (long long)m.vocab, (long long)m.classes, (long long)m.outputs,
           (long long)m.minFreq);
  else
    printf("vocab: %lld  split: %g/%g/%g\n", (long long)m.vocab,
           m.trainFraction, m.valFraction, 1 - m.trainFraction - m.valFraction);
  printf("batch: %lld  seq_len: %lld  d_model: %lld  layers: %lld  heads: "
         "%lld\n",
         (long long)m.batch, (long long)m.seqLen, (long long)m.dModel,
         (long long)m.layers, (long long)m.heads);
  // Data-parallel training (Distributed.h): under mpirun, the global batch.
  int ranks = launchedRanks();
  if (!mpiAvailable())
    printf("data parallel: no (the runtime was built without MPI)\n");
  else if (ranks > 1)
    printf("data parallel: %d ranks x batch %lld = global batch %lld\n", ranks,
           (long long)m.batch, (long long)(ranks * m.batch));
  else
    printf("data parallel: 'mpirun -np N %s train' trains with a global "
           "batch of N x %lld\n",
           programName.c_str(), (long long)m.batch);
  size_t nameWidth = 4, shapeWidth = 5;
  for (const TensorInfo &t : m.tensors) {
    nameWidth = std::max(nameWidth, t.name.size());
    shapeWidth = std::max(shapeWidth, shapeString(t.shape).size());
  }
  printf("\ntensors: %zu\n", m.tensors.size());
  printf("  %-*s  %-*s  %12s  %-6s  %s\n", int(nameWidth), "name",
         int(shapeWidth), "shape", "count", "kind", "init");
  int64_t total = 0;
  for (const TensorInfo &t : m.tensors) {
    printf("  %-*s  %-*s  %12lld  %-6s  %s\n", int(nameWidth), t.name.c_str(),
           int(shapeWidth), shapeString(t.shape).c_str(), (long long)t.count,
           toString(t.kind), t.init.text.c_str());
    total += t.count;
  }
  int64_t trainable = m.trainableCount();
  printf("\nparameters: %lld (trainable %lld, buffers %lld)\n",
         (long long)total, (long long)trainable,
         (long long)(total - trainable));
  if (m.flopsPerToken > 0)
    printf("flops per token (forward): %.0f (%s)\n", m.flopsPerToken,
           humanFlops(m.flopsPerToken).c_str());
  else
    printf("flops per token (forward): not recorded in the manifest\n");
  printf("precision: %s\n",
         m.precision == "bf16"
             ? "bf16 (contraction operands rounded to bf16; float32 sums, "
               "weights and optimizer state)"
             : "f32");
  for (const std::string &feature : m.cpuFeatures)
    printf("cpu feature: %s (this CPU %s)\n", feature.c_str(),
           cpuHasFeature(feature) ? "has it" : "lacks it: only info runs");
  double paramBytes = double(m.params) * sizeof(float);
  double ioBytes = double(m.batch * m.seqLen) * sizeof(int32_t) +
                   double(m.targetsCount()) * sizeof(int32_t) +
                   double(m.batch * m.seqLen) * sizeof(float) +
                   double(m.logitsCount()) * sizeof(float);
  double activationBytes = double(m.activationBytes);
  double trainBytes = double(m.trainActivationBytes);
  printf("\nmemory plan:\n");
  printf("  parameters   %14.0f bytes  %s (%lld floats)\n", paramBytes,
         humanBytes(paramBytes).c_str(), (long long)m.params);
  printf("  activations  %14.0f bytes  %s (forward)\n", activationBytes,
         humanBytes(activationBytes).c_str());
  printf("  batch i/o    %14.0f bytes  %s (tokens, targets, mask, logits)\n",
         ioBytes, humanBytes(ioBytes).c_str());
  // Each worker thread holds one parallel iteration's heap buffers; with
  // the default --threads (one per core, or OMP_NUM_THREADS).
  int threads = omp_get_max_threads ? std::max(1, omp_get_max_threads()) : 1;
  double threadBytes = double(m.threadHeapBytes) * threads;
  if (m.threadHeapBytes > 0)
    printf("  per thread   %14.0f bytes  %s (heap buffers of a parallel "
           "iteration; x %d threads by default here: %s)\n",
           double(m.threadHeapBytes),
           humanBytes(double(m.threadHeapBytes)).c_str(), threads,
           humanBytes(threadBytes).c_str());
  double allBytes = paramBytes + activationBytes + ioBytes + threadBytes;
  printf("  total        %14.0f bytes  %s (eval, generate)\n", allBytes,
         humanBytes(allBytes).c_str());
  if (trainBytes > 0) {
    // Training adds its own working memory and three more flat buffers:
    // gradients and the two Adam moments.
    double stateBytes = 3 * paramBytes;
    printf("  training     %14.0f bytes  %s (train step and optimizer)\n",
           trainBytes, humanBytes(trainBytes).c_str());
    printf("  train state  %14.0f bytes  %s (gradients, Adam m and v)\n",
           stateBytes, humanBytes(stateBytes).c_str());
    // Validation runs the forward pass; the entry points share one arena
    // (arena_bytes), or, from an older manifest, a run holds both.
    double arenaBytes =
        m.arenaBytes > 0 ? double(m.arenaBytes) : activationBytes + trainBytes;
    if (m.arenaBytes > 0)
      printf("  arenas       %14.0f bytes  %s (shared by forward, train step "
             "and optimizer)\n",
             arenaBytes, humanBytes(arenaBytes).c_str());
    double trainTotal =
        paramBytes + ioBytes + arenaBytes + stateBytes + threadBytes;
    printf("  total        %14.0f bytes  %s (train, validation included)\n",
           trainTotal, humanBytes(trainTotal).c_str());
    if (m.kernelsPerStep > 0)
      printf("\nkernels per train step: %lld\n", (long long)m.kernelsPerStep);
  }
  return 0;
}

int runInit(const Manifest &m, const Options &o) {
  if (o.output.empty())
    return fail("init: missing -o PATH (see '" + programName +
                " init --help')");
  if (!o.data.empty() &&
      (sameFile(o.output, o.data) || sameFile(o.output + ".vocab", o.data)))
    return fail("init: -o: " + o.output +
                " would replace the --data file; expected another path");
  std::string err;
  Vocab vocab;
  if (m.task == Task::Classify) {
    if (o.data.empty())
      return fail("init: a classify model needs --data PATH (JSONL training "
                  "data) to build its vocabulary");
    std::vector<Example> examples;
    if (!loadJsonl(o.data, m.classes, examples, err))
      return fail(err);
    vocab = buildVocab(examples, m.vocab, m.minFreq);
  }
  FloatBuffer params;
  if (!params.allocate(m.params, "parameters", err))
    return fail(err);
  initParams(m, params.data(), o.seed);
  if (!saveCheckpoint(o.output, m, params.data(), {},
                      {{"tfc.seed", std::to_string(o.seed)}}, err))
    return fail(err);
  printf("wrote %s: %zu tensors, %lld floats, seed %llu\n", o.output.c_str(),
         m.tensors.size(), (long long)m.params, (unsigned long long)o.seed);
  if (m.task == Task::Classify) {
    std::string vocabPath = o.output + ".vocab";
    if (!saveVocab(vocabPath, vocab, err))
      return fail(err);
    printf("wrote %s: %lld tokens\n", vocabPath.c_str(),
           (long long)vocab.size());
  }
  return 0;
}

int evalLm(const Manifest &m, const Options &o, float *params) {
  if (m.vocab < 256)
    return fail(format("eval: byte-level data needs a vocabulary of 256, the "
                       "model has %lld",
                       (long long)m.vocab));
  std::string err, bytes;
  if (!loadBytes(o.data, bytes, err))
    return fail(err);
  Split split = Split::Val;
  if (!o.split.empty())
    parseSplit(o.split, split);
  SplitBounds bounds =
      splitBounds(int64_t(bytes.size()), m.trainFraction, m.valFraction);
  ByteSpan span = splitSpan(bytes, bounds, split);
  LmMetrics metrics;
  if (!evaluateLm(m, params, span, o.batches, metrics))
    return fail(format("%s: the %s split has %lld bytes; one evaluation batch "
                       "needs %lld (batch * seq_len + 1)",
                       o.data.c_str(), toString(split), (long long)span.size,
                       (long long)(m.batch * m.seqLen + 1)));
  printf("%s\n", jsonText(lmMetricsJson(metrics, toString(split))).c_str());
  if (!std::isfinite(metrics.loss))
    return fail(format("eval: the loss of %s on the %s split of %s is not "
                       "finite (%s)",
                       o.weights.c_str(), toString(split), o.data.c_str(),
                       std::isnan(metrics.loss) ? "nan" : "infinite"));
  return 0;
}

int evalClassify(const Manifest &m, const Options &o, float *params) {
  if (!o.split.empty())
    return fail("eval: --split applies to lm byte data only; a classify "
                "model evaluates every line of --data");
  std::string err;
  Vocab vocab;
  if (!loadVocab(o.weights + ".vocab", m.vocab, vocab, err))
    return fail(err);
  std::vector<Example> examples;
  if (!loadJsonl(o.data, m.classes, examples, err))
    return fail(err);
  ClassificationReport report;
  double loss = 0;
  evaluateClassify(m, vocab, params, examples, o.batches, report, loss);
  printf("%s\n", jsonText(classifyMetricsJson(report, loss)).c_str());
  if (!std::isfinite(loss))
    return fail(format("eval: the loss of %s on %s is not finite (%s)",
                       o.weights.c_str(), o.data.c_str(),
                       std::isnan(loss) ? "nan" : "infinite"));
  return 0;
}

int runEval(const Manifest &m, const Options &o) {
  if (o.weights.empty())
    return fail("eval: missing --weights PATH (see '" + programName +
                " eval --help')");
  if (o.data.empty())
    return fail("eval: missing --data PATH (see '" + programName +
                " eval --help')");
  std::string err;
  FloatBuffer params;
  if (!params.allocate(m.params, "parameters", err))
    return fail(err);
  if (!loadCheckpoint(o.weights, m, params.data(), err))
    return fail(err);
  return m.task == Task::LanguageModel ? evalLm(m, o, params.data())
                                       : evalClassify(m, o, params.data());
}

/// Reads the raw little-endian file `path` (the value of `flag`) of exactly
/// `count` elements of `elementSize` bytes, described as `what` (e.g.
/// "int32 [2, 24]"), into `dst`.
bool readRaw(const std::string &flag, const std::string &path, int64_t count,
             size_t elementSize, const std::string &what, void *dst,
             std::string &err) {
  // The size is checked before anything is read.
  uint64_t expected = uint64_t(count) * elementSize, size = 0;
  std::string bytes;
  if (!regularFileSize(path, size, err) ||
      (size == expected && !readFile(path, bytes, err, expected)))
    return false;
  if (size == expected)
    size = bytes.size(); // The file may have changed since its size was read.
  if (size != expected) {
    err = format("%s: %s expects %llu bytes (%s), the file has %llu",
                 path.c_str(), flag.c_str(), (unsigned long long)expected,
                 what.c_str(), (unsigned long long)size);
    return false;
  }
  memcpy(dst, bytes.data(), bytes.size());
  return true;
}

/// Checks that every id in `ids` lies in [0, limit); `path` names the file.
bool checkIds(const std::string &path, const std::vector<int32_t> &ids,
              int64_t limit, const char *what, std::string &err) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= limit) {
      err = format("%s: element %zu is %d; expected %s in [0, %lld)",
                   path.c_str(), i, ids[i], what, (long long)limit);
      return false;
    }
  }
  return true;
}

int runForward(const Manifest &m, const Options &o) {
  auto seeHelp = " (see '" + programName + " forward --help')";
  if (o.weights.empty())
    return fail("forward: missing --weights PATH" + seeHelp);
  if (o.tokens.empty())
    return fail("forward: missing --tokens PATH" + seeHelp);
  if (o.logits.empty())
    return fail("forward: missing --logits PATH" + seeHelp);
  // Writing the logits must not replace an input.
  for (auto [flag, path] :
       {std::pair<const char *, const std::string *>{"--weights", &o.weights},
        {"--tokens", &o.tokens},
        {"--targets", &o.targets},
        {"--mask", &o.mask}})
    if (!path->empty() && sameFile(o.logits, *path))
      return fail("forward: --logits: " + o.logits + " is the " + flag +
                  " file; expected another path");
  const int64_t B = m.batch, S = m.seqLen;
  std::string bs = format("[%lld, %lld]", (long long)B, (long long)S);
  std::string err;
  BatchBuffers io(m);
  if (!readRaw("--tokens", o.tokens, B * S, sizeof(int32_t), "int32 " + bs,
               io.tokens.data(), err) ||
      !checkIds(o.tokens, io.tokens, m.vocab, "a token id", err))
    return fail(err);
  if (!o.targets.empty()) {
    bool lm = m.task == Task::LanguageModel;
    std::string shape = lm ? bs : format("[%lld]", (long long)B);
    if (!readRaw("--targets", o.targets, m.targetsCount(), sizeof(int32_t),
                 "int32 " + shape, io.targets.data(), err) ||
        !checkIds(o.targets, io.targets, lm ? m.vocab : m.classes,
                  lm ? "a token id" : "a label", err))
      return fail(err);
  }
  if (!o.mask.empty()) {
    if (!readRaw("--mask", o.mask, B * S, sizeof(float), "float32 " + bs,
                 io.mask.data(), err))
      return fail(err);
    for (size_t i = 0; i < io.mask.size(); ++i)
      if (io.mask[i] != 0.0f && io.mask[i] != 1.0f)
        return fail(format("%s: element %zu is %g; expected 0 or 1",
                           o.mask.c_str(), i, double(io.mask[i])));
  }
  FloatBuffer params;
  if (!params.allocate(m.params, "parameters", err))
    return fail(err);
  if (!loadCheckpoint(o.weights, m, params.data(), err))
    return fail(err);
  io.forward(params.data());
  if (!writeFileAtomic(o.logits,
                       {{io.logits.data(), io.logits.size() * sizeof(float)}},
                       err))
    return fail(err);
  printf("{\"loss\": %s}\n", jsonText(jsonNumber(io.loss)).c_str());
  if (!std::isfinite(io.loss))
    return fail("forward: the loss is not finite");
  return 0;
}

/// The check of an integer option: a decimal integer in [min, max]. Like
/// every check here it returns what was expected ("" for a good value) and
/// rewrites a good value in the plain form CLI11 converts.
CLI::Validator integerIn(int64_t min, int64_t max = INT64_MAX,
                         const char *unit = "") {
  return CLI::Validator(
      [=](std::string &value) -> std::string {
        int64_t n = 0;
        if (!parseInt64(value, n) || n < min)
          return std::string(min == 0 ? "expected a non-negative integer"
                                      : "expected a positive integer") +
                 ", got '" + value + "'";
        if (n > max)
          return format("expected at most %lld%s, got '%s'", (long long)max,
                        unit, value.c_str());
        value = std::to_string(n);
        return "";
      },
      "");
}

/// The check of a seed: a decimal integer in [0, 2^64).
CLI::Validator seedValue() {
  return CLI::Validator(
      [](std::string &value) -> std::string {
        uint64_t n = 0;
        if (!parseUInt64(value, n))
          return "expected a non-negative integer, got '" + value + "'";
        value = std::to_string(n);
        return "";
      },
      "");
}

/// The check of a real option: a finite number above `min` (at least `min`
/// when `orEqual`); `expected` says what in messages.
CLI::Validator numberAbove(double min, bool orEqual, const char *expected) {
  return CLI::Validator(
      [=](std::string &value) -> std::string {
        double x = 0;
        if (!parseDouble(value, x) || x < min || (x == min && !orEqual))
          return std::string("expected ") + expected + ", got '" + value + "'";
        value = format("%.17g", x);
        return "";
      },
      "");
}

/// The check of --split.
CLI::Validator splitName() {
  return CLI::Validator(
      [](std::string &value) -> std::string {
        Split split;
        return parseSplit(value, split)
                   ? ""
                   : "expected train, val or test, got '" + value + "'";
      },
      "");
}

/// The command line of every command, as CLI11 subcommands. Each option
/// may be repeated (the last value counts) and takes its value as the next
/// argument or after '='; `command --help` prints the command's text.
struct CommandLine {
  CLI::App app{"A model compiled by tfc."};

  explicit CommandLine(Options &o) {
    app.formatter(helpText(usageHelp));
    app.allow_extras(); // An unknown command; reported by read().
    app.require_subcommand(0, 1);
    app.add_subcommand("help")->group("")->allow_extras()->formatter(
        helpText(usageHelp));

    command("info", infoHelp);

    CLI::App *init = command("init", initHelp);
    text(init, "-o,--output", o.output);
    seed(init, o);
    text(init, "--data", o.data);

    CLI::App *eval = command("eval", evalHelp);
    text(eval, "--weights", o.weights);
    text(eval, "--data", o.data);
    text(eval, "--split", o.split)->check(splitName());
    integer(eval, "--batches", o.batches, 1);
    threads(eval, o);

    CLI::App *train = command("train", trainHelp);
    integer(train, "--steps", o.steps, 1);
    real(train, "--minutes", o.minutes,
         numberAbove(0, false, "a positive number of minutes"));
    integer(train, "--batch", o.batch, 1);
    real(train, "--lr", o.lr,
         numberAbove(0, false, "a positive learning rate"));
    threads(train, o);
    seed(train, o);
    text(train, "--data", o.data);
    text(train, "--val", o.val);
    text(train, "--test", o.test);
    text(train, "--out", o.outDir);
    text(train, "--resume", o.resume);
    text(train, "--weights", o.weights);
    integer(train, "--eval-every", o.evalEvery, 0);
    integer(train, "--eval-batches", o.evalBatches, 0);
    integer(train, "--test-batches", o.testBatches, 0);
    integer(train, "--checkpoint-every", o.checkpointEvery, 0);
    integer(train, "--patience", o.patience, 0);
    integer(train, "--warmup", o.warmup, 0);

    CLI::App *generate = command("generate", generateHelp);
    text(generate, "--weights", o.weights);
    text(generate, "--prompt", o.prompt);
    integer(generate, "--tokens", o.tokenCount, 0);
    real(generate, "--temperature", o.temperature,
         numberAbove(0, true, "a number >= 0"));
    integer(generate, "--top-k", o.topK, 0);
    seed(generate, o);
    threads(generate, o);

    CLI::App *forward = command("forward", forwardHelp);
    text(forward, "--weights", o.weights);
    text(forward, "--tokens", o.tokens);
    text(forward, "--targets", o.targets);
    text(forward, "--mask", o.mask);
    text(forward, "--logits", o.logits);
    threads(forward, o);
  }

  static std::shared_ptr<CLI::FormatterLambda> helpText(std::string (*text)()) {
    return std::make_shared<CLI::FormatterLambda>(
        [text](const CLI::App *, std::string, CLI::AppFormatMode) {
          return text();
        });
  }
  CLI::App *command(const char *name, std::string (*help)()) {
    CLI::App *sub = app.add_subcommand(name);
    sub->allow_extras(); // Unknown options and stray arguments: read().
    sub->formatter(helpText(help));
    return sub;
  }
  static CLI::Option *text(CLI::App *sub, const char *names,
                           std::string &value) {
    return sub->add_option(names, value)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  static void integer(CLI::App *sub, const char *name, int64_t &value,
                      int64_t min) {
    sub->add_option(name, value)
        ->check(integerIn(min))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  static void real(CLI::App *sub, const char *name, double &value,
                   const CLI::Validator &check) {
    sub->add_option(name, value)
        ->check(check)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  static void threads(CLI::App *sub, Options &o) {
    sub->add_option("--threads", o.threads)
        ->check(integerIn(1, kMaxThreads, " threads"))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  static void seed(CLI::App *sub, Options &o) {
    sub->add_option("--seed", o.seed)
        ->check(seedValue())
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->each([&o](const std::string &) { o.hasSeed = true; });
  }

  /// Parses argv into the options and sets `name` to the command. Returns
  /// -1 to run it, or the exit status: 0 after printing help, 1 after
  /// printing a one-line error.
  int read(int argc, char **argv, std::string &name) {
    // CLI11 takes `--flag=` for a flag without its value; pass the empty
    // value on, for the flag's check to refuse as it refuses other values.
    std::vector<std::string> args; // Last first, as CLI11 wants them.
    for (int i = argc - 1; i > 0; --i) {
      std::string arg = argv[i];
      if (arg.size() > 3 && arg.compare(0, 2, "--") == 0 &&
          arg.find('=') == arg.size() - 1) {
        args.push_back("");
        arg.pop_back();
      }
      args.push_back(arg);
    }
    auto current = [&]() -> std::string {
      std::vector<CLI::App *> chosen = app.get_subcommands();
      return chosen.empty() ? "" : chosen[0]->get_name() + ": ";
    };
    try {
      app.parse(args);
    } catch (const CLI::CallForHelp &) {
      fputs(app.help().c_str(), stdout);
      return 0;
    } catch (const CLI::ArgumentMismatch &e) {
      // "--data: 1 required TEXT missing": the flag comes first.
      std::string what = e.what();
      return fail(current() + "option '" + what.substr(0, what.find(':')) +
                  "' needs a value");
    } catch (const CLI::ParseError &e) {
      return fail(current() + e.what()); // "--lr: expected ..., got '0'"
    }
    std::vector<std::string> extra = app.remaining(true);
    std::vector<CLI::App *> chosen = app.get_subcommands();
    if (chosen.empty() && extra.empty())
      return fail("missing command (see '" + programName + " --help')");
    if (chosen.empty())
      return fail("unknown command '" + extra[0] + "' (see '" + programName +
                  " --help')");
    name = chosen[0]->get_name();
    if (name == "help") {
      fputs(usageHelp().c_str(), stdout);
      return 0;
    }
    std::string seeHelp = " (see '" + programName + " " + name + " --help')";
    if (!extra.empty())
      return fail(name +
                  (extra[0][0] == '-' ? ": unknown option '"
                                      : ": unexpected argument '") +
                  extra[0] + "'" + seeHelp);
    for (const CLI::Option *opt : chosen[0]->get_options())
      for (const std::string &value : opt->results())
        if (value.empty())
          return fail(name + ": option '" + opt->get_name() +
                      "' needs a non-empty value");
    return -1;
  }
};

} // namespace

int main(int argc, char **argv) {
  if (argc > 0 && argv[0] && argv[0][0])
    programName = argv[0];
  // The generated code allocates the buffers of a parallel iteration that
  // do not fit its stack (a Performer head's features) on the heap and
  // frees them when the iteration ends. glibc would map such blocks
  // afresh every time and unmap them on free, so each iteration would
  // fault in and zero its pages again: keep them in the heap instead, and
  // keep the heap's freed top for the next step.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  Options options;
  std::string command, err;
  CommandLine commandLine(options);
  int status = commandLine.read(argc, argv, command);
  if (status >= 0)
    return status;
  // The worker threads of the generated code (OpenMP): the environment for
  // an OpenMP runtime that starts later, the call for one already linked.
  if (options.threads < 0 && command == "train")
    options.threads = threadsPerLocalRank(); // Several ranks on this machine.
  if (options.threads > 0) {
    setenv("OMP_NUM_THREADS", std::to_string(options.threads).c_str(), 1);
    if (omp_set_num_threads)
      omp_set_num_threads(int(options.threads));
  } else if (const char *inherited = getenv("OMP_NUM_THREADS");
             inherited && command != "info" && command != "init") {
    // OpenMP's runtime aborts on a value it cannot use: a list of thread
    // counts per nesting level, each from 1 to kMaxThreads.
    std::string text = inherited;
    bool valid = !text.empty();
    for (size_t start = 0; valid && start <= text.size();) {
      size_t comma = std::min(text.find(',', start), text.size());
      int64_t n = 0;
      valid = parseInt64(text.substr(start, comma - start), n) && n >= 1 &&
              n <= kMaxThreads;
      start = comma + 1;
    }
    if (!valid)
      return fail(format("OMP_NUM_THREADS='%s': expected a number of threads "
                         "from 1 to %d (or a comma-separated list of them); "
                         "unset it or pass --threads N",
                         inherited, kMaxThreads));
  }
  Manifest manifest;
  if (!parseManifest(tfc_model_manifest, manifest, err))
    return fail(err);
  if (command == "info")
    return runInfo(manifest);
  if (!checkCpuFeatures(manifest, err))
    return fail(err);
  if (command == "init")
    return runInit(manifest, options);
  if (command == "forward")
    return runForward(manifest, options);
  if (command == "train") {
    // Under mpirun: one rank of a data-parallel run (Distributed.h). The
    // ranks must run the same model; rank 0 alone prints progress.
    if (!startDistributed(err))
      return fail("train: " + err);
    if (world.size > 1) {
      if (world.rank > 0 && !freopen("/dev/null", "w", stdout))
        return endDistributed(fail("train: cannot silence the output of "
                                   "ranks other than 0"));
      std::string model =
          format("%s: model %s, batch %lld x %lld, %lld "
                 "parameters",
                 programName.c_str(), manifest.model.c_str(),
                 (long long)manifest.batch, (long long)manifest.seqLen,
                 (long long)manifest.params);
      if (!ranksAgree("model",
                      hashBytes(tfc_model_manifest, strlen(tfc_model_manifest)),
                      model, err) ||
          !ranksAgree("executable", hashExecutable(), programName, err)) {
        world.agreed = true;
        return endDistributed(fail("train: " + err));
      }
    }
    return endDistributed(runTrain(manifest, options));
  }
  if (command == "generate")
    return runGenerate(manifest, options);
  return runEval(manifest, options);
}
