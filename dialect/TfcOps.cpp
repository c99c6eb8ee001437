//===- TfcOps.cpp - Operations of the tfc dialect -------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Verifiers of the tfc operations. Every message names the operand or the
/// attribute at fault and the shape or value that was expected.
///
//===----------------------------------------------------------------------===//

#include "dialect/TfcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tfc;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Two extents agree when equal or when either is dynamic.
static bool sameExtent(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

static bool sameShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!sameExtent(x, y))
      return false;
  return true;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, extent] : llvm::enumerate(shape)) {
    if (i)
      text += ", ";
    text += ShapedType::isDynamic(extent) ? "?" : std::to_string(extent);
  }
  return text + "]";
}

/// Checks that `value`, called `name` in messages, has rank `rank`.
static LogicalResult checkRank(Operation *op, Value value, StringRef name,
                               int64_t rank) {
  if (tensorType(value).getRank() != rank)
    return op->emitOpError()
           << "'" << name << "' must have rank " << rank << ", got "
           << shapeString(tensorType(value).getShape());
  return success();
}

/// Checks that `value`, called `name` in messages, has shape `expected`.
static LogicalResult checkShape(Operation *op, Value value, StringRef name,
                                ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> actual = tensorType(value).getShape();
  if (!sameShape(actual, expected))
    return op->emitOpError()
           << "'" << name << "' must have shape " << shapeString(expected)
           << ", got " << shapeString(actual);
  return success();
}

/// Checks that all float operands and results share one element type.
static LogicalResult checkElementTypes(Operation *op) {
  Type element;
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types) {
    auto type = cast<RankedTensorType>(t);
    if (!isa<FloatType>(type.getElementType()))
      continue;
    if (!element)
      element = type.getElementType();
    else if (element != type.getElementType())
      return op->emitOpError()
             << "float operands and results must share one element type, got "
             << element << " and " << type.getElementType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getTensorName().empty())
    return emitOpError() << "'tensor_name' must not be empty";
  RankedTensorType type = getType();
  if (!type.hasStaticShape())
    return emitOpError() << "result must have a static shape";
  StringRef init = getInit();
  auto [scheme, rest] = init.split(':');
  double number;
  if (scheme == "zeros" || scheme == "ones") {
    if (!rest.empty())
      return emitOpError() << "'init' scheme '" << scheme
                           << "' takes no argument";
    return success();
  }
  if (scheme == "normal" || scheme == "uniform") {
    if (rest.getAsDouble(number) || number <= 0)
      return emitOpError() << "'init' must be '" << scheme
                           << ":<positive number>', got '" << init << "'";
    return success();
  }
  if (scheme == "features") {
    auto [rows, cols] = rest.split(':');
    int64_t m, d;
    if (rows.getAsInteger(10, m) || cols.getAsInteger(10, d))
      return emitOpError() << "'init' must be 'features:<rows>:<cols>', got '"
                           << init << "'";
    if (getKind() != ParamKind::buffer)
      return emitOpError() << "'init' features is only valid for a buffer";
    if (!sameShape(type.getShape(), {m, d}))
      return emitOpError() << "'init' " << init << " needs shape "
                           << shapeString({m, d}) << ", got "
                           << shapeString(type.getShape());
    return success();
  }
  return emitOpError() << "'init' must be one of zeros, ones, normal:<std>, "
                          "uniform:<a>, features:<rows>:<cols>; got '"
                       << init << "'";
}

//===----------------------------------------------------------------------===//
// Embeddings and positions
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  if (failed(checkRank(*this, getTable(), "table", 2)) ||
      failed(checkRank(*this, getIds(), "ids", 2)))
    return failure();
  ArrayRef<int64_t> ids = getIds().getType().getShape();
  int64_t width = getTable().getType().getDimSize(1);
  if (failed(checkShape(*this, getResult(), "result", {ids[0], ids[1], width})))
    return failure();
  return checkElementTypes(*this);
}

LogicalResult SinusoidalPositionsOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)))
    return failure();
  int64_t width = getInput().getType().getDimSize(2);
  if (!ShapedType::isDynamic(width) && width % 2 != 0)
    return emitOpError() << "'input' width must be even, got " << width;
  return success();
}

LogicalResult LearnedPositionsOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)) ||
      failed(checkRank(*this, getTable(), "table", 2)))
    return failure();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> table = getTable().getType().getShape();
  if (!sameExtent(table[1], input[2]))
    return emitOpError() << "'table' width " << table[1]
                         << " must equal the input width " << input[2];
  if (!ShapedType::isDynamic(table[0]) && !ShapedType::isDynamic(input[1]) &&
      table[0] < input[1])
    return emitOpError() << "'table' has " << table[0]
                         << " positions, fewer than the sequence length "
                         << input[1];
  return checkElementTypes(*this);
}

LogicalResult RotaryOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)))
    return failure();
  int64_t width = getInput().getType().getDimSize(2);
  int64_t heads = getHeads();
  if (heads <= 0 || width % heads != 0)
    return emitOpError() << "'heads' (" << heads
                         << ") must be positive and divide the width " << width;
  if ((width / heads) % 2 != 0)
    return emitOpError() << "head width " << width / heads
                         << " must be even for rotary positions";
  if (getBase().convertToDouble() <= 1.0)
    return emitOpError() << "'base' must be greater than 1";
  return success();
}

//===----------------------------------------------------------------------===//
// Dense layers, norms, activations
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  if (failed(checkRank(*this, getWeight(), "weight", 2)))
    return failure();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  if (input.empty())
    return emitOpError() << "'input' must have rank >= 1";
  int64_t out = getWeight().getType().getDimSize(0);
  int64_t in = getWeight().getType().getDimSize(1);
  if (!sameExtent(input.back(), in))
    return emitOpError() << "'weight' is [out, in] = " << shapeString({out, in})
                         << " but the input's last dimension is "
                         << input.back();
  if (getBias() && failed(checkShape(*this, getBias(), "bias", {out})))
    return failure();
  SmallVector<int64_t> expected(input.drop_back());
  expected.push_back(out);
  if (failed(checkShape(*this, getResult(), "result", expected)))
    return failure();
  return checkElementTypes(*this);
}

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  if (input.empty())
    return emitOpError() << "'input' must have rank >= 1";
  if (failed(checkShape(*this, getGamma(), "gamma", {input.back()})))
    return failure();
  if (getEps().convertToDouble() <= 0)
    return emitOpError() << "'eps' must be positive";
  return checkElementTypes(*this);
}

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "'rate' must be in [0, 1), got " << rate;
  return success();
}

//===----------------------------------------------------------------------===//
// Attention and the depth-wise convolution
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  if (failed(checkRank(*this, getQuery(), "query", 3)) ||
      failed(checkRank(*this, getKey(), "key", 3)) ||
      failed(checkRank(*this, getValue(), "value", 3)))
    return failure();
  ArrayRef<int64_t> query = getQuery().getType().getShape();
  ArrayRef<int64_t> key = getKey().getType().getShape();
  int64_t batch = query[0], queries = query[1], width = query[2];
  int64_t keys = key[1];
  if (failed(checkShape(*this, getKey(), "key", {batch, keys, width})) ||
      failed(checkShape(*this, getValue(), "value", {batch, keys, width})) ||
      failed(checkShape(*this, getResult(), "result", query)))
    return failure();
  int64_t heads = getHeads();
  if (heads <= 0 || width % heads != 0)
    return emitOpError() << "'heads' (" << heads
                         << ") must be positive and divide the width " << width;
  if (getMask() && failed(checkShape(*this, getMask(), "mask", {batch, keys})))
    return failure();

  Attribute kind = getKind();
  auto performer = dyn_cast<PerformerAttr>(kind);
  auto longformer = dyn_cast<LongformerAttr>(kind);
  auto softmax = dyn_cast<SoftmaxAttr>(kind);
  bool causal = (softmax && softmax.getCausal()) ||
                (performer && performer.getCausal()) ||
                (longformer && longformer.getCausal());
  if (causal && !sameExtent(queries, keys))
    return emitOpError() << "causal attention needs as many queries as keys, "
                         << "got " << queries << " and " << keys;

  if (performer) {
    if (!getFeatures())
      return emitOpError() << "'features' operand is required by "
                              "#tfc.performer";
    if (failed(checkShape(*this, getFeatures(), "features",
                          {performer.getFeatures(), width / heads})))
      return failure();
  } else if (getFeatures()) {
    return emitOpError() << "'features' operand is only valid with "
                            "#tfc.performer";
  }

  bool hasGlobal = getGlobalQuery() != nullptr;
  if (longformer) {
    if (!sameExtent(queries, keys))
      return emitOpError() << "#tfc.longformer needs as many queries as keys";
    if (!ShapedType::isDynamic(keys) && longformer.getWindow() > keys)
      return emitOpError() << "#tfc.longformer 'window' "
                           << longformer.getWindow()
                           << " is larger than the sequence length " << keys;
    for (int64_t position : longformer.getGlobalTokens())
      if (!ShapedType::isDynamic(keys) && position >= keys)
        return emitOpError() << "#tfc.longformer 'global' position " << position
                             << " is outside the sequence of " << keys;
    bool wantsGlobal = !longformer.getGlobalTokens().empty();
    if (wantsGlobal != hasGlobal)
      return emitOpError() << (wantsGlobal
                                   ? "'global' projections are required by "
                                     "#tfc.longformer with global tokens"
                                   : "'global' projections given but "
                                     "#tfc.longformer has no global tokens");
    if (hasGlobal &&
        (failed(checkShape(*this, getGlobalQuery(), "global_query", query)) ||
         failed(checkShape(*this, getGlobalKey(), "global_key", key)) ||
         failed(checkShape(*this, getGlobalValue(), "global_value", key))))
      return failure();
  } else if (hasGlobal || getGlobalKey() || getGlobalValue()) {
    return emitOpError() << "'global' projections are only valid with "
                            "#tfc.longformer";
  }
  return checkElementTypes(*this);
}

LogicalResult DepthwiseConvOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)) ||
      failed(checkRank(*this, getWeight(), "weight", 3)))
    return failure();
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  int64_t width = getInput().getType().getDimSize(2);
  if (!ShapedType::isDynamic(width) && weight[1] * weight[2] != width)
    return emitOpError() << "'weight' is [kernel, heads, head_dim] = "
                         << shapeString(weight)
                         << " but heads * head_dim must equal the width "
                         << width;
  if (weight[0] <= 0)
    return emitOpError() << "'weight' kernel size must be positive";
  if (getBias() &&
      failed(checkShape(*this, getBias(), "bias", {weight[1], weight[2]})))
    return failure();
  return checkElementTypes(*this);
}

//===----------------------------------------------------------------------===//
// Hourglass resampling
//===----------------------------------------------------------------------===//

LogicalResult ShiftRightOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)))
    return failure();
  int64_t seq = getInput().getType().getDimSize(1);
  int64_t amount = getAmount();
  if (amount < 0 || (!ShapedType::isDynamic(seq) && amount >= seq))
    return emitOpError() << "'amount' must be in [0, " << seq << "), got "
                         << amount;
  return success();
}

/// Checks the weights of a resampling op of `kind` (`linear` or
/// `attention`): `shapes` lists the expected weight shapes.
static LogicalResult checkResampleWeights(Operation *op, ValueRange weights,
                                          ArrayRef<SmallVector<int64_t>> shapes,
                                          StringRef kind) {
  if (weights.size() != shapes.size())
    return op->emitOpError() << "kind '" << kind << "' takes " << shapes.size()
                             << " weights, got " << weights.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(weights, shapes))) {
    auto [weight, shape] = pair;
    std::string name = "weights #" + std::to_string(i);
    if (failed(checkShape(op, weight, name, shape)))
      return failure();
  }
  return success();
}

static LogicalResult checkHeads(Operation *op, std::optional<uint64_t> heads,
                                int64_t width, bool required) {
  if (!required) {
    if (heads)
      return op->emitOpError() << "'heads' is only valid with kind attention";
    return success();
  }
  if (!heads)
    return op->emitOpError() << "'heads' is required with kind attention";
  if (*heads == 0 || width % static_cast<int64_t>(*heads) != 0)
    return op->emitOpError()
           << "'heads' (" << *heads
           << ") must be positive and divide the width " << width;
  return success();
}

LogicalResult ShortenOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)))
    return failure();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  int64_t factor = getFactor();
  if (factor <= 0)
    return emitOpError() << "'factor' must be positive, got " << factor;
  if (!ShapedType::isDynamic(input[1]) && input[1] % factor != 0)
    return emitOpError() << "sequence length " << input[1]
                         << " is not divisible by 'factor' " << factor;
  int64_t width = input[2];
  int64_t shortened =
      ShapedType::isDynamic(input[1]) ? input[1] : input[1] / factor;
  if (failed(checkShape(*this, getResult(), "result",
                        {input[0], shortened, width})))
    return failure();
  std::optional<uint64_t> heads = getHeads();
  switch (getKind()) {
  case ShortenKind::avg:
    if (failed(checkResampleWeights(*this, getWeights(), {}, "avg")))
      return failure();
    break;
  case ShortenKind::linear:
    if (failed(checkResampleWeights(
            *this, getWeights(), {{width, factor * width}, {width}}, "linear")))
      return failure();
    break;
  case ShortenKind::attention:
    if (failed(checkResampleWeights(
            *this, getWeights(),
            {{width, width}, {width, width}, {width, width}, {width, width}},
            "attention")))
      return failure();
    break;
  }
  if (failed(
          checkHeads(*this, heads, width, getKind() == ShortenKind::attention)))
    return failure();
  return checkElementTypes(*this);
}

LogicalResult UpsampleOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)) ||
      failed(checkRank(*this, getResidual(), "residual", 3)))
    return failure();
  ArrayRef<int64_t> residual = getResidual().getType().getShape();
  int64_t factor = getFactor();
  if (factor <= 0)
    return emitOpError() << "'factor' must be positive, got " << factor;
  if (!ShapedType::isDynamic(residual[1]) && residual[1] % factor != 0)
    return emitOpError() << "residual length " << residual[1]
                         << " is not divisible by 'factor' " << factor;
  int64_t width = residual[2];
  int64_t shortened =
      ShapedType::isDynamic(residual[1]) ? residual[1] : residual[1] / factor;
  if (failed(checkShape(*this, getInput(), "input",
                        {residual[0], shortened, width})) ||
      failed(checkShape(*this, getResult(), "result", residual)))
    return failure();
  switch (getKind()) {
  case UpsampleKind::naive:
    if (failed(checkResampleWeights(*this, getWeights(), {}, "naive")))
      return failure();
    break;
  case UpsampleKind::linear:
    if (failed(checkResampleWeights(*this, getWeights(),
                                    {{factor * width, width}, {factor * width}},
                                    "linear")))
      return failure();
    break;
  case UpsampleKind::attention:
    if (failed(checkResampleWeights(
            *this, getWeights(),
            {{width, width}, {width, width}, {width, width}, {width, width}},
            "attention")))
      return failure();
    break;
  }
  if (failed(checkHeads(*this, getHeads(), width,
                        getKind() == UpsampleKind::attention)))
    return failure();
  return checkElementTypes(*this);
}

//===----------------------------------------------------------------------===//
// Heads and losses
//===----------------------------------------------------------------------===//

LogicalResult TakeTokenOp::verify() {
  if (failed(checkRank(*this, getInput(), "input", 3)))
    return failure();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  int64_t position = getPosition();
  if (position < 0 ||
      (!ShapedType::isDynamic(input[1]) && position >= input[1]))
    return emitOpError() << "'position' must be in [0, " << input[1]
                         << "), got " << position;
  if (failed(checkShape(*this, getResult(), "result", {input[0], input[2]})))
    return failure();
  return checkElementTypes(*this);
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(checkRank(*this, getLogits(), "logits", 3)))
    return failure();
  ArrayRef<int64_t> logits = getLogits().getType().getShape();
  if (failed(
          checkShape(*this, getTargets(), "targets", {logits[0], logits[1]})))
    return failure();
  return checkElementTypes(*this);
}

LogicalResult ClassifyLossOp::verify() {
  if (failed(checkRank(*this, getLogits(), "logits", 2)))
    return failure();
  ArrayRef<int64_t> logits = getLogits().getType().getShape();
  if (failed(checkShape(*this, getLabels(), "labels", {logits[0]})))
    return failure();
  if (getKind() == ClassifyLossKind::bce && !sameExtent(logits[1], 1))
    return emitOpError() << "'logits' must be [batch, 1] for bce, got "
                         << shapeString(logits);
  if (getKind() == ClassifyLossKind::ce && !ShapedType::isDynamic(logits[1]) &&
      logits[1] < 2)
    return emitOpError() << "'logits' must have at least 2 classes for ce, got "
                         << shapeString(logits);
  return checkElementTypes(*this);
}

#define GET_OP_CLASSES
#include "dialect/TfcOps.cpp.inc"
