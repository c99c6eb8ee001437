//===- Manifest.cpp - The model manifest as a struct ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Manifest.h"
#include "runtime/ManifestFormat.h"
#include "runtime/Support.h"

#include <algorithm>
#include <map>

namespace tfc::rt {

const TensorInfo *Manifest::find(const std::string &name) const {
  for (const TensorInfo &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

int64_t Manifest::trainableCount() const {
  int64_t n = 0;
  for (const TensorInfo &t : tensors)
    if (t.kind == TensorKind::Param)
      n += t.count;
  return n;
}

int64_t Manifest::logitsCount() const {
  return task == Task::LanguageModel ? batch * seqLen * outputs
                                     : batch * outputs;
}

int64_t Manifest::targetsCount() const {
  return task == Task::LanguageModel ? batch * seqLen : batch;
}

const char *toString(Task task) {
  return task == Task::LanguageModel ? manifest::kTaskLm
                                     : manifest::kTaskClassify;
}

const char *toString(TensorKind kind) {
  return kind == TensorKind::Param ? manifest::kParam : manifest::kBuffer;
}

/// Splits a line on spaces and tabs.
static std::vector<std::string> splitFields(const std::string &line) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t')
      ++i;
    if (i > start)
      fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

/// Parses `normal:<std> | zeros | ones | uniform:<a> | features:<M>:<d>`.
static bool parseInit(const std::string &text, TensorInit &init,
                      std::string &why) {
  init = TensorInit();
  init.text = text;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  const std::string &name = parts[0];
  if ((name == manifest::kInitZeros || name == manifest::kInitOnes) &&
      parts.size() == 1) {
    init.kind = name == manifest::kInitZeros ? InitKind::Zeros : InitKind::Ones;
    return true;
  }
  if ((name == manifest::kInitNormal || name == manifest::kInitUniform) &&
      parts.size() == 2) {
    init.kind =
        name == manifest::kInitNormal ? InitKind::Normal : InitKind::Uniform;
    if (!parseDouble(parts[1], init.scale) || init.scale < 0) {
      why = "init '" + text + "': expected a non-negative number after ':'";
      return false;
    }
    return true;
  }
  if (name == manifest::kInitFeatures && parts.size() == 3) {
    init.kind = InitKind::Features;
    if (!parseInt64(parts[1], init.featureRows) || init.featureRows < 1 ||
        !parseInt64(parts[2], init.featureCols) || init.featureCols < 1) {
      why = "init '" + text + "': expected features:<M>:<d> with M, d >= 1";
      return false;
    }
    return true;
  }
  why = "unknown init '" + text +
        "' (expected normal:<std>, zeros, ones, uniform:<a> or "
        "features:<M>:<d>)";
  return false;
}

namespace {

/// A record that holds one integer: its name, the member of Manifest it
/// sets and the least value it may take.
struct IntegerRecord {
  const char *name;
  int64_t Manifest::*member;
  int64_t min;
};

const IntegerRecord kIntegerRecords[] = {
    {manifest::kVocab, &Manifest::vocab, 1},
    {manifest::kClasses, &Manifest::classes, 0},
    {manifest::kOutputs, &Manifest::outputs, 1},
    {manifest::kBatch, &Manifest::batch, 1},
    {manifest::kSeqLen, &Manifest::seqLen, 1},
    {manifest::kDModel, &Manifest::dModel, 1},
    {manifest::kLayers, &Manifest::layers, 0},
    {manifest::kHeads, &Manifest::heads, 1},
    {manifest::kParams, &Manifest::params, 0},
    {manifest::kActivationBytes, &Manifest::activationBytes, 0},
    {manifest::kTrainActivationBytes, &Manifest::trainActivationBytes, 0},
    {manifest::kArenaBytes, &Manifest::arenaBytes, 0},
    {manifest::kThreadHeapBytes, &Manifest::threadHeapBytes, 0},
    {manifest::kKernelsPerStep, &Manifest::kernelsPerStep, 0},
    {manifest::kMinFreq, &Manifest::minFreq, 1},
    {manifest::kTrainSteps, &Manifest::trainSteps, 0},
    {manifest::kWarmup, &Manifest::warmup, 0},
    {manifest::kEvalEvery, &Manifest::evalEvery, 0},
    {manifest::kEvalBatches, &Manifest::evalBatches, 0},
    {manifest::kCheckpointEvery, &Manifest::checkpointEvery, 0},
    {manifest::kPatience, &Manifest::patience, 0},
    {manifest::kRedraw, &Manifest::redraw, 0},
};

/// The state of one parse: the manifest filled so far, where each record
/// stood, and the line being read (errors name it).
struct ManifestParser {
  Manifest &manifest;
  std::string &err;
  std::map<std::string, int> seen; ///< Record key -> line.
  std::vector<int> tensorLines;    ///< Parallel to manifest.tensors.
  int lineNo = 0;

  ManifestParser(Manifest &manifest, std::string &err)
      : manifest(manifest), err(err) {}

  /// Sets `err` to `manifest:<line>: why`; returns false.
  bool fail(const std::string &why) {
    err = format("manifest:%d: %s", lineNo, why.c_str());
    return false;
  }

  bool parseLines(const std::string &text);
  bool parseTensor(const std::vector<std::string> &f);
  bool parseRecord(const std::string &line, const std::vector<std::string> &f);
  bool checkTask();
  bool checkTensorLayout();
};

/// Reads every line up to `end`: the first record, tensors, the others.
bool ManifestParser::parseLines(const std::string &text) {
  bool ended = false;
  size_t pos = 0;
  while (pos < text.size() && !ended) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos)
      eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    std::vector<std::string> f = splitFields(line);
    if (f.empty())
      continue;
    const std::string &key = f[0];
    if (seen.empty()) {
      if (key != manifest::kMagic)
        return fail("expected 'tfc-manifest 1' as the first record");
      if (f.size() != 2 || f[1] != manifest::kVersion)
        return fail("unsupported manifest version (this runtime reads "
                    "'tfc-manifest 1')");
      seen[key] = lineNo;
      continue;
    }
    if (key == manifest::kEnd) {
      ended = true;
      continue;
    }
    if (key == manifest::kTensor) {
      if (!parseTensor(f))
        return false;
      continue;
    }
    if (seen.count(key))
      return fail(
          format("record '%s' repeats line %d", key.c_str(), seen[key]));
    seen[key] = lineNo;
    if (!parseRecord(line, f))
      return false;
  }
  if (!ended) {
    ++lineNo;
    return fail("missing 'end' (manifest truncated)");
  }
  return true;
}

/// `tensor <name> <offset> <kind> <init> <rank> <dims>...`.
bool ManifestParser::parseTensor(const std::vector<std::string> &f) {
  if (f.size() < 6)
    return fail("expected 'tensor <name> <offset> <kind> <init> <rank> "
                "<dims>...'");
  TensorInfo t;
  t.name = f[1];
  if (manifest.find(t.name))
    return fail("tensor '" + t.name + "' listed twice");
  if (!parseInt64(f[2], t.offset) || t.offset < 0)
    return fail("tensor '" + t.name + "': bad offset '" + f[2] + "'");
  if (f[3] == manifest::kParam)
    t.kind = TensorKind::Param;
  else if (f[3] == manifest::kBuffer)
    t.kind = TensorKind::Buffer;
  else
    return fail("tensor '" + t.name + "': kind '" + f[3] +
                "' is not param or buffer");
  std::string why;
  if (!parseInit(f[4], t.init, why))
    return fail("tensor '" + t.name + "': " + why);
  int64_t rank = 0;
  if (!parseInt64(f[5], rank) || rank < 0 || rank > 16)
    return fail("tensor '" + t.name + "': bad rank '" + f[5] + "'");
  if (int64_t(f.size()) != 6 + rank)
    return fail(format("tensor '%s': rank %lld but %zu dimensions",
                       t.name.c_str(), (long long)rank, f.size() - 6));
  t.count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = 0;
    if (!parseInt64(f[6 + i], d) || d < 1)
      return fail("tensor '" + t.name + "': bad dimension '" + f[6 + i] + "'");
    if (t.count > (int64_t(1) << 62) / d)
      return fail("tensor '" + t.name + "': too many elements");
    t.count *= d;
    t.shape.push_back(d);
  }
  if (t.init.kind == InitKind::Features &&
      t.count % (t.init.featureRows * t.init.featureCols) != 0)
    return fail(format("tensor '%s': %lld elements is not a multiple of "
                       "the %lld x %lld feature matrix",
                       t.name.c_str(), (long long)t.count,
                       (long long)t.init.featureRows,
                       (long long)t.init.featureCols));
  manifest.tensors.push_back(t);
  tensorLines.push_back(lineNo);
  return true;
}

/// A record other than the first, `tensor` and `end`, in `line` split into
/// the fields `f`. Records this runtime does not know are ignored, so that
/// the compiler can record more of the configuration than it reads.
bool ManifestParser::parseRecord(const std::string &line,
                                 const std::vector<std::string> &f) {
  const std::string &key = f[0];
  auto needArgs = [&](size_t n) {
    if (f.size() == n + 1)
      return true;
    return fail(format("record '%s' takes %zu value%s", key.c_str(), n,
                       n == 1 ? "" : "s"));
  };
  for (const IntegerRecord &record : kIntegerRecords) {
    if (key != record.name)
      continue;
    if (!needArgs(1))
      return false;
    if (!parseInt64(f[1], manifest.*record.member) ||
        manifest.*record.member < record.min)
      return fail(format("record '%s': expected an integer >= %lld, got "
                         "'%s'",
                         key.c_str(), (long long)record.min, f[1].c_str()));
    return true;
  }
  if (key == manifest::kModel) {
    if (!needArgs(1))
      return false;
    manifest.model = f[1];
  } else if (key == manifest::kTask) {
    if (!needArgs(1))
      return false;
    if (f[1] == manifest::kTaskLm)
      manifest.task = Task::LanguageModel;
    else if (f[1] == manifest::kTaskClassify)
      manifest.task = Task::Classify;
    else
      return fail("task '" + f[1] + "' is not lm or classify");
  } else if (key == manifest::kFlopsPerToken) {
    if (!needArgs(1))
      return false;
    if (!parseDouble(f[1], manifest.flopsPerToken) ||
        manifest.flopsPerToken < 0)
      return fail("record 'flops_per_token': expected a number >= 0, got '" +
                  f[1] + "'");
  } else if (key == manifest::kPrecision) {
    if (!needArgs(1))
      return false;
    if (f[1] != manifest::kPrecisionF32 && f[1] != manifest::kPrecisionBf16)
      return fail("record 'precision': expected f32 or bf16, got '" + f[1] +
                  "'");
    manifest.precision = f[1];
  } else if (key == manifest::kCpuFeatures) {
    if (f.size() < 2)
      return fail("record 'cpu_features' takes one or more features");
    for (size_t i = 1; i < f.size(); ++i) {
      if (f[i] != manifest::kCpuFeatureAvx512Bf16)
        return fail("record 'cpu_features': unknown feature '" + f[i] +
                    "' (expected avx512bf16)");
      manifest.cpuFeatures.push_back(f[i]);
    }
  } else if (key == manifest::kSplit) {
    if (!needArgs(2))
      return false;
    double train = 0, val = 0;
    if (!parseDouble(f[1], train) || !parseDouble(f[2], val) || train <= 0 ||
        val < 0 || train + val > 1)
      return fail("record 'split': expected <train> <val> fractions with "
                  "train > 0, val >= 0, train + val <= 1");
    manifest.trainFraction = train;
    manifest.valFraction = val;
  } else if (key == manifest::kValFraction) {
    if (!needArgs(1))
      return false;
    double fraction = 0;
    if (!parseDouble(f[1], fraction) || fraction < 0 || fraction >= 1)
      return fail("record 'val_fraction': expected a number in [0, 1), "
                  "got '" +
                  f[1] + "'");
    manifest.holdoutFraction = fraction;
  } else if (key == manifest::kLr) {
    if (!needArgs(1))
      return false;
    if (!parseDouble(f[1], manifest.lr) || !(manifest.lr > 0))
      return fail("record 'lr': expected a positive number, got '" + f[1] +
                  "'");
  } else if (key == manifest::kSeed) {
    if (!needArgs(1))
      return false;
    // The compiler records the spec's seed as a signed 64-bit integer;
    // both spellings of the same 64 bits are accepted.
    int64_t signedSeed = 0;
    if (parseUInt64(f[1], manifest.seed)) {
    } else if (parseInt64(f[1], signedSeed)) {
      manifest.seed = uint64_t(signedSeed);
    } else {
      return fail("record 'seed': expected an integer, got '" + f[1] + "'");
    }
  } else if (key == manifest::kDataTrain || key == manifest::kDataVal ||
             key == manifest::kDataTest) {
    // A path is the rest of the line after one space, so that it may
    // hold spaces itself.
    if (f.size() < 2)
      return fail(format("record '%s' takes a path", key.c_str()));
    std::string &path = key == manifest::kDataTrain ? manifest.dataTrain
                        : key == manifest::kDataVal ? manifest.dataVal
                                                    : manifest.dataTest;
    path = line.substr(line.find(key) + key.size() + 1);
    if (path == manifest::kNoPath)
      path.clear();
  }
  return true;
}

/// The records the task needs, and its outputs.
bool ManifestParser::checkTask() {
  const char *required[] = {manifest::kModel,  manifest::kTask,
                            manifest::kBatch,  manifest::kSeqLen,
                            manifest::kDModel, manifest::kLayers,
                            manifest::kHeads,  manifest::kParams};
  for (const char *key : required)
    if (!seen.count(key))
      return fail(format("missing record '%s'", key));
  if (manifest.task == Task::Classify) {
    if (!seen.count(manifest::kVocab) || !seen.count(manifest::kClasses))
      return fail("a classify model needs 'vocab' and 'classes'");
    if (manifest.vocab < 4)
      return fail("a classify vocabulary needs room for PAD, UNK, CLS and at "
                  "least one word (vocab >= 4)");
    if (manifest.classes < 1)
      return fail("a classify model needs classes >= 1");
    if (!seen.count(manifest::kOutputs))
      manifest.outputs = manifest.classes;
    if (manifest.outputs != manifest.classes &&
        !(manifest.outputs == 1 && manifest.classes == 2))
      return fail(format("%lld outputs for %lld classes (expected one output "
                         "per class, or 1 for 2 classes)",
                         (long long)manifest.outputs,
                         (long long)manifest.classes));
  } else {
    if (!seen.count(manifest::kOutputs))
      manifest.outputs = manifest.vocab;
    if (manifest.outputs != manifest.vocab)
      return fail(format("a language model has one output per vocabulary "
                         "entry: %lld outputs for vocab %lld",
                         (long long)manifest.outputs,
                         (long long)manifest.vocab));
  }
  return true;
}

/// Every tensor inside the buffer, no two overlapping; errors point at the
/// tensor's line.
bool ManifestParser::checkTensorLayout() {
  std::vector<size_t> byOffset;
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    const TensorInfo &t = manifest.tensors[i];
    lineNo = tensorLines[i];
    if (t.offset > manifest.params || t.count > manifest.params - t.offset)
      return fail(format("tensor '%s' [%lld, %lld) runs past the end of the "
                         "%lld-float buffer",
                         t.name.c_str(), (long long)t.offset,
                         (long long)(t.offset + t.count),
                         (long long)manifest.params));
    byOffset.push_back(i);
  }
  std::sort(byOffset.begin(), byOffset.end(), [&](size_t a, size_t b) {
    return manifest.tensors[a].offset < manifest.tensors[b].offset;
  });
  for (size_t k = 1; k < byOffset.size(); ++k) {
    const TensorInfo &a = manifest.tensors[byOffset[k - 1]];
    const TensorInfo &b = manifest.tensors[byOffset[k]];
    if (a.offset + a.count > b.offset) {
      lineNo = std::max(tensorLines[byOffset[k - 1]], tensorLines[byOffset[k]]);
      return fail("tensors '" + a.name + "' and '" + b.name + "' overlap");
    }
  }
  return true;
}

} // namespace

bool parseManifest(const char *text, Manifest &manifest, std::string &err) {
  manifest = Manifest();
  ManifestParser parser(manifest, err);
  return parser.parseLines(text ? text : "") && parser.checkTask() &&
         parser.checkTensorLayout();
}

bool cpuHasFeature(const std::string &feature) {
#if defined(__x86_64__)
  if (feature == manifest::kCpuFeatureAvx512Bf16)
    return __builtin_cpu_supports("avx512bf16");
#endif
  return false;
}

bool checkCpuFeatures(const Manifest &manifest, std::string &err) {
  for (const std::string &feature : manifest.cpuFeatures) {
    if (cpuHasFeature(feature))
      continue;
    err = "this CPU lacks " + feature + ", whose instructions this " +
          "executable runs (tfc compile --precision=bf16 for a CPU with " +
          "AVX512-BF16); compile it with --cpu=native here, which keeps bf16 " +
          "storage and computes in float32";
    return false;
  }
  return true;
}

} // namespace tfc::rt
