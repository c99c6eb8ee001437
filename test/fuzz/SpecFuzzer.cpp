//===- SpecFuzzer.cpp - libFuzzer target over the spec parser -------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Feeds arbitrary bytes to tfc::spec::parseSpecString. The parser promises
/// never to throw, abort or hang and to report every failure as one line
/// naming a location and a key; this target checks those promises and the
/// invariants of every spec it accepts. Sanitizers (address, undefined)
/// catch the rest.
///
//===----------------------------------------------------------------------===//

#include "frontend/Spec.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace tfc::spec;

namespace {

/// Stops the run with a crash libFuzzer records, when `condition` fails.
void check(bool condition) {
  if (!condition)
    std::abort();
}

void checkDiagnostic(const Diagnostic &diag) {
  std::string line = diag.str();
  check(line.find('\n') == std::string::npos);
  check(line.find('\r') == std::string::npos);
  check(!diag.key.empty());
  check(!diag.message.empty());
  check(diag.loc.line >= 1 && diag.loc.column >= 1);
}

void checkSpec(const Spec &spec) {
  int64_t layers = spec.totalLayers();
  check(layers >= 1 && layers <= 1024);
  check(spec.model.layers == layers);
  check(static_cast<int64_t>(spec.layerFactors().size()) == layers);
  check(spec.model.dModel % spec.model.heads == 0);
  check(spec.training.seqLen >= 1);
  const Attention &a = spec.attention;
  if (a.kind == AttentionKind::Longformer) {
    check(static_cast<int64_t>(a.window.size()) == layers);
    check(static_cast<int64_t>(a.dilation.size()) == layers);
    for (int64_t w : a.window)
      check(w >= 1 && w <= spec.training.seqLen);
    for (int64_t g : a.globalTokens)
      check(g >= 0 && g < spec.training.seqLen);
  } else {
    check(a.window.empty() && a.dilation.empty() && a.globalTokens.empty());
  }
  if (spec.hourglass.enabled) {
    const auto &levels = spec.hourglass.levels;
    check(levels.size() >= 3 && levels.size() % 2 == 1);
    check(levels.front().factor == 1);
    for (size_t i = 0; i < levels.size(); ++i) {
      const HourglassLevel &mirror = levels[levels.size() - 1 - i];
      check(levels[i].layers == mirror.layers &&
            levels[i].factor == mirror.factor);
      check(spec.training.seqLen % levels[i].factor == 0);
    }
  }
  check(!spec.data.train.empty());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Diagnostic diag;
  std::optional<Spec> spec = parseSpecString(text, "fuzz.toml", diag);
  if (spec)
    checkSpec(*spec);
  else
    checkDiagnostic(diag);
  return 0;
}
