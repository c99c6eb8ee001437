//===- LowerAttention.cpp - Lowering of tfc.attention ---------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pattern of tfc-lower-to-linalg for `tfc.attention`, one builder per
/// attention kind:
///
/// - `#tfc.softmax`: exact scaled dot-product attention, optionally causal.
/// - `#tfc.longformer`: sliding-window attention (window, dilation, causal)
///   plus global tokens with their own projections, written as dense
///   attention over a structured mask.
/// - `#tfc.performer`: FAVOR+ positive random features, every exponential
///   stabilised by a constant that cancels in the output (for causal keys a
///   running max, so that no constant depends on a later position); the
///   non-causal form contracts keys and values once, the causal form works
///   by chunks: masked dense sums within a chunk, an exclusive scan of
///   per-chunk key/value states across chunks, rescaled as the running max
///   grows.
///
/// Queries, keys and values are `[B, S, D]` with `D = H * Dh`; channel
/// `c = h * Dh + e` belongs to head `h`. Every builder works on the
/// head-split view `[B, S, H, Dh]` (a `tensor.expand_shape`, no data
/// movement) and merges heads back at the end. All shapes are static.
///
/// The building blocks declared in AttentionUtils.h are defined here; the
/// gradient lowering (LowerAttentionGrad.cpp) recomputes the forward
/// quantities with them.
///
//===----------------------------------------------------------------------===//

#include "passes/AttentionUtils.h"
#include "passes/LoweringUtils.h"
#include "passes/Passes.h"

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
  return buildGeneric(
      b, loc, ValueRange{q, k}, init,
      {loopDims(b, 5, {0, 2, 1, 4}), loopDims(b, 5, {0, 3, 1, 4})},
      loopDims(b, 5, {0, 1, 2, 3}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
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
        if (mask) {
          Value zero = floatConstant(nb, nloc, element, 0.0);
          Value realKey = nb.create<arith::CmpFOp>(
              nloc, arith::CmpFPredicate::UNE, args[1], zero);
          allowed = conjunction(nb, nloc, allowed, realKey);
        }
        if (!allowed)
          return scaled;
        return nb.create<arith::SelectOp>(nloc, allowed, scaled,
                                          negativeInfinity(nb, nloc, element));
      },
      maps);
}

Value attention::softmaxRows(OpBuilder &b, Location loc, Value scores) {
  Type element = elementOf(scores);
  AffineMap rowMap = loopDims(b, 4, {0, 1, 2});
  Value rowMax = reduceLastDim(
      b, loc, scores, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nb, Location nloc, Value acc, Value x) -> Value {
        return stabilizerMax(nb, nloc, acc, x);
      });
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
  Value rowSum = reduceLastDim(
      b, loc, exps, 0.0,
      [](OpBuilder &nb, Location nloc, Value acc, Value x) -> Value {
        return nb.create<arith::AddFOp>(nloc, acc, x);
      });
  return elementwise(
      b, loc, shapeOf(scores), element, ValueRange{exps, rowSum},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value zero = floatConstant(nb, nloc, element, 0.0);
        Value positive = nb.create<arith::CmpFOp>(
            nloc, arith::CmpFPredicate::OGT, args[1], zero);
        Value ratio = nb.create<arith::DivFOp>(nloc, args[0], args[1]);
        return nb.create<arith::SelectOp>(nloc, positive, ratio, zero);
      },
      {b.getMultiDimIdentityMap(4), rowMap});
}

Value attention::weightValues(OpBuilder &b, Location loc, Value probs,
                              Value v, Value init) {
  ArrayRef<int64_t> pShape = shapeOf(probs), vShape = shapeOf(v);
  if (!init)
    init = filledTensor(b, loc, {pShape[0], pShape[2], pShape[1], vShape[3]},
                        elementOf(v), 0.0);
  // Loops (b, i, h, e, j); j is reduced.
  return buildGeneric(
      b, loc, ValueRange{probs, v}, init,
      {loopDims(b, 5, {0, 2, 1, 4}), loopDims(b, 5, {0, 4, 2, 3})},
      loopDims(b, 5, {0, 1, 2, 3}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
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
// #tfc.softmax
//===----------------------------------------------------------------------===//

/// Exact attention: every key, or every key up to the query when causal.
static Value lowerSoftmax(OpBuilder &b, Location loc, AttentionOp op,
                          SoftmaxAttr kind) {
  int64_t heads = op.getHeads();
  bool causal = kind.getCausal();
  Value q = splitHeads(b, loc, op.getQuery(), heads);
  Value k = splitHeads(b, loc, op.getKey(), heads);
  Value v = splitHeads(b, loc, op.getValue(), heads);
  Value out = maskedSoftmaxAttention(
      b, loc, q, k, v, op.getMask(), /*globalColumns=*/Value(),
      /*rowOffset=*/0,
      [&](OpBuilder &nb, Location nloc, Value i, Value j, Value) {
        return causalFilter(nb, nloc, causal, i, j);
      });
  return mergeHeads(b, loc, out);
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
    Value inWindow =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, back,
                                constant(window * dilation));
    Value band = b.create<arith::AndIOp>(loc, notFuture, inWindow);
    if (dilation == 1)
      return band;
    Value phase =
        b.create<arith::RemSIOp>(loc, back, constant(dilation));
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
  Value phase =
      b.create<arith::RemSIOp>(loc, offset, constant(dilation));
  Value onGrid =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, phase, zero);
  return b.create<arith::AndIOp>(loc, band, onGrid);
}

attention::WindowSteps attention::windowSteps(LongformerAttr kind) {
  if (kind.getCausal())
    return {kind.getWindow() - 1, 0};
  return {kind.getWindow() / 2, kind.getWindow() / 2};
}

SmallVector<int64_t> attention::globalPositions(LongformerAttr kind) {
  SmallVector<int64_t> globals(kind.getGlobalTokens());
  llvm::sort(globals);
  globals.erase(std::unique(globals.begin(), globals.end()), globals.end());
  return globals;
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

/// Longformer attention, as dense attention over a structured mask.
///
/// Local rows (queries not in `global`) use `query`, `key`, `value` and see
/// the sliding-window band of slidingWindow plus every global column (only
/// up to themselves when causal). Each global row `g` uses
/// `global_query[g]`, `global_key` and `global_value` and sees every key
/// (up to `g` when causal); it is computed as a one-row attention and
/// inserted over the local result. The padding mask applies to all rows.
///
/// For S = 8, window 4, dilation 1, global [0], non-causal (x: allowed):
///
///        j: 0 1 2 3 4 5 6 7
///   i = 0   x x x x x x x x    global row (global projections)
///   i = 1   x x x x
///   i = 2   x x x x x
///   i = 3   x x x x x x        band |j - i| <= 2 ...
///   i = 4   x   x x x x x
///   i = 5   x     x x x x x    ... plus global column 0
///   i = 6   x       x x x x
///   i = 7   x         x x x
///
/// The local part is evaluated densely, O(S^2) like softmax attention; a
/// banded kernel would compute only the `2 * (w / 2) + 1` (causal: `w`)
/// dilated diagonals of the band plus the global columns.
static Value lowerLongformer(OpBuilder &b, Location loc, AttentionOp op,
                             LongformerAttr kind) {
  int64_t heads = op.getHeads();
  int64_t length = shapeOf(op.getKey())[1];
  bool causal = kind.getCausal();
  SmallVector<int64_t> globals = globalPositions(kind);

  // Which key positions are global tokens, as a constant [S] i1 vector.
  Value globalColumns;
  if (!globals.empty())
    globalColumns = positionFlags(b, loc, globals, length);

  // Local rows: window band, plus the global columns.
  Value q = splitHeads(b, loc, op.getQuery(), heads);
  Value k = splitHeads(b, loc, op.getKey(), heads);
  Value v = splitHeads(b, loc, op.getValue(), heads);
  Value result = maskedSoftmaxAttention(
      b, loc, q, k, v, op.getMask(), globalColumns, /*rowOffset=*/0,
      [&](OpBuilder &nb, Location nloc, Value i, Value j, Value globalColumn) {
        return longformerLocalFilter(nb, nloc, kind, i, j, globalColumn);
      });
  if (!globals.empty())
    result = longformerGlobalRows(b, loc, result, op.getGlobalQuery(),
                                  op.getGlobalKey(), op.getGlobalValue(),
                                  op.getMask(), heads, globals, causal);
  return mergeHeads(b, loc, result);
}

Value attention::longformerGlobalRows(OpBuilder &b, Location loc, Value result,
                                      Value globalQuery, Value globalKey,
                                      Value globalValue, Value mask,
                                      int64_t heads,
                                      ArrayRef<int64_t> globals, bool causal) {
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
// #tfc.performer
//===----------------------------------------------------------------------===//

double attention::lowestFinite(Type element) {
  return APFloat::getLargest(cast<FloatType>(element).getFloatSemantics(),
                             /*Negative=*/true)
      .convertToDouble();
}

Value attention::scaledFeatures(OpBuilder &b, Location loc, Value features) {
  Type element = elementOf(features);
  double inputScale =
      std::pow(static_cast<double>(shapeOf(features)[1]), -0.25);
  return elementwise(
      b, loc, shapeOf(features), element, ValueRange{features},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::MulFOp>(
            nloc, args[0], floatConstant(nb, nloc, element, inputScale));
      });
}

Value attention::featureProjection(OpBuilder &b, Location loc, Value x,
                                   Value scaled, bool transposed) {
  ArrayRef<int64_t> xShape = shapeOf(x);
  int64_t count = shapeOf(scaled)[transposed ? 1 : 0];
  SmallVector<int64_t> shape = {xShape[0], xShape[1], xShape[2], count};
  // Loops (b, s, h, m, e); e is reduced.
  return buildGeneric(
      b, loc, ValueRange{x, scaled},
      filledTensor(b, loc, shape, elementOf(x), 0.0),
      {loopDims(b, 5, {0, 1, 2, 4}),
       transposed ? loopDims(b, 5, {4, 3}) : loopDims(b, 5, {3, 4})},
      loopDims(b, 5, {0, 1, 2, 3}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
}

Value attention::halfSquaredNorm(OpBuilder &b, Location loc, Value x) {
  Type element = elementOf(x);
  // |x'|^2 / 2 = |x|^2 / (2 sqrt(Dh)).
  double scale = 0.5 / std::sqrt(static_cast<double>(shapeOf(x)[3]));
  return reduceLastDim(
      b, loc, x, 0.0,
      [&](OpBuilder &nb, Location nloc, Value acc, Value value) -> Value {
        Value square = nb.create<arith::MulFOp>(nloc, value, value);
        Value term = nb.create<arith::MulFOp>(
            nloc, square, floatConstant(nb, nloc, element, scale));
        return nb.create<arith::AddFOp>(nloc, acc, term);
      });
}

Value attention::rowMaximum(OpBuilder &b, Location loc, Value projection) {
  return reduceLastDim(
      b, loc, projection, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nb, Location nloc, Value acc, Value value) -> Value {
        return stabilizerMax(nb, nloc, acc, value);
      });
}

/// `value == 0` for a float `value`.
static Value isZero(OpBuilder &b, Location loc, Value value) {
  return b.create<arith::CmpFOp>(
      loc, arith::CmpFPredicate::OEQ, value,
      floatConstant(b, loc, value.getType(), 0.0));
}

Value attention::exponentialFeatures(OpBuilder &b, Location loc,
                                     Value projection, Value offset,
                                     Value mask) {
  ArrayRef<int64_t> shape = shapeOf(projection);
  Type element = elementOf(projection);
  SmallVector<Value> inputs = {projection, offset};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(4),
                                 loopDims(b, 4, {0, 1, 2})};
  if (mask) {
    inputs.push_back(mask);
    maps.push_back(loopDims(b, 4, {0, 1}));
  }
  double outputScale = 1.0 / std::sqrt(static_cast<double>(shape[3]));
  return elementwise(
      b, loc, shape, element, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value value = nb.create<arith::SubFOp>(nloc, args[0], args[1]);
        value = nb.create<math::ExpOp>(nloc, value);
        value = nb.create<arith::MulFOp>(
            nloc, value, floatConstant(nb, nloc, element, outputScale));
        if (!mask)
          return value;
        // A masked key is left out of the stabiliser, so its exponential
        // may overflow; select rather than multiply by 0.
        value = nb.create<arith::MulFOp>(nloc, value, args[2]);
        return nb.create<arith::SelectOp>(
            nloc, isZero(nb, nloc, args[2]),
            floatConstant(nb, nloc, element, 0.0), value);
      },
      maps);
}

/// The max over m of the keys' exponent `projection - halfNorm`, `[B, S,
/// H]`, the lowest float where `mask [B, S]` (when given) is 0.
static Value keyRowMaximum(OpBuilder &b, Location loc, Value projection,
                           Value halfNorm, Value mask) {
  Value rowMax = rowMaximum(b, loc, projection);
  Type element = elementOf(projection);
  SmallVector<Value> inputs = {rowMax, halfNorm};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(3),
                                 b.getMultiDimIdentityMap(3)};
  if (mask) {
    inputs.push_back(mask);
    maps.push_back(loopDims(b, 3, {0, 1}));
  }
  double lowest = lowestFinite(element);
  return elementwise(
      b, loc, shapeOf(rowMax), element, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value value = nb.create<arith::SubFOp>(nloc, args[0], args[1]);
        if (!mask)
          return value;
        return nb.create<arith::SelectOp>(
            nloc, isZero(nb, nloc, args[2]),
            floatConstant(nb, nloc, element, lowest), value);
      },
      maps);
}

/// The max over positions of `x [B, S, H]`, broadcast back to `[B, S, H]`.
static Value sequenceMaximum(OpBuilder &b, Location loc, Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  // Loops (b, h, s); s is reduced.
  Value total = buildGeneric(
      b, loc, ValueRange{x},
      filledTensor(b, loc, {shape[0], shape[2]}, element,
                   lowestFinite(element)),
      {loopDims(b, 3, {0, 2, 1})}, loopDims(b, 3, {0, 1}),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return stabilizerMax(nb, nloc, args[1], args[0]);
      });
  return elementwise(
      b, loc, shape, element, ValueRange{total},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; },
      {loopDims(b, 3, {0, 2})});
}

Value attention::causalRunningMaximum(OpBuilder &b, Location loc, Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  double lowest = lowestFinite(element);
  Chunking chunking = performerChunking(shape[1]);
  Value chunks = toChunks(b, loc, x, chunking, lowest);
  SmallVector<int64_t> chunkShape(shapeOf(chunks));
  auto maximum = [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
    return stabilizerMax(nb, nloc, args[1], args[0]);
  };
  // Within each chunk; loops (b, n, i, h, j), j is reduced.
  Value within = buildGeneric(
      b, loc, ValueRange{chunks},
      filledTensor(b, loc, chunkShape, element, lowest),
      {loopDims(b, 5, {0, 1, 4, 3})}, loopDims(b, 5, {0, 1, 2, 3}),
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value i = nb.create<linalg::IndexOp>(nloc, 2);
        Value j = nb.create<linalg::IndexOp>(nloc, 4);
        Value allowed =
            nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::ule, j, i);
        Value value = nb.create<arith::SelectOp>(
            nloc, allowed, args[0], floatConstant(nb, nloc, element, lowest));
        return stabilizerMax(nb, nloc, args[1], value);
      });
  // The max of each chunk; loops (b, n, h, i), i is reduced.
  Value chunkMax = buildGeneric(
      b, loc, ValueRange{chunks},
      filledTensor(b, loc, {chunkShape[0], chunkShape[1], chunkShape[3]},
                   element, lowest),
      {loopDims(b, 4, {0, 1, 3, 2})}, loopDims(b, 4, {0, 1, 2}), maximum);
  Value before = exclusiveChunkMaximum(b, loc, chunkMax);
  Value running = elementwise(
      b, loc, chunkShape, element, ValueRange{within, before},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return stabilizerMax(nb, nloc, args[0], args[1]);
      },
      {b.getMultiDimIdentityMap(4), loopDims(b, 4, {0, 1, 3})});
  return fromChunks(b, loc, running, shape[1]);
}

FeatureMap attention::randomFeatures(OpBuilder &b, Location loc, Value x,
                                     Value scaled, Stabiliser kind,
                                     Value mask, bool transposed) {
  FeatureMap map;
  map.projection = featureProjection(b, loc, x, scaled, transposed);
  if (kind == Stabiliser::Row) {
    // The max over m of W_m . x' - |x'|^2 / 2 is the max of the projection
    // less |x'|^2 / 2, which cancels.
    map.offset = rowMaximum(b, loc, map.projection);
    map.stabiliser = map.offset;
  } else {
    Value halfNorm = halfSquaredNorm(b, loc, x);
    Value rowMax = keyRowMaximum(b, loc, map.projection, halfNorm, mask);
    map.stabiliser = kind == Stabiliser::Prefix
                         ? causalRunningMaximum(b, loc, rowMax)
                         : sequenceMaximum(b, loc, rowMax);
    map.offset = elementwise(
        b, loc, shapeOf(halfNorm), elementOf(halfNorm),
        ValueRange{halfNorm, map.stabiliser},
        [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return nb.create<arith::AddFOp>(nloc, args[0], args[1]);
        });
  }
  map.phi = exponentialFeatures(b, loc, map.projection, map.offset, mask);
  return map;
}

std::pair<Value, Value>
attention::accumulateKeyValues(OpBuilder &b, Location loc, Value keyFeatures,
                               Value v, Value kv, Value z) {
  // Loops (b, h, m, e, j); j is reduced.
  Value newKv =
      buildGeneric(b, loc, ValueRange{keyFeatures, v}, kv,
                   {loopDims(b, 5, {0, 4, 1, 2}), loopDims(b, 5, {0, 4, 1, 3})},
                   loopDims(b, 5, {0, 1, 2, 3}),
                   [](OpBuilder &nb, Location nloc, ValueRange args) {
                     return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
                   });
  // Loops (b, h, j, m); j is reduced, m innermost (unit stride).
  Value newZ =
      buildGeneric(b, loc, ValueRange{keyFeatures}, z,
                   {loopDims(b, 4, {0, 2, 1, 3})}, loopDims(b, 4, {0, 1, 3}),
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return nb.create<arith::AddFOp>(nloc, args[1], args[0]);
                   });
  return {newKv, newZ};
}

Value attention::performerNumerator(OpBuilder &b, Location loc,
                                    Value queryFeatures, Value kv) {
  ArrayRef<int64_t> qShape = shapeOf(queryFeatures);
  Type element = elementOf(kv);
  SmallVector<int64_t> outShape = {qShape[0], qShape[1], qShape[2],
                                   shapeOf(kv)[3]};
  // Loops (b, i, h, e, m); m is reduced.
  return buildGeneric(
      b, loc, ValueRange{queryFeatures, kv},
      filledTensor(b, loc, outShape, element, 0.0),
      {loopDims(b, 5, {0, 1, 2, 4}), loopDims(b, 5, {0, 2, 4, 3})},
      loopDims(b, 5, {0, 1, 2, 3}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
}

Value attention::performerDenominator(OpBuilder &b, Location loc,
                                      Value queryFeatures, Value z) {
  ArrayRef<int64_t> qShape = shapeOf(queryFeatures);
  Type element = elementOf(z);
  // Loops (b, i, h, m); m is reduced.
  return buildGeneric(b, loc, ValueRange{queryFeatures, z},
                      filledTensor(b, loc, {qShape[0], qShape[1], qShape[2]},
                                   element, 0.0),
                      {b.getMultiDimIdentityMap(4), loopDims(b, 4, {0, 2, 3})},
                      loopDims(b, 4, {0, 1, 2}),
                      [](OpBuilder &nb, Location nloc, ValueRange args) {
                        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
                      });
}

Value attention::performerQuotient(OpBuilder &b, Location loc, Value num,
                                   Value den) {
  ArrayRef<int64_t> shape = shapeOf(num);
  unsigned rank = shape.size();
  Type element = elementOf(num);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  return elementwise(
      b, loc, shape, element, ValueRange{num, den},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value positive = nb.create<arith::CmpFOp>(
            nloc, arith::CmpFPredicate::OGT, args[1],
            floatConstant(nb, nloc, element, kPerformerMinDenominator));
        Value quotient = nb.create<arith::DivFOp>(nloc, args[0], args[1]);
        return nb.create<arith::SelectOp>(
            nloc, positive, quotient, floatConstant(nb, nloc, element, 0.0));
      },
      {identity, identity.getMajorSubMap(rank - 1)});
}

//===----------------------------------------------------------------------===//
// Causal FAVOR+ by chunks
//===----------------------------------------------------------------------===//

Chunking attention::performerChunking(int64_t length) {
  constexpr int64_t kMaxChunk = 64;
  int64_t count = std::max<int64_t>((length + kMaxChunk - 1) / kMaxChunk,
                                    length >= 2 ? 2 : 1);
  return {count, (length + count - 1) / count};
}

Value attention::toChunks(OpBuilder &b, Location loc, Value x,
                          Chunking chunks, double padding) {
  ArrayRef<int64_t> shape = shapeOf(x);
  unsigned rank = shape.size();
  Type element = elementOf(x);
  if (chunks.padded() != shape[1])
    x = padPositions(b, loc, x, chunks.padded(), padding);
  SmallVector<int64_t> chunkShape = {shape[0], chunks.count, chunks.size};
  llvm::append_range(chunkShape, shape.drop_front(2));
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
  for (unsigned d = 3; d <= rank; ++d)
    groups.push_back({static_cast<int64_t>(d)});
  return b.create<tensor::ExpandShapeOp>(
      loc, RankedTensorType::get(chunkShape, element), x, groups);
}

Value attention::fromChunks(OpBuilder &b, Location loc, Value x,
                            int64_t length) {
  ArrayRef<int64_t> shape = shapeOf(x);
  unsigned rank = shape.size();
  int64_t padded = shape[1] * shape[2];
  SmallVector<int64_t> flatShape = {shape[0], padded};
  llvm::append_range(flatShape, shape.drop_front(3));
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
  for (unsigned d = 3; d < rank; ++d)
    groups.push_back({static_cast<int64_t>(d)});
  Value flat = b.create<tensor::CollapseShapeOp>(
      loc, RankedTensorType::get(flatShape, elementOf(x)), x, groups);
  return padded == length ? flat : leadingPositions(b, loc, flat, length);
}

/// An exclusive scan of `x [B, NC, ...]` over chunks, visiting them in
/// order (or backwards when `reverse`) with a running state that starts at
/// `init`: chunk n's output is the state, then the state becomes
/// `combine(state, x[:, n], decay[:, n])`, where `decay [B, NC, H]` (null
/// when not needed) broadcasts over the trailing dimensions.
static Value scanChunks(
    OpBuilder &b, Location loc, Value x, bool reverse, double init,
    Value decay,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)> combine) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  int64_t count = shape[1];
  SmallVector<int64_t> rowShape(shape);
  rowShape[1] = 1;
  // The running state is carried as its own tensor and copied into chunk n
  // before chunk n is combined with it, so that no iteration reads the
  // result it writes.
  Value running = filledTensor(b, loc, rowShape, element, init);
  Value result = emptyTensor(b, loc, shape, element);
  Value last = indexConstant(b, loc, count - 1);
  auto loop = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, count),
      indexConstant(b, loc, 1), ValueRange{running, result},
      [&](OpBuilder &nb, Location nloc, Value t, ValueRange state) {
        Value n = reverse ? nb.create<arith::SubIOp>(nloc, last, t) : t;
        Value written = insertRow(nb, nloc, state[0], state[1], n);
        unsigned rank = rowShape.size();
        AffineMap identity = nb.getMultiDimIdentityMap(rank);
        SmallVector<Value> inputs = {extractRow(nb, nloc, x, n)};
        SmallVector<AffineMap> maps = {identity};
        if (decay) {
          inputs.push_back(extractRow(nb, nloc, decay, n));
          maps.push_back(loopDims(nb, rank, {0, 1, 2}));
        }
        maps.push_back(identity);
        auto update = nb.create<linalg::GenericOp>(
            nloc, TypeRange{state[0].getType()}, inputs, ValueRange{state[0]},
            maps, parallelIterators(rank),
            [&](OpBuilder &bb, Location bloc, ValueRange args) {
              Value next = combine(bb, bloc, args.back(), args[0],
                                   decay ? args[1] : Value());
              bb.create<linalg::YieldOp>(bloc, ValueRange{next});
            });
        nb.create<scf::YieldOp>(nloc,
                                ValueRange{update.getResult(0), written});
      });
  return loop.getResult(1);
}

Value attention::exclusiveChunkScan(OpBuilder &b, Location loc, Value x,
                                    bool reverse, Value decay) {
  return scanChunks(
      b, loc, x, reverse, 0.0, decay,
      [](OpBuilder &nb, Location nloc, Value state, Value chunk,
         Value factor) -> Value {
        if (factor)
          state = nb.create<arith::MulFOp>(nloc, state, factor);
        return nb.create<arith::AddFOp>(nloc, state, chunk);
      });
}

Value attention::exclusiveChunkMaximum(OpBuilder &b, Location loc, Value x) {
  return scanChunks(b, loc, x, /*reverse=*/false,
                    lowestFinite(elementOf(x)), Value(),
                    [](OpBuilder &nb, Location nloc, Value state, Value chunk,
                       Value) -> Value {
                      return stabilizerMax(nb, nloc, state, chunk);
                    });
}

std::pair<Value, Value> attention::chunkStates(OpBuilder &b, Location loc,
                                               Value keyFeatures,
                                               Value keyScale,
                                               Value scaledValues) {
  ArrayRef<int64_t> fShape = shapeOf(keyFeatures),
                    vShape = shapeOf(scaledValues);
  Type element = elementOf(scaledValues);
  int64_t batch = fShape[0], count = fShape[1], heads = fShape[3],
          features = fShape[4], headDim = vShape[4];
  // Loops (b, n, h, m, e, c); c is reduced.
  Value kv = buildGeneric(
      b, loc, ValueRange{keyFeatures, scaledValues},
      filledTensor(b, loc, {batch, count, heads, features, headDim}, element,
                   0.0),
      {loopDims(b, 6, {0, 1, 5, 2, 3}), loopDims(b, 6, {0, 1, 5, 2, 4})},
      loopDims(b, 6, {0, 1, 2, 3, 4}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
  // Loops (b, n, h, c, m); c is reduced, m innermost (unit stride).
  Value z = buildGeneric(
      b, loc, ValueRange{keyFeatures, keyScale},
      filledTensor(b, loc, {batch, count, heads, features}, element, 0.0),
      {loopDims(b, 5, {0, 1, 3, 2, 4}), loopDims(b, 5, {0, 1, 3, 2})},
      loopDims(b, 5, {0, 1, 2, 4}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
  return {kv, z};
}

/// `exp(min(a - b, 0))`: a rescaling factor whose exponent is `<= 0` for
/// real positions (see AttentionUtils.h).
static Value rescaling(OpBuilder &b, Location loc, Value a, Value bValue) {
  Value difference = b.create<arith::SubFOp>(loc, a, bValue);
  difference = b.create<arith::MinimumFOp>(
      loc, difference, floatConstant(b, loc, a.getType(), 0.0));
  return b.create<math::ExpOp>(loc, difference);
}

Value attention::scaleChunkRows(OpBuilder &b, Location loc, Value x,
                                Value scale) {
  return elementwise(
      b, loc, shapeOf(x), elementOf(x), ValueRange{x, scale},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::MulFOp>(nloc, args[0], args[1]);
      },
      {b.getMultiDimIdentityMap(5), loopDims(b, 5, {0, 1, 2, 3})});
}

Value attention::causalChunkMask(OpBuilder &b, Location loc, Value x,
                                 Value stabiliser) {
  Type element = elementOf(x);
  // x is [B, NC, H, C, C]; the stabilisers of rows i and columns j.
  return elementwise(
      b, loc, shapeOf(x), element, ValueRange{x, stabiliser, stabiliser},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value i = nb.create<linalg::IndexOp>(nloc, 3);
        Value j = nb.create<linalg::IndexOp>(nloc, 4);
        Value allowed =
            nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::ule, j, i);
        Value scaled = nb.create<arith::MulFOp>(
            nloc, args[0], rescaling(nb, nloc, args[2], args[1]));
        return nb.create<arith::SelectOp>(
            nloc, allowed, scaled, floatConstant(nb, nloc, element, 0.0));
      },
      {b.getMultiDimIdentityMap(5), loopDims(b, 5, {0, 1, 3, 2}),
       loopDims(b, 5, {0, 1, 4, 2})});
}

CausalChunks attention::buildCausalChunks(OpBuilder &b, Location loc,
                                         Value queryFeatures,
                                         Value keyFeatures,
                                         Value keyStabiliser, Value v,
                                         int64_t length) {
  CausalChunks c;
  Type element = elementOf(v);
  c.chunking = performerChunking(length);
  c.query = toChunks(b, loc, queryFeatures, c.chunking);
  c.key = toChunks(b, loc, keyFeatures, c.chunking);
  c.value = toChunks(b, loc, v, c.chunking);
  c.stabiliser =
      toChunks(b, loc, keyStabiliser, c.chunking, lowestFinite(element));
  ArrayRef<int64_t> shape = shapeOf(c.stabiliser);
  // E_n, the stabiliser at the end of chunk n (the running max never
  // decreases); loops (b, n, h, i), i is reduced.
  Value end = buildGeneric(
      b, loc, ValueRange{c.stabiliser},
      filledTensor(b, loc, {shape[0], shape[1], shape[3]}, element,
                   lowestFinite(element)),
      {loopDims(b, 4, {0, 1, 3, 2})}, loopDims(b, 4, {0, 1, 2}),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return stabilizerMax(nb, nloc, args[1], args[0]);
      });
  // F_n = E_{n-1}.
  Value start = exclusiveChunkMaximum(b, loc, end);
  AffineMap identity = b.getMultiDimIdentityMap(4);
  AffineMap chunkMap = loopDims(b, 4, {0, 1, 3});
  c.queryScale = elementwise(
      b, loc, shape, element, ValueRange{start, c.stabiliser},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return rescaling(nb, nloc, args[0], args[1]);
      },
      {chunkMap, identity});
  c.keyScale = elementwise(
      b, loc, shape, element, ValueRange{c.stabiliser, end},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return rescaling(nb, nloc, args[0], args[1]);
      },
      {identity, chunkMap});
  c.decay = elementwise(
      b, loc, shapeOf(end), element, ValueRange{start, end},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return rescaling(nb, nloc, args[0], args[1]);
      });
  // The scale goes with the narrower operand: a * v is Dh wide, a * phiK
  // would be M wide.
  c.scaledValue = scaleChunkRows(b, loc, c.value, c.keyScale);
  auto [kv, z] = chunkStates(b, loc, c.key, c.keyScale, c.scaledValue);
  c.prefixKv = exclusiveChunkScan(b, loc, kv, /*reverse=*/false, c.decay);
  c.prefixZ = exclusiveChunkScan(b, loc, z, /*reverse=*/false, c.decay);
  c.scores = chunkScores(b, loc, c.query, c.key, c.stabiliser);
  return c;
}

Value attention::chunkScores(OpBuilder &b, Location loc, Value queryFeatures,
                             Value keyFeatures, Value stabiliser) {
  ArrayRef<int64_t> shape = shapeOf(queryFeatures);
  Type element = elementOf(queryFeatures);
  // Loops (b, n, h, i, j, m); m is reduced.
  Value scores = buildGeneric(
      b, loc, ValueRange{queryFeatures, keyFeatures},
      filledTensor(b, loc, {shape[0], shape[1], shape[3], shape[2], shape[2]},
                   element, 0.0),
      {loopDims(b, 6, {0, 1, 3, 2, 5}), loopDims(b, 6, {0, 1, 4, 2, 5})},
      loopDims(b, 6, {0, 1, 2, 3, 4}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
  return causalChunkMask(b, loc, scores, stabiliser);
}

std::pair<Value, Value> attention::chunkNumeratorDenominator(
    OpBuilder &b, Location loc, Value queryFeatures, Value queryScale, Value v,
    Value scores, Value kv, Value z) {
  ArrayRef<int64_t> qShape = shapeOf(queryFeatures);
  Type element = elementOf(v);
  auto mulAdd = [](OpBuilder &nb, Location nloc, ValueRange args) {
    return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
  };
  // Across chunks, g (phiQ kv): the scale g is applied to the Dh-wide
  // product rather than to the M-wide features. Loops (b, n, i, h, e, m),
  // m is reduced.
  Value num = buildGeneric(
      b, loc, ValueRange{queryFeatures, kv},
      filledTensor(b, loc, shapeOf(v), element, 0.0),
      {loopDims(b, 6, {0, 1, 2, 3, 5}), loopDims(b, 6, {0, 1, 3, 5, 4})},
      loopDims(b, 6, {0, 1, 2, 3, 4}), mulAdd);
  num = scaleChunkRows(b, loc, num, queryScale);
  // Within the chunk; loops (b, n, i, h, e, j), j is reduced.
  num = buildGeneric(
      b, loc, ValueRange{scores, v}, num,
      {loopDims(b, 6, {0, 1, 3, 2, 5}), loopDims(b, 6, {0, 1, 5, 3, 4})},
      loopDims(b, 6, {0, 1, 2, 3, 4}), mulAdd);
  // g (phiQ z); loops (b, n, i, h, m), m is reduced.
  Value den = buildGeneric(
      b, loc, ValueRange{queryFeatures, z},
      filledTensor(b, loc, qShape.drop_back(), element, 0.0),
      {loopDims(b, 5, {0, 1, 2, 3, 4}), loopDims(b, 5, {0, 1, 3, 4})},
      loopDims(b, 5, {0, 1, 2, 3}), mulAdd);
  den = elementwise(
      b, loc, shapeOf(den), element, ValueRange{den, queryScale},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::MulFOp>(nloc, args[0], args[1]);
      });
  // Loops (b, n, i, h, j); j is reduced.
  den = buildGeneric(
      b, loc, ValueRange{scores}, den, {loopDims(b, 5, {0, 1, 3, 2, 4})},
      loopDims(b, 5, {0, 1, 2, 3}),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::AddFOp>(nloc, args[1], args[0]);
      });
  return {num, den};
}

int64_t attention::padCausalPerformer(OpBuilder &b, Location loc, Value &q,
                                      Value &k, Value &v, Value &mask,
                                      Value *gradOut) {
  int64_t length = shapeOf(v)[1];
  int64_t padded = performerChunking(length).padded();
  if (padded == length)
    return length;
  for (Value *x : {&q, &k, &v, gradOut})
    if (x)
      *x = padPositions(b, loc, *x, padded);
  if (mask)
    mask = padPositions(b, loc, mask, padded);
  return padded;
}

/// FAVOR+ linear attention.
///
/// Non-causal: the key/value state is summed over all keys once and read by
/// every query. Causal: by chunks (see AttentionUtils.h), the masked dense
/// form within a chunk plus the exclusive prefix state of earlier chunks;
/// later keys never reach row `i`, neither through the sums nor through
/// the keys' stabilisers (running maxima).
static Value lowerPerformer(OpBuilder &b, Location loc, AttentionOp op,
                            PerformerAttr kind) {
  int64_t heads = op.getHeads();
  bool causal = kind.getCausal();
  Value q = splitHeads(b, loc, op.getQuery(), heads);
  Value k = splitHeads(b, loc, op.getKey(), heads);
  Value v = splitHeads(b, loc, op.getValue(), heads);
  Value mask = op.getMask();
  int64_t length = shapeOf(v)[1];
  int64_t chunked = causal ? padCausalPerformer(b, loc, q, k, v, mask) : length;
  Value scaled = scaledFeatures(b, loc, op.getFeatures());
  Value queryFeatures =
      randomFeatures(b, loc, q, scaled, Stabiliser::Row, Value()).phi;
  FeatureMap keyMap =
      randomFeatures(b, loc, k, scaled,
                     causal ? Stabiliser::Prefix : Stabiliser::Sequence, mask);

  ArrayRef<int64_t> vShape = shapeOf(v);
  int64_t batch = vShape[0], headDim = vShape[3];
  int64_t count = shapeOf(scaled)[0];
  Type element = elementOf(v);

  if (!causal) {
    Value kv =
        filledTensor(b, loc, {batch, heads, count, headDim}, element, 0.0);
    Value z = filledTensor(b, loc, {batch, heads, count}, element, 0.0);
    std::tie(kv, z) = accumulateKeyValues(b, loc, keyMap.phi, v, kv, z);
    Value num = performerNumerator(b, loc, queryFeatures, kv);
    Value den = performerDenominator(b, loc, queryFeatures, z);
    return mergeHeads(b, loc, performerQuotient(b, loc, num, den));
  }

  CausalChunks c = buildCausalChunks(b, loc, queryFeatures, keyMap.phi,
                                     keyMap.stabiliser, v, chunked);
  auto [num, den] =
      chunkNumeratorDenominator(b, loc, c.query, c.queryScale, c.value,
                                c.scores, c.prefixKv, c.prefixZ);
  Value out = performerQuotient(b, loc, num, den);
  return mergeHeads(b, loc, fromChunks(b, loc, out, length));
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// Whether every operand and the result of `op` has a static shape.
static bool hasStaticShapes(AttentionOp op) {
  auto isStatic = [](Value value) {
    return cast<RankedTensorType>(value.getType()).hasStaticShape();
  };
  return llvm::all_of(op->getOperands(), isStatic) && isStatic(op.getResult());
}

namespace {
/// Rewrites `tfc.attention` by the builder of its kind.
struct AttentionLowering : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    Location loc = op.getLoc();
    Attribute kind = op.getKind();
    Value result;
    if (auto softmax = dyn_cast<SoftmaxAttr>(kind))
      result = lowerSoftmax(rewriter, loc, op, softmax);
    else if (auto longformer = dyn_cast<LongformerAttr>(kind))
      result = lowerLongformer(rewriter, loc, op, longformer);
    else if (auto performer = dyn_cast<PerformerAttr>(kind))
      result = lowerPerformer(rewriter, loc, op, performer);
    else
      return rewriter.notifyMatchFailure(op, "unknown attention kind");
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void mlir::tfc::populateAttentionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionLowering>(patterns.getContext());
}
