//===- GradCheck.cpp - Finite-difference check of generated gradients -----===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `main` of the gradient check. It is linked with the object file of a model
/// compiled with `tfc compile --f64 --emit=obj`, so every float buffer of the
/// ABI (runtime/ModelABI.h) holds `double`s here: the buffers are passed to
/// the functions of ModelABI.h as its `float *` (see `f64`).
///
/// The check:
///   1. reads the model's manifest (`tfc_model_manifest`): the sizes, the
///      task and every `tensor` record;
///   2. fills the flat parameter buffer with deterministic random values
///      (see `initParams`) and draws random inputs (see `makeInputs`);
///   3. calls `tfc_train_step` for the loss and the gradient, and
///      `tfc_forward` for the loss, which must agree (the model is meant to be
///      compiled with dropout 0, so both compute the same function);
///   4. for a sample of elements of every trained tensor (the one of largest
///      gradient and random others), compares the gradient g with a central
///      finite difference d of `tfc_forward`'s loss (see
///      `estimateDerivative`); the relative error
///      |g - d| / max(|g|, |d|, 1e-8) must not exceed the tolerance;
///   5. checks that the gradient of every buffer (kind `buffer`, not
///      trained) is exactly zero.
///
/// It prints one line per tensor with its worst sample, the worst tensor
/// over all, and a final verdict; the exit status is 0 only if every check
/// passed.
///
///   <model-gradcheck> [--seed N] [--samples K] [--rtol R]
///                     [--scale TEXT=FACTOR]... [--verbose]
///                     [--dump FILE | --compare FILE [--compare-rtol R]]
///     --seed N     seed of the parameters, inputs and sampled elements (1)
///     --samples K  elements checked per tensor (3)
///     --rtol R     tolerance on the relative error (1e-6)
///     --scale TEXT=FACTOR
///                  multiply the initial values of every tensor whose name
///                  contains TEXT by FACTOR (e.g. `k_proj=100`: large keys)
///     --verbose    print every sample
///     --dump FILE  also writes the results of this build to FILE: the
///                  forward loss and logits, the gradient, and the
///                  parameters and Adam moments after one optimizer step
///     --compare FILE  also compares them with FILE, written by --dump of
///                  another build of the same spec (fused against unfused):
///                  each part must agree to --compare-rtol (1e-10) relative
///                  to its largest magnitude
///
/// Link it as `c++ model.o libtfc-gradcheck.a -o model-gradcheck`; the
/// lit tests in test/gradcheck do so for every spec of specs/.
///
//===----------------------------------------------------------------------===//

#include "runtime/ModelABI.h"
#include "test/common/SplitMix64.h"

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

/// A float buffer of the ABI as a model built with `--f64` reads and writes
/// it: the doubles at `buffer`, passed as runtime/ModelABI.h's `float *`.
float *f64(double *buffer) { return reinterpret_cast<float *>(buffer); }

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

/// One `tensor` record of the manifest.
struct TensorRecord {
  std::string name;
  int64_t offset = 0;
  /// True for `param` (trained), false for `buffer`.
  bool trained = true;
  std::string init;
  std::vector<int64_t> shape;
  int64_t size = 1;
};

/// The parts of the manifest the check needs.
struct ModelInfo {
  std::string name;
  bool classify = false;
  int64_t params = -1;
  int64_t batch = -1;
  int64_t seqLen = -1;
  int64_t vocab = 256;
  int64_t outputs = -1;
  int64_t classes = 0;
  std::vector<TensorRecord> tensors;
};

/// Reports a problem with the setup (not a gradient) and exits with 2.
[[noreturn]] void fatal(const std::string &message) {
  fprintf(stderr, "gradcheck: %s\n", message.c_str());
  exit(2);
}

/// Splits `line` at single spaces.
std::vector<std::string> splitFields(const std::string &line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string::npos)
      end = line.size();
    if (end > start)
      fields.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return fields;
}

/// Parses a non-negative decimal integer; fails the check otherwise.
int64_t parseCount(const std::string &text, int lineNo) {
  char *end = nullptr;
  long long value = strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 0)
    fatal("manifest:" + std::to_string(lineNo) + ": expected a count, got '" +
          text + "'");
  return value;
}

/// Reads the records of `text` the check uses; ignores the others.
ModelInfo parseManifest(const char *text) {
  ModelInfo info;
  std::string all(text);
  size_t start = 0;
  int lineNo = 0;
  bool ended = false;
  while (start < all.size() && !ended) {
    size_t end = all.find('\n', start);
    if (end == std::string::npos)
      end = all.size();
    std::string line = all.substr(start, end - start);
    start = end + 1;
    ++lineNo;
    std::vector<std::string> f = splitFields(line);
    if (f.empty())
      continue;
    const std::string &key = f[0];
    if (lineNo == 1) {
      if (f.size() != 2 || key != "tfc-manifest" || f[1] != "1")
        fatal("manifest:1: expected 'tfc-manifest 1'");
      continue;
    }
    if (key == "end") {
      ended = true;
    } else if (key == "model" && f.size() == 2) {
      info.name = f[1];
    } else if (key == "task" && f.size() == 2) {
      info.classify = f[1] == "classify";
    } else if (key == "params" && f.size() == 2) {
      info.params = parseCount(f[1], lineNo);
    } else if (key == "batch" && f.size() == 2) {
      info.batch = parseCount(f[1], lineNo);
    } else if (key == "seq_len" && f.size() == 2) {
      info.seqLen = parseCount(f[1], lineNo);
    } else if (key == "vocab" && f.size() == 2) {
      info.vocab = parseCount(f[1], lineNo);
    } else if (key == "outputs" && f.size() == 2) {
      info.outputs = parseCount(f[1], lineNo);
    } else if (key == "classes" && f.size() == 2) {
      info.classes = parseCount(f[1], lineNo);
    } else if (key == "tensor") {
      // tensor <name> <offset> <kind> <init> <rank> <d0> ... <dr-1>
      if (f.size() < 6)
        fatal("manifest:" + std::to_string(lineNo) + ": short tensor record");
      TensorRecord t;
      t.name = f[1];
      t.offset = parseCount(f[2], lineNo);
      if (f[3] != "param" && f[3] != "buffer")
        fatal("manifest:" + std::to_string(lineNo) + ": unknown kind '" + f[3] +
              "'");
      t.trained = f[3] == "param";
      t.init = f[4];
      int64_t rank = parseCount(f[5], lineNo);
      if ((int64_t)f.size() != 6 + rank)
        fatal("manifest:" + std::to_string(lineNo) +
              ": rank does not match the dimensions");
      for (int64_t i = 0; i < rank; ++i) {
        t.shape.push_back(parseCount(f[6 + i], lineNo));
        t.size *= t.shape.back();
      }
      info.tensors.push_back(t);
    }
  }
  if (!ended)
    fatal("manifest: no 'end' record");
  if (info.params < 0 || info.batch < 1 || info.seqLen < 1)
    fatal("manifest: 'params', 'batch' and 'seq_len' are required");
  if (info.outputs < 0)
    info.outputs = info.classify ? info.classes : info.vocab;
  if (info.classify && (info.classes < 2 || info.vocab < 4))
    fatal("manifest: a classifier needs 'classes' >= 2 and 'vocab' >= 4");
  for (const TensorRecord &t : info.tensors)
    if (t.offset + t.size > info.params)
      fatal("manifest: tensor " + t.name + " lies outside the buffer");
  return info;
}

//===----------------------------------------------------------------------===//
// Random values
//===----------------------------------------------------------------------===//

/// SplitMix64 with Box-Muller normals.
class Random : public tfc::test::SplitMix64 {
public:
  using SplitMix64::SplitMix64;

  /// Uniform in [0, 1).
  double uniform() { return (next() >> 11) * 0x1.0p-53; }

  /// Standard normal (Box-Muller).
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300)
      u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

/// Standard deviation of every weight, bias and embedding: large enough that
/// every path of the model contributes to the loss.
constexpr double kWeightStd = 0.1;

/// Fills every tensor of `params`:
///   - `features:<M>:<d>` (FAVOR+ random features): i.i.d. standard normal
///     entries, i.e. rows of a Gaussian matrix, as the features are drawn;
///   - `ones` (layer-norm gains): 1 + N(0, 0.1^2), near 1 but not equal;
///   - anything else (weights, biases, embeddings, positions): N(0, 0.1^2).
/// Floats outside every tensor stay zero.
void initParams(const ModelInfo &info, std::vector<double> &params,
                Random &rng) {
  for (const TensorRecord &t : info.tensors) {
    double *p = params.data() + t.offset;
    bool features = t.init.compare(0, 9, "features:") == 0;
    for (int64_t i = 0; i < t.size; ++i) {
      if (features)
        p[i] = rng.normal();
      else if (t.init == "ones")
        p[i] = 1.0 + kWeightStd * rng.normal();
      else
        p[i] = kWeightStd * rng.normal();
    }
  }
}

/// The inputs of one batch.
struct Inputs {
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;
  std::vector<double> mask;
};

/// Ids of the classifier's word vocabulary (runtime/ModelABI.h).
constexpr int32_t kPad = 0, kUnk = 1, kCls = 2;

/// Random inputs. lm: random bytes and targets, mask all 1. classify: CLS at
/// position 0, then random word ids (UNK among them); row 0 is unpadded,
/// row 1 (if any) is half padding and the others have random lengths; PAD
/// and mask 0 exactly on the padding; random labels.
Inputs makeInputs(const ModelInfo &info, Random &rng) {
  Inputs in;
  int64_t b = info.batch, s = info.seqLen;
  in.tokens.assign(b * s, 0);
  in.mask.assign(b * s, 1.0);
  if (!info.classify) {
    in.targets.assign(b * s, 0);
    for (int64_t i = 0; i < b * s; ++i) {
      in.tokens[i] = (int32_t)rng.below(info.vocab);
      in.targets[i] = (int32_t)rng.below(info.vocab);
    }
    return in;
  }
  in.targets.assign(b, 0);
  for (int64_t row = 0; row < b; ++row) {
    int64_t length = s;
    if (row == 1)
      length = std::max<int64_t>(1, s / 2);
    else if (row > 1)
      length = 1 + rng.below(s);
    for (int64_t pos = 0; pos < s; ++pos) {
      int32_t id = kPad;
      if (pos == 0)
        id = kCls;
      else if (pos < length)
        id =
            rng.below(8) == 0 ? kUnk : (int32_t)(3 + rng.below(info.vocab - 3));
      in.tokens[row * s + pos] = id;
      in.mask[row * s + pos] = pos < length ? 1.0 : 0.0;
    }
    in.targets[row] = (int32_t)rng.below(info.classes);
  }
  return in;
}

//===----------------------------------------------------------------------===//
// The check
//===----------------------------------------------------------------------===//

/// The command line.
struct Options {
  uint64_t seed = 1;
  int64_t samples = 3;
  double rtol = 1e-6;
  /// `--scale` rules: a name fragment and its factor.
  std::vector<std::pair<std::string, double>> scales;
  bool verbose = false;
  std::string dump, compare;
  double compareRtol = 1e-10;
};

/// Parses the command line; fails the check on anything unknown.
Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        fatal(arg + ": missing value");
      return argv[++i];
    };
    if (arg == "--seed")
      options.seed = strtoull(value(), nullptr, 10);
    else if (arg == "--samples")
      options.samples = std::max(1ll, strtoll(value(), nullptr, 10));
    else if (arg == "--rtol")
      options.rtol = strtod(value(), nullptr);
    else if (arg == "--scale") {
      std::string rule = value();
      size_t eq = rule.find('=');
      char *end = nullptr;
      double factor =
          eq == std::string::npos ? 0.0 : strtod(rule.c_str() + eq + 1, &end);
      if (eq == std::string::npos || eq == 0 || end == rule.c_str() + eq + 1 ||
          *end != '\0')
        fatal("--scale: expected TEXT=FACTOR, got '" + rule + "'");
      options.scales.push_back({rule.substr(0, eq), factor});
    } else if (arg == "--verbose")
      options.verbose = true;
    else if (arg == "--dump")
      options.dump = value();
    else if (arg == "--compare")
      options.compare = value();
    else if (arg == "--compare-rtol")
      options.compareRtol = strtod(value(), nullptr);
    else
      fatal("unknown option '" + arg + "'");
  }
  if (!(options.rtol > 0) || !(options.compareRtol > 0))
    fatal("--rtol and --compare-rtol must be positive");
  if (!options.dump.empty() && !options.compare.empty())
    fatal("--dump and --compare exclude each other");
  return options;
}

/// Evaluates the loss of tfc_forward at the current parameters.
class LossFunction {
public:
  LossFunction(const ModelInfo &info, Inputs &inputs)
      : inputs(inputs),
        logits(info.classify ? info.batch * info.outputs
                             : info.batch * info.seqLen * info.outputs) {}

  double operator()(std::vector<double> &params) {
    double loss = 0;
    tfc_forward(f64(params.data()), inputs.tokens.data(), inputs.targets.data(),
                f64(inputs.mask.data()), f64(logits.data()), f64(&loss));
    ++calls;
    return loss;
  }

  int64_t calls = 0;

private:
  Inputs &inputs;
  std::vector<double> logits;
};

/// The relative error of the check.
double relativeError(double a, double b) {
  return std::fabs(a - b) / std::max({std::fabs(a), std::fabs(b), 1e-8});
}

/// A finite-difference estimate of one derivative.
struct Estimate {
  /// False if no run of agreeing steps was found (see `estimateDerivative`).
  bool converged = false;
  double value = 0;
  /// The step of `value` and the difference to the estimate at twice it.
  double step = 0, spread = 0;
};

/// The sixth-order central difference of the loss in `params[index]` at
/// step h:
///   (-f(-3h) + 9 f(-2h) - 45 f(-h) + 45 f(h) - 9 f(2h) + f(3h)) / 60h,
/// whose truncation error is h^6 f^(7) / 140.
double centralDifference(LossFunction &loss, std::vector<double> &params,
                         int64_t index, double h) {
  static const double weights[3] = {45.0, -9.0, 1.0};
  const double saved = params[index];
  double sum = 0;
  for (int k = 1; k <= 3; ++k) {
    params[index] = saved + k * h;
    double plus = loss(params);
    params[index] = saved - k * h;
    double minus = loss(params);
    sum += weights[k - 1] * (plus - minus);
  }
  params[index] = saved;
  return sum / (60.0 * h);
}

/// Estimates the derivative of the loss in `params[index]`, whose gradient
/// from tfc_train_step is `grad`.
///
/// Plain central differences at h ~ 1e-6 cannot resolve a relative error of
/// 1e-6: the loss is only known to ~1e-15 relative, so their round-off is
/// ~1e-9 absolute, above many gradient entries. The sixth-order stencil has
/// a truncation error small enough at steps of 1e-3 to 1e-1 of the
/// parameter's scale, where round-off is ~1e-14.
///
/// The step is found rather than fixed. The loss is only piecewise smooth:
/// ReLU, and the row maximum that stabilises the Performer's query features
/// (whose kinks change the derivative by ~1e-6 relative, as the 1e-6 in
/// FAVOR+'s denominator keeps the maximum from cancelling exactly). A
/// stencil that straddles a kink is off by a first-order amount, and the
/// nearest kink can be close. So the stencil runs at the steps
/// h_k = 16 s 2^-k, s = max(|p|, 0.1) (0.1 is the scale of the
/// initialisation), k = 0, 1, ..., and looks for a run of estimates each of
/// which agrees with the one at twice its step to a sixteenth of the
/// tolerance of the check: there the stencil lies where the loss is smooth
/// and the estimate is resolved. Where round-off alone (~4 eps |loss| / h)
/// exceeds that, agreement to round-off, up to half the tolerance, is
/// enough. The run must be at least three estimates long (far beyond a
/// kink, two estimates at large steps can agree and be wrong); it is
/// followed down to six, and its estimate that moved least from the one
/// before it is taken (the flattest part of the plateau: later estimates
/// carry more round-off). Large steps come first so that a direction in which
/// the loss is exactly constant (a key bias under softmax attention, whose
/// gradient is 0) is measured where round-off is smallest, ~1e-15 at h ~ 1.
/// If no run is found, the estimate says so and the sample is replaced.
Estimate estimateDerivative(LossFunction &loss, std::vector<double> &params,
                            int64_t index, double grad, double baseLoss,
                            double rtol) {
  constexpr int kSteps = 24, kMinRun = 3, kMaxRun = 6;
  Estimate estimate, last;
  double h = 16 * std::max(std::fabs(params[index]), 0.1);
  double previous = centralDifference(loss, params, index, h);
  int run = 1;
  for (int k = 1; k < kSteps; ++k) {
    h /= 2;
    double current = centralDifference(loss, params, index, h);
    double tolerance =
        rtol * std::max({std::fabs(grad), std::fabs(current), 1e-8});
    double roundoff = 4 * DBL_EPSILON * std::fabs(baseLoss) / h;
    double agreement =
        std::min(tolerance / 2, std::max(tolerance / 16, roundoff));
    double spread = std::fabs(current - previous);
    if (spread <= agreement) {
      if (++run == 2 || spread < estimate.spread) {
        estimate.value = current;
        estimate.step = h;
        estimate.spread = spread;
      }
      estimate.converged = run >= kMinRun;
      if (run == kMaxRun)
        return estimate;
    } else {
      if (estimate.converged)
        return estimate;
      run = 1;
      last.value = current;
      last.step = h;
      last.spread = spread;
    }
    previous = current;
  }
  return estimate.converged ? estimate : last;
}

/// The outcome of the samples of one tensor.
struct TensorResult {
  int64_t checked = 0;
  int64_t unresolved = 0;
  /// The worst checked sample.
  double worst = 0;
  int64_t index = -1;
  double grad = 0;
  Estimate estimate;
};

/// Formats a shape as "[d0, d1]".
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The elements of tensor `t` to check, in order: the one with the largest
/// gradient (a wrong scale shows there first), then distinct random ones,
/// `count` in all (fewer if the tensor is smaller).
std::vector<int64_t> sampleIndices(const TensorRecord &t,
                                   const std::vector<double> &grads,
                                   int64_t count, Random &rng) {
  int64_t largest = 0;
  for (int64_t i = 1; i < t.size; ++i)
    if (std::fabs(grads[t.offset + i]) > std::fabs(grads[t.offset + largest]))
      largest = i;
  std::vector<int64_t> indices = {largest};
  count = std::min(count, t.size);
  if (t.size <= 4 * count) {
    // Small tensors: a random permutation of the others.
    std::vector<int64_t> others;
    for (int64_t i = 0; i < t.size; ++i)
      if (i != largest)
        others.push_back(i);
    for (int64_t i = (int64_t)others.size() - 1; i > 0; --i)
      std::swap(others[i], others[rng.below(i + 1)]);
    indices.insert(indices.end(), others.begin(), others.end());
    indices.resize(count);
    return indices;
  }
  while ((int64_t)indices.size() < count) {
    int64_t i = rng.below(t.size);
    if (std::find(indices.begin(), indices.end(), i) == indices.end())
      indices.push_back(i);
  }
  return indices;
}

/// Samples whose finite difference does not converge are replaced, up to
/// this many times the number of samples per tensor.
constexpr int64_t kReplacements = 2;

/// Tolerance on the relative difference of the two losses.
constexpr double kLossRtol = 1e-12;

/// Checks `options.samples` elements of trained tensor `t`.
TensorResult checkTensor(const TensorRecord &t, const Options &options,
                         LossFunction &loss, double baseLoss,
                         std::vector<double> &params,
                         const std::vector<double> &grads, Random &rng) {
  TensorResult result;
  for (int64_t i :
       sampleIndices(t, grads, options.samples * (1 + kReplacements), rng)) {
    if (result.checked == options.samples)
      break;
    int64_t index = t.offset + i;
    double grad = grads[index];
    Estimate estimate =
        estimateDerivative(loss, params, index, grad, baseLoss, options.rtol);
    double error =
        std::isfinite(grad) ? relativeError(grad, estimate.value) : INFINITY;
    if (options.verbose)
      printf("  %s[%lld]: grad %.12e, fd %.12e (step %.2g, spread %.2g%s), "
             "rel-err %.3g\n",
             t.name.c_str(), (long long)i, grad, estimate.value, estimate.step,
             estimate.spread, estimate.converged ? "" : ", not converged",
             error);
    if (!estimate.converged) {
      ++result.unresolved;
      continue;
    }
    ++result.checked;
    if (result.index < 0 || error > result.worst) {
      result.worst = error;
      result.index = i;
      result.grad = grad;
      result.estimate = estimate;
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Results of one build, for comparing two builds of one spec
//===----------------------------------------------------------------------===//

/// What one build computes from the same parameters and inputs: the parts
/// that --dump writes and --compare checks, in this order.
struct BuildResults {
  std::vector<std::vector<double>> parts;
  static constexpr const char *kNames[] = {
      "loss", "logits", "gradient", "params after a step", "adam m", "adam v"};
};

/// Runs the forward, the training step and one optimizer step (Adam at rate
/// 1e-3, step 1 of 100, no warm-up) from `params`.
BuildResults computeResults(const ModelInfo &info, Inputs &inputs,
                            const std::vector<double> &params, uint64_t seed) {
  BuildResults results;
  std::vector<double> copy = params;
  std::vector<double> logits(info.classify
                                 ? info.batch * info.outputs
                                 : info.batch * info.seqLen * info.outputs);
  double loss = 0;
  tfc_forward(f64(copy.data()), inputs.tokens.data(), inputs.targets.data(),
              f64(inputs.mask.data()), f64(logits.data()), f64(&loss));
  std::vector<double> grads(info.params), trainLoss(1);
  int64_t stepSeed = (int64_t)seed;
  tfc_train_step(f64(copy.data()), inputs.tokens.data(), inputs.targets.data(),
                 f64(inputs.mask.data()), &stepSeed, f64(grads.data()),
                 f64(trainLoss.data()));
  std::vector<double> m(info.params, 0.0), v(info.params, 0.0);
  std::vector<double> paramsOut(info.params), mOut(info.params),
      vOut(info.params), stats(2);
  int64_t step = 1;
  double schedule[3] = {1e-3, 100, 0};
  tfc_optimizer_step(f64(copy.data()), f64(grads.data()), f64(m.data()),
                     f64(v.data()), &step, f64(schedule), f64(paramsOut.data()),
                     f64(mOut.data()), f64(vOut.data()), f64(stats.data()));
  results.parts = {{loss}, logits, grads, paramsOut, mOut, vOut};
  return results;
}

void writeResults(const std::string &path, const BuildResults &results) {
  FILE *file = fopen(path.c_str(), "wb");
  if (!file)
    fatal(path + ": cannot write: " + strerror(errno));
  for (const std::vector<double> &part : results.parts) {
    uint64_t count = part.size();
    if (fwrite(&count, sizeof count, 1, file) != 1 ||
        fwrite(part.data(), sizeof(double), part.size(), file) != part.size())
      fatal(path + ": write error");
  }
  if (fclose(file) != 0)
    fatal(path + ": write error");
}

BuildResults readResults(const std::string &path, size_t parts) {
  FILE *file = fopen(path.c_str(), "rb");
  if (!file)
    fatal(path + ": cannot read: " + strerror(errno));
  BuildResults results;
  for (size_t i = 0; i < parts; ++i) {
    uint64_t count = 0;
    if (fread(&count, sizeof count, 1, file) != 1 || count > (1ull << 32))
      fatal(path + ": truncated or not a --dump file");
    std::vector<double> part(count);
    if (fread(part.data(), sizeof(double), count, file) != count)
      fatal(path + ": truncated");
    results.parts.push_back(std::move(part));
  }
  fclose(file);
  return results;
}

/// Compares two builds part by part: the largest difference relative to
/// the largest magnitude of the part. Prints one line per part.
bool compareResults(const BuildResults &got, const BuildResults &want,
                    double rtol) {
  bool ok = true;
  for (size_t i = 0; i < want.parts.size(); ++i) {
    const std::vector<double> &a = got.parts[i], &b = want.parts[i];
    if (a.size() != b.size()) {
      printf("compare %s: %zu values against %zu: FAILED\n",
             BuildResults::kNames[i], a.size(), b.size());
      ok = false;
      continue;
    }
    double diff = 0, scale = 0;
    bool finite = true;
    for (size_t j = 0; j < a.size(); ++j) {
      finite &= std::isfinite(a[j]) && std::isfinite(b[j]);
      diff = std::max(diff, std::fabs(a[j] - b[j]));
      scale = std::max(scale, std::fabs(b[j]));
    }
    double error = diff / std::max(scale, 1e-300);
    bool partOk = finite && error <= rtol;
    printf("compare %s: %zu values, max |diff| %.3g, relative %.3g: %s\n",
           BuildResults::kNames[i], a.size(), diff, error,
           partOk ? "ok" : "FAILED");
    ok &= partOk;
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  ModelInfo info = parseManifest(tfc_model_manifest);
  Random rng(options.seed);

  std::vector<double> params(info.params, 0.0);
  initParams(info, params, rng);
  for (const auto &[text, factor] : options.scales)
    for (const TensorRecord &t : info.tensors)
      if (t.name.find(text) != std::string::npos)
        for (int64_t i = 0; i < t.size; ++i)
          params[t.offset + i] *= factor;
  Inputs inputs = makeInputs(info, rng);
  bool ok = true;
  if (!options.dump.empty() || !options.compare.empty()) {
    BuildResults results = computeResults(info, inputs, params, options.seed);
    if (!options.dump.empty()) {
      writeResults(options.dump, results);
    } else {
      BuildResults other = readResults(options.compare, results.parts.size());
      bool same = compareResults(results, other, options.compareRtol);
      printf("compare: %s\n", same ? "ok" : "FAILED");
      ok &= same;
    }
  }

  int64_t trainedTensors = 0;
  for (const TensorRecord &t : info.tensors)
    trainedTensors += t.trained;
  printf("model %s: %s, batch %lld, seq_len %lld, %lld params, %lld trained "
         "tensors\n",
         info.name.c_str(), info.classify ? "classify" : "lm",
         (long long)info.batch, (long long)info.seqLen, (long long)info.params,
         (long long)trainedTensors);

  // The loss and gradient of the training step, on a copy of the parameters
  // that must come back unchanged.
  std::vector<double> grads(info.params, std::nan(""));
  double trainLoss = std::nan("");
  {
    int64_t seed = (int64_t)options.seed;
    std::vector<double> copy = params;
    tfc_train_step(f64(copy.data()), inputs.tokens.data(),
                   inputs.targets.data(), f64(inputs.mask.data()), &seed,
                   f64(grads.data()), f64(&trainLoss));
    if (copy != params) {
      printf("train_step: changed the parameter buffer: FAILED\n");
      ok = false;
    }
  }

  // tfc_train_step and tfc_forward compute the same loss.
  LossFunction loss(info, inputs);
  double forwardLoss = loss(params);
  double lossError = relativeError(trainLoss, forwardLoss);
  bool lossOk = std::isfinite(forwardLoss) && lossError <= kLossRtol;
  printf("loss: train_step %.17g, forward %.17g, rel-err %.3g: %s\n", trainLoss,
         forwardLoss, lossError, lossOk ? "ok" : "FAILED");
  ok &= lossOk;

  // Buffers (not trained) get a zero gradient.
  int64_t bufferValues = 0, bufferNonzero = 0;
  for (const TensorRecord &t : info.tensors) {
    if (t.trained)
      continue;
    bufferValues += t.size;
    for (int64_t i = 0; i < t.size; ++i)
      bufferNonzero += grads[t.offset + i] != 0.0;
  }
  if (bufferValues) {
    printf("buffers: %lld values, %lld nonzero gradients: %s\n",
           (long long)bufferValues, (long long)bufferNonzero,
           bufferNonzero ? "FAILED" : "ok");
    ok &= bufferNonzero == 0;
  }

  // Every trained tensor, at a sample of its elements.
  int64_t failedTensors = 0, checked = 0, unresolved = 0;
  const TensorRecord *worstTensor = nullptr;
  double worstError = 0;
  for (const TensorRecord &t : info.tensors) {
    if (!t.trained)
      continue;
    TensorResult result =
        checkTensor(t, options, loss, forwardLoss, params, grads, rng);
    checked += result.checked;
    unresolved += result.unresolved;
    bool tensorOk = result.checked > 0 && result.worst <= options.rtol;
    std::string note;
    if (result.unresolved)
      note = ", " + std::to_string(result.unresolved) + " not converged";
    if (result.checked == 0) {
      printf("%s %s: no sample converged%s: FAILED\n", t.name.c_str(),
             shapeText(t.shape).c_str(), note.c_str());
    } else {
      printf("%s %s: rel-err %.3g at %lld (grad %.10e, fd %.10e%s): %s\n",
             t.name.c_str(), shapeText(t.shape).c_str(), result.worst,
             (long long)result.index, result.grad, result.estimate.value,
             note.c_str(), tensorOk ? "ok" : "FAILED");
    }
    if (!tensorOk)
      ++failedTensors;
    double error = result.checked ? result.worst : INFINITY;
    if (!worstTensor || error > worstError) {
      worstTensor = &t;
      worstError = error;
    }
  }
  ok &= failedTensors == 0;
  if (worstTensor)
    printf("worst: %s rel-err %.3g\n", worstTensor->name.c_str(), worstError);
  if (ok)
    printf("gradcheck: ok (%lld tensors, %lld samples, %lld not converged, "
           "%lld forward calls)\n",
           (long long)trainedTensors, (long long)checked, (long long)unresolved,
           (long long)loss.calls);
  else
    printf("gradcheck: FAILED (%lld of %lld tensors)\n",
           (long long)failedTensors, (long long)trainedTensors);
  return ok ? 0 : 1;
}
