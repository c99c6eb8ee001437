//===- Manifest.cpp - The model manifest as a struct ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Manifest.h"
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
  return task == Task::LanguageModel ? "lm" : "classify";
}

const char *toString(TensorKind kind) {
  return kind == TensorKind::Param ? "param" : "buffer";
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
  if ((name == "zeros" || name == "ones") && parts.size() == 1) {
    init.kind = name == "zeros" ? InitKind::Zeros : InitKind::Ones;
    return true;
  }
  if ((name == "normal" || name == "uniform") && parts.size() == 2) {
    init.kind = name == "normal" ? InitKind::Normal : InitKind::Uniform;
    if (!parseDouble(parts[1], init.scale) || init.scale < 0) {
      why = "init '" + text + "': expected a non-negative number after ':'";
      return false;
    }
    return true;
  }
  if (name == "features" && parts.size() == 3) {
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

bool parseManifest(const char *text, Manifest &manifest, std::string &err) {
  manifest = Manifest();
  std::string all = text ? text : "";
  std::map<std::string, int> seen; // record key -> line
  std::vector<int> tensorLines;    // Parallel to manifest.tensors.
  bool ended = false;
  int lineNo = 0;
  size_t pos = 0;
  auto fail = [&](const std::string &why) {
    err = format("manifest:%d: %s", lineNo, why.c_str());
    return false;
  };
  while (pos < all.size() && !ended) {
    size_t eol = all.find('\n', pos);
    if (eol == std::string::npos)
      eol = all.size();
    std::string line = all.substr(pos, eol - pos);
    pos = eol + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    std::vector<std::string> f = splitFields(line);
    if (f.empty())
      continue;
    const std::string &key = f[0];
    if (seen.empty()) {
      if (key != "tfc-manifest")
        return fail("expected 'tfc-manifest 1' as the first record");
      if (f.size() != 2 || f[1] != "1")
        return fail("unsupported manifest version (this runtime reads "
                    "'tfc-manifest 1')");
      seen[key] = lineNo;
      continue;
    }
    if (key == "end") {
      ended = true;
      continue;
    }
    if (key == "tensor") {
      if (f.size() < 6)
        return fail("expected 'tensor <name> <offset> <kind> <init> <rank> "
                    "<dims>...'");
      TensorInfo t;
      t.name = f[1];
      if (manifest.find(t.name))
        return fail("tensor '" + t.name + "' listed twice");
      if (!parseInt64(f[2], t.offset) || t.offset < 0)
        return fail("tensor '" + t.name + "': bad offset '" + f[2] + "'");
      if (f[3] == "param")
        t.kind = TensorKind::Param;
      else if (f[3] == "buffer")
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
          return fail("tensor '" + t.name + "': bad dimension '" + f[6 + i] +
                      "'");
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
      continue;
    }
    if (seen.count(key))
      return fail(
          format("record '%s' repeats line %d", key.c_str(), seen[key]));
    seen[key] = lineNo;
    auto needArgs = [&](size_t n) {
      if (f.size() == n + 1)
        return true;
      fail(format("record '%s' takes %zu value%s", key.c_str(), n,
                  n == 1 ? "" : "s"));
      return false;
    };
    auto intValue = [&](int64_t &out, int64_t min) {
      if (!needArgs(1))
        return false;
      if (!parseInt64(f[1], out) || out < min)
        return fail(format("record '%s': expected an integer >= %lld, got "
                           "'%s'",
                           key.c_str(), (long long)min, f[1].c_str()));
      return true;
    };
    if (key == "model") {
      if (!needArgs(1))
        return false;
      manifest.model = f[1];
    } else if (key == "task") {
      if (!needArgs(1))
        return false;
      if (f[1] == "lm")
        manifest.task = Task::LanguageModel;
      else if (f[1] == "classify")
        manifest.task = Task::Classify;
      else
        return fail("task '" + f[1] + "' is not lm or classify");
    } else if (key == "vocab") {
      if (!intValue(manifest.vocab, 1))
        return false;
    } else if (key == "classes") {
      if (!intValue(manifest.classes, 0))
        return false;
    } else if (key == "outputs") {
      if (!intValue(manifest.outputs, 1))
        return false;
    } else if (key == "batch") {
      if (!intValue(manifest.batch, 1))
        return false;
    } else if (key == "seq_len") {
      if (!intValue(manifest.seqLen, 1))
        return false;
    } else if (key == "d_model") {
      if (!intValue(manifest.dModel, 1))
        return false;
    } else if (key == "layers") {
      if (!intValue(manifest.layers, 0))
        return false;
    } else if (key == "heads") {
      if (!intValue(manifest.heads, 1))
        return false;
    } else if (key == "params") {
      if (!intValue(manifest.params, 0))
        return false;
    } else if (key == "flops_per_token") {
      if (!needArgs(1))
        return false;
      if (!parseDouble(f[1], manifest.flopsPerToken) ||
          manifest.flopsPerToken < 0)
        return fail("record 'flops_per_token': expected a number >= 0, got '" +
                    f[1] + "'");
    } else if (key == "activation_bytes") {
      if (!intValue(manifest.activationBytes, 0))
        return false;
    } else if (key == "train_activation_bytes") {
      if (!intValue(manifest.trainActivationBytes, 0))
        return false;
    } else if (key == "arena_bytes") {
      if (!intValue(manifest.arenaBytes, 0))
        return false;
    } else if (key == "thread_heap_bytes") {
      if (!intValue(manifest.threadHeapBytes, 0))
        return false;
    } else if (key == "kernels_per_step") {
      if (!intValue(manifest.kernelsPerStep, 0))
        return false;
    } else if (key == "precision") {
      if (!needArgs(1))
        return false;
      if (f[1] != "f32" && f[1] != "bf16")
        return fail("record 'precision': expected f32 or bf16, got '" + f[1] +
                    "'");
      manifest.precision = f[1];
    } else if (key == "min_freq") {
      if (!intValue(manifest.minFreq, 1))
        return false;
    } else if (key == "split") {
      if (!needArgs(2))
        return false;
      double train = 0, val = 0;
      if (!parseDouble(f[1], train) || !parseDouble(f[2], val) || train <= 0 ||
          val < 0 || train + val > 1)
        return fail("record 'split': expected <train> <val> fractions with "
                    "train > 0, val >= 0, train + val <= 1");
      manifest.trainFraction = train;
      manifest.valFraction = val;
    } else if (key == "val_fraction") {
      if (!needArgs(1))
        return false;
      double fraction = 0;
      if (!parseDouble(f[1], fraction) || fraction < 0 || fraction >= 1)
        return fail("record 'val_fraction': expected a number in [0, 1), "
                    "got '" +
                    f[1] + "'");
      manifest.holdoutFraction = fraction;
    } else if (key == "lr") {
      if (!needArgs(1))
        return false;
      if (!parseDouble(f[1], manifest.lr) || !(manifest.lr > 0))
        return fail("record 'lr': expected a positive number, got '" + f[1] +
                    "'");
    } else if (key == "train_steps") {
      if (!intValue(manifest.trainSteps, 0))
        return false;
    } else if (key == "warmup") {
      if (!intValue(manifest.warmup, 0))
        return false;
    } else if (key == "eval_every") {
      if (!intValue(manifest.evalEvery, 0))
        return false;
    } else if (key == "eval_batches") {
      if (!intValue(manifest.evalBatches, 0))
        return false;
    } else if (key == "checkpoint_every") {
      if (!intValue(manifest.checkpointEvery, 0))
        return false;
    } else if (key == "patience") {
      if (!intValue(manifest.patience, 0))
        return false;
    } else if (key == "redraw") {
      if (!intValue(manifest.redraw, 0))
        return false;
    } else if (key == "seed") {
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
    } else if (key == "data_train" || key == "data_val" || key == "data_test") {
      // A path is the rest of the line after one space, so that it may
      // hold spaces itself.
      if (f.size() < 2)
        return fail(format("record '%s' takes a path", key.c_str()));
      std::string &path = key == "data_train" ? manifest.dataTrain
                          : key == "data_val" ? manifest.dataVal
                                              : manifest.dataTest;
      path = line.substr(line.find(key) + key.size() + 1);
      if (path == "-")
        path.clear();
    }
    // Other records are ignored, so that the compiler can record more of
    // the configuration than this runtime reads.
  }
  if (!ended) {
    ++lineNo;
    return fail("missing 'end' (manifest truncated)");
  }
  const char *required[] = {"model",   "task",   "batch", "seq_len",
                            "d_model", "layers", "heads", "params"};
  for (const char *key : required)
    if (!seen.count(key))
      return fail(format("missing record '%s'", key));
  if (manifest.task == Task::Classify) {
    if (!seen.count("vocab") || !seen.count("classes"))
      return fail("a classify model needs 'vocab' and 'classes'");
    if (manifest.vocab < 4)
      return fail("a classify vocabulary needs room for PAD, UNK, CLS and at "
                  "least one word (vocab >= 4)");
    if (manifest.classes < 1)
      return fail("a classify model needs classes >= 1");
    if (!seen.count("outputs"))
      manifest.outputs = manifest.classes;
    if (manifest.outputs != manifest.classes &&
        !(manifest.outputs == 1 && manifest.classes == 2))
      return fail(format("%lld outputs for %lld classes (expected one output "
                         "per class, or 1 for 2 classes)",
                         (long long)manifest.outputs,
                         (long long)manifest.classes));
  } else {
    if (!seen.count("outputs"))
      manifest.outputs = manifest.vocab;
    if (manifest.outputs != manifest.vocab)
      return fail(format("a language model has one output per vocabulary "
                         "entry: %lld outputs for vocab %lld",
                         (long long)manifest.outputs,
                         (long long)manifest.vocab));
  }
  // Every tensor inside the buffer, no two overlapping; errors point at the
  // tensor's line.
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

} // namespace tfc::rt
