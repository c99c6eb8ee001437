//===- Generate.cpp - Sampling bytes from a language model ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `./model generate`: autoregressive sampling through tfc_forward. The
/// model is causal, so the context (the prompt and what was generated, at
/// most its last seq_len bytes) sits at the start of batch row 0 and the
/// next byte is read from the logits at the context's last position; what
/// follows it in the window (zeros) cannot change those logits. Longer
/// contexts slide: the window always holds the last seq_len bytes. Each
/// byte costs one forward pass over the compiled [batch, seq_len] shape.
///
/// Token i is drawn with sampleToken (Metrics.h) from
/// u = uniform01(seed, streamId("generate"), i), so a seed gives the same
/// text on any machine for the same weights and logits.
///
//===----------------------------------------------------------------------===//

#include "runtime/Commands.h"
#include "runtime/Params.h"
#include "runtime/Random.h"
#include "runtime/Safetensors.h"
#include "runtime/Support.h"

#include <cmath>
#include <cstdio>

namespace tfc::rt {

std::string generateHelp() {
  return format(
      "usage: %s generate --weights PATH --prompt TEXT [--tokens N]\n"
      "           [--temperature T] [--top-k K] [--seed S]\n"
      "\n"
      "Language models: prints the prompt, then N sampled bytes as they\n"
      "come, then a newline.\n"
      "\n"
      "  --weights PATH     safetensors weights (a training checkpoint\n"
      "                     works too)\n"
      "  --prompt TEXT      the bytes to continue (non-empty)\n"
      "  --tokens N         bytes to generate (default 256)\n"
      "  --temperature T    softmax temperature (default 1; 0 = always\n"
      "                     the most likely byte)\n"
      "  --top-k K          sample among the K most likely bytes only\n"
      "                     (default 0 = all)\n"
      "  --seed S           sampling seed (default 0)\n"
      "  --threads N        worker threads of the generated code\n"
      "\n"
      "Stops with status 1 if the logits of a step are not finite.\n",
      programName.c_str());
}

int runGenerate(const Manifest &m, const Options &o) {
  if (m.task != Task::LanguageModel)
    return fail("generate: a classify model has no next-token distribution; "
                "use '" +
                programName + " eval'");
  if (m.vocab < 256)
    return fail(format("generate: byte-level text needs a vocabulary of 256, "
                       "the model has %lld",
                       (long long)m.vocab));
  if (o.weights.empty())
    return fail("generate: missing --weights PATH (see '" + programName +
                " generate --help')");
  if (o.prompt.empty())
    return fail("generate: missing --prompt TEXT (see '" + programName +
                " generate --help')");
  std::string err;
  FloatBuffer params;
  if (!params.allocate(m.params, "parameters", err) ||
      !loadCheckpoint(o.weights, m, params.data(), err))
    return fail(err);
  const int64_t S = m.seqLen, V = m.outputs;
  const int64_t count = o.tokenCount >= 0 ? o.tokenCount : 256;
  const uint64_t seed = o.hasSeed ? o.seed : 0;
  const uint64_t stream = streamId("generate");
  BatchBuffers io(m);
  std::string context = o.prompt;
  // The prompt goes out once the model has run (a GPU executable without a
  // device stops at its first forward, with one line and nothing before).
  auto showPrompt = [&, shown = false]() mutable {
    if (!shown)
      fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
    shown = true;
  };
  for (int64_t i = 0; i < count; ++i) {
    if (int64_t(context.size()) > 2 * S)
      context.erase(0, context.size() - size_t(S));
    int64_t length = std::min<int64_t>(S, int64_t(context.size()));
    const char *window = context.data() + context.size() - size_t(length);
    // Row 0: the window, then zeros; targets are the inputs shifted by one.
    for (int64_t s = 0; s < S; ++s)
      io.tokens[size_t(s)] = s < length ? int32_t(uint8_t(window[s])) : 0;
    for (int64_t s = 0; s < S; ++s)
      io.targets[size_t(s)] = s + 1 < S ? io.tokens[size_t(s + 1)] : 0;
    io.forward(params.data());
    showPrompt();
    const float *logits = &io.logits[size_t((length - 1) * V)];
    for (int64_t v = 0; v < 256; ++v) {
      if (!std::isfinite(logits[v])) {
        putchar('\n');
        fflush(stdout);
        return fail(format("generate: byte %lld: the logits of %s are not "
                           "finite (byte value %lld: %s)",
                           (long long)i + 1, o.weights.c_str(), (long long)v,
                           std::isnan(logits[v]) ? "nan" : "infinite"));
      }
    }
    int32_t next = sampleToken(logits, 256, o.temperature, o.topK,
                               uniform01(seed, stream, uint64_t(i)));
    context.push_back(char(uint8_t(next)));
    putchar(next);
    fflush(stdout);
  }
  showPrompt();
  putchar('\n');
  return 0;
}

} // namespace tfc::rt
