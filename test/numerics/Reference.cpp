//===- Reference.cpp - A float64 reference of every model family ----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `tfc-reference`: an independent implementation of the forward pass of
/// every tfc model family in plain C++ loops over `double`, written from
/// docs/weights.md and the op descriptions of dialect/TfcOps.td, and the
/// small helpers the numerical tests in test/numerics need around it. It
/// reads the spec with the project's parser (TfcSpec) and checkpoints with
/// the runtime's safetensors reader (tfcrt); nothing of the generated code or
/// of the compiler is used.
///
///   tfc-reference forward --spec SPEC --batch B --seq-len S --weights W
///       --tokens T.bin [--targets Y.bin] [--mask M.bin] --logits OUT.bin
///     The reference forward pass on the same raw inputs as `./model
///     forward`; writes float32 logits, prints {"loss": ...}.
///   tfc-reference inputs --spec SPEC --batch B --seq-len S --seed N
///       --tokens T.bin --targets Y.bin --mask M.bin
///     Random inputs: lm: random bytes and targets, mask all 1; classify:
///     CLS, random word ids, then padding (row 0 unpadded, the others of
///     random length) with the mask 0 exactly on the padding, random labels.
///   tfc-reference perturb --spec SPEC --batch B --seq-len S --seed N
///       --from P --tokens T.bin -o OUT.bin
///     Replaces every token at a position >= P by a different random id.
///   tfc-reference randomize --weights IN -o OUT --seed N
///     Redraws every parameter with magnitudes that make all paths of the
///     model matter (init's zero biases and unit LayerNorm scales would hide
///     errors in them); buffers (Performer features) are kept.
///   tfc-reference edit --weights IN -o OUT [--rename FROM=TO]...
///       [--zero PREFIX]... [--drop PREFIX]... [--scale TEXT=FACTOR]...
///     Renames tensor-name prefixes, zeroes or drops the tensors whose names
///     start with a prefix, multiplies the tensors whose names contain TEXT
///     by FACTOR (e.g. `k_proj=100`: keys 100 times larger).
///   tfc-reference compare --logits GOT.bin REF.bin [--loss GOT.json REF.json]
///       [--rtol R]
///     Fails unless max |got - ref| <= R * max |ref| over the logits and
///     |got - ref| <= R * |ref| for the losses (R defaults to 1e-4).
///   tfc-reference prefix --batch B --seq-len S --from P --logits A.bin B.bin
///       [--atol A]
///     For lm logits [B, S, V] of two runs whose inputs differ only at
///     positions >= P: fails unless the logits of positions < P agree within
///     A (default 1e-6; with 0, bit for bit) and those of the positions >= P
///     do not all agree (the change must be visible, or the check would be
///     vacuous).
///
/// Errors are one line, `tfc-reference: <reason>`, with exit status 1.
///
//===----------------------------------------------------------------------===//

#include "frontend/Spec.h"
#include "runtime/JsonText.h"
#include "runtime/Safetensors.h"
#include "runtime/Support.h"
#include "test/common/SplitMix64.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spec = tfc::spec;
using tfc::rt::format;

namespace {

//===----------------------------------------------------------------------===//
// Errors, options, files
//===----------------------------------------------------------------------===//

[[noreturn]] void fatal(const std::string &message) {
  fprintf(stderr, "tfc-reference: %s\n", message.c_str());
  exit(1);
}

/// The command line after the subcommand: `--flag value` pairs (a flag may
/// repeat), `-o` meaning `--output`, no positional arguments. The flags in
/// `pairs` take two values (`--logits GOT REF`).
class Options {
public:
  Options(int argc, char **argv, int first,
          const std::vector<std::string> &pairs) {
    for (int i = first; i < argc; ++i) {
      std::string flag = argv[i];
      if (flag == "-o")
        flag = "--output";
      if (flag.compare(0, 2, "--") != 0)
        fatal("unexpected argument '" + flag + "'");
      bool pair = std::find(pairs.begin(), pairs.end(), flag) != pairs.end();
      for (int v = 0; v < (pair ? 2 : 1); ++v) {
        if (i + 1 >= argc)
          fatal("option '" + flag + "' needs " +
                (pair ? "two values" : "a value"));
        entries.push_back({flag, argv[++i]});
      }
    }
  }

  /// All values of `flag`, in order.
  std::vector<std::string> all(const std::string &flag) const {
    std::vector<std::string> values;
    for (const auto &[f, v] : entries)
      if (f == flag)
        values.push_back(v);
    return values;
  }
  bool has(const std::string &flag) const { return !all(flag).empty(); }
  std::string get(const std::string &flag) const {
    std::vector<std::string> values = all(flag);
    if (values.empty())
      fatal("missing " + flag);
    return values.back();
  }
  std::string get(const std::string &flag, const std::string &fallback) const {
    std::vector<std::string> values = all(flag);
    return values.empty() ? fallback : values.back();
  }
  int64_t integer(const std::string &flag) const {
    int64_t value = 0;
    if (!tfc::rt::parseInt64(get(flag), value))
      fatal(flag + ": expected an integer, got '" + get(flag) + "'");
    return value;
  }
  double number(const std::string &flag, double fallback) const {
    if (!has(flag))
      return fallback;
    double value = 0;
    if (!tfc::rt::parseDouble(get(flag), value))
      fatal(flag + ": expected a number, got '" + get(flag) + "'");
    return value;
  }
  /// Fails on any flag not in `allowed`.
  void only(const std::vector<std::string> &allowed) const {
    for (const auto &entry : entries)
      if (std::find(allowed.begin(), allowed.end(), entry.first) ==
          allowed.end())
        fatal("unknown option '" + entry.first + "'");
  }

private:
  std::vector<std::pair<std::string, std::string>> entries;
};

/// Reads a raw file that must hold exactly `count` elements of type `T`.
template <typename T>
std::vector<T> readRaw(const std::string &path, int64_t count) {
  std::string bytes, err;
  if (!tfc::rt::readFile(path, bytes, err))
    fatal(err);
  if (bytes.size() != size_t(count) * sizeof(T))
    fatal(format("%s: expected %lld bytes, the file has %zu", path.c_str(),
                 (long long)(size_t(count) * sizeof(T)), bytes.size()));
  std::vector<T> values(static_cast<size_t>(count));
  memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

/// Reads a raw float32 file of any length.
std::vector<float> readFloats(const std::string &path) {
  std::string bytes, err;
  if (!tfc::rt::readFile(path, bytes, err))
    fatal(err);
  if (bytes.size() % sizeof(float) != 0)
    fatal(path + ": the size is not a multiple of 4 bytes");
  std::vector<float> values(bytes.size() / sizeof(float));
  memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

template <typename T>
void writeRaw(const std::string &path, const std::vector<T> &values) {
  std::string err;
  if (!tfc::rt::writeFileAtomic(
          path, {{values.data(), values.size() * sizeof(T)}}, err))
    fatal(err);
}

/// The spec at `path`, with the batch and sequence length of the command
/// line (as `tfc compile --batch --seq-len`).
spec::Spec loadSpec(const Options &options) {
  spec::Diagnostic diag;
  std::optional<spec::Spec> parsed =
      spec::parseSpecFile(options.get("--spec"), diag);
  if (!parsed)
    fatal(diag.str());
  parsed->training.batch = options.integer("--batch");
  parsed->training.seqLen = options.integer("--seq-len");
  if (parsed->training.batch < 1 || parsed->training.seqLen < 1)
    fatal("--batch and --seq-len must be positive");
  return *parsed;
}

/// Logits per position (lm) or per row (classify).
int64_t outputsOf(const spec::Spec &s) {
  if (s.model.task == spec::Task::LanguageModel)
    return s.model.vocab;
  return s.model.loss == spec::ClassifyLoss::BinaryCrossEntropy
             ? 1
             : s.model.classes;
}

//===----------------------------------------------------------------------===//
// Random numbers (for inputs and weights; the model itself draws none)
//===----------------------------------------------------------------------===//

/// SplitMix64 with Box-Muller normals.
class Random : public tfc::test::SplitMix64 {
public:
  using SplitMix64::SplitMix64;
  /// Uniform in (0, 1).
  double uniform() { return (double(next() >> 11) + 0.5) / 9007199254740992.0; }
  double normal() {
    return std::sqrt(-2.0 * std::log(uniform())) *
           std::cos(2.0 * M_PI * uniform());
  }
};

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// A row-major `rows x cols` matrix of doubles: one sequence's activations
/// `[positions, channels]`, or a weight `[out, in]`.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> data;

  Matrix() = default;
  Matrix(int64_t rows, int64_t cols)
      : rows(rows), cols(cols), data(size_t(rows * cols), 0.0) {}
  double &operator()(int64_t r, int64_t c) {
    return data[size_t(r * cols + c)];
  }
  double operator()(int64_t r, int64_t c) const {
    return data[size_t(r * cols + c)];
  }
  const double *row(int64_t r) const { return &data[size_t(r * cols)]; }
  double *row(int64_t r) { return &data[size_t(r * cols)]; }
};

Matrix add(const Matrix &a, const Matrix &b) {
  Matrix out = a;
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] += b.data[i];
  return out;
}

/// The model's tensors from a checkpoint, converted to double on first use.
class Weights {
public:
  explicit Weights(const std::string &path) {
    std::string err;
    if (!file.open(path, err))
      fatal(err);
  }

  bool has(const std::string &name) const { return file.find(name); }

  /// Tensor `name`, which must have exactly `shape`.
  const std::vector<double> &get(const std::string &name,
                                 const std::vector<int64_t> &shape) {
    auto it = cache.find(name);
    if (it != cache.end())
      return it->second;
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    std::vector<float> values(static_cast<size_t>(count));
    std::string err;
    if (!file.readF32(name, shape, values.data(), err))
      fatal(err);
    return cache[name] = std::vector<double>(values.begin(), values.end());
  }

  /// Tensor `name` of shape `[rows, cols]` as a matrix.
  Matrix matrix(const std::string &name, int64_t rows, int64_t cols) {
    Matrix m(rows, cols);
    m.data = get(name, {rows, cols});
    return m;
  }

private:
  tfc::rt::SafetensorsFile file;
  std::map<std::string, std::vector<double>> cache;
};

//===----------------------------------------------------------------------===//
// The reference model
//===----------------------------------------------------------------------===//

/// The forward pass of one spec, one sequence at a time (nothing in a tfc
/// model mixes the rows of a batch).
class ReferenceModel {
public:
  ReferenceModel(const spec::Spec &s, Weights &weights)
      : s(s), w(weights), width(s.model.dModel), heads(s.model.heads),
        headDim(s.model.dModel / s.model.heads), seqLen(s.training.seqLen),
        classify(s.model.task == spec::Task::Classify) {}

  /// Logits of one sequence: lm `[S, V]`, classify `[1, outputs]`. `mask` is
  /// the sequence's `[S]` padding mask.
  Matrix forward(const int32_t *tokens, const float *mask);

private:
  Matrix linear(const Matrix &x, const std::string &name, int64_t out,
                bool bias = true);
  Matrix layerNorm(const Matrix &x, const std::string &name);
  void activate(Matrix &x) const;
  Matrix dconv(const Matrix &x, const std::string &name) const;
  Matrix rotary(const Matrix &x) const;
  Matrix attention(const Matrix &x, const std::string &name, int64_t layer);
  Matrix performer(const Matrix &q, const Matrix &k, const Matrix &v,
                   const std::string &name, const float *keyMask);
  Matrix longformer(const Matrix &x, const Matrix &q, const Matrix &k,
                    const Matrix &v, const std::string &name, int64_t layer,
                    const float *keyMask);
  Matrix block(const Matrix &x, const std::string &name, int64_t layer);
  Matrix stack(Matrix x, const std::string &prefix, int64_t count);
  Matrix hourglassLevel(Matrix x, const std::string &prefix, size_t level);
  Matrix shorten(const Matrix &x, const std::string &name, int64_t factor);
  Matrix upsample(const Matrix &shortened, const Matrix &residual,
                  const std::string &name, int64_t factor);
  Matrix
  resamplingAttention(const Matrix &queries, const Matrix &keys,
                      const std::string &name,
                      const std::function<bool(int64_t, int64_t)> &visible);

  const spec::Spec &s;
  Weights &w;
  int64_t width, heads, headDim, seqLen;
  bool classify;
  const float *mask = nullptr; ///< The current sequence's padding mask.
  int64_t nextLayer = 0;       ///< Execution-order index of the next layer.
};

/// `y = x W^T + b` with `W` `[out, in]` as in `nn.Linear`.
Matrix ReferenceModel::linear(const Matrix &x, const std::string &name,
                              int64_t out, bool bias) {
  const std::vector<double> &weight = w.get(name + ".weight", {out, x.cols});
  const std::vector<double> *b = bias ? &w.get(name + ".bias", {out}) : nullptr;
  Matrix y(x.rows, out);
  for (int64_t r = 0; r < x.rows; ++r) {
    const double *in = x.row(r);
    for (int64_t o = 0; o < out; ++o) {
      const double *wr = &weight[size_t(o * x.cols)];
      double sum = b ? (*b)[size_t(o)] : 0.0;
      for (int64_t i = 0; i < x.cols; ++i)
        sum += in[i] * wr[i];
      y(r, o) = sum;
    }
  }
  return y;
}

/// `nn.LayerNorm`: biased variance, epsilon inside the square root.
Matrix ReferenceModel::layerNorm(const Matrix &x, const std::string &name) {
  const std::vector<double> &gamma = w.get(name + ".weight", {x.cols});
  const std::vector<double> &beta = w.get(name + ".bias", {x.cols});
  Matrix y(x.rows, x.cols);
  for (int64_t r = 0; r < x.rows; ++r) {
    double mean = 0, variance = 0;
    for (int64_t c = 0; c < x.cols; ++c)
      mean += x(r, c);
    mean /= double(x.cols);
    for (int64_t c = 0; c < x.cols; ++c)
      variance += (x(r, c) - mean) * (x(r, c) - mean);
    variance /= double(x.cols);
    double inverse = 1.0 / std::sqrt(variance + s.model.normEps);
    for (int64_t c = 0; c < x.cols; ++c)
      y(r, c) = (x(r, c) - mean) * inverse * gamma[size_t(c)] + beta[size_t(c)];
  }
  return y;
}

/// relu; gelu in PyTorch's tanh form; squared relu.
void ReferenceModel::activate(Matrix &x) const {
  for (double &v : x.data) {
    switch (s.ffn.activation) {
    case spec::Activation::Relu:
      v = std::max(v, 0.0);
      break;
    case spec::Activation::SquaredRelu:
      v = std::max(v, 0.0) * std::max(v, 0.0);
      break;
    case spec::Activation::Gelu:
      v = 0.5 * v *
          (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
      break;
    }
  }
}

/// Primer's causal depth-wise convolution: `y[p, c] = bias[c] +
/// sum_{j < K} w[j, c] x[p - j, c]`, zero before the first position.
Matrix ReferenceModel::dconv(const Matrix &x, const std::string &name) const {
  int64_t kernel = s.attention.dconvKernel;
  const std::vector<double> &weight =
      w.get(name + ".weight", {kernel, heads, headDim});
  const std::vector<double> &bias = w.get(name + ".bias", {heads, headDim});
  Matrix y(x.rows, x.cols);
  for (int64_t p = 0; p < x.rows; ++p)
    for (int64_t c = 0; c < x.cols; ++c) {
      double sum = bias[size_t(c)];
      for (int64_t j = 0; j < kernel && j <= p; ++j)
        sum += weight[size_t(j * x.cols + c)] * x(p - j, c);
      y(p, c) = sum;
    }
  return y;
}

/// Rotary positions, GPT-NeoX half-split layout, base 10000: per head,
/// channels `e` and `e + Dh/2` rotate by `p * 10000^(-2e/Dh)`, `p` the
/// position within the sequence the layer runs on.
Matrix ReferenceModel::rotary(const Matrix &x) const {
  int64_t half = headDim / 2;
  Matrix y = x;
  for (int64_t p = 0; p < x.rows; ++p)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t e = 0; e < half; ++e) {
        double angle =
            double(p) * std::pow(10000.0, -2.0 * double(e) / double(headDim));
        double first = x(p, h * headDim + e);
        double second = x(p, h * headDim + e + half);
        y(p, h * headDim + e) =
            first * std::cos(angle) - second * std::sin(angle);
        y(p, h * headDim + e + half) =
            second * std::cos(angle) + first * std::sin(angle);
      }
  return y;
}

/// Multi-head softmax attention of query row `i` of `q` over the keys `k`,
/// values `v`, scaled by `1/sqrt(Dh)`, restricted to the keys `allowed`
/// accepts and that `keyMask` (when given) marks as real. A row without any
/// allowed key gives zeros. Writes row `i` of `out`.
void attendRow(const Matrix &q, int64_t i, const Matrix &k, const Matrix &v,
               int64_t heads, const float *keyMask,
               const std::function<bool(int64_t)> &allowed, Matrix &out,
               int64_t outRow) {
  int64_t headDim = q.cols / heads;
  double scale = 1.0 / std::sqrt(double(headDim));
  std::vector<double> scores(size_t(k.rows));
  std::vector<char> ok(size_t(k.rows));
  for (int64_t h = 0; h < heads; ++h) {
    double max = -INFINITY;
    for (int64_t j = 0; j < k.rows; ++j) {
      ok[size_t(j)] = allowed(j) && (!keyMask || keyMask[j] != 0.0f);
      if (!ok[size_t(j)])
        continue;
      double dot = 0;
      for (int64_t e = 0; e < headDim; ++e)
        dot += q(i, h * headDim + e) * k(j, h * headDim + e);
      scores[size_t(j)] = dot * scale;
      max = std::max(max, scores[size_t(j)]);
    }
    double sum = 0;
    for (int64_t j = 0; j < k.rows; ++j)
      if (ok[size_t(j)]) {
        scores[size_t(j)] = std::exp(scores[size_t(j)] - max);
        sum += scores[size_t(j)];
      }
    for (int64_t e = 0; e < headDim; ++e) {
      double value = 0;
      for (int64_t j = 0; j < k.rows; ++j)
        if (ok[size_t(j)])
          value += scores[size_t(j)] / sum * v(j, h * headDim + e);
      out(outRow, h * headDim + e) = value;
    }
  }
}

/// FAVOR+ (Performer): with `x' = x / Dh^(1/4)` per head and the exponent
/// `E(x)_m = W_m . x' - |x'|^2 / 2` (`W` the checkpoint's `[M, Dh]`
/// features), query i reads the keys j that it may attend (all, or
/// `j <= i` when causal; padding keys left out) with the weights
///
///   a_ij = sum_m exp(E(q_i)_m - s_i) exp(E(k_j)_m - t_i) / M
///
/// where `s_i = max_m E(q_i)_m` and `t_i` is the max of `E(k_j)_m` over the
/// same keys and all m: output `sum_j a_ij v_j / sum_j a_ij`, or 0 when
/// the denominator is at most 1e-20. Written pair by pair, with no prefix
/// sums and no chunks; the constants `s_i`, `t_i` cancel in the quotient,
/// and only keep the exponentials in range.
Matrix ReferenceModel::performer(const Matrix &q, const Matrix &k,
                                 const Matrix &v, const std::string &name,
                                 const float *keyMask) {
  int64_t count = s.attention.features;
  const std::vector<double> &features =
      w.get(name + ".features", {count, headDim});
  double inputScale = std::pow(double(headDim), -0.25);
  // E(x)_m for every row of x and head h, [rows][count].
  auto exponents = [&](const Matrix &x, int64_t h) {
    std::vector<std::vector<double>> out(size_t(x.rows),
                                         std::vector<double>(size_t(count)));
    for (int64_t p = 0; p < x.rows; ++p) {
      double halfNorm = 0;
      for (int64_t e = 0; e < headDim; ++e) {
        double scaled = x(p, h * headDim + e) * inputScale;
        halfNorm += 0.5 * scaled * scaled;
      }
      for (int64_t m = 0; m < count; ++m) {
        double projection = 0;
        for (int64_t e = 0; e < headDim; ++e)
          projection += features[size_t(m * headDim + e)] *
                        x(p, h * headDim + e) * inputScale;
        out[size_t(p)][size_t(m)] = projection - halfNorm;
      }
    }
    return out;
  };
  auto rowMax = [](const std::vector<double> &row) {
    return *std::max_element(row.begin(), row.end());
  };
  Matrix out(q.rows, q.cols);
  for (int64_t h = 0; h < heads; ++h) {
    std::vector<std::vector<double>> eq = exponents(q, h), ek = exponents(k, h);
    for (int64_t i = 0; i < q.rows; ++i) {
      int64_t keys = s.attention.causal ? i + 1 : k.rows;
      auto allowed = [&](int64_t j) { return !keyMask || keyMask[j] != 0; };
      double s_i = rowMax(eq[size_t(i)]), t_i = -INFINITY;
      for (int64_t j = 0; j < keys; ++j)
        if (allowed(j))
          t_i = std::max(t_i, rowMax(ek[size_t(j)]));
      double denominator = 0;
      std::vector<double> numerator(size_t(headDim), 0.0);
      for (int64_t j = 0; j < keys; ++j) {
        if (!allowed(j))
          continue;
        double weight = 0;
        for (int64_t m = 0; m < count; ++m)
          weight += std::exp(eq[size_t(i)][size_t(m)] - s_i) *
                    std::exp(ek[size_t(j)][size_t(m)] - t_i);
        weight *= (keyMask ? double(keyMask[j]) : 1.0) / double(count);
        denominator += weight;
        for (int64_t e = 0; e < headDim; ++e)
          numerator[size_t(e)] += weight * v(j, h * headDim + e);
      }
      for (int64_t e = 0; e < headDim; ++e)
        out(i, h * headDim + e) =
            denominator > 1e-20 ? numerator[size_t(e)] / denominator : 0.0;
    }
  }
  return out;
}

/// The entry of a per-layer array for `layer` (the last entry for later
/// layers), or `fallback` for an empty array.
int64_t perLayer(const std::vector<int64_t> &values, int64_t layer,
                 int64_t fallback) {
  if (values.empty())
    return fallback;
  return values[std::min<size_t>(size_t(layer), values.size() - 1)];
}

/// Longformer. The window `w` (at most the layer's sequence length) and
/// dilation `r` of the layer give the local band: causal `0 <= i - j <
/// w * r`, non-causal `|j - i| <= (w / 2) * r`, both with `(j - i) % r == 0`.
/// Local rows also see the global tokens (those before the layer's sequence
/// end); a global token's row attends to every key through the global
/// projections of the block's input `x`.
Matrix ReferenceModel::longformer(const Matrix &x, const Matrix &q,
                                  const Matrix &k, const Matrix &v,
                                  const std::string &name, int64_t layer,
                                  const float *keyMask) {
  const spec::Attention &att = s.attention;
  int64_t length = q.rows;
  int64_t window = std::min(perLayer(att.window, layer, length), length);
  int64_t dilation = perLayer(att.dilation, layer, 1);
  bool causal = att.causal;
  std::vector<char> isGlobal(size_t(length), 0);
  bool anyGlobal = false;
  for (int64_t position : att.globalTokens)
    if (position < length) {
      isGlobal[size_t(position)] = 1;
      anyGlobal = true;
    }
  Matrix out(length, width);
  for (int64_t i = 0; i < length; ++i) {
    auto allowed = [&](int64_t j) {
      bool band;
      if (causal) {
        int64_t back = i - j;
        band = back >= 0 && back < window * dilation && back % dilation == 0;
      } else {
        int64_t offset = j - i;
        band = std::abs(offset) <= (window / 2) * dilation &&
               offset % dilation == 0;
      }
      if (!anyGlobal)
        return band;
      return (band || isGlobal[size_t(j)]) && (!causal || j <= i);
    };
    attendRow(q, i, k, v, heads, keyMask, allowed, out, i);
  }
  if (!anyGlobal)
    return out;
  Matrix gq = linear(x, name + ".q_global_proj", width);
  Matrix gk = linear(x, name + ".k_global_proj", width);
  Matrix gv = linear(x, name + ".v_global_proj", width);
  for (int64_t g = 0; g < length; ++g) {
    if (!isGlobal[size_t(g)])
      continue;
    attendRow(
        gq, g, gk, gv, heads, keyMask,
        [&](int64_t j) { return !causal || j <= g; }, out, g);
  }
  return out;
}

/// The attention sub-layer (without its norm and residual): projections,
/// Primer's convolutions, rotary positions, the attention of the spec's
/// kind and the output projection. Padding keys are masked for classifiers
/// on the full-length sequence.
Matrix ReferenceModel::attention(const Matrix &x, const std::string &name,
                                 int64_t layer) {
  Matrix q = linear(x, name + ".q_proj", width);
  Matrix k = linear(x, name + ".k_proj", width);
  Matrix v = linear(x, name + ".v_proj", width);
  if (s.attention.dconv) {
    q = dconv(q, name + ".q_dconv");
    k = dconv(k, name + ".k_dconv");
    v = dconv(v, name + ".v_dconv");
  }
  if (s.model.positions == spec::Positions::Rotary) {
    q = rotary(q);
    k = rotary(k);
  }
  const float *keyMask = classify && x.rows == seqLen ? mask : nullptr;
  Matrix out;
  switch (s.attention.kind) {
  case spec::AttentionKind::Softmax: {
    out = Matrix(x.rows, width);
    bool causal = s.attention.causal;
    for (int64_t i = 0; i < x.rows; ++i)
      attendRow(
          q, i, k, v, heads, keyMask,
          [&](int64_t j) { return !causal || j <= i; }, out, i);
    break;
  }
  case spec::AttentionKind::Performer:
    out = performer(q, k, v, name, keyMask);
    break;
  case spec::AttentionKind::Longformer:
    out = longformer(x, q, k, v, name, layer, keyMask);
    break;
  }
  return linear(out, name + ".out_proj", width);
}

/// One pre-norm layer: `x + attn(attn_norm(x))`, then `x + ffn(ffn_norm(x))`.
Matrix ReferenceModel::block(const Matrix &x, const std::string &name,
                             int64_t layer) {
  Matrix h =
      attention(layerNorm(x, name + ".attn_norm"), name + ".attn", layer);
  Matrix y = add(x, h);
  h = linear(layerNorm(y, name + ".ffn_norm"), name + ".ffn.fc1", s.model.dFF);
  activate(h);
  h = linear(h, name + ".ffn.fc2", width);
  return add(y, h);
}

Matrix ReferenceModel::stack(Matrix x, const std::string &prefix,
                             int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    x = block(x, prefix + std::to_string(i), nextLayer++);
  return x;
}

/// Hourglass shortening by `factor` of `x [T, D]` to `[T / factor, D]`:
/// the group mean (`avg`); the group's positions concatenated through
/// `nn.Linear(factor * D, D)` (`linear`); or the group mean plus the output
/// projection of the attention from the projected mean to the group's
/// positions (`attention`, projections without bias).
Matrix ReferenceModel::shorten(const Matrix &x, const std::string &name,
                               int64_t factor) {
  int64_t groups = x.rows / factor;
  Matrix pooled(groups, width);
  for (int64_t n = 0; n < groups; ++n)
    for (int64_t c = 0; c < width; ++c) {
      double sum = 0;
      for (int64_t j = 0; j < factor; ++j)
        sum += x(n * factor + j, c);
      pooled(n, c) = sum / double(factor);
    }
  switch (s.hourglass.shortening) {
  case spec::ShortenKind::Avg:
    return pooled;
  case spec::ShortenKind::Linear: {
    Matrix concatenated(groups, factor * width);
    concatenated.data = x.data; // Row-major: group n is rows n*k .. n*k+k-1.
    return linear(concatenated, name, width);
  }
  case spec::ShortenKind::Attention:
    return add(pooled,
               resamplingAttention(pooled, x, name, [&](int64_t n, int64_t j) {
                 return j / factor == n;
               }));
  }
  return pooled;
}

/// Hourglass up-sampling of `shortened [N, D]` to `[N * factor, D]`: each
/// position repeated (`naive`); `nn.Linear(D, factor * D)` split into
/// `factor` positions (`linear`); or the repetition plus the output
/// projection of the attention from each full-resolution position `p` of
/// `residual` to the shortened positions `i` with `i * factor <= p`
/// (`attention`, projections without bias).
Matrix ReferenceModel::upsample(const Matrix &shortened, const Matrix &residual,
                                const std::string &name, int64_t factor) {
  int64_t length = shortened.rows * factor;
  Matrix repeated(length, width);
  for (int64_t p = 0; p < length; ++p)
    for (int64_t c = 0; c < width; ++c)
      repeated(p, c) = shortened(p / factor, c);
  switch (s.hourglass.upsampling) {
  case spec::UpsampleKind::Naive:
    return repeated;
  case spec::UpsampleKind::Linear: {
    Matrix wide = linear(shortened, name, factor * width);
    Matrix out(length, width);
    out.data = wide.data; // Row-major: position n*k + j is wide[n, j*D ..].
    return out;
  }
  case spec::UpsampleKind::Attention:
    return add(repeated, resamplingAttention(residual, shortened, name,
                                             [&](int64_t p, int64_t i) {
                                               return i * factor <= p;
                                             }));
  }
  return repeated;
}

/// The attention of hourglass shortening and up-sampling: each row of
/// `queries` attends the rows of `keys` that `visible(row, key)` admits,
/// through `name`.q_proj, k_proj, v_proj and out_proj (without bias).
Matrix ReferenceModel::resamplingAttention(
    const Matrix &queries, const Matrix &keys, const std::string &name,
    const std::function<bool(int64_t, int64_t)> &visible) {
  Matrix q = linear(queries, name + ".q_proj", width, /*bias=*/false);
  Matrix k = linear(keys, name + ".k_proj", width, /*bias=*/false);
  Matrix v = linear(keys, name + ".v_proj", width, /*bias=*/false);
  Matrix attended(queries.rows, width);
  for (int64_t row = 0; row < queries.rows; ++row)
    attendRow(
        q, row, k, v, heads, nullptr,
        [&](int64_t key) { return visible(row, key); }, attended, row);
  return linear(attended, name + ".out_proj", width, false);
}

/// Level `level` of the hourglass layout: pre layers; then, unless it is the
/// centre, shift right by `k - 1` (causal models), shortening by `k`, the
/// inner levels, up-sampling added to the residual from before the shift,
/// and the post layers.
Matrix ReferenceModel::hourglassLevel(Matrix x, const std::string &prefix,
                                      size_t level) {
  const std::vector<spec::HourglassLevel> &levels = s.hourglass.levels;
  size_t centre = levels.size() / 2;
  if (level == centre)
    return stack(x, prefix + "layers.", levels[level].layers);
  x = stack(x, prefix + "pre.", levels[level].layers);
  int64_t factor = levels[level + 1].factor / levels[level].factor;
  int64_t postLayers = levels[levels.size() - 1 - level].layers;
  if (factor == 1) {
    x = hourglassLevel(x, prefix + "inner.", level + 1);
    return stack(x, prefix + "post.", postLayers);
  }
  Matrix residual = x;
  Matrix shifted = x;
  if (s.attention.causal) {
    int64_t amount = factor - 1;
    for (int64_t p = 0; p < x.rows; ++p)
      for (int64_t c = 0; c < width; ++c)
        shifted(p, c) = p >= amount ? x(p - amount, c) : 0.0;
  }
  Matrix inner = hourglassLevel(shorten(shifted, prefix + "shorten", factor),
                                prefix + "inner.", level + 1);
  x = add(residual, upsample(inner, residual, prefix + "upsample", factor));
  return stack(x, prefix + "post.", postLayers);
}

Matrix ReferenceModel::forward(const int32_t *tokens, const float *mask) {
  this->mask = mask;
  nextLayer = 0;
  const int64_t vocab = s.model.vocab;
  const std::vector<double> &table = w.get("embed.weight", {vocab, width});
  Matrix x(seqLen, width);
  for (int64_t p = 0; p < seqLen; ++p) {
    int64_t id = tokens[p] >= 0 && tokens[p] < vocab ? tokens[p] : 0;
    for (int64_t c = 0; c < width; ++c)
      x(p, c) = table[size_t(id * width + c)];
  }
  switch (s.model.positions) {
  case spec::Positions::None:
  case spec::Positions::Rotary:
    break;
  case spec::Positions::Sinusoidal:
    for (int64_t p = 0; p < seqLen; ++p)
      for (int64_t c = 0; c < width; ++c) {
        int64_t even = c - c % 2;
        double angle =
            double(p) / std::pow(10000.0, double(even) / double(width));
        x(p, c) += c % 2 ? std::cos(angle) : std::sin(angle);
      }
    break;
  case spec::Positions::Learned: {
    const std::vector<double> &positions =
        w.get("pos_embed.weight", {seqLen, width});
    for (int64_t i = 0; i < seqLen * width; ++i)
      x.data[size_t(i)] += positions[size_t(i)];
    break;
  }
  }
  if (s.hourglass.enabled)
    x = hourglassLevel(x, "", 0);
  else
    x = stack(x, "layers.", s.model.layers);
  x = layerNorm(x, "norm");
  if (classify) {
    Matrix cls(1, width);
    for (int64_t c = 0; c < width; ++c)
      cls(0, c) = x(0, c);
    return linear(cls, "classifier", outputsOf(s));
  }
  std::string head = "lm_head";
  if (s.model.tieEmbeddings && !w.has("lm_head.weight"))
    head = "embed";
  return linear(x, head, vocab, /*bias=*/false);
}

/// `logsumexp(row) - row[target]`, the target clamped as the model does
/// (an id outside [0, n) reads entry 0).
double crossEntropy(const double *row, int64_t n, int64_t target) {
  double max = -INFINITY;
  for (int64_t i = 0; i < n; ++i)
    max = std::max(max, row[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += std::exp(row[i] - max);
  if (target < 0 || target >= n)
    target = 0;
  return max + std::log(sum) - row[target];
}

//===----------------------------------------------------------------------===//
// Subcommands
//===----------------------------------------------------------------------===//

int runForward(const Options &o) {
  o.only({"--spec", "--batch", "--seq-len", "--weights", "--tokens",
          "--targets", "--mask", "--logits"});
  spec::Spec s = loadSpec(o);
  const int64_t B = s.training.batch, S = s.training.seqLen;
  const bool lm = s.model.task == spec::Task::LanguageModel;
  const int64_t targetCount = lm ? B * S : B;
  std::vector<int32_t> tokens = readRaw<int32_t>(o.get("--tokens"), B * S);
  std::vector<int32_t> targets =
      o.has("--targets") ? readRaw<int32_t>(o.get("--targets"), targetCount)
                         : std::vector<int32_t>(size_t(targetCount), 0);
  std::vector<float> mask = o.has("--mask")
                                ? readRaw<float>(o.get("--mask"), B * S)
                                : std::vector<float>(size_t(B * S), 1.0f);
  Weights weights(o.get("--weights"));
  ReferenceModel model(s, weights);
  const int64_t outputs = outputsOf(s);
  std::vector<float> logits;
  double lossSum = 0;
  for (int64_t b = 0; b < B; ++b) {
    Matrix out = model.forward(&tokens[size_t(b * S)], &mask[size_t(b * S)]);
    for (double v : out.data)
      logits.push_back(float(v));
    if (lm) {
      for (int64_t p = 0; p < S; ++p)
        lossSum +=
            crossEntropy(out.row(p), outputs, targets[size_t(b * S + p)]);
    } else if (s.model.loss == spec::ClassifyLoss::CrossEntropy) {
      lossSum += crossEntropy(out.row(0), outputs, targets[size_t(b)]);
    } else {
      double z = out(0, 0), y = double(targets[size_t(b)]);
      lossSum += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::abs(z)));
    }
  }
  writeRaw(o.get("--logits"), logits);
  printf("{\"loss\": %.17g}\n", lossSum / double(targetCount));
  return 0;
}

int runInputs(const Options &o) {
  o.only({"--spec", "--batch", "--seq-len", "--seed", "--tokens", "--targets",
          "--mask"});
  spec::Spec s = loadSpec(o);
  const int64_t B = s.training.batch, S = s.training.seqLen;
  const int64_t V = s.model.vocab;
  Random rng(uint64_t(o.integer("--seed")));
  std::vector<int32_t> tokens(size_t(B * S));
  std::vector<float> mask(size_t(B * S), 1.0f);
  std::vector<int32_t> targets;
  if (s.model.task == spec::Task::LanguageModel) {
    for (int32_t &t : tokens)
      t = int32_t(rng.below(V));
    targets.resize(size_t(B * S));
    for (int32_t &t : targets)
      t = int32_t(rng.below(V));
  } else {
    // CLS (2), word ids (UNK = 1 included), then PAD (0) where mask is 0.
    for (int64_t b = 0; b < B; ++b) {
      int64_t length = b == 0 ? S : 1 + rng.below(S);
      for (int64_t p = 0; p < S; ++p) {
        int32_t id = p == 0       ? 2
                     : p < length ? int32_t(1 + rng.below(V - 1))
                                  : 0;
        tokens[size_t(b * S + p)] = id;
        mask[size_t(b * S + p)] = p < length ? 1.0f : 0.0f;
      }
      targets.push_back(int32_t(rng.below(s.model.classes)));
    }
  }
  writeRaw(o.get("--tokens"), tokens);
  writeRaw(o.get("--targets"), targets);
  writeRaw(o.get("--mask"), mask);
  return 0;
}

int runPerturb(const Options &o) {
  o.only({"--spec", "--batch", "--seq-len", "--seed", "--from", "--tokens",
          "--output"});
  spec::Spec s = loadSpec(o);
  const int64_t B = s.training.batch, S = s.training.seqLen;
  const int64_t V = s.model.vocab, from = o.integer("--from");
  if (from < 0 || from >= S)
    fatal(format("--from: expected a position in [0, %lld)", (long long)S));
  std::vector<int32_t> tokens = readRaw<int32_t>(o.get("--tokens"), B * S);
  Random rng(uint64_t(o.integer("--seed")));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t p = from; p < S; ++p) {
      int32_t &t = tokens[size_t(b * S + p)];
      t = int32_t((t + 1 + rng.below(V - 1)) % V);
    }
  writeRaw(o.get("--output"), tokens);
  return 0;
}

/// Whether `name` ends with `suffix`.
bool endsWith(const std::string &name, const std::string &suffix) {
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Writes the checkpoint --weights to --output, its metadata kept and each
/// tensor read as float32. In file order, `keep` decides from a tensor's
/// name whether it is written at all (before it is read); `edit` may then
/// change the values and the name of those kept.
void rewriteCheckpoint(
    const Options &o, const std::function<bool(const std::string &)> &keep,
    const std::function<void(const tfc::rt::SafetensorsEntry &, std::string &,
                             std::vector<float> &)> &edit) {
  tfc::rt::SafetensorsFile file;
  std::string err;
  if (!file.open(o.get("--weights"), err))
    fatal(err);
  std::vector<std::vector<float>> storage;
  std::vector<tfc::rt::TensorView> views;
  for (const tfc::rt::SafetensorsEntry &entry : file.entries()) {
    std::string name = entry.name;
    if (!keep(name))
      continue;
    int64_t count = 1;
    for (int64_t d : entry.shape)
      count *= d;
    std::vector<float> values(static_cast<size_t>(count));
    if (!file.readF32(name, entry.shape, values.data(), err))
      fatal(err);
    edit(entry, name, values);
    storage.push_back(std::move(values));
    views.push_back({name, entry.shape, nullptr});
  }
  for (size_t i = 0; i < views.size(); ++i)
    views[i].data = storage[i].data();
  if (!tfc::rt::writeSafetensors(o.get("--output"), views, file.metadata(),
                                 err))
    fatal(err);
}

int runRandomize(const Options &o) {
  o.only({"--weights", "--output", "--seed"});
  Random rng(uint64_t(o.integer("--seed")));
  rewriteCheckpoint(
      o, [](const std::string &) { return true; },
      [&](const tfc::rt::SafetensorsEntry &entry, std::string &name,
          std::vector<float> &values) {
        if (endsWith(name, ".features"))
          return;
        // Unit-variance activations through every path: weights [out, in]
        // with standard deviation 1/sqrt(in), visible biases, norm scales
        // around 1.
        double std = 0.2, mean = 0.0;
        if (endsWith(name, "norm.weight"))
          mean = 1.0;
        else if (endsWith(name, ".bias"))
          std = 0.2;
        else if (name == "embed.weight")
          std = 1.0;
        else if (name == "pos_embed.weight")
          std = 0.5;
        else if (endsWith(name, "dconv.weight"))
          std = 0.5;
        else if (entry.shape.size() == 2)
          std = 1.0 / std::sqrt(double(entry.shape[1]));
        for (float &v : values)
          v = float(mean + std * rng.normal());
      });
  return 0;
}

int runEdit(const Options &o) {
  o.only({"--weights", "--output", "--rename", "--zero", "--drop", "--scale"});
  auto startsWith = [](const std::string &name, const std::string &prefix) {
    return name.compare(0, prefix.size(), prefix) == 0;
  };
  std::vector<std::pair<std::string, std::string>> renames;
  for (const std::string &rule : o.all("--rename")) {
    size_t eq = rule.find('=');
    if (eq == std::string::npos || eq == 0)
      fatal("--rename: expected FROM=TO, got '" + rule + "'");
    renames.push_back({rule.substr(0, eq), rule.substr(eq + 1)});
  }
  std::vector<std::pair<std::string, double>> scales;
  for (const std::string &rule : o.all("--scale")) {
    size_t eq = rule.find('=');
    char *end = nullptr;
    double factor = eq == std::string::npos
                        ? 0.0
                        : std::strtod(rule.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == rule.c_str() + eq + 1 ||
        *end != '\0')
      fatal("--scale: expected TEXT=FACTOR, got '" + rule + "'");
    scales.push_back({rule.substr(0, eq), factor});
  }
  std::vector<std::string> zero = o.all("--zero"), drop = o.all("--drop");
  auto startsWithAny = [&](const std::string &name,
                           const std::vector<std::string> &prefixes) {
    return std::any_of(
        prefixes.begin(), prefixes.end(),
        [&](const std::string &p) { return startsWith(name, p); });
  };
  rewriteCheckpoint(
      o, [&](const std::string &name) { return !startsWithAny(name, drop); },
      [&](const tfc::rt::SafetensorsEntry &, std::string &name,
          std::vector<float> &values) {
        if (startsWithAny(name, zero))
          std::fill(values.begin(), values.end(), 0.0f);
        for (const auto &[text, factor] : scales)
          if (name.find(text) != std::string::npos)
            for (float &value : values)
              value = static_cast<float>(value * factor);
        for (const auto &[from, to] : renames)
          if (startsWith(name, from)) {
            name = to + name.substr(from.size());
            break;
          }
      });
  return 0;
}

/// The loss in a `{"loss": x}` file.
double readLoss(const std::string &path) {
  std::string text, err;
  if (!tfc::rt::readFile(path, text, err))
    fatal(err);
  tfc::rt::Json value;
  size_t byte = 0;
  if (!tfc::rt::parseJson(text.data(), text.size(), value, err, byte))
    fatal(format("%s: byte %zu: %s", path.c_str(), byte, err.c_str()));
  if (!value.is_object() || !value.contains("loss") ||
      !value["loss"].is_number())
    fatal(path + ": expected {\"loss\": <number>}");
  return value["loss"].get<double>();
}

int runCompare(const Options &o) {
  o.only({"--logits", "--loss", "--rtol"});
  double rtol = o.number("--rtol", 1e-4);
  std::vector<std::string> logitFiles = o.all("--logits");
  if (logitFiles.size() != 2)
    fatal("--logits: expected two files, GOT and REF");
  std::vector<float> got = readFloats(logitFiles[0]);
  std::vector<float> ref = readFloats(logitFiles[1]);
  if (got.size() != ref.size())
    fatal(format("%s has %zu logits, %s has %zu", logitFiles[0].c_str(),
                 got.size(), logitFiles[1].c_str(), ref.size()));
  double maxDiff = 0, maxRef = 0;
  size_t worst = 0;
  bool finite = true;
  for (size_t i = 0; i < got.size(); ++i) {
    finite &= std::isfinite(got[i]) && std::isfinite(ref[i]);
    double diff = std::abs(double(got[i]) - double(ref[i]));
    if (diff > maxDiff) {
      maxDiff = diff;
      worst = i;
    }
    maxRef = std::max(maxRef, std::abs(double(ref[i])));
  }
  bool ok = finite && maxRef > 0 && maxDiff <= rtol * maxRef;
  printf("logits: %zu values, max |ref| %.6g, max |got - ref| %.3g "
         "(relative %.3g, at element %zu: got %.9g, ref %.9g): %s\n",
         got.size(), maxRef, maxDiff, maxRef > 0 ? maxDiff / maxRef : 0.0,
         worst, got.empty() ? 0.0 : double(got[worst]),
         ref.empty() ? 0.0 : double(ref[worst]), ok ? "ok" : "MISMATCH");
  if (o.has("--loss")) {
    std::vector<std::string> lossFiles = o.all("--loss");
    if (lossFiles.size() != 2)
      fatal("--loss: expected two files, GOT and REF");
    double gotLoss = readLoss(lossFiles[0]), refLoss = readLoss(lossFiles[1]);
    double diff = std::abs(gotLoss - refLoss);
    bool lossOk = diff <= rtol * std::abs(refLoss);
    printf("loss: got %.9g, ref %.9g, relative difference %.3g: %s\n", gotLoss,
           refLoss, refLoss != 0 ? diff / std::abs(refLoss) : diff,
           lossOk ? "ok" : "MISMATCH");
    ok &= lossOk;
  }
  return ok ? 0 : 1;
}

int runPrefix(const Options &o) {
  o.only({"--batch", "--seq-len", "--from", "--logits", "--atol"});
  const int64_t B = o.integer("--batch"), S = o.integer("--seq-len");
  const int64_t from = o.integer("--from");
  double atol = o.number("--atol", 1e-6);
  std::vector<std::string> files = o.all("--logits");
  if (files.size() != 2)
    fatal("--logits: expected two files");
  std::vector<float> a = readFloats(files[0]), b = readFloats(files[1]);
  if (a.size() != b.size() || B < 1 || S < 1 || a.size() % size_t(B * S) != 0)
    fatal("the logits files do not both hold [batch, seq_len, V] floats");
  const int64_t V = int64_t(a.size()) / (B * S);
  double before = 0, after = 0;
  int64_t worstPosition = -1;
  for (int64_t r = 0; r < B; ++r)
    for (int64_t p = 0; p < S; ++p)
      for (int64_t v = 0; v < V; ++v) {
        size_t i = size_t((r * S + p) * V + v);
        double diff = std::abs(double(a[i]) - double(b[i]));
        // Equal values with different bits (0 and -0) still differ.
        if (diff == 0 && std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
          diff = std::numeric_limits<double>::denorm_min();
        if (!std::isfinite(a[i]) || !std::isfinite(b[i]))
          diff = INFINITY;
        if (p < from && diff > before) {
          before = diff;
          worstPosition = p;
        }
        if (p >= from)
          after = std::max(after, diff);
      }
  bool causal = before <= atol;
  bool visible = after > 1e-4;
  std::string where = worstPosition < 0 ? ""
                                        : format(" (at position %lld)",
                                                 (long long)worstPosition);
  printf("positions < %lld: max |a - b| %.3g%s: %s\n", (long long)from, before,
         where.c_str(), causal ? "ok" : "FUTURE TOKENS LEAK");
  printf("positions >= %lld: max |a - b| %.3g: %s\n", (long long)from, after,
         visible ? "ok" : "UNCHANGED (vacuous check)");
  return causal && visible ? 0 : 1;
}

void printUsage() {
  printf("usage: tfc-reference <command> [options]\n"
         "\n"
         "A float64 reference of tfc's models and helpers for numerical\n"
         "tests (see the header of test/numerics/Reference.cpp):\n"
         "  forward    the reference forward pass on raw inputs\n"
         "  inputs     random raw inputs for a spec\n"
         "  perturb    change the tokens from a position on\n"
         "  randomize  redraw the parameters of a checkpoint\n"
         "  edit       rename, zero, drop or scale checkpoint tensors\n"
         "  compare    compare logits and losses with a relative tolerance\n"
         "  prefix     check that changed later tokens leave earlier logits\n");
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    fatal("missing command (see 'tfc-reference --help')");
  std::string command = argv[1];
  if (command == "--help" || command == "-h") {
    printUsage();
    return 0;
  }
  std::vector<std::string> pairs;
  if (command == "compare" || command == "prefix")
    pairs = {"--logits", "--loss"};
  Options options(argc, argv, 2, pairs);
  if (command == "forward")
    return runForward(options);
  if (command == "inputs")
    return runInputs(options);
  if (command == "perturb")
    return runPerturb(options);
  if (command == "randomize")
    return runRandomize(options);
  if (command == "edit")
    return runEdit(options);
  if (command == "compare")
    return runCompare(options);
  if (command == "prefix")
    return runPrefix(options);
  fatal("unknown command '" + command + "' (see 'tfc-reference --help')");
}
