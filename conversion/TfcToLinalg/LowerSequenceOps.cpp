//===- LowerSequenceOps.cpp - Lowering of sequence ops -------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Lowers the tfc operations that mix positions along the sequence:
/// `tfc.rotary`, Primer's `tfc.dconv`, and the hourglass ops
/// `tfc.shift_right`, `tfc.shorten` and `tfc.upsample`, into `linalg`,
/// `tensor`, `arith` and `math` on statically shaped tensors.
///
/// Activations are `[batch, seq, width]`; a width of `heads * head_dim` is
/// split into heads as channel `c = h * head_dim + e`. Linear layers follow
/// `nn.Linear`: `y = x W^T + b` with `W` as `[out, in]`.
///
//===----------------------------------------------------------------------===//

#include "conversion/TfcToLinalg/LoweringUtils.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Mean over each group of `factor` consecutive positions:
/// `[batch, seq, width] -> [batch, seq / factor, width]`.
static Value averageGroups(OpBuilder &b, Location loc, Value x,
                           int64_t factor) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t batch = shape[0], groups = shape[1] / factor, width = shape[2];
  Type element = elementOf(x);
  Value grouped =
      expand(b, loc, x, {{0}, {1, 2}, {3}}, {batch, groups, factor, width});
  // Loops (b, n, d, j): sum over the group position j.
  Value zeros = filledTensor(b, loc, {batch, groups, width}, element, 0.0);
  auto sum = b.create<linalg::GenericOp>(
      loc, TypeRange{zeros.getType()}, ValueRange{grouped}, ValueRange{zeros},
      ArrayRef<AffineMap>{loopDims(b, 4, {0, 1, 3, 2}),
                          loopDims(b, 4, {0, 1, 2})},
      ArrayRef<utils::IteratorType>{
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::parallel, utils::IteratorType::reduction},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(
            nloc, nb.create<arith::AddFOp>(nloc, args[1], args[0]).getResult());
      });
  return scale(b, loc, sum.getResult(0), 1.0 / static_cast<double>(factor));
}

//===----------------------------------------------------------------------===//
// tfc.rotary
//===----------------------------------------------------------------------===//

/// The rotation tables of rotary positions, `cos(p * f_e)` and `sin(p * f_e)`
/// as two `[seq, head_dim / 2]` tensors, with the inverse frequencies
/// `f_e = base^(-2e / head_dim)` folded into a constant.
static std::pair<Value, Value> rotaryTables(OpBuilder &b, Location loc,
                                            Type element, int64_t seq,
                                            int64_t headDim, double base) {
  int64_t half = headDim / 2;
  SmallVector<Attribute> frequencies;
  for (int64_t e = 0; e < half; ++e)
    frequencies.push_back(b.getFloatAttr(
        element, std::pow(base, -2.0 * static_cast<double>(e) /
                                    static_cast<double>(headDim))));
  auto frequencyType = RankedTensorType::get({half}, element);
  Value inverseFrequencies = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(frequencyType, frequencies));

  Value cosInit = emptyTensor(b, loc, {seq, half}, element);
  Value sinInit = emptyTensor(b, loc, {seq, half}, element);
  auto tables = b.create<linalg::GenericOp>(
      loc, TypeRange{cosInit.getType(), sinInit.getType()},
      ValueRange{inverseFrequencies}, ValueRange{cosInit, sinInit},
      ArrayRef<AffineMap>{loopDims(b, 2, {1}), b.getMultiDimIdentityMap(2),
                          b.getMultiDimIdentityMap(2)},
      parallelIterators(2), [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value position = nb.create<linalg::IndexOp>(nloc, 0);
        Value positionInt =
            nb.create<arith::IndexCastOp>(nloc, nb.getI64Type(), position);
        Value positionFloat =
            nb.create<arith::SIToFPOp>(nloc, element, positionInt);
        Value angle = nb.create<arith::MulFOp>(nloc, positionFloat, args[0]);
        Value cos = nb.create<math::CosOp>(nloc, angle);
        Value sin = nb.create<math::SinOp>(nloc, angle);
        nb.create<linalg::YieldOp>(nloc, ValueRange{cos, sin});
      });
  return {tables.getResult(0), tables.getResult(1)};
}

/// `tfc.rotary`: per head, channel `e < half` becomes
/// `x[e] cos - x[e + half] sin` and channel `e + half` becomes
/// `x[e + half] cos + x[e] sin`, at angle `p * base^(-2e / head_dim)`. With
/// `inverse` the angle is negated: `x[e] cos + x[e + half] sin` and
/// `x[e + half] cos - x[e] sin`, the transpose of the forward rotation.
static Value lowerRotary(RotaryOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  int64_t batch = shape[0], seq = shape[1], width = shape[2];
  int64_t heads = static_cast<int64_t>(op.getHeads());
  int64_t headDim = width / heads, half = headDim / 2;

  auto [cosTable, sinTable] = rotaryTables(rewriter, loc, element, seq, headDim,
                                           op.getBase().convertToDouble());

  // [batch, seq, heads, 2, half]: index 3 picks the first or second half.
  Value halves = expand(rewriter, loc, x, {{0}, {1}, {2, 3, 4}},
                        {batch, seq, heads, 2, half});
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx), d4 = getAffineDimExpr(4, ctx);
  AffineExpr zero = getAffineConstantExpr(0, ctx),
             one = getAffineConstantExpr(1, ctx);
  SmallVector<AffineMap> inputMaps = {
      AffineMap::get(5, 0, {d0, d1, d2, zero, d4}, ctx),
      AffineMap::get(5, 0, {d0, d1, d2, one, d4}, ctx),
      loopDims(rewriter, 5, {1, 4}), loopDims(rewriter, 5, {1, 4})};
  bool inverse = op.getInverse();
  Value rotated = elementwise(
      rewriter, loc, {batch, seq, heads, 2, half}, element,
      {halves, halves, cosTable, sinTable},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value first = args[0], second = args[1], cos = args[2], sin = args[3];
        Value firstCos = nb.create<arith::MulFOp>(nloc, first, cos);
        Value secondSin = nb.create<arith::MulFOp>(nloc, second, sin);
        Value secondCos = nb.create<arith::MulFOp>(nloc, second, cos);
        Value firstSin = nb.create<arith::MulFOp>(nloc, first, sin);
        Value firstOut, secondOut;
        if (inverse) {
          firstOut = nb.create<arith::AddFOp>(nloc, firstCos, secondSin);
          secondOut = nb.create<arith::SubFOp>(nloc, secondCos, firstSin);
        } else {
          firstOut = nb.create<arith::SubFOp>(nloc, firstCos, secondSin);
          secondOut = nb.create<arith::AddFOp>(nloc, secondCos, firstSin);
        }
        Value which = nb.create<linalg::IndexOp>(nloc, 3);
        Value isFirst = nb.create<arith::CmpIOp>(
            nloc, arith::CmpIPredicate::eq, which,
            nb.create<arith::ConstantIndexOp>(nloc, 0));
        return nb.create<arith::SelectOp>(nloc, isFirst, firstOut, secondOut)
            .getResult();
      },
      inputMaps);
  return collapse(rewriter, loc, rotated, {{0}, {1}, {2, 3, 4}});
}

//===----------------------------------------------------------------------===//
// tfc.dconv
//===----------------------------------------------------------------------===//

/// `tfc.dconv`: `out[b, s, c] = bias[c] + sum_j w[j, c] * x[b, s - j, c]`,
/// as a reduction over the kernel position `j` of the input padded with
/// `kernel - 1` zeros before the first position.
static Value lowerDepthwiseConv(DepthwiseConvOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  int64_t kernel = shapeOf(op.getWeight())[0];

  Value zero = floatConstant(rewriter, loc, element, 0.0);
  SmallVector<OpFoldResult> low = {rewriter.getIndexAttr(0),
                                   rewriter.getIndexAttr(kernel - 1),
                                   rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> high(3, rewriter.getIndexAttr(0));
  Value padded =
      rewriter.create<tensor::PadOp>(loc, Type(), x, low, high, zero);
  // [kernel, heads, head_dim] -> [kernel, width].
  Value weight = collapse(rewriter, loc, op.getWeight(), {{0}, {1, 2}});

  Value init;
  if (Value bias = op.getBias())
    init = broadcastLastDim(rewriter, loc,
                            collapse(rewriter, loc, bias, {{0, 1}}), shape);
  else
    init = filledTensor(rewriter, loc, shape, element, 0.0);

  // Loops (b, s, c, j): padded position s + kernel - 1 - j is x[s - j].
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx);
  AffineMap inputMap =
      AffineMap::get(4, 0, {d0, d1 + (kernel - 1) - d3, d2}, ctx);
  AffineMap weightMap = loopDims(rewriter, 4, {3, 2});
  return contract(rewriter, loc, init, padded, inputMap, weight, weightMap, 1);
}

//===----------------------------------------------------------------------===//
// tfc.shift_right
//===----------------------------------------------------------------------===//

/// `tfc.shift_right`: the first `seq - amount` positions, padded with
/// `amount` zero positions in front.
static Value lowerShiftRight(ShiftRightOp op, PatternRewriter &rewriter) {
  int64_t amount = static_cast<int64_t>(op.getAmount());
  return shiftPositions(rewriter, op.getLoc(), op.getInput(), amount);
}

//===----------------------------------------------------------------------===//
// tfc.shorten
//===----------------------------------------------------------------------===//

/// Linear shortening: each group's `factor * width` values (positions in
/// order) through `weight [width, factor * width]` and `bias [width]`.
static Value shortenLinear(OpBuilder &b, Location loc, Value x, int64_t factor,
                           Value weight, Value bias) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t batch = shape[0], groups = shape[1] / factor, width = shape[2];
  Value grouped =
      expand(b, loc, x, {{0}, {1, 2}, {3}}, {batch, groups, factor, width});
  Value rows = collapse(b, loc, grouped, {{0}, {1}, {2, 3}});
  return linear(b, loc, rows, weight, bias);
}

/// Attention shortening: the pooled queries attend, per head, to the
/// positions of their own group; the output projection is added to the
/// pooled input.
static Value shortenAttention(OpBuilder &b, Location loc, Value x,
                              int64_t factor, int64_t heads,
                              ValueRange weights) {
  Value pooled = averageGroups(b, loc, x, factor);
  ResamplingAttention attention =
      shorteningAttention(b, loc, x, pooled, factor, heads, weights);
  return add(b, loc, pooled, linear(b, loc, attention.attended, weights[3]));
}

/// `tfc.shorten` of every kind.
static Value lowerShorten(ShortenOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  int64_t factor = static_cast<int64_t>(op.getFactor());
  ValueRange weights = op.getWeights();
  Value result;
  switch (op.getKind()) {
  case ShortenKind::avg:
    result = averageGroups(rewriter, loc, x, factor);
    break;
  case ShortenKind::linear:
    result = shortenLinear(rewriter, loc, x, factor, weights[0], weights[1]);
    break;
  case ShortenKind::attention:
    result = shortenAttention(rewriter, loc, x, factor,
                              static_cast<int64_t>(*op.getHeads()), weights);
    break;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// tfc.upsample
//===----------------------------------------------------------------------===//

/// Linear up-sampling: each shortened position through
/// `weight [factor * width, width]` and `bias [factor * width]`; group
/// position `j` takes channels `j * width .. (j + 1) * width - 1`.
static Value upsampleLinear(OpBuilder &b, Location loc, Value shortened,
                            int64_t factor, Value weight, Value bias) {
  ArrayRef<int64_t> shape = shapeOf(shortened);
  int64_t batch = shape[0], groups = shape[1], width = shape[2];
  // [batch, groups, factor * width] -> [batch, groups, factor, width].
  Value wide = expand(b, loc, linear(b, loc, shortened, weight, bias),
                      {{0}, {1}, {2, 3}}, {batch, groups, factor, width});
  return collapse(b, loc, wide, {{0}, {1, 2}, {3}});
}

/// Attention up-sampling: full-resolution position `p` attends, per head, to
/// the shortened positions `i <= p / factor`; the output projection is added
/// to the naive up-sampling.
static Value upsampleAttention(OpBuilder &b, Location loc, Value shortened,
                               Value residual, int64_t factor, int64_t heads,
                               ValueRange weights) {
  ResamplingAttention attention =
      upsamplingAttention(b, loc, shortened, residual, factor, heads, weights);
  Value projected = linear(b, loc, attention.attended, weights[3]);
  return add(b, loc, repeatPositions(b, loc, shortened, factor), projected);
}

/// `tfc.upsample` of every kind.
static Value lowerUpsample(UpsampleOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value shortened = op.getInput();
  int64_t factor = static_cast<int64_t>(op.getFactor());
  ValueRange weights = op.getWeights();
  Value result;
  switch (op.getKind()) {
  case UpsampleKind::naive:
    result = repeatPositions(rewriter, loc, shortened, factor);
    break;
  case UpsampleKind::linear:
    result = upsampleLinear(rewriter, loc, shortened, factor, weights[0],
                            weights[1]);
    break;
  case UpsampleKind::attention:
    result =
        upsampleAttention(rewriter, loc, shortened, op.getResidual(), factor,
                          static_cast<int64_t>(*op.getHeads()), weights);
    break;
  }
  return result;
}
void mlir::tfc::populateSequenceLoweringPatterns(RewritePatternSet &patterns) {
  addStaticLowerings(patterns, lowerRotary, lowerDepthwiseConv, lowerShiftRight,
                     lowerShorten, lowerUpsample);
}
