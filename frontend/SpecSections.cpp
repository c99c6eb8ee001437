//===- SpecSections.cpp - Reads each section of a spec --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The spec reader's last two passes, section by section: the values of
/// [model], [hourglass], [ffn], [training], [data] and [attention], and the
/// consistency between keys (divisibility, per-layer arrays, data layout),
/// with the command-line overrides applied.
///
//===----------------------------------------------------------------------===//

#include "frontend/SpecReader.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace tfc::spec::detail {

namespace {

bool isNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/// Model names become file names: 1 to 128 characters from [A-Za-z0-9_.-],
/// not starting with '.' or '-'.
bool isValidName(const std::string &name) {
  if (name.empty() || name.size() > kMaxNameLength || name[0] == '.' ||
      name[0] == '-')
    return false;
  return std::all_of(name.begin(), name.end(), isNameCharacter);
}

/// A default model name from the spec's file name: the stem, with characters
/// outside [A-Za-z0-9_.-] replaced by '_' ("model" if that is not a valid
/// name).
std::string defaultName(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0)
    base = base.substr(0, dot);
  std::string name;
  for (char c : base)
    name += isNameCharacter(c) ? c : '_';
  if (!isValidName(name))
    return "model";
  return name;
}

} // namespace

bool SpecReader::readModel(const Section &sec, bool hasHourglass, Spec &spec) {
  Model &m = spec.model;
  m.name = defaultName(path);
  if (sec.has("name")) {
    if (!readString(sec, "name", m.name))
      return false;
    if (!isValidName(m.name))
      return error(locOf(sec, "name"), "model.name",
                   "expected 1 to 128 characters from [A-Za-z0-9_.-], not "
                   "starting with '.' or '-', got " +
                       quote(m.name));
  }
  if (!readEnum(sec, "task", kTasks, m.task))
    return false;
  bool classify = m.task == Task::Classify;
  if (!readInt(sec, "vocab", m.vocab, 2, kMaxVocab, /*required=*/classify) ||
      !readInt(sec, "d_model", m.dModel, 1, kMaxDModel, true) ||
      !readInt(sec, "heads", m.heads, 1, kMaxHeads, true) ||
      !readInt(sec, "d_ff", m.dFF, 1, kMaxDFF, true))
    return false;
  if (hasHourglass) {
    if (sec.has("layers"))
      return error(locOf(sec, "layers"), "model.layers",
                   "not allowed together with [hourglass]; the hourglass "
                   "layout gives the layer count");
  } else if (!readInt(sec, "layers", m.layers, 1, kMaxLayers, true)) {
    return false;
  }
  if (!readFloat(sec, "dropout", m.dropout, kFloat32Fraction) ||
      !readFloat(sec, "norm_eps", m.normEps, kFloat32NormEpsilon) ||
      !readEnum(sec, "positions", kPositions, m.positions))
    return false;

  if (!classify) {
    if (sec.has("classes"))
      return onlyWhen(sec, "classes", "model.task = \"classify\"");
    if (sec.has("loss"))
      return onlyWhen(sec, "loss", "model.task = \"classify\"");
  }
  if (classify && sec.has("tie_embeddings"))
    return onlyWhen(sec, "tie_embeddings",
                    "model.task = \"lm\" (a classifier's output layer has "
                    "model.classes rows, not model.vocab)");
  if (!readInt(sec, "classes", m.classes, 2, kMaxClasses) ||
      !readEnum(sec, "loss", kLosses, m.loss) ||
      !readBool(sec, "tie_embeddings", m.tieEmbeddings))
    return false;
  if (classify && m.loss == ClassifyLoss::BinaryCrossEntropy && m.classes != 2)
    return error(locOf(sec, "loss"), "model.loss",
                 "\"bce\" needs model.classes = 2, got " +
                     std::to_string(m.classes));

  if (m.dModel % m.heads != 0)
    return error(locOf(sec, "heads"), "model.heads",
                 "expected a divisor of model.d_model (" +
                     std::to_string(m.dModel) + "), got " +
                     std::to_string(m.heads));
  int64_t headDim = m.dModel / m.heads;
  if (m.positions == Positions::Rotary && headDim % 2 != 0)
    return error(locOf(sec, "positions"), "model.positions",
                 "\"rotary\" needs an even head size (model.d_model / "
                 "model.heads), got " +
                     std::to_string(headDim));
  if (m.positions == Positions::Sinusoidal && m.dModel % 2 != 0)
    return error(locOf(sec, "positions"), "model.positions",
                 "\"sinusoidal\" needs an even model.d_model, got " +
                     std::to_string(m.dModel));
  return true;
}

/// One `layers@factor` item of a layout string, with its byte offset.
struct LayoutItem {
  std::string text;
  size_t offset = 0;
  int64_t layers = 0;
  int64_t factor = 0;
};

namespace {

/// Parses a run of decimal digits into `value`, rejecting overflow past
/// `limit`. Returns false for empty or non-digit text.
bool parseDigits(std::string_view digits, int64_t limit, int64_t &value,
                 bool &tooLarge) {
  if (digits.empty())
    return false;
  value = 0;
  tooLarge = false;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return false;
    if (!tooLarge) {
      value = value * 10 + (c - '0');
      if (value > limit)
        tooLarge = true;
    }
  }
  return true;
}

} // namespace

bool SpecReader::parseLayout(const toml::node &node,
                             std::vector<HourglassLevel> &levels) {
  std::vector<LayoutItem> items;
  if (!splitLayout(node, items) || !checkLayoutShape(node, items))
    return false;
  for (const LayoutItem &item : items)
    levels.push_back(HourglassLevel{item.layers, item.factor});
  return true;
}

/// Splits the layout string `node` into its items and reads the layers and
/// the factor of each.
bool SpecReader::splitLayout(const toml::node &node,
                             std::vector<LayoutItem> &items) {
  const std::string key = "hourglass.layout";
  const auto *s = node.as_string();
  if (!s)
    return error(toLoc(node.source().begin), key,
                 std::string("expected a layout string like \"2@1 4@3 2@1\", "
                             "got ") +
                     typeName(node.type()));
  const std::string &layout = s->get();

  for (size_t pos = 0; pos < layout.size();) {
    if (layout[pos] == ' ' || layout[pos] == '\t') {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < layout.size() && layout[end] != ' ' && layout[end] != '\t')
      ++end;
    LayoutItem item;
    item.text = layout.substr(pos, end - pos);
    item.offset = pos;
    items.push_back(std::move(item));
    pos = end;
  }
  if (items.empty())
    return error(toLoc(node.source().begin), key,
                 "expected a layout like \"2@1 4@3 2@1\" (layers@factor per "
                 "level), got an empty string");

  for (LayoutItem &item : items) {
    Loc loc = locInString(node, item.offset);
    size_t at = item.text.find('@');
    bool layersTooLarge = false, factorTooLarge = false;
    if (at == std::string::npos ||
        !parseDigits(std::string_view(item.text).substr(0, at), kMaxLayers,
                     item.layers, layersTooLarge) ||
        !parseDigits(std::string_view(item.text).substr(at + 1), kMaxSeqLen,
                     item.factor, factorTooLarge))
      return error(loc, key,
                   "expected items of the form layers@factor with "
                   "non-negative integers (e.g. \"4@3\"), got " +
                       quote(item.text));
    if (layersTooLarge)
      return error(loc, key,
                   "expected at most " + std::to_string(kMaxLayers) +
                       " layers in an item, got " + quote(item.text));
    if (factorTooLarge || item.factor < 1)
      return error(loc, key,
                   "expected a shortening factor in [1, " +
                       std::to_string(kMaxSeqLen) + "], got " +
                       quote(item.text));
  }
  return true;
}

/// Checks the shape of the layout `node` split into `items`: a palindrome
/// whose factors grow from 1 to the centre level, within the layer limit.
bool SpecReader::checkLayoutShape(const toml::node &node,
                                  const std::vector<LayoutItem> &items) {
  const std::string key = "hourglass.layout";
  const std::string &layout = node.as_string()->get();
  size_t n = items.size();
  if (n % 2 == 0)
    return error(toLoc(node.source().begin), key,
                 "expected a palindrome with one centre level (an odd number "
                 "of items), got " +
                     std::to_string(n) + " items");
  size_t middle = n / 2;
  for (size_t i = 0; i < middle; ++i) {
    const LayoutItem &down = items[i];
    const LayoutItem &up = items[n - 1 - i];
    if (down.layers != up.layers || down.factor != up.factor)
      return error(locInString(node, up.offset), key,
                   "expected a palindrome: item " + quote(up.text) +
                       " must mirror " + quote(down.text));
  }
  // Trax's rule: every factor up to the centre is a multiple of the one
  // before it (so each level shortens the previous level by a whole factor).
  for (size_t i = 1; i <= middle; ++i) {
    const LayoutItem &prev = items[i - 1];
    const LayoutItem &item = items[i];
    if (item.factor % prev.factor != 0)
      return error(locInString(node, item.offset), key,
                   "expected the factor of " + quote(item.text) +
                       " to be a multiple of the factor of the level before "
                       "it (" +
                       quote(prev.text) + ")");
    if (item.factor == prev.factor)
      return error(locInString(node, item.offset), key,
                   "expected the factor of " + quote(item.text) +
                       " to be larger than the factor of the level before it "
                       "(" +
                       quote(prev.text) + ")");
  }
  if (items[0].factor != 1)
    return error(locInString(node, items[0].offset), key,
                 "expected the first level to run at factor 1 (full "
                 "resolution), got " +
                     quote(items[0].text));
  if (n == 1)
    return error(toLoc(node.source().begin), key,
                 "expected at least one shortened level, e.g. \"2@1 4@3 "
                 "2@1\", got " +
                     quote(layout));
  if (items[middle].layers < 1)
    return error(locInString(node, items[middle].offset), key,
                 "expected at least one layer in the centre level, got " +
                     quote(items[middle].text));
  int64_t total = 0;
  for (const LayoutItem &item : items)
    total += item.layers; // At most 1024 per item: no overflow.
  if (total > kMaxLayers)
    return error(toLoc(node.source().begin), key,
                 "expected at most " + std::to_string(kMaxLayers) +
                     " layers in total, got " + std::to_string(total));
  return true;
}

bool SpecReader::readHourglass(const Section &sec, Spec &spec) {
  Hourglass &h = spec.hourglass;
  h.enabled = true;
  const toml::node *layout = sec.get("layout");
  const toml::node *factors = sec.get("shortening_factors");
  if (layout && factors)
    return error(locOf(sec, "shortening_factors"),
                 "hourglass.shortening_factors",
                 "give either hourglass.layout or "
                 "hourglass.shortening_factors, not both");
  if (!layout && !factors)
    return error(sec.header, "hourglass.layout",
                 "missing required key; expected a layout like \"2@1 4@3 "
                 "2@1\" or hourglass.shortening_factors = [2, 2]");
  if (layout) {
    if (sec.has("layers_per_level"))
      return onlyWhen(sec, "layers_per_level",
                      "hourglass.shortening_factors is given");
    if (!parseLayout(*layout, h.levels))
      return false;
  } else if (!expandShorteningFactors(sec, *factors, h.levels)) {
    return false;
  }
  return readEnum(sec, "shortening", kShortenKinds, h.shortening) &&
         readEnum(sec, "upsampling", kUpsampleKinds, h.upsampling);
}

/// Reads hourglass.shortening_factors (`factors`, relative to the level
/// above) and hourglass.layers_per_level into the absolute layout `levels`.
bool SpecReader::expandShorteningFactors(const Section &sec,
                                         const toml::node &factors,
                                         std::vector<HourglassLevel> &levels) {
  int64_t perLevel = 1;
  if (!readInt(sec, "layers_per_level", perLevel, 1, kMaxLayers))
    return false;
  if (!factors.is_array())
    return error(toLoc(factors.source().begin), "hourglass.shortening_factors",
                 std::string("expected an array of integers >= 2, got ") +
                     typeName(factors.type()));
  std::vector<LocatedInt> relative;
  if (!readIntList(sec, "shortening_factors", relative, 2, kMaxSeqLen,
                   /*allowScalar=*/false))
    return false;
  if (relative.empty())
    return error(locOf(sec, "shortening_factors"),
                 "hourglass.shortening_factors",
                 "expected at least one factor, got an empty array");
  // labml's HourGlass: one block of layers per level on the way down,
  // the innermost level in the centre, and one block per level back up;
  // relative factors multiply into absolute ones.
  std::vector<HourglassLevel> down{{perLevel, 1}};
  int64_t absolute = 1;
  for (size_t i = 0; i < relative.size(); ++i) {
    if (absolute > kMaxSeqLen / relative[i].value)
      return error(relative[i].loc,
                   "hourglass.shortening_factors[" + std::to_string(i) + "]",
                   "expected the product of the factors to be at most " +
                       std::to_string(kMaxSeqLen));
    absolute *= relative[i].value;
    down.push_back({perLevel, absolute});
  }
  int64_t levelCount = static_cast<int64_t>(down.size()) * 2 - 1;
  if (perLevel * levelCount > kMaxLayers)
    return error(locOf(sec, "layers_per_level"), "hourglass.layers_per_level",
                 "expected at most " + std::to_string(kMaxLayers) +
                     " layers in total, got " +
                     std::to_string(perLevel * levelCount));
  levels = down;
  for (size_t i = down.size() - 1; i-- > 0;)
    levels.push_back(down[i]);
  return true;
}

bool SpecReader::readTraining(const Section &sec, const Section &hourglassSec,
                              Spec &spec) {
  Training &t = spec.training;
  int64_t seed = 0;
  if (!readEnum(sec, "optimizer", kOptimizers, t.optimizer) ||
      !readFloat(sec, "lr", t.lr, kLearningRate) ||
      !readFloat(sec, "beta1", t.beta1, kFloat32Fraction) ||
      !readFloat(sec, "beta2", t.beta2, kFloat32Fraction) ||
      !readFloat(sec, "eps", t.eps, kFloat32Epsilon) ||
      !readFloat(sec, "weight_decay", t.weightDecay, kFloat32NonNegative) ||
      !readEnum(sec, "schedule", kSchedules, t.schedule) ||
      !readInt(sec, "warmup", t.warmup, 0, kMaxSteps) ||
      !readFloat(sec, "clip", t.clip, kFloat32NonNegative) ||
      !readEnum(sec, "precision", kPrecisions, t.precision) ||
      !readInt(sec, "batch", t.batch, 1, kMaxBatch) ||
      !readInt(sec, "seq_len", t.seqLen, 1, kMaxSeqLen) ||
      !readInt(sec, "steps", t.steps, 1, kMaxSteps) ||
      !readInt(sec, "eval_every", t.evalEvery, 1, kMaxSteps) ||
      !readInt(sec, "eval_batches", t.evalBatches, 1, kMaxBatch) ||
      !readInt(sec, "checkpoint_every", t.checkpointEvery, 0, kMaxSteps) ||
      !readInt(sec, "patience", t.patience, 0, kMaxSteps) ||
      !readInt(sec, "seed", seed, 0, kMaxInt))
    return false;
  t.seed = static_cast<uint64_t>(seed);
  t.batchLoc = locOf(sec, "batch");
  t.seqLenLoc = locOf(sec, "seq_len");
  // Command-line overrides take the keys' ranges; the checks below and in
  // readAttention then run on the new values.
  if (!applyOverrides(t))
    return false;
  if (t.warmup > t.steps)
    return error(locOf(sec, "warmup"), "training.warmup",
                 "expected at most training.steps (" + std::to_string(t.steps) +
                     "), got " + std::to_string(t.warmup));
  if (t.schedule == Schedule::InverseSqrt && t.warmup < 1)
    return error(sec.has("warmup") ? locOf(sec, "warmup")
                                   : locOf(sec, "schedule"),
                 sec.has("warmup") ? "training.warmup" : "training.schedule",
                 "schedule \"inverse_sqrt\" needs training.warmup >= 1");
  return checkHourglassSeqLen(sec, hourglassSec, spec);
}

/// Applies --batch and --seq-len to `training`, within the ranges of the
/// keys they replace.
bool SpecReader::applyOverrides(Training &training) {
  if (overrides.batch) {
    if (*overrides.batch < 1 || *overrides.batch > kMaxBatch)
      return flagError("--batch", "expected " + describeIntRange(1, kMaxBatch) +
                                      " (the range of training.batch), got " +
                                      std::to_string(*overrides.batch));
    training.batch = *overrides.batch;
  }
  if (overrides.seqLen) {
    if (*overrides.seqLen < 1 || *overrides.seqLen > kMaxSeqLen)
      return flagError("--seq-len", "expected " +
                                        describeIntRange(1, kMaxSeqLen) +
                                        " (the range of training.seq_len), "
                                        "got " +
                                        std::to_string(*overrides.seqLen));
    training.seqLen = *overrides.seqLen;
  }
  return true;
}

/// Checks that the largest hourglass factor divides the sequence length,
/// naming the flag or the key that set the length, or the layout when
/// neither did.
bool SpecReader::checkHourglassSeqLen(const Section &sec,
                                      const Section &hourglassSec,
                                      const Spec &spec) {
  if (!spec.hourglass.enabled)
    return true;
  const Training &t = spec.training;
  int64_t largest = 1;
  for (const HourglassLevel &level : spec.hourglass.levels)
    largest = std::max(largest, level.factor);
  const char *layoutKey =
      hourglassSec.has("layout") ? "layout" : "shortening_factors";
  if (t.seqLen % largest != 0 && overrides.seqLen)
    return flagError("--seq-len", "expected a multiple of " +
                                      std::to_string(largest) +
                                      " (the largest factor of " +
                                      hourglassSec.dotted(layoutKey) +
                                      "), got " + std::to_string(t.seqLen));
  if (t.seqLen % largest != 0 && sec.has("seq_len"))
    return error(locOf(sec, "seq_len"), "training.seq_len",
                 "expected a multiple of " + std::to_string(largest) +
                     " (the largest hourglass factor), got " +
                     std::to_string(t.seqLen));
  if (t.seqLen % largest != 0)
    return error(locOf(hourglassSec, layoutKey), hourglassSec.dotted(layoutKey),
                 "expected the largest factor (" + std::to_string(largest) +
                     ") to divide training.seq_len (" +
                     std::to_string(t.seqLen) + ", the default)");
  return true;
}

bool SpecReader::readData(const Section &sec, Spec &spec) {
  Data &d = spec.data;
  bool classify = spec.model.task == Task::Classify;
  d.format = classify ? DataFormat::Jsonl : DataFormat::Bytes;
  if (!readEnum(sec, "format", kFormats, d.format))
    return false;
  if (!classify && d.format != DataFormat::Bytes)
    return error(locOf(sec, "format"), "data.format",
                 "expected \"bytes\" for model.task = \"lm\", got \"jsonl\"");
  if (classify && d.format != DataFormat::Jsonl)
    return error(locOf(sec, "format"), "data.format",
                 "expected \"jsonl\" for model.task = \"classify\", got "
                 "\"bytes\"");
  if (!readPath(sec, "train", d.train, /*required=*/true) ||
      !readPath(sec, "val", d.val) || !readPath(sec, "test", d.test))
    return false;

  if (d.format == DataFormat::Bytes) {
    bool split = !sec.has("val") && !sec.has("test");
    if (!split) {
      if (!sec.has("val"))
        return error(sec.header, "data.val",
                     "missing; with data.test given, give data.val too (or "
                     "neither, to split data.train)");
      if (!sec.has("test"))
        return error(sec.header, "data.test",
                     "missing; with data.val given, give data.test too (or "
                     "neither, to split data.train)");
      for (const char *key : {"train_fraction", "val_fraction"})
        if (sec.has(key))
          return onlyWhen(sec, key,
                          "data.train is split (no data.val and data.test)");
    }
    if (!readFloat(sec, "train_fraction", d.trainFraction, kUnitLeftOpen) ||
        !readFloat(sec, "val_fraction", d.valFraction, kUnitOpen))
      return false;
    if (split && d.trainFraction + d.valFraction > 1.0 + 1e-9)
      return error(sec.has("val_fraction") ? locOf(sec, "val_fraction")
                                           : locOf(sec, "train_fraction"),
                   sec.has("val_fraction") ? "data.val_fraction"
                                           : "data.train_fraction",
                   "expected data.train_fraction + data.val_fraction <= 1, "
                   "got " +
                       formatDouble(d.trainFraction) + " + " +
                       formatDouble(d.valFraction));
    if (sec.has("min_freq"))
      return onlyWhen(sec, "min_freq", "data.format = \"jsonl\"");
  } else {
    if (sec.has("train_fraction"))
      return onlyWhen(sec, "train_fraction", "data.format = \"bytes\"");
    if (sec.has("val") && sec.has("val_fraction"))
      return onlyWhen(sec, "val_fraction",
                      "no data.val file is given (it holds out that fraction "
                      "of data.train)");
    if (!readFloat(sec, "val_fraction", d.valFraction, kUnitOpen) ||
        !readInt(sec, "min_freq", d.minFreq, 1, kMaxMinFreq))
      return false;
  }
  return true;
}

bool SpecReader::checkVocab(const Section &modelSec, const Spec &spec) {
  if (spec.data.format == DataFormat::Bytes && spec.model.vocab < 256)
    return error(locOf(modelSec, "vocab"), "model.vocab",
                 "expected at least 256 for byte data (data.format = "
                 "\"bytes\"), got " +
                     std::to_string(spec.model.vocab));
  // The executable's word vocabulary starts with PAD, UNK and CLS.
  if (spec.model.task == Task::Classify && spec.model.vocab < 4)
    return error(locOf(modelSec, "vocab"), "model.vocab",
                 "expected at least 4 for a classify model (PAD, UNK, CLS "
                 "and one word), got " +
                     std::to_string(spec.model.vocab));
  return true;
}

bool SpecReader::readAttention(const Section &sec, Spec &spec) {
  Attention &a = spec.attention;
  bool lm = spec.model.task == Task::LanguageModel;
  a.causal = lm;
  if (!readEnum(sec, "kind", kAttentionKinds, a.kind) ||
      !readBool(sec, "causal", a.causal))
    return false;
  if (lm && !a.causal)
    return error(locOf(sec, "causal"), "attention.causal",
                 "expected true for model.task = \"lm\" (a language model "
                 "must not see the tokens it predicts)");

  bool performer = a.kind == AttentionKind::Performer;
  bool longformer = a.kind == AttentionKind::Longformer;
  for (const char *key : {"features", "redraw", "orthogonal"})
    if (!performer && sec.has(key))
      return onlyWhen(sec, key, "attention.kind = \"performer\"");
  for (const char *key : {"window", "dilation", "global_tokens"})
    if (!longformer && sec.has(key))
      return onlyWhen(sec, key, "attention.kind = \"longformer\"");
  if (!readInt(sec, "features", a.features, 1, kMaxFeatures) ||
      !readInt(sec, "redraw", a.redraw, 0, kMaxSteps) ||
      !readBool(sec, "orthogonal", a.orthogonal))
    return false;

  const std::vector<int64_t> factors = spec.layerFactors();
  if (longformer && !readLongformer(sec, spec, factors))
    return false;
  return readDConv(sec, spec, factors);
}

/// The sequence length that `layer` attends over, in words: the flag or key
/// that set it and, in a shortened hourglass level, the factor.
std::string SpecReader::layerSeqText(const Spec &spec,
                                     const std::vector<int64_t> &factors,
                                     size_t layer) const {
  const int64_t seqLen = spec.training.seqLen;
  if (!spec.hourglass.enabled || factors[layer] == 1)
    return std::to_string(seqLen) + " (" + seqLenName() + ")";
  return std::to_string(seqLen / factors[layer]) + " of layer " +
         std::to_string(layer) + " (" + seqLenName() + " " +
         std::to_string(seqLen) + " / hourglass factor " +
         std::to_string(factors[layer]) + ")";
}

/// Reads Longformer's keys: the window and dilation of every layer and the
/// global tokens.
bool SpecReader::readLongformer(const Section &sec, Spec &spec,
                                const std::vector<int64_t> &factors) {
  Attention &a = spec.attention;
  return readPerLayer(sec, "window", /*required=*/true, spec, factors,
                      a.window) &&
         readPerLayer(sec, "dilation", /*required=*/false, spec, factors,
                      a.dilation) &&
         readGlobalTokens(sec, spec);
}

/// Reads `key` (one integer for every layer, or one per layer; 1 when it is
/// absent and not `required`) into one entry per layer in `out`, each no
/// larger than its layer's sequence length.
bool SpecReader::readPerLayer(const Section &sec, const char *key,
                              bool required, const Spec &spec,
                              const std::vector<int64_t> &factors,
                              std::vector<int64_t> &out) {
  const int64_t seqLen = spec.training.seqLen;
  const int64_t layers = static_cast<int64_t>(factors.size());
  std::vector<LocatedInt> values;
  if (!readIntList(sec, key, values, 1, kMaxSeqLen, /*allowScalar=*/true))
    return false;
  if (!sec.has(key)) {
    if (required)
      return missing(sec, key,
                     "a positive integer or one per layer (needed by "
                     "attention.kind = \"longformer\")");
    values.push_back({1, sec.header});
  }
  bool isArray = sec.get(key) && sec.get(key)->is_array();
  if (isArray && static_cast<int64_t>(values.size()) != layers)
    return error(locOf(sec, key), sec.dotted(key),
                 "expected one entry per layer (" + std::to_string(layers) +
                     "), got " + std::to_string(values.size()));
  out.clear();
  for (int64_t layer = 0; layer < layers; ++layer) {
    const LocatedInt &v = values[isArray ? layer : 0];
    int64_t layerSeq = seqLen / factors[layer];
    // A shorter --seq-len than the spec's keeps the spec's windows: a
    // window that spans the whole sequence is full attention.
    if (v.value > layerSeq && !overrides.seqLen) {
      std::string dotted = sec.dotted(key);
      if (isArray)
        dotted += "[" + std::to_string(layer) + "]";
      return error(v.loc, dotted,
                   "expected a " + std::string(key) +
                       " no larger than the sequence length " +
                       layerSeqText(spec, factors, layer) + ", got " +
                       std::to_string(v.value));
    }
    out.push_back(v.value);
  }
  return true;
}

/// Reads attention.global_tokens: distinct positions inside the sequence,
/// none in causal attention; position 0 (the CLS token) by default in a
/// classifier's bidirectional attention.
bool SpecReader::readGlobalTokens(const Section &sec, Spec &spec) {
  Attention &a = spec.attention;
  bool lm = spec.model.task == Task::LanguageModel;
  const int64_t seqLen = spec.training.seqLen;
  std::vector<LocatedInt> globals;
  if (!readIntList(sec, "global_tokens", globals, 0, kMaxSeqLen,
                   /*allowScalar=*/false))
    return false;
  if (!sec.has("global_tokens") && !lm && !a.causal)
    globals.push_back({0, sec.header});
  a.globalTokens.clear();
  for (size_t i = 0; i < globals.size(); ++i) {
    std::string key = "attention.global_tokens[" + std::to_string(i) + "]";
    if (globals[i].value >= seqLen)
      return error(globals[i].loc, key,
                   "expected a token position below " +
                       std::string(seqLenName()) + " (" +
                       std::to_string(seqLen) + "), got " +
                       std::to_string(globals[i].value));
    for (size_t j = 0; j < i; ++j)
      if (globals[j].value == globals[i].value)
        return error(globals[i].loc, key,
                     "expected distinct positions, got " +
                         std::to_string(globals[i].value) + " twice");
    a.globalTokens.push_back(globals[i].value);
  }
  if (a.causal && !a.globalTokens.empty())
    return error(toLoc(sec.get("global_tokens")->source().begin),
                 "attention.global_tokens",
                 "expected an empty array with attention.causal = true (a "
                 "global token attends to the whole sequence, future "
                 "included)");
  return true;
}

/// Reads Primer's depth-wise convolution: causal attention only, its kernel
/// no longer than the shortest sequence of any layer.
bool SpecReader::readDConv(const Section &sec, Spec &spec,
                           const std::vector<int64_t> &factors) {
  Attention &a = spec.attention;
  const int64_t seqLen = spec.training.seqLen;
  if (!readBool(sec, "dconv", a.dconv))
    return false;
  if (a.dconv && !a.causal)
    return error(locOf(sec, "dconv"), "attention.dconv",
                 "needs attention.causal = true (Primer's depth-wise "
                 "convolution looks only at earlier positions)");
  if (!a.dconv && sec.has("dconv_kernel"))
    return onlyWhen(sec, "dconv_kernel", "attention.dconv = true");
  if (!readInt(sec, "dconv_kernel", a.dconvKernel, 1, kMaxDConvKernel))
    return false;
  if (a.dconv) {
    int64_t shortest = seqLen;
    for (int64_t factor : factors)
      shortest = std::min(shortest, seqLen / factor);
    if (a.dconvKernel > shortest)
      return error(locOf(sec, "dconv_kernel"), "attention.dconv_kernel",
                   "expected a kernel no larger than the shortest sequence "
                   "length (" +
                       std::to_string(shortest) + "), got " +
                       std::to_string(a.dconvKernel));
  }
  return true;
}

} // namespace tfc::spec::detail
