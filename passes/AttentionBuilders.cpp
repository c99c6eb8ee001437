//===- AttentionBuilders.cpp - Building blocks of attention ---------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The building blocks declared in AttentionBuilders.h: the lowering of
/// `tfc.attention` (conversion/TfcToLinalg/LowerAttention.cpp) builds each
/// attention kind from them, its gradient (LowerAttentionGrad.cpp)
/// recomputes the forward's quantities with them, and tfc-blocked-attention
/// builds its blocks with them.
///
//===----------------------------------------------------------------------===//

#include "passes/AttentionBuilders.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::attention;

//===----------------------------------------------------------------------===//
// Generic builders
//===----------------------------------------------------------------------===//

AffineMap attention::loopDims(OpBuilder &b, unsigned numDims,
                              ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim : dims)
    exprs.push_back(b.getAffineDimExpr(dim));
  return AffineMap::get(numDims, 0, exprs, b.getContext());
}

Value attention::buildGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, Value init,
    ArrayRef<AffineMap> inputMaps, AffineMap outputMap,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned numDims = outputMap.getNumDims();
  SmallVector<utils::IteratorType> iterators(numDims,
                                             utils::IteratorType::reduction);
  for (AffineExpr expr : outputMap.getResults())
    iterators[cast<AffineDimExpr>(expr).getPosition()] =
        utils::IteratorType::parallel;
  SmallVector<AffineMap> maps(inputMaps.begin(), inputMaps.end());
  maps.push_back(outputMap);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value attention::multiplyAdd(OpBuilder &b, Location loc, Value acc, Value x,
                             Value y) {
  Value product = b.create<arith::MulFOp>(loc, x, y);
  return b.create<arith::AddFOp>(loc, acc, product);
}

Value attention::accumulateProducts(OpBuilder &b, Location loc,
                                    ValueRange inputs, Value init,
                                    ArrayRef<AffineMap> inputMaps,
                                    AffineMap outputMap) {
  return buildGeneric(b, loc, inputs, init, inputMaps, outputMap,
                      [](OpBuilder &nb, Location nloc, ValueRange args) {
                        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
                      });
}

Value attention::ratioOrZero(OpBuilder &b, Location loc, Value num, Value den) {
  Value zero = floatConstant(b, loc, den.getType(), 0.0);
  Value positive =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, den, zero);
  Value ratio = b.create<arith::DivFOp>(loc, num, den);
  return b.create<arith::SelectOp>(loc, positive, ratio, zero);
}

Value attention::keepRealKeys(OpBuilder &b, Location loc, Value allowed,
                              Value keyMask) {
  Value zero = floatConstant(b, loc, keyMask.getType(), 0.0);
  Value realKey =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, keyMask, zero);
  return conjunction(b, loc, allowed, realKey);
}

Value attention::maskedScore(OpBuilder &b, Location loc, Value allowed,
                             Value scaled) {
  if (!allowed)
    return scaled;
  return b.create<arith::SelectOp>(loc, allowed, scaled,
                                   negativeInfinity(b, loc, scaled.getType()));
}

Value attention::negativeInfinity(OpBuilder &b, Location loc, Type element) {
  return floatConstant(b, loc, element,
                       -std::numeric_limits<double>::infinity());
}

Value attention::conjunction(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (!lhs)
    return rhs;
  if (!rhs)
    return lhs;
  return b.create<arith::AndIOp>(loc, lhs, rhs);
}

//===----------------------------------------------------------------------===//
// Heads
//===----------------------------------------------------------------------===//

Value attention::splitHeads(OpBuilder &b, Location loc, Value x,
                            int64_t heads) {
  ArrayRef<int64_t> shape = shapeOf(x);
  auto type = RankedTensorType::get(
      {shape[0], shape[1], heads, shape[2] / heads}, elementOf(x));
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  return b.create<tensor::ExpandShapeOp>(loc, type, x, groups);
}

Value attention::mergeHeads(OpBuilder &b, Location loc, Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  auto type = RankedTensorType::get({shape[0], shape[1], shape[2] * shape[3]},
                                    elementOf(x));
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  return b.create<tensor::CollapseShapeOp>(loc, type, x, groups);
}

//===----------------------------------------------------------------------===//
// Rows
//===----------------------------------------------------------------------===//

namespace {
/// The offsets, sizes and strides of the slice of `shape` that takes
/// `size` elements from `offset` along `dim` and all of every other
/// dimension.
struct DimSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

DimSlice dimSlice(OpBuilder &b, ArrayRef<int64_t> shape, unsigned dim,
                  OpFoldResult offset, int64_t size) {
  DimSlice slice;
  for (auto [d, extent] : llvm::enumerate(shape)) {
    slice.offsets.push_back(d == dim ? offset : b.getIndexAttr(0));
    slice.sizes.push_back(b.getIndexAttr(d == dim ? size : extent));
    slice.strides.push_back(b.getIndexAttr(1));
  }
  return slice;
}
} // namespace

Value attention::sliceDim(OpBuilder &b, Location loc, Value x, unsigned dim,
                          OpFoldResult offset, int64_t size) {
  DimSlice slice = dimSlice(b, shapeOf(x), dim, offset, size);
  return b.create<tensor::ExtractSliceOp>(loc, x, slice.offsets, slice.sizes,
                                          slice.strides);
}

Value attention::insertDim(OpBuilder &b, Location loc, Value block, Value dest,
                           unsigned dim, OpFoldResult offset) {
  ArrayRef<int64_t> shape = shapeOf(block);
  DimSlice slice = dimSlice(b, shape, dim, offset, shape[dim]);
  return b.create<tensor::InsertSliceOp>(loc, block, dest, slice.offsets,
                                         slice.sizes, slice.strides);
}

Value attention::extractRow(OpBuilder &b, Location loc, Value x,
                            OpFoldResult position) {
  return sliceDim(b, loc, x, 1, position, 1);
}

Value attention::insertRow(OpBuilder &b, Location loc, Value row, Value dest,
                           OpFoldResult position) {
  return insertDim(b, loc, row, dest, 1, position);
}

Value attention::padPositions(OpBuilder &b, Location loc, Value x,
                              int64_t length, double padding) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape[1] = length;
  return insertDim(b, loc, x,
                   filledTensor(b, loc, shape, elementOf(x), padding), 1,
                   b.getIndexAttr(0));
}

Value attention::leadingPositions(OpBuilder &b, Location loc, Value x,
                                  int64_t length) {
  return sliceDim(b, loc, x, 1, b.getIndexAttr(0), length);
}

//===----------------------------------------------------------------------===//
// Softmax attention over a structured mask
//===----------------------------------------------------------------------===//

Value attention::dotScores(OpBuilder &b, Location loc, Value q, Value k) {
  ArrayRef<int64_t> qShape = shapeOf(q), kShape = shapeOf(k);
  Type element = elementOf(q);
  Value init = filledTensor(
      b, loc, {qShape[0], qShape[2], qShape[1], kShape[1]}, element, 0.0);
  // Loops (b, h, i, j, e); e is reduced.
  return accumulateProducts(
      b, loc, ValueRange{q, k}, init,
      {loopDims(b, 5, {0, 2, 1, 4}), loopDims(b, 5, {0, 3, 1, 4})},
      loopDims(b, 5, {0, 1, 2, 3}));
}

Value attention::maskScores(OpBuilder &b, Location loc, Value scores,
                            double scale, Value mask, Value globalColumns,
                            int64_t rowOffset, PairFilter filter) {
  Type element = elementOf(scores);
  SmallVector<Value> inputs = {scores};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(4)};
  if (mask) {
    inputs.push_back(mask);
    maps.push_back(loopDims(b, 4, {0, 3}));
  }
  if (globalColumns) {
    inputs.push_back(globalColumns);
    maps.push_back(loopDims(b, 4, {3}));
  }
  return elementwise(
      b, loc, shapeOf(scores), element, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value scaled = nb.create<arith::MulFOp>(
            nloc, args[0], floatConstant(nb, nloc, element, scale));
        Value i = nb.create<linalg::IndexOp>(nloc, 2);
        if (rowOffset != 0)
          i = nb.create<arith::AddIOp>(nloc, i,
                                       indexConstant(nb, nloc, rowOffset));
        Value j = nb.create<linalg::IndexOp>(nloc, 3);
        Value allowed = filter(
            nb, nloc, i, j, globalColumns ? args[inputs.size() - 1] : Value());
        if (mask)
          allowed = keepRealKeys(nb, nloc, allowed, args[1]);
        return maskedScore(nb, nloc, allowed, scaled);
      },
      maps);
}

Value attention::softmaxRows(OpBuilder &b, Location loc, Value scores) {
  Type element = elementOf(scores);
  AffineMap rowMap = loopDims(b, 4, {0, 1, 2});
  Value rowMax = rowMaxima(b, loc, scores);
  Value exps = elementwise(
      b, loc, shapeOf(scores), element, ValueRange{scores, rowMax},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value emptyRow =
            nb.create<arith::CmpFOp>(nloc, arith::CmpFPredicate::OEQ, args[1],
                                     negativeInfinity(nb, nloc, element));
        Value shift = nb.create<arith::SelectOp>(
            nloc, emptyRow, floatConstant(nb, nloc, element, 0.0), args[1]);
        Value centred = nb.create<arith::SubFOp>(nloc, args[0], shift);
        return nb.create<math::ExpOp>(nloc, centred);
      },
      {b.getMultiDimIdentityMap(4), rowMap});
  Value rowSum = sumLastDim(b, loc, exps);
  return elementwise(
      b, loc, shapeOf(scores), element, ValueRange{exps, rowSum},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return ratioOrZero(nb, nloc, args[0], args[1]);
      },
      {b.getMultiDimIdentityMap(4), rowMap});
}

Value attention::weightValues(OpBuilder &b, Location loc, Value probs, Value v,
                              Value init) {
  ArrayRef<int64_t> pShape = shapeOf(probs), vShape = shapeOf(v);
  if (!init)
    init = filledTensor(b, loc, {pShape[0], pShape[2], pShape[1], vShape[3]},
                        elementOf(v), 0.0);
  // Loops (b, i, h, e, j); j is reduced.
  return accumulateProducts(
      b, loc, ValueRange{probs, v}, init,
      {loopDims(b, 5, {0, 2, 1, 4}), loopDims(b, 5, {0, 4, 2, 3})},
      loopDims(b, 5, {0, 1, 2, 3}));
}

Value attention::weightQueries(OpBuilder &b, Location loc, Value weights,
                               Value x, Value init) {
  ArrayRef<int64_t> wShape = shapeOf(weights), xShape = shapeOf(x);
  if (!init)
    init = filledTensor(b, loc, {wShape[0], wShape[3], wShape[1], xShape[3]},
                        elementOf(x), 0.0);
  // Loops (b, j, h, e, i); i is reduced.
  return accumulateProducts(
      b, loc, ValueRange{weights, x}, init,
      {loopDims(b, 5, {0, 2, 4, 1}), loopDims(b, 5, {0, 4, 2, 3})},
      loopDims(b, 5, {0, 1, 2, 3}));
}

double attention::scoreScale(Value q) {
  return 1.0 / std::sqrt(static_cast<double>(shapeOf(q)[3]));
}

Value attention::maskedSoftmaxAttention(OpBuilder &b, Location loc, Value q,
                                        Value k, Value v, Value mask,
                                        Value globalColumns, int64_t rowOffset,
                                        PairFilter filter) {
  double scale = scoreScale(q);
  Value scores = dotScores(b, loc, q, k);
  scores =
      maskScores(b, loc, scores, scale, mask, globalColumns, rowOffset, filter);
  Value probs = softmaxRows(b, loc, scores);
  return weightValues(b, loc, probs, v);
}

Value attention::causalFilter(OpBuilder &b, Location loc, bool causal, Value i,
                              Value j) {
  if (!causal)
    return Value();
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, j, i);
}

//===----------------------------------------------------------------------===//
// #tfc.longformer
//===----------------------------------------------------------------------===//

Value attention::slidingWindow(OpBuilder &b, Location loc, LongformerAttr kind,
                               Value i, Value j) {
  int64_t window = kind.getWindow(), dilation = kind.getDilation();
  // Positions are `index` or a narrower integer (which vectorises better).
  auto constant = [&](int64_t value) -> Value {
    return b.create<arith::ConstantOp>(loc,
                                       b.getIntegerAttr(i.getType(), value));
  };
  Value zero = constant(0);
  if (kind.getCausal()) {
    Value back = b.create<arith::SubIOp>(loc, i, j);
    Value notFuture =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, back, zero);
    Value inWindow = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                             back, constant(window * dilation));
    Value band = b.create<arith::AndIOp>(loc, notFuture, inWindow);
    if (dilation == 1)
      return band;
    Value phase = b.create<arith::RemSIOp>(loc, back, constant(dilation));
    Value onGrid =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, phase, zero);
    return b.create<arith::AndIOp>(loc, band, onGrid);
  }
  int64_t reach = (window / 2) * dilation;
  Value offset = b.create<arith::SubIOp>(loc, j, i);
  Value above = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, offset,
                                        constant(-reach));
  Value below = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, offset,
                                        constant(reach));
  Value band = b.create<arith::AndIOp>(loc, above, below);
  if (dilation == 1)
    return band;
  Value phase = b.create<arith::RemSIOp>(loc, offset, constant(dilation));
  Value onGrid =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, phase, zero);
  return b.create<arith::AndIOp>(loc, band, onGrid);
}

Value attention::positionFlags(OpBuilder &b, Location loc,
                               ArrayRef<int64_t> positions, int64_t length) {
  SmallVector<bool> flags(length, false);
  for (int64_t position : positions)
    flags[position] = true;
  auto type = RankedTensorType::get({length}, b.getI1Type());
  return b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(type, ArrayRef<bool>(flags)));
}

Value attention::longformerLocalFilter(OpBuilder &b, Location loc,
                                       LongformerAttr kind, Value i, Value j,
                                       Value globalColumn) {
  Value allowed = slidingWindow(b, loc, kind, i, j);
  if (!globalColumn)
    return allowed;
  Value toGlobal = b.create<arith::OrIOp>(loc, allowed, globalColumn);
  return conjunction(b, loc, toGlobal,
                     causalFilter(b, loc, kind.getCausal(), i, j));
}

Value attention::longformerGlobalRows(OpBuilder &b, Location loc, Value result,
                                      Value globalQuery, Value globalKey,
                                      Value globalValue, Value mask,
                                      int64_t heads, ArrayRef<int64_t> globals,
                                      bool causal) {
  Value keys = splitHeads(b, loc, globalKey, heads);
  Value values = splitHeads(b, loc, globalValue, heads);
  for (int64_t position : globals) {
    Value row = extractRow(b, loc, globalQuery, b.getIndexAttr(position));
    Value rowQuery = splitHeads(b, loc, row, heads);
    Value rowOut = maskedSoftmaxAttention(
        b, loc, rowQuery, keys, values, mask,
        /*globalColumns=*/Value(), /*rowOffset=*/position,
        [&](OpBuilder &nb, Location nloc, Value i, Value j, Value) {
          return causalFilter(nb, nloc, causal, i, j);
        });
    result = insertRow(b, loc, rowOut, result, b.getIndexAttr(position));
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Gradients of softmax attention
//===----------------------------------------------------------------------===//

/// The gradient of the scaled scores through the softmax: with
/// `probs [B, H, Sq, Sk]` and their gradient `probGrads`,
///
///   dS[b, h, i, j] = scale * P[i, j] * (dP[i, j] - sum_j' dP[i, j'] P[i, j'])
///
/// (per batch and head), i.e. the gradient with respect to the unscaled
/// dot products. Pairs with `P = 0` (masked) get 0.
static Value scoreGrads(OpBuilder &b, Location loc, Value probs,
                        Value probGrads, double scale) {
  ArrayRef<int64_t> shape = shapeOf(probs);
  Type element = elementOf(probs);
  AffineMap identity = b.getMultiDimIdentityMap(4);
  AffineMap rowMap = loopDims(b, 4, {0, 1, 2});
  // Loops (b, h, i, j); j is reduced.
  Value rowDot =
      accumulateProducts(b, loc, ValueRange{probs, probGrads},
                         filledTensor(b, loc, shape.drop_back(), element, 0.0),
                         {identity, identity}, rowMap);
  return elementwise(
      b, loc, shape, element, ValueRange{probs, probGrads, rowDot},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value centred = nb.create<arith::SubFOp>(nloc, args[1], args[2]);
        Value product = nb.create<arith::MulFOp>(nloc, args[0], centred);
        return nb.create<arith::MulFOp>(
            nloc, product, floatConstant(nb, nloc, element, scale));
      },
      {identity, identity, rowMap});
}

AttentionGrads attention::maskedSoftmaxAttentionGrad(
    OpBuilder &b, Location loc, Value q, Value k, Value v, Value mask,
    Value globalColumns, int64_t rowOffset, PairFilter filter, Value gradOut,
    Value keyInit, Value valueInit) {
  double scale = scoreScale(q);
  Value scores = dotScores(b, loc, q, k);
  scores =
      maskScores(b, loc, scores, scale, mask, globalColumns, rowOffset, filter);
  Value probs = softmaxRows(b, loc, scores);

  AttentionGrads grads;
  grads.value = weightQueries(b, loc, probs, gradOut, valueInit);
  Value probGrads = dotScores(b, loc, gradOut, v);
  Value dScores = scoreGrads(b, loc, probs, probGrads, scale);
  grads.query = weightValues(b, loc, dScores, k);
  grads.key = weightQueries(b, loc, dScores, q, keyInit);
  return grads;
}

SmallVector<Value> attention::longformerGlobalRowGrads(
    OpBuilder &b, Location loc, Value globalQuery, Value globalKey,
    Value globalValue, Value mask, Value gradOut, int64_t heads,
    ArrayRef<int64_t> globals, bool causal) {
  Value queries = splitHeads(b, loc, globalQuery, heads);
  Value keys = splitHeads(b, loc, globalKey, heads);
  Value values = splitHeads(b, loc, globalValue, heads);
  Type element = elementOf(queries);
  Value queryGrad = filledTensor(b, loc, shapeOf(queries), element, 0.0);
  Value keyGrad = filledTensor(b, loc, shapeOf(keys), element, 0.0);
  Value valueGrad = filledTensor(b, loc, shapeOf(values), element, 0.0);
  for (int64_t position : globals) {
    OpFoldResult row = b.getIndexAttr(position);
    Value rowQuery = extractRow(b, loc, queries, row);
    Value rowGradOut = extractRow(b, loc, gradOut, row);
    AttentionGrads grads = maskedSoftmaxAttentionGrad(
        b, loc, rowQuery, keys, values, mask,
        /*globalColumns=*/Value(), /*rowOffset=*/position,
        [&](OpBuilder &nb, Location nloc, Value i, Value j, Value) {
          return causalFilter(nb, nloc, causal, i, j);
        },
        rowGradOut, keyGrad, valueGrad);
    queryGrad = insertRow(b, loc, grads.query, queryGrad, row);
    keyGrad = grads.key;
    valueGrad = grads.value;
  }
  return {mergeHeads(b, loc, queryGrad), mergeHeads(b, loc, keyGrad),
          mergeHeads(b, loc, valueGrad)};
}
