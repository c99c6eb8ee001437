//===- TfcVJP.cpp - Vector-Jacobian products of the tfc operations --------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The VJPOpInterface of every differentiable tfc operation. Each builds the
/// gradients of its operands from the gradient of its result out of tfc
/// operations (the forward ops themselves where the math allows, and the
/// `*_grad` ops otherwise); tfc-autodiff chains them in reverse.
///
//===----------------------------------------------------------------------===//

#include "dialect/TfcDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tfc;

/// Appends `count` null gradients (non-differentiable operands).
static void appendNone(SmallVectorImpl<Value> &grads, unsigned count) {
  grads.append(count, Value());
}

/// Common prologue: a result nobody uses gives no gradient to any operand.
static bool noGradient(Operation *op, ValueRange resultGrads,
                       SmallVectorImpl<Value> &operandGrads) {
  if (resultGrads.empty() || !resultGrads[0]) {
    appendNone(operandGrads, op->getNumOperands());
    return true;
  }
  return false;
}

LogicalResult EmbeddingOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  Value table = b.create<EmbeddingGradOp>(getLoc(), getTable().getType(),
                                          getIds(), resultGrads[0]);
  operandGrads.push_back(table);
  operandGrads.push_back(Value());
  return success();
}

LogicalResult
SinusoidalPositionsOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.push_back(resultGrads[0]);
  return success();
}

LogicalResult
LearnedPositionsOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                             SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  RankedTensorType table = getTable().getType();
  if (table.getDimSize(0) != getInput().getType().getDimSize(1))
    return emitOpError() << "gradient needs a table of exactly as many "
                            "positions as the sequence";
  operandGrads.push_back(resultGrads[0]);
  operandGrads.push_back(
      b.create<SumLeadingOp>(getLoc(), table, resultGrads[0], 1));
  return success();
}

LogicalResult RotaryOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  // A rotation's transpose is the rotation by the opposite angle.
  auto inverse = b.create<RotaryOp>(
      getLoc(), getType(), resultGrads[0], getHeadsAttr(), getBaseAttr(),
      getInverse() ? UnitAttr() : b.getUnitAttr());
  operandGrads.push_back(inverse);
  return success();
}

LogicalResult LinearOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  Location loc = getLoc();
  Value grad = resultGrads[0];
  RankedTensorType weight = getWeight().getType();
  auto transposedType = RankedTensorType::get(
      {weight.getDimSize(1), weight.getDimSize(0)}, weight.getElementType());
  Value transposed = b.create<TransposeOp>(loc, transposedType, getWeight());
  // dx = dy W: a linear layer with the transposed weight.
  operandGrads.push_back(
      b.create<LinearOp>(loc, getInput().getType(), grad, transposed, Value()));
  operandGrads.push_back(b.create<OuterSumOp>(loc, weight, grad, getInput()));
  if (getBias()) {
    int64_t leading = getResult().getType().getRank() - 1;
    operandGrads.push_back(
        b.create<SumLeadingOp>(loc, getBias().getType(), grad, leading));
  }
  return success();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  auto grad = b.create<LayerNormGradOp>(
      getLoc(), getInput().getType(), getGamma().getType(), getBeta().getType(),
      getInput(), getGamma(), resultGrads[0], getEpsAttr());
  operandGrads.append(
      {grad.getInputGrad(), grad.getGammaGrad(), grad.getBetaGrad()});
  return success();
}

LogicalResult ActivationOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.push_back(b.create<ActivationGradOp>(
      getLoc(), getType(), getKindAttr(), getInput(), resultGrads[0]));
  return success();
}

LogicalResult DropoutOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  if (!getSeed())
    return emitOpError() << "needs a seed to be differentiated";
  // The same mask and scale apply to the gradient.
  operandGrads.push_back(b.create<DropoutOp>(getLoc(), getType(),
                                             resultGrads[0], getRateAttr(),
                                             getSeed(), getStreamAttr()));
  operandGrads.push_back(Value());
  return success();
}

LogicalResult AddOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.append({resultGrads[0], resultGrads[0]});
  return success();
}

LogicalResult AttentionOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  SmallVector<Type> types = {getQuery().getType(), getKey().getType(),
                             getValue().getType()};
  if (getGlobalQuery())
    types.append({getGlobalQuery().getType(), getGlobalKey().getType(),
                  getGlobalValue().getType()});
  auto grad = b.create<AttentionGradOp>(
      getLoc(), types, getKindAttr(), getHeadsAttr(), getQuery(), getKey(),
      getValue(), getMask(), getFeatures(), getGlobalQuery(), getGlobalKey(),
      getGlobalValue(), resultGrads[0]);
  operandGrads.append(
      {grad.getQueryGrad(), grad.getKeyGrad(), grad.getValueGrad()});
  if (getMask())
    operandGrads.push_back(Value());
  if (getFeatures())
    operandGrads.push_back(Value());
  if (getGlobalQuery())
    operandGrads.append(grad.getGlobalGrads().begin(),
                        grad.getGlobalGrads().end());
  return success();
}

LogicalResult DepthwiseConvOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  auto biasType = RankedTensorType::get({weight[1], weight[2]},
                                        getWeight().getType().getElementType());
  auto grad = b.create<DepthwiseConvGradOp>(
      getLoc(), getInput().getType(), getWeight().getType(), biasType,
      getInput(), getWeight(), resultGrads[0]);
  operandGrads.append({grad.getInputGrad(), grad.getWeightGrad()});
  if (getBias())
    operandGrads.push_back(grad.getBiasGrad());
  return success();
}

LogicalResult ShiftRightOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.push_back(
      b.create<ShiftLeftOp>(getLoc(), getType(), resultGrads[0], getAmount()));
  return success();
}

LogicalResult ShortenOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  SmallVector<Type> types = {getInput().getType()};
  for (Value weight : getWeights())
    types.push_back(weight.getType());
  auto grad = b.create<ShortenGradOp>(getLoc(), types, getKindAttr(),
                                      getInput(), getFactorAttr(), getWeights(),
                                      resultGrads[0], getHeadsAttr());
  operandGrads.push_back(grad.getInputGrad());
  operandGrads.append(grad.getWeightGrads().begin(),
                      grad.getWeightGrads().end());
  return success();
}

LogicalResult UpsampleOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                   SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  SmallVector<Type> types = {getInput().getType(), getResidual().getType()};
  for (Value weight : getWeights())
    types.push_back(weight.getType());
  auto grad = b.create<UpsampleGradOp>(
      getLoc(), types, getKindAttr(), getInput(), getResidual(),
      getFactorAttr(), getWeights(), resultGrads[0], getHeadsAttr());
  operandGrads.append({grad.getInputGrad(), grad.getResidualGrad()});
  operandGrads.append(grad.getWeightGrads().begin(),
                      grad.getWeightGrads().end());
  return success();
}

LogicalResult TakeTokenOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.push_back(b.create<TakeTokenGradOp>(
      getLoc(), getInput().getType(), resultGrads[0], getPositionAttr()));
  return success();
}

LogicalResult TakeTokenGradOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.push_back(b.create<TakeTokenOp>(
      getLoc(), getGrad().getType(), resultGrads[0], getPositionAttr()));
  return success();
}

LogicalResult CrossEntropyOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.push_back(
      b.create<CrossEntropyGradOp>(getLoc(), getLogits().getType(), getLogits(),
                                   getTargets(), resultGrads[0]));
  operandGrads.push_back(Value());
  return success();
}

LogicalResult ClassifyLossOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  if (noGradient(*this, resultGrads, operandGrads))
    return success();
  operandGrads.push_back(b.create<ClassifyLossGradOp>(
      getLoc(), getLogits().getType(), getKindAttr(), getLogits(), getLabels(),
      resultGrads[0]));
  operandGrads.push_back(Value());
  return success();
}
