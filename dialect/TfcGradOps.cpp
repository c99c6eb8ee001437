//===- TfcGradOps.cpp - Verifiers of the gradient operations --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "dialect/TfcDialect.h"

using namespace mlir;
using namespace mlir::tfc;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Checks that `value` (called `name`) has the type of `like`.
static LogicalResult sameType(Operation *op, Value value, StringRef name,
                              Value like, StringRef likeName) {
  if (value.getType() != like.getType())
    return op->emitOpError()
           << "'" << name << "' must have the type of '" << likeName << "' ("
           << like.getType() << "), got " << value.getType();
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  if (in.size() != 2 || out.size() != 2 || in[0] != out[1] || in[1] != out[0])
    return emitOpError() << "transposes a 2-D tensor: result must be the "
                            "input's shape reversed";
  return success();
}

LogicalResult OuterSumOp::verify() {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  ArrayRef<int64_t> out = shapeOf(getResult());
  if (lhs.empty() || lhs.size() != rhs.size() ||
      lhs.drop_back() != rhs.drop_back())
    return emitOpError() << "'lhs' and 'rhs' must share their leading "
                            "dimensions";
  if (out.size() != 2 || out[0] != lhs.back() || out[1] != rhs.back())
    return emitOpError() << "result must be [" << lhs.back() << ", "
                         << rhs.back() << "]";
  return success();
}

LogicalResult SumLeadingOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t count = getCount();
  if (count < 0 || count > static_cast<int64_t>(in.size()))
    return emitOpError() << "'count' must be in [0, " << in.size() << "]";
  if (shapeOf(getResult()) != in.drop_front(count))
    return emitOpError() << "result must drop the first " << count
                         << " dimensions of the input";
  return success();
}

LogicalResult ShiftLeftOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.size() != 3)
    return emitOpError() << "'input' must have rank 3";
  if (getAmount() >= static_cast<uint64_t>(in[1]))
    return emitOpError() << "'amount' must be in [0, " << in[1] << ")";
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  ArrayRef<int64_t> ids = shapeOf(getIds()), grad = shapeOf(getGrad());
  ArrayRef<int64_t> out = shapeOf(getResult());
  if (grad.size() != 3 || ids.size() != 2 || grad[0] != ids[0] ||
      grad[1] != ids[1])
    return emitOpError() << "'grad' must be [batch, seq, d] over 'ids'";
  if (out.size() != 2 || out[1] != grad[2])
    return emitOpError() << "result must be [vocab, " << grad[2] << "]";
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  if (failed(sameType(*this, getGrad(), "grad", getInput(), "input")) ||
      failed(
          sameType(*this, getInputGrad(), "input_grad", getInput(), "input")) ||
      failed(
          sameType(*this, getGammaGrad(), "gamma_grad", getGamma(), "gamma")) ||
      failed(sameType(*this, getBetaGrad(), "beta_grad", getGamma(), "gamma")))
    return failure();
  return success();
}

LogicalResult TakeTokenGradOp::verify() {
  ArrayRef<int64_t> grad = shapeOf(getGrad()), out = shapeOf(getResult());
  if (grad.size() != 2 || out.size() != 3 || out[0] != grad[0] ||
      out[2] != grad[1])
    return emitOpError() << "result must be [batch, seq, d] around 'grad'";
  if (getPosition() >= static_cast<uint64_t>(out[1]))
    return emitOpError() << "'position' must be in [0, " << out[1] << ")";
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  ArrayRef<int64_t> logits = shapeOf(getLogits());
  if (logits.size() != 3 || shapeOf(getTargets()) != logits.drop_back())
    return emitOpError() << "'targets' must be [batch, seq] of the logits";
  return sameType(*this, getResult(), "result", getLogits(), "logits");
}

LogicalResult ClassifyLossGradOp::verify() {
  ArrayRef<int64_t> logits = shapeOf(getLogits());
  if (logits.size() != 2 || shapeOf(getLabels()) != logits.take_front())
    return emitOpError() << "'labels' must be [batch] of the logits";
  return sameType(*this, getResult(), "result", getLogits(), "logits");
}

LogicalResult AttentionGradOp::verify() {
  if (failed(sameType(*this, getGrad(), "grad", getQuery(), "query")) ||
      failed(
          sameType(*this, getQueryGrad(), "query_grad", getQuery(), "query")) ||
      failed(sameType(*this, getKeyGrad(), "key_grad", getKey(), "key")) ||
      failed(
          sameType(*this, getValueGrad(), "value_grad", getValue(), "value")))
    return failure();
  size_t globals = getGlobalQuery() ? 3 : 0;
  if (getGlobalGrads().size() != globals)
    return emitOpError() << "expects " << globals
                         << " global projection gradients, got "
                         << getGlobalGrads().size();
  return success();
}

LogicalResult DepthwiseConvGradOp::verify() {
  if (failed(sameType(*this, getGrad(), "grad", getInput(), "input")) ||
      failed(
          sameType(*this, getInputGrad(), "input_grad", getInput(), "input")) ||
      failed(sameType(*this, getWeightGrad(), "weight_grad", getWeight(),
                      "weight")))
    return failure();
  ArrayRef<int64_t> weight = shapeOf(getWeight());
  if (weight.size() != 3 ||
      shapeOf(getBiasGrad()) != ArrayRef<int64_t>(weight).drop_front())
    return emitOpError() << "'bias_grad' must be [heads, head_dim]";
  return success();
}

/// Checks that each weight gradient has its weight's type.
static LogicalResult checkWeightGrads(Operation *op, ValueRange weights,
                                      ValueRange grads) {
  if (weights.size() != grads.size())
    return op->emitOpError() << "expects one gradient per weight";
  for (auto [weight, grad] : llvm::zip(weights, grads))
    if (weight.getType() != grad.getType())
      return op->emitOpError()
             << "weight gradient type " << grad.getType()
             << " differs from the weight's " << weight.getType();
  return success();
}

LogicalResult ShortenGradOp::verify() {
  if (failed(
          sameType(*this, getInputGrad(), "input_grad", getInput(), "input")))
    return failure();
  return checkWeightGrads(*this, getWeights(), getWeightGrads());
}

LogicalResult UpsampleGradOp::verify() {
  if (failed(
          sameType(*this, getInputGrad(), "input_grad", getInput(), "input")) ||
      failed(sameType(*this, getResidualGrad(), "residual_grad", getResidual(),
                      "residual")) ||
      failed(sameType(*this, getGrad(), "grad", getResidual(), "residual")))
    return failure();
  return checkWeightGrads(*this, getWeights(), getWeightGrads());
}
