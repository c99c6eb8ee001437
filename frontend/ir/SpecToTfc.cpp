//===- SpecToTfc.cpp - Builds the tfc forward graph of a spec -------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Turns a validated spec into the forward graph in the tfc dialect. Layers
/// are pre-norm; every tensor of the model state is a `tfc.param` named as in
/// a PyTorch state dict, so that checkpoints move between tfc and PyTorch
/// (docs/weights.md lists the names for every family).
///
//===----------------------------------------------------------------------===//

#include "frontend/ir/SpecToTfc.h"

#include "dialect/TfcDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

#include <algorithm>

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Builds the forward function layer by layer.
class ForwardBuilder {
public:
  ForwardBuilder(MLIRContext &ctx, const ::tfc::spec::Spec &spec,
                 const ::tfc::ImportOptions &opts)
      : ctx(ctx), spec(spec), builder(&ctx),
        fileLoc(FileLineColLoc::get(&ctx, spec.path, 1, 1)) {
    batch = opts.batch > 0 ? opts.batch : spec.training.batch;
    seqLen = opts.seqLen > 0 ? opts.seqLen : spec.training.seqLen;
    element =
        opts.useF64 ? Type(builder.getF64Type()) : Type(builder.getF32Type());
    width = spec.model.dModel;
  }

  OwningOpRef<ModuleOp> build();

private:
  RankedTensorType floatTensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, element);
  }
  Location loc(const std::string &name) {
    return NameLoc::get(StringAttr::get(&ctx, name), fileLoc);
  }

  /// A trained tensor named `name`.
  Value param(const std::string &name, ArrayRef<int64_t> shape,
              const std::string &init) {
    return builder.create<ParamOp>(
        loc(name), floatTensor(shape), builder.getStringAttr(name),
        builder.getStringAttr(init), ParamKind::param);
  }
  std::pair<Value, Value> linearParams(const std::string &name, int64_t in,
                                       int64_t out, bool bias = true);
  Value linear(Value x, const std::string &name, int64_t out, bool bias = true);
  Value globalQuery(Value x, ArrayRef<int64_t> positions,
                    const std::string &name);
  Value layerNorm(Value x, const std::string &name);
  Value dropout(Value x);
  Value attention(Value x, const std::string &name, int64_t layer);
  Value feedForward(Value x, const std::string &name);
  Value block(Value x, const std::string &name, int64_t layer);
  Value stack(Value x, const std::string &prefix, int64_t count);
  Value hourglassLevel(Value x, const std::string &prefix, size_t level);
  template <typename Kind>
  std::pair<SmallVector<Value>, IntegerAttr>
  resamplingWeights(const std::string &name, Kind kind, int64_t in,
                    int64_t out);
  std::string dataPath(const std::string &path) const;
  bool classifies() const;
  int64_t outputCount() const;
  DictionaryAttr configAttr();
  DictionaryAttr trainingAttr();
  Block *createForwardFunc();
  Value embed(Value table, Value tokens);
  std::pair<Value, Value> classifierHead(Value x, Value targets);
  std::pair<Value, Value> languageModelHead(Value x, Value table,
                                            Value targets);

  MLIRContext &ctx;
  const ::tfc::spec::Spec &spec;
  OpBuilder builder;
  Location fileLoc;
  Type element;
  int64_t batch, seqLen, width;
  Value mask;
  int64_t nextLayer = 0; ///< Running layer index for per-layer attributes.
};

} // namespace

/// The weight `[out, in]` and bias `[out]` (null without one) of the linear
/// layer `name`.
std::pair<Value, Value> ForwardBuilder::linearParams(const std::string &name,
                                                     int64_t in, int64_t out,
                                                     bool bias) {
  Value weight = param(name + ".weight", {out, in}, "normal:0.02");
  Value b = bias ? param(name + ".bias", {out}, "zeros") : Value();
  return {weight, b};
}

Value ForwardBuilder::linear(Value x, const std::string &name, int64_t out,
                             bool bias) {
  auto inType = cast<RankedTensorType>(x.getType());
  auto [weight, b] = linearParams(name, inType.getShape().back(), out, bias);
  SmallVector<int64_t> shape(inType.getShape().drop_back());
  shape.push_back(out);
  return builder.create<LinearOp>(loc(name), floatTensor(shape), x, weight, b);
}

/// A Longformer's global query projection, which the attention reads only
/// at the global rows: those rows of `x` projected (one weight and bias)
/// and placed at their positions of a zero `[batch, seq, width]`, instead
/// of a projection of every row.
Value ForwardBuilder::globalQuery(Value x, ArrayRef<int64_t> positions,
                                  const std::string &name) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t rows = shape[0], length = shape[1], in = shape[2];
  auto [weight, bias] = linearParams(name, in, width);
  Value query;
  for (int64_t position : positions) {
    Value row = builder.create<TakeTokenOp>(loc(name), floatTensor({rows, in}),
                                            x, position);
    Value projected = builder.create<LinearOp>(
        loc(name), floatTensor({rows, width}), row, weight, bias);
    Value placed = builder.create<TakeTokenGradOp>(
        loc(name), floatTensor({rows, length, width}), projected,
        builder.getI64IntegerAttr(position));
    query = query ? builder.create<AddOp>(loc(name), placed.getType(), query,
                                          placed)
                  : placed;
  }
  return query;
}

Value ForwardBuilder::layerNorm(Value x, const std::string &name) {
  int64_t d = cast<RankedTensorType>(x.getType()).getShape().back();
  Value gamma = param(name + ".weight", {d}, "ones");
  Value beta = param(name + ".bias", {d}, "zeros");
  return builder.create<LayerNormOp>(
      loc(name), x.getType(), x, gamma, beta,
      builder.getF64FloatAttr(spec.model.normEps));
}

Value ForwardBuilder::dropout(Value x) {
  if (spec.model.dropout <= 0)
    return x;
  return builder.create<DropoutOp>(
      x.getLoc(), x.getType(), x, builder.getF64FloatAttr(spec.model.dropout),
      /*seed=*/Value(), builder.getI64IntegerAttr(0));
}

Value ForwardBuilder::attention(Value x, const std::string &name,
                                int64_t layer) {
  const auto &att = spec.attention;
  int64_t heads = spec.model.heads;
  int64_t headDim = width / heads;
  int64_t seq = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Value q = linear(x, name + ".q_proj", width);
  Value k = linear(x, name + ".k_proj", width);
  Value v = linear(x, name + ".v_proj", width);
  if (att.dconv) {
    auto dconv = [&](Value t, const std::string &proj) -> Value {
      std::string dname = name + "." + proj + "_dconv";
      // PyTorch's Conv1d default: uniform(1/sqrt(fan_in)), fan_in = kernel.
      std::string bound =
          "uniform:" + std::to_string(1.0 / std::sqrt(double(att.dconvKernel)));
      Value w =
          param(dname + ".weight", {att.dconvKernel, heads, headDim}, bound);
      Value b = param(dname + ".bias", {heads, headDim}, bound);
      return builder.create<DepthwiseConvOp>(loc(dname), t.getType(), t, w, b);
    };
    q = dconv(q, "q");
    k = dconv(k, "k");
    v = dconv(v, "v");
  }
  if (spec.model.positions == ::tfc::spec::Positions::Rotary) {
    q = builder.create<RotaryOp>(loc(name + ".rotary"), q.getType(), q,
                                 builder.getI64IntegerAttr(heads),
                                 builder.getF64FloatAttr(10000.0),
                                 /*inverse=*/UnitAttr());
    k = builder.create<RotaryOp>(loc(name + ".rotary"), k.getType(), k,
                                 builder.getI64IntegerAttr(heads),
                                 builder.getF64FloatAttr(10000.0),
                                 /*inverse=*/UnitAttr());
  }

  Attribute kind;
  Value features, gq, gk, gv;
  switch (att.kind) {
  case ::tfc::spec::AttentionKind::Softmax:
    kind = SoftmaxAttr::get(&ctx, att.causal);
    break;
  case ::tfc::spec::AttentionKind::Performer: {
    kind = PerformerAttr::get(&ctx, att.features, att.redraw, att.orthogonal,
                              att.causal);
    std::string fname = name + ".features";
    features = builder.create<ParamOp>(
        loc(fname), floatTensor({att.features, headDim}),
        builder.getStringAttr(fname),
        builder.getStringAttr("features:" + std::to_string(att.features) + ":" +
                              std::to_string(headDim)),
        ParamKind::buffer);
    break;
  }
  case ::tfc::spec::AttentionKind::Longformer: {
    auto pick = [&](const std::vector<int64_t> &values, int64_t fallback) {
      if (values.empty())
        return fallback;
      return values[std::min<size_t>(layer, values.size() - 1)];
    };
    // A level shortened below the window sees its whole sequence.
    int64_t window = std::min(pick(att.window, seq), seq);
    int64_t dilation = pick(att.dilation, 1);
    SmallVector<int64_t> global;
    for (int64_t position : att.globalTokens)
      if (position < seq)
        global.push_back(position);
    kind = LongformerAttr::get(&ctx, window, dilation, global, att.causal);
    if (!global.empty()) {
      gq = globalQuery(x, global, name + ".q_global_proj");
      gk = linear(x, name + ".k_global_proj", width);
      gv = linear(x, name + ".v_global_proj", width);
    }
    break;
  }
  }
  Value keyMask =
      spec.model.task == ::tfc::spec::Task::Classify && seq == seqLen ? mask
                                                                      : Value();
  Value a = builder.create<AttentionOp>(loc(name), q.getType(), kind,
                                        builder.getI64IntegerAttr(heads), q, k,
                                        v, keyMask, features, gq, gk, gv);
  return linear(a, name + ".out_proj", width);
}

Value ForwardBuilder::feedForward(Value x, const std::string &name) {
  ActivationKind act = ActivationKind::gelu;
  switch (spec.ffn.activation) {
  case ::tfc::spec::Activation::Relu:
    act = ActivationKind::relu;
    break;
  case ::tfc::spec::Activation::Gelu:
    act = ActivationKind::gelu;
    break;
  case ::tfc::spec::Activation::SquaredRelu:
    act = ActivationKind::squared_relu;
    break;
  }
  Value h = linear(x, name + ".fc1", spec.model.dFF);
  h = builder.create<ActivationOp>(loc(name + ".act"), h.getType(),
                                   ActivationKindAttr::get(&ctx, act), h);
  h = dropout(h);
  return linear(h, name + ".fc2", width);
}

Value ForwardBuilder::block(Value x, const std::string &name, int64_t layer) {
  Value h = layerNorm(x, name + ".attn_norm");
  h = dropout(attention(h, name + ".attn", layer));
  x = builder.create<AddOp>(loc(name), x.getType(), x, h);
  h = layerNorm(x, name + ".ffn_norm");
  h = dropout(feedForward(h, name + ".ffn"));
  return builder.create<AddOp>(loc(name), x.getType(), x, h);
}

Value ForwardBuilder::stack(Value x, const std::string &prefix, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    x = block(x, prefix + std::to_string(i), nextLayer++);
  return x;
}

/// The trained weights of the resampling `name` of an hourglass level
/// (tfc.shorten or tfc.upsample) of kind `kind` (a ShortenKind or an
/// UpsampleKind of the spec), and its heads attribute: for `Linear` the
/// weight `[out, in]` and bias `[out]` of a linear layer, for `Attention`
/// the four `[width, width]` projections of an attention and the model's
/// heads, else nothing.
template <typename Kind>
std::pair<SmallVector<Value>, IntegerAttr>
ForwardBuilder::resamplingWeights(const std::string &name, Kind kind,
                                  int64_t in, int64_t out) {
  if (kind == Kind::Linear) {
    auto [weight, bias] = linearParams(name, in, out);
    return {{weight, bias}, IntegerAttr()};
  }
  if (kind != Kind::Attention)
    return {{}, IntegerAttr()};
  SmallVector<Value> weights;
  for (const char *proj : {"q_proj", "k_proj", "v_proj", "out_proj"})
    weights.push_back(
        param(name + "." + proj + ".weight", {width, width}, "normal:0.02"));
  return {weights, builder.getI64IntegerAttr(spec.model.heads)};
}

/// Level `level` of the hourglass: its pre layers, then (unless it is the
/// centre) shortening, the inner levels, up-sampling with the residual from
/// before shortening, and the post layers.
Value ForwardBuilder::hourglassLevel(Value x, const std::string &prefix,
                                     size_t level) {
  const auto &levels = spec.hourglass.levels;
  size_t centre = levels.size() / 2;
  if (level == centre)
    return stack(x, prefix + "layers.", levels[level].layers);
  x = stack(x, prefix + "pre.", levels[level].layers);
  int64_t factor = levels[level + 1].factor / levels[level].factor;
  if (factor == 1) {
    // No resampling: the level is a plain continuation of the stack.
    x = hourglassLevel(x, prefix + "inner.", level + 1);
    return stack(x, prefix + "post.", levels[levels.size() - 1 - level].layers);
  }
  auto type = cast<RankedTensorType>(x.getType());
  int64_t seq = type.getDimSize(1);
  Value residual = x;
  Value s = x;
  if (spec.attention.causal)
    s = builder.create<ShiftRightOp>(loc(prefix + "shift"), s.getType(), s,
                                     builder.getI64IntegerAttr(factor - 1));
  std::string sname = prefix + "shorten";
  auto [shortenWeights, shortenHeads] = resamplingWeights(
      sname, spec.hourglass.shortening, factor * width, width);
  ShortenKind shortenKind =
      static_cast<ShortenKind>(static_cast<int>(spec.hourglass.shortening));
  Value shortened = builder.create<ShortenOp>(
      loc(sname), floatTensor({batch, seq / factor, width}), shortenKind, s,
      factor, shortenWeights, shortenHeads);

  Value inner = hourglassLevel(shortened, prefix + "inner.", level + 1);

  std::string uname = prefix + "upsample";
  auto [upWeights, upHeads] = resamplingWeights(
      uname, spec.hourglass.upsampling, width, factor * width);
  UpsampleKind upKind =
      static_cast<UpsampleKind>(static_cast<int>(spec.hourglass.upsampling));
  Value up = builder.create<UpsampleOp>(loc(uname), type, upKind, inner,
                                        residual, factor, upWeights, upHeads);
  x = builder.create<AddOp>(loc(prefix + "residual"), type, residual, up);
  return stack(x, prefix + "post.", levels[levels.size() - 1 - level].layers);
}

/// The absolute path of a data file named in the spec, "-" when unset.
std::string ForwardBuilder::dataPath(const std::string &path) const {
  if (path.empty())
    return "-";
  llvm::SmallString<256> absolute(spec.resolvePath(path));
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return absolute.str().str();
}

/// Whether the spec describes a classifier (else a language model).
bool ForwardBuilder::classifies() const {
  return spec.model.task == ::tfc::spec::Task::Classify;
}

/// The width of the logits: the vocabulary for a language model, the
/// classes for a classifier (one for a binary cross-entropy loss).
int64_t ForwardBuilder::outputCount() const {
  if (!classifies())
    return spec.model.vocab;
  return spec.model.loss == ::tfc::spec::ClassifyLoss::BinaryCrossEntropy
             ? 1
             : spec.model.classes;
}

/// The model's configuration (`tfc.config`), for the manifest the runtime
/// reads.
DictionaryAttr ForwardBuilder::configAttr() {
  bool classify = classifies();
  int64_t outputs = outputCount();
  int64_t layerCount =
      spec.hourglass.enabled ? spec.totalLayers() : spec.model.layers;
  return builder.getDictionaryAttr({
      builder.getNamedAttr("model", builder.getStringAttr(spec.model.name)),
      builder.getNamedAttr("task",
                           builder.getStringAttr(classify ? "classify" : "lm")),
      builder.getNamedAttr("vocab",
                           builder.getI64IntegerAttr(spec.model.vocab)),
      builder.getNamedAttr("classes", builder.getI64IntegerAttr(
                                          classify ? spec.model.classes : 0)),
      builder.getNamedAttr("outputs", builder.getI64IntegerAttr(outputs)),
      builder.getNamedAttr("batch", builder.getI64IntegerAttr(batch)),
      builder.getNamedAttr("seq_len", builder.getI64IntegerAttr(seqLen)),
      builder.getNamedAttr("d_model", builder.getI64IntegerAttr(width)),
      builder.getNamedAttr("layers", builder.getI64IntegerAttr(layerCount)),
      builder.getNamedAttr("heads",
                           builder.getI64IntegerAttr(spec.model.heads)),
      builder.getNamedAttr("min_freq",
                           builder.getI64IntegerAttr(spec.data.minFreq)),
      // Training-loop settings for the runtime (the optimizer itself is
      // generated from `tfc.training`).
      builder.getNamedAttr("lr", builder.getF64FloatAttr(spec.training.lr)),
      builder.getNamedAttr("train_steps",
                           builder.getI64IntegerAttr(spec.training.steps)),
      builder.getNamedAttr("warmup",
                           builder.getI64IntegerAttr(spec.training.warmup)),
      builder.getNamedAttr("eval_every",
                           builder.getI64IntegerAttr(spec.training.evalEvery)),
      builder.getNamedAttr(
          "eval_batches", builder.getI64IntegerAttr(spec.training.evalBatches)),
      builder.getNamedAttr(
          "checkpoint_every",
          builder.getI64IntegerAttr(spec.training.checkpointEvery)),
      builder.getNamedAttr("patience",
                           builder.getI64IntegerAttr(spec.training.patience)),
      builder.getNamedAttr(
          "seed",
          builder.getI64IntegerAttr(static_cast<int64_t>(spec.training.seed))),
      builder.getNamedAttr(
          "redraw",
          builder.getI64IntegerAttr(
              spec.attention.kind == ::tfc::spec::AttentionKind::Performer
                  ? spec.attention.redraw
                  : 0)),
      builder.getNamedAttr("data_train",
                           builder.getStringAttr(dataPath(spec.data.train))),
      builder.getNamedAttr("data_val",
                           builder.getStringAttr(dataPath(spec.data.val))),
      builder.getNamedAttr("data_test",
                           builder.getStringAttr(dataPath(spec.data.test))),
  });
}

/// The optimizer's settings (`tfc.training`), for tfc-build-optimizer.
DictionaryAttr ForwardBuilder::trainingAttr() {
  const auto &training = spec.training;
  return builder.getDictionaryAttr({
      builder.getNamedAttr(
          "optimizer",
          builder.getStringAttr(
              training.optimizer == ::tfc::spec::Optimizer::AdamW ? "adamw"
                                                                  : "adam")),
      builder.getNamedAttr("lr", builder.getF64FloatAttr(training.lr)),
      builder.getNamedAttr("beta1", builder.getF64FloatAttr(training.beta1)),
      builder.getNamedAttr("beta2", builder.getF64FloatAttr(training.beta2)),
      builder.getNamedAttr("eps", builder.getF64FloatAttr(training.eps)),
      builder.getNamedAttr("weight_decay",
                           builder.getF64FloatAttr(training.weightDecay)),
      builder.getNamedAttr(
          "schedule",
          builder.getStringAttr(::tfc::spec::toString(training.schedule))),
      builder.getNamedAttr("warmup",
                           builder.getI64IntegerAttr(training.warmup)),
      builder.getNamedAttr("steps", builder.getI64IntegerAttr(training.steps)),
      builder.getNamedAttr("clip", builder.getF64FloatAttr(training.clip)),
  });
}

/// Creates the empty `forward(tokens, targets, mask) -> (loss, logits)`
/// function, sets the insertion point to its body and `mask` to its mask
/// argument, and returns the body.
Block *ForwardBuilder::createForwardFunc() {
  auto ids = RankedTensorType::get({batch, seqLen}, builder.getI32Type());
  Type targets = classifies()
                     ? RankedTensorType::get({batch}, builder.getI32Type())
                     : Type(ids);
  int64_t outputs = outputCount();
  RankedTensorType logitsType = classifies()
                                    ? floatTensor({batch, outputs})
                                    : floatTensor({batch, seqLen, outputs});
  auto funcType =
      builder.getFunctionType({ids, targets, floatTensor({batch, seqLen})},
                              {floatTensor({}), logitsType});
  auto func = builder.create<func::FuncOp>(fileLoc, "forward", funcType);
  func.setArgAttr(0, "tfc.arg", builder.getStringAttr("tokens"));
  func.setArgAttr(1, "tfc.arg", builder.getStringAttr("targets"));
  func.setArgAttr(2, "tfc.arg", builder.getStringAttr("mask"));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  mask = body->getArgument(2);
  return body;
}

/// The embedded `tokens` (rows of `table`), with the spec's positions and
/// dropout applied.
Value ForwardBuilder::embed(Value table, Value tokens) {
  Value x = builder.create<EmbeddingOp>(
      loc("embed"), floatTensor({batch, seqLen, width}), table, tokens);
  switch (spec.model.positions) {
  case ::tfc::spec::Positions::None:
  case ::tfc::spec::Positions::Rotary:
    break;
  case ::tfc::spec::Positions::Sinusoidal:
    x = builder.create<SinusoidalPositionsOp>(loc("pos"), x.getType(), x);
    break;
  case ::tfc::spec::Positions::Learned: {
    Value positions = param("pos_embed.weight", {seqLen, width}, "normal:0.02");
    x = builder.create<LearnedPositionsOp>(loc("pos_embed"), x.getType(), x,
                                           positions);
    break;
  }
  }
  return dropout(x);
}

/// The classifier's head on the first (CLS) token of `x`: its logits and
/// loss against `targets`.
std::pair<Value, Value> ForwardBuilder::classifierHead(Value x, Value targets) {
  Value cls = builder.create<TakeTokenOp>(loc("cls"),
                                          floatTensor({batch, width}), x, 0);
  Value logits = linear(cls, "classifier", outputCount());
  auto kind = spec.model.loss == ::tfc::spec::ClassifyLoss::BinaryCrossEntropy
                  ? ClassifyLossKind::bce
                  : ClassifyLossKind::ce;
  Value loss = builder.create<ClassifyLossOp>(loc("loss"), floatTensor({}),
                                              kind, logits, targets);
  return {logits, loss};
}

/// The language model's head: the logits of every position of `x` (through
/// the embedding `table` when the spec ties them) and their cross-entropy
/// loss against `targets`.
std::pair<Value, Value> ForwardBuilder::languageModelHead(Value x, Value table,
                                                          Value targets) {
  int64_t outputs = outputCount();
  Value logits;
  if (spec.model.tieEmbeddings) {
    // Tied output projection: logits = x @ embed.weight^T. The embedding
    // table has the [vocab, d_model] layout of a linear weight.
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(x.getType()).getShape().drop_back());
    shape.push_back(outputs);
    logits = builder.create<LinearOp>(loc("lm_head"), floatTensor(shape), x,
                                      table, Value());
  } else {
    logits = linear(x, "lm_head", outputs, /*bias=*/false);
  }
  Value loss = builder.create<CrossEntropyOp>(loc("loss"), floatTensor({}),
                                              logits, targets);
  return {logits, loss};
}

OwningOpRef<ModuleOp> ForwardBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  (*module)->setAttr("tfc.config", configAttr());
  (*module)->setAttr("tfc.training", trainingAttr());
  Block *body = createForwardFunc();

  Value table = param("embed.weight", {spec.model.vocab, width}, "normal:0.02");
  Value x = embed(table, body->getArgument(0));
  if (spec.hourglass.enabled)
    x = hourglassLevel(x, "", 0);
  else
    x = stack(x, "layers.", spec.model.layers);
  x = layerNorm(x, "norm");

  auto [logits, loss] = classifies()
                            ? classifierHead(x, body->getArgument(1))
                            : languageModelHead(x, table, body->getArgument(1));
  builder.create<func::ReturnOp>(fileLoc, ValueRange{loss, logits});
  return module;
}

namespace tfc {
OwningOpRef<ModuleOp> buildForwardModule(MLIRContext &ctx,
                                         const spec::Spec &spec,
                                         const ImportOptions &opts) {
  ctx.getOrLoadDialect<TfcDialect>();
  ctx.getOrLoadDialect<func::FuncDialect>();
  ForwardBuilder builder(ctx, spec, opts);
  OwningOpRef<ModuleOp> module = builder.build();
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
} // namespace tfc
