//===- SpecSchema.cpp - The keys, enums and ranges of a spec --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The section table of the spec schema and the words for its ranges.
///
//===----------------------------------------------------------------------===//

#include "frontend/SpecSchema.h"

#include "frontend/SpecDiagnostics.h"

#include <cmath>

namespace tfc::spec::detail {

/// Describes an integer range in words.
std::string describeIntRange(int64_t min, int64_t max) {
  if (max == kMaxInt) {
    if (min == 1)
      return "a positive integer";
    if (min == 0)
      return "a non-negative integer";
    return "an integer >= " + std::to_string(min);
  }
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
         "]";
}

bool FloatRange::contains(double value) const {
  if (minOpen ? !(value > min) : !(value >= min))
    return false;
  if (maxOpen ? !(value < max) : !(value <= max))
    return false;
  return true;
}

std::string FloatRange::describe() const {
  if (why)
    return bounds() + " (" + why + ")";
  return bounds();
}

std::string FloatRange::bounds() const {
  bool hasMin = std::isfinite(min);
  bool hasMax = std::isfinite(max);
  if (hasMin && hasMax)
    return std::string("a number in ") + (minOpen ? "(" : "[") +
           formatDouble(min) + ", " + formatDouble(max) + (maxOpen ? ")" : "]");
  if (hasMin)
    return std::string("a number ") + (minOpen ? "> " : ">= ") +
           formatDouble(min);
  if (hasMax)
    return std::string("a number ") + (maxOpen ? "< " : "<= ") +
           formatDouble(max);
  return "a finite number";
}

const std::vector<SectionSchema> &schema() {
  static const std::vector<SectionSchema> sections = {
      {"model",
       {"name", "task", "vocab", "d_model", "heads", "d_ff", "layers",
        "dropout", "norm_eps", "positions", "classes", "loss",
        "tie_embeddings"}},
      {"attention",
       {"kind", "causal", "features", "redraw", "orthogonal", "window",
        "dilation", "global_tokens", "dconv", "dconv_kernel"}},
      {"ffn", {"activation"}},
      {"hourglass",
       {"layout", "shortening_factors", "layers_per_level", "shortening",
        "upsampling"}},
      {"training",
       {"optimizer", "lr", "beta1", "beta2", "eps", "weight_decay", "schedule",
        "warmup", "clip", "precision", "batch", "seq_len", "steps",
        "eval_every", "eval_batches", "checkpoint_every", "patience", "seed"}},
      {"data",
       {"format", "train", "val", "test", "train_fraction", "val_fraction",
        "min_freq"}},
  };
  return sections;
}

} // namespace tfc::spec::detail
