//===- Spec.cpp - Plain helpers on the parsed model spec ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The parts of the spec API that need no TOML: layer counts, diagnostics
/// rendering and enum names. Parsing lives in SpecParser.cpp.
///
//===----------------------------------------------------------------------===//

#include "frontend/Spec.h"

namespace tfc::spec {

int64_t Spec::totalLayers() const {
  if (!hourglass.enabled)
    return model.layers;
  int64_t total = 0;
  for (const HourglassLevel &level : hourglass.levels)
    total += level.layers;
  return total;
}

std::vector<int64_t> Spec::layerFactors() const {
  std::vector<int64_t> factors;
  if (!hourglass.enabled) {
    if (model.layers > 0)
      factors.assign(static_cast<size_t>(model.layers), 1);
    return factors;
  }
  for (const HourglassLevel &level : hourglass.levels)
    for (int64_t i = 0; i < level.layers; ++i)
      factors.push_back(level.factor);
  return factors;
}

std::string Spec::resolvePath(const std::string &dataPath) const {
  if (dataPath.empty() || dataPath.front() == '/')
    return dataPath;
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return dataPath;
  return path.substr(0, slash + 1) + dataPath;
}

std::string Diagnostic::str() const {
  if (!flag.empty())
    return "tfc: error: " + flag + ": " + message;
  std::string out = path.empty() ? std::string("<spec>") : path;
  if (loc.line > 0) {
    out += ':' + std::to_string(loc.line) + ':' +
           std::to_string(loc.column > 0 ? loc.column : 1);
  }
  out += ": error: ";
  if (!key.empty())
    out += key + ": ";
  out += message;
  return out;
}

std::string layoutString(const std::vector<HourglassLevel> &levels) {
  std::string out;
  for (const HourglassLevel &level : levels) {
    if (!out.empty())
      out += ' ';
    out += std::to_string(level.layers) + '@' + std::to_string(level.factor);
  }
  return out;
}

const char *toString(Task task) {
  switch (task) {
  case Task::LanguageModel:
    return "lm";
  case Task::Classify:
    return "classify";
  }
  return "?";
}

const char *toString(Positions positions) {
  switch (positions) {
  case Positions::None:
    return "none";
  case Positions::Sinusoidal:
    return "sinusoidal";
  case Positions::Learned:
    return "learned";
  case Positions::Rotary:
    return "rotary";
  }
  return "?";
}

const char *toString(AttentionKind kind) {
  switch (kind) {
  case AttentionKind::Softmax:
    return "softmax";
  case AttentionKind::Performer:
    return "performer";
  case AttentionKind::Longformer:
    return "longformer";
  }
  return "?";
}

const char *toString(Activation activation) {
  switch (activation) {
  case Activation::Relu:
    return "relu";
  case Activation::Gelu:
    return "gelu";
  case Activation::SquaredRelu:
    return "squared_relu";
  }
  return "?";
}

const char *toString(ShortenKind kind) {
  switch (kind) {
  case ShortenKind::Avg:
    return "avg";
  case ShortenKind::Linear:
    return "linear";
  case ShortenKind::Attention:
    return "attention";
  }
  return "?";
}

const char *toString(UpsampleKind kind) {
  switch (kind) {
  case UpsampleKind::Naive:
    return "naive";
  case UpsampleKind::Linear:
    return "linear";
  case UpsampleKind::Attention:
    return "attention";
  }
  return "?";
}

const char *toString(ClassifyLoss loss) {
  switch (loss) {
  case ClassifyLoss::CrossEntropy:
    return "ce";
  case ClassifyLoss::BinaryCrossEntropy:
    return "bce";
  }
  return "?";
}

const char *toString(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::Adam:
    return "adam";
  case Optimizer::AdamW:
    return "adamw";
  }
  return "?";
}

const char *toString(Schedule schedule) {
  switch (schedule) {
  case Schedule::Constant:
    return "constant";
  case Schedule::Linear:
    return "linear";
  case Schedule::Cosine:
    return "cosine";
  case Schedule::InverseSqrt:
    return "inverse_sqrt";
  }
  return "?";
}

const char *toString(Precision precision) {
  switch (precision) {
  case Precision::F32:
    return "f32";
  case Precision::BF16:
    return "bf16";
  }
  return "?";
}

const char *toString(DataFormat format) {
  switch (format) {
  case DataFormat::Bytes:
    return "bytes";
  case DataFormat::Jsonl:
    return "jsonl";
  }
  return "?";
}

} // namespace tfc::spec
