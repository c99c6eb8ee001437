//===- LowerGradOps.cpp - Lowering of the gradient building blocks --------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Patterns of tfc-lower-to-linalg for the operations the VJPs build
/// (transpose, outer_sum, sum_leading, scale, shift_left, embedding_grad,
/// layer_norm_grad, activation_grad, take_token_grad, cross_entropy_grad,
/// classify_loss_grad) and for a seeded tfc.dropout, whose mask the gradient
/// shares. Each gradient is the exact derivative of the forward lowering in
/// LowerDenseOps.cpp and LowerSequenceOps.cpp. All shapes are static.
///
//===----------------------------------------------------------------------===//

#include "conversion/TfcToLinalg/LoweringUtils.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include <cmath>
#include <cstdint>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The product of `extents`.
static int64_t product(ArrayRef<int64_t> extents) {
  int64_t count = 1;
  for (int64_t extent : extents)
    count *= extent;
  return count;
}

/// An i64 constant holding the bits of `value`.
static Value i64Constant(OpBuilder &b, Location loc, uint64_t value) {
  return b.create<arith::ConstantOp>(
      loc, b.getI64IntegerAttr(static_cast<int64_t>(value)));
}

namespace {
/// Static offsets, sizes and unit strides of a slice.
struct SliceBounds {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
} // namespace

/// Bounds of the slice of `sizes` at the static `offsets`.
static SliceBounds staticSlice(OpBuilder &b, ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes) {
  SliceBounds slice;
  for (auto [offset, size] : llvm::zip(offsets, sizes)) {
    slice.offsets.push_back(b.getIndexAttr(offset));
    slice.sizes.push_back(b.getIndexAttr(size));
    slice.strides.push_back(b.getIndexAttr(1));
  }
  return slice;
}

//===----------------------------------------------------------------------===//
// Linear-algebra building blocks
//===----------------------------------------------------------------------===//

/// tfc.transpose: `linalg.transpose` with permutation [1, 0].
static Value lowerTranspose(TransposeOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value init = emptyTensor(rewriter, loc, shapeOf(op.getResult()),
                           elementOf(op.getResult()));
  auto transpose = rewriter.create<linalg::TransposeOp>(
      loc, op.getInput(), init, ArrayRef<int64_t>{1, 0});
  return transpose->getResult(0);
}

/// tfc.outer_sum: both operands flattened to [rows, m] and [rows, n], then
/// `result[i, j] += lhs[r, i] * rhs[r, j]` as one generic over (i, r, j)
/// into zeros. With `j` innermost both `rhs` and the result are read along
/// their rows, so the loop nest vectorizes without reassociating the sum,
/// and the outermost loop stays parallel.
static Value lowerOuterSum(OuterSumOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> lhsShape = shapeOf(op.getLhs());
  ArrayRef<int64_t> rhsShape = shapeOf(op.getRhs());
  int64_t rows = product(lhsShape.drop_back());
  int64_t m = lhsShape.back(), n = rhsShape.back();
  Value lhs = reshape(rewriter, loc, op.getLhs(), {rows, m});
  Value rhs = reshape(rewriter, loc, op.getRhs(), {rows, n});
  Value init =
      filledTensor(rewriter, loc, {m, n}, elementOf(op.getResult()), 0.0);
  // Loop dims: d0 = i (lhs column), d1 = r (row, reduced), d2 = j.
  SmallVector<AffineMap> maps = {loopDims(rewriter, 3, {1, 0}),
                                 loopDims(rewriter, 3, {1, 2}),
                                 loopDims(rewriter, 3, {0, 2})};
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::reduction,
                                                utils::IteratorType::parallel};
  auto sum = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{init.getType()}, ValueRange{lhs, rhs}, ValueRange{init},
      maps, iterators, [](OpBuilder &b, Location l, ValueRange args) {
        Value term = b.create<arith::MulFOp>(l, args[0], args[1]);
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::AddFOp>(l, args[2], term)});
      });
  return sum.getResult(0);
}

/// tfc.sum_leading: a `linalg.reduce` over the first `count` dimensions.
static Value lowerSumLeading(SumLeadingOp op, PatternRewriter &rewriter) {
  int64_t count = op.getCount();
  if (count == 0)
    return op.getInput();
  Location loc = op.getLoc();
  Value init = filledTensor(rewriter, loc, shapeOf(op.getResult()),
                            elementOf(op.getResult()), 0.0);
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < count; ++d)
    dims.push_back(d);
  auto reduce = rewriter.create<linalg::ReduceOp>(
      loc, ValueRange{op.getInput()}, ValueRange{init}, dims,
      [](OpBuilder &b, Location l, ValueRange args) {
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::AddFOp>(l, args[0], args[1])});
      });
  return reduce.getResult(0);
}

/// tfc.scale: an element-wise multiplication by the constant.
static Value lowerScale(ScaleOp op, PatternRewriter &rewriter) {
  Type element = elementOf(op.getInput());
  double factor = op.getFactor().convertToDouble();
  return elementwise(rewriter, op.getLoc(), shapeOf(op.getInput()), element,
                     ValueRange{op.getInput()},
                     [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                       return b.create<arith::MulFOp>(
                           l, args[0], floatConstant(b, l, element, factor));
                     });
}

/// tfc.shift_left: positions `[amount, seq)` moved to the front, zeros
/// after (the transpose of tfc.shift_right's slice and pad).
static Value lowerShiftLeft(ShiftLeftOp op, PatternRewriter &rewriter) {
  int64_t amount = static_cast<int64_t>(op.getAmount());
  return shiftPositions(rewriter, op.getLoc(), op.getInput(), -amount);
}

//===----------------------------------------------------------------------===//
// Embedding and CLS-token gradients
//===----------------------------------------------------------------------===//

/// tfc.embedding_grad: a scatter-add. An `scf.for` over the `batch * seq`
/// positions carries the `[vocab, d]` accumulator (zeros at first); an inner
/// `scf.for` over the `d` channels adds the position's gradient into the row
/// of its clamped id with tensor.extract / tensor.insert, which bufferize to
/// in-place loads and stores. The cost is `batch * seq * d` additions,
/// independent of the vocabulary.
static Value lowerEmbeddingGrad(EmbeddingGradOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> gradShape = shapeOf(op.getGrad());
  int64_t positions = gradShape[0] * gradShape[1];
  int64_t width = gradShape[2];
  int64_t vocab = shapeOf(op.getResult())[0];
  Type element = elementOf(op.getGrad());
  Value ids = rewriter.create<tensor::CollapseShapeOp>(
      loc, RankedTensorType::get({positions}, elementOf(op.getIds())),
      op.getIds(), ArrayRef<ReassociationIndices>{{0, 1}});
  Value grad = rewriter.create<tensor::CollapseShapeOp>(
      loc, RankedTensorType::get({positions, width}, element), op.getGrad(),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value table = filledTensor(rewriter, loc, {vocab, width}, element, 0.0);
  Value zero = indexConstant(rewriter, loc, 0);
  Value one = indexConstant(rewriter, loc, 1);
  Value widthBound = indexConstant(rewriter, loc, width);
  auto loop = rewriter.create<scf::ForOp>(
      loc, zero, indexConstant(rewriter, loc, positions), one,
      ValueRange{table},
      [&](OpBuilder &b, Location l, Value position, ValueRange rowArgs) {
        Value id = b.create<tensor::ExtractOp>(l, ids, ValueRange{position});
        Value row = clampedIndex(b, l, id, vocab);
        auto channels = b.create<scf::ForOp>(
            l, zero, widthBound, one, ValueRange{rowArgs[0]},
            [&](OpBuilder &nb, Location nl, Value channel, ValueRange accArgs) {
              Value acc = accArgs[0];
              Value old = nb.create<tensor::ExtractOp>(
                  nl, acc, ValueRange{row, channel});
              Value add = nb.create<tensor::ExtractOp>(
                  nl, grad, ValueRange{position, channel});
              Value sum = nb.create<arith::AddFOp>(nl, old, add);
              Value updated = nb.create<tensor::InsertOp>(
                  nl, sum, acc, ValueRange{row, channel});
              nb.create<scf::YieldOp>(nl, ValueRange{updated});
            });
        b.create<scf::YieldOp>(l, channels.getResults());
      });
  return loop.getResult(0);
}

/// tfc.take_token_grad: the `[batch, d]` gradient inserted at `position` of
/// a zero `[batch, seq, d]`.
static Value lowerTakeTokenGrad(TakeTokenGradOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  Value zeros =
      filledTensor(rewriter, loc, shape, elementOf(op.getResult()), 0.0);
  SliceBounds slice =
      staticSlice(rewriter, {0, static_cast<int64_t>(op.getPosition()), 0},
                  {shape[0], 1, shape[2]});
  return rewriter.create<tensor::InsertSliceOp>(op.getLoc(), op.getGrad(),
                                                zeros, slice.offsets,
                                                slice.sizes, slice.strides);
}

//===----------------------------------------------------------------------===//
// Layer normalisation and activations
//===----------------------------------------------------------------------===//

/// tfc.layer_norm_grad, over `rows` rows of `width` with `g = dy * gamma`
/// and `xhat = (x - mean) * rstd`, `rstd = 1 / sqrt(var + eps)` (biased
/// variance, as the forward):
///   dx     = rstd * (g - mean_row(g) - xhat * mean_row(g * xhat))
///   dgamma = sum over rows of dy * xhat
///   dbeta  = sum over rows of dy
/// The statistics are recomputed as the forward computes them; the two row
/// means share one reduction, and so do the two column sums.
static SmallVector<Value> lowerLayerNormGrad(LayerNormGradOp op,
                                             PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  Type element = elementOf(op.getInput());
  int64_t width = shape.back();
  int64_t rows = product(shape.drop_back());
  Value x = reshape(rewriter, loc, op.getInput(), {rows, width});
  Value dy = reshape(rewriter, loc, op.getGrad(), {rows, width});
  Value gamma = op.getGamma();
  // Statistics, exactly as the forward lowering.
  LayerNormStatistics stats =
      layerNormStatistics(rewriter, loc, x, op.getEps().convertToDouble());
  Value inverseWidth = stats.inverseWidth;
  Value centred = stats.centred, inverseStd = stats.inverseStd;
  AffineMap identity = rewriter.getMultiDimIdentityMap(2);
  AffineMap rowMap = loopDims(rewriter, 2, {0});
  AffineMap colMap = loopDims(rewriter, 2, {1});

  // Row sums of g and g * xhat: one generic reducing over the width.
  Value zeroRows = filledTensor(rewriter, loc, {rows}, element, 0.0);
  SmallVector<utils::IteratorType> rowReduction = {
      utils::IteratorType::parallel, utils::IteratorType::reduction};
  auto rowSums = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{zeroRows.getType(), zeroRows.getType()},
      ValueRange{dy, centred, inverseStd, gamma},
      ValueRange{zeroRows, zeroRows},
      ArrayRef<AffineMap>{identity, identity, rowMap, colMap, rowMap, rowMap},
      rowReduction, [](OpBuilder &b, Location l, ValueRange args) {
        Value g = b.create<arith::MulFOp>(l, args[0], args[3]);
        Value xhat = b.create<arith::MulFOp>(l, args[1], args[2]);
        Value gx = b.create<arith::MulFOp>(l, g, xhat);
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::AddFOp>(l, args[4], g),
                          b.create<arith::AddFOp>(l, args[5], gx)});
      });

  Value dx = elementwise(
      rewriter, loc, {rows, width}, element,
      ValueRange{dy, centred, inverseStd, gamma, rowSums.getResult(0),
                 rowSums.getResult(1)},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value g = b.create<arith::MulFOp>(l, args[0], args[3]);
        Value xhat = b.create<arith::MulFOp>(l, args[1], args[2]);
        Value meanG = b.create<arith::MulFOp>(l, args[4], inverseWidth);
        Value meanGx = b.create<arith::MulFOp>(l, args[5], inverseWidth);
        Value inner =
            b.create<arith::SubFOp>(l, b.create<arith::SubFOp>(l, g, meanG),
                                    b.create<arith::MulFOp>(l, xhat, meanGx));
        return b.create<arith::MulFOp>(l, args[2], inner);
      },
      {identity, identity, rowMap, colMap, rowMap, rowMap});

  // Column sums of dy * xhat and dy: one generic reducing over the rows.
  Value zeroCols = filledTensor(rewriter, loc, {width}, element, 0.0);
  SmallVector<utils::IteratorType> colReduction = {
      utils::IteratorType::reduction, utils::IteratorType::parallel};
  auto colSums = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{zeroCols.getType(), zeroCols.getType()},
      ValueRange{dy, centred, inverseStd}, ValueRange{zeroCols, zeroCols},
      ArrayRef<AffineMap>{identity, identity, rowMap, colMap, colMap},
      colReduction, [](OpBuilder &b, Location l, ValueRange args) {
        Value xhat = b.create<arith::MulFOp>(l, args[1], args[2]);
        Value dyx = b.create<arith::MulFOp>(l, args[0], xhat);
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::AddFOp>(l, args[3], dyx),
                          b.create<arith::AddFOp>(l, args[4], args[0])});
      });

  return SmallVector<Value>{reshape(rewriter, loc, dx, shape),
                            colSums.getResult(0), colSums.getResult(1)};
}

/// The derivative of the activation `kind` (as LowerDenseOps.cpp computes
/// it) at `x`, times `grad`:
///   relu:         grad if x > 0, else 0
///   squared_relu: grad * 2 max(x, 0)
///   gelu:         grad * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)),
///                 t = tanh(k (x + c x^3)), k = sqrt(2 / pi), c = 0.044715
static Value activationDerivativeTimes(OpBuilder &b, Location loc,
                                       ActivationKind kind, Value x,
                                       Value grad) {
  Type element = x.getType();
  Value zero = floatConstant(b, loc, element, 0.0);
  switch (kind) {
  case ActivationKind::relu: {
    Value positive =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, zero);
    return b.create<arith::SelectOp>(loc, positive, grad, zero);
  }
  case ActivationKind::squared_relu: {
    Value r = b.create<arith::MaximumFOp>(loc, x, zero);
    Value twice =
        b.create<arith::MulFOp>(loc, r, floatConstant(b, loc, element, 2.0));
    return b.create<arith::MulFOp>(loc, twice, grad);
  }
  case ActivationKind::gelu: {
    const double c = 0.044715;
    const double k = std::sqrt(2.0 / M_PI);
    Value square = b.create<arith::MulFOp>(loc, x, x);
    Value cube = b.create<arith::MulFOp>(loc, x, square);
    Value inner = b.create<arith::AddFOp>(
        loc, x,
        b.create<arith::MulFOp>(loc, cube, floatConstant(b, loc, element, c)));
    Value t = b.create<math::TanhOp>(
        loc,
        b.create<arith::MulFOp>(loc, inner, floatConstant(b, loc, element, k)));
    Value one = floatConstant(b, loc, element, 1.0);
    Value half = floatConstant(b, loc, element, 0.5);
    // d(inner * k)/dx = k (1 + 3 c x^2).
    Value innerSlope = b.create<arith::MulFOp>(
        loc,
        b.create<arith::AddFOp>(
            loc, one,
            b.create<arith::MulFOp>(loc, square,
                                    floatConstant(b, loc, element, 3.0 * c))),
        floatConstant(b, loc, element, k));
    Value sech2 =
        b.create<arith::SubFOp>(loc, one, b.create<arith::MulFOp>(loc, t, t));
    Value left = b.create<arith::MulFOp>(loc, half,
                                         b.create<arith::AddFOp>(loc, one, t));
    Value right = b.create<arith::MulFOp>(
        loc, b.create<arith::MulFOp>(loc, half, x),
        b.create<arith::MulFOp>(loc, sech2, innerSlope));
    return b.create<arith::MulFOp>(
        loc, b.create<arith::AddFOp>(loc, left, right), grad);
  }
  }
  llvm_unreachable("unknown activation");
}

/// tfc.activation_grad: one element-wise generic.
static Value lowerActivationGrad(ActivationGradOp op,
                                 PatternRewriter &rewriter) {
  ActivationKind kind = op.getKind();
  return elementwise(
      rewriter, op.getLoc(), shapeOf(op.getInput()), elementOf(op.getInput()),
      ValueRange{op.getInput(), op.getGrad()},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        return activationDerivativeTimes(b, l, kind, args[0], args[1]);
      });
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// `(softmax(logits[r]) - onehot(clamp(targets[r]))) * grad / rows` for
/// `logits` [rows, classes], i32 `targets` [rows] and the 0-d loss gradient
/// `grad`: the derivative of the mean softmax cross-entropy of the forward
/// (targets outside [0, classes) pick class 0 there too). The softmax is
/// `exp(l - max) / sum exp(l - max)`: a max reduction, one sum reduction
/// and one element-wise generic.
static Value softmaxCrossEntropyGrad(OpBuilder &b, Location loc, Value logits,
                                     Value targets, Value grad) {
  ArrayRef<int64_t> shape = shapeOf(logits);
  int64_t rows = shape[0], classes = shape[1];
  Type element = elementOf(logits);
  Value max = rowMaxima(b, loc, logits);
  AffineMap identity = b.getMultiDimIdentityMap(2);
  AffineMap rowMap = loopDims(b, 2, {0});
  AffineMap scalarMap = loopDims(b, 2, {});
  Value zeroRows = filledTensor(b, loc, {rows}, element, 0.0);
  auto sumExp = b.create<linalg::GenericOp>(
      loc, TypeRange{zeroRows.getType()}, ValueRange{logits, max},
      ValueRange{zeroRows}, ArrayRef<AffineMap>{identity, rowMap, rowMap},
      SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                       utils::IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value e = nb.create<math::ExpOp>(
            l, nb.create<arith::SubFOp>(l, args[0], args[1]));
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::AddFOp>(l, args[2], e)});
      });
  double inverseRows = 1.0 / static_cast<double>(rows);
  return elementwise(
      b, loc, shape, element,
      ValueRange{logits, max, sumExp.getResult(0), targets, grad},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value e = nb.create<math::ExpOp>(
            l, nb.create<arith::SubFOp>(l, args[0], args[1]));
        Value probability = nb.create<arith::DivFOp>(l, e, args[2]);
        Value target = clampedIndex(nb, l, args[3], classes);
        Value column = nb.create<linalg::IndexOp>(l, 1);
        Value hit = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                             column, target);
        Value oneHot = nb.create<arith::SelectOp>(
            l, hit, floatConstant(nb, l, element, 1.0),
            floatConstant(nb, l, element, 0.0));
        Value scale = nb.create<arith::MulFOp>(
            l, args[4], floatConstant(nb, l, element, inverseRows));
        return nb.create<arith::MulFOp>(
            l, nb.create<arith::SubFOp>(l, probability, oneHot), scale);
      },
      {identity, rowMap, rowMap, rowMap, scalarMap});
}

/// tfc.cross_entropy_grad: `[batch, seq, vocab]` flattened to
/// `[batch * seq, vocab]` rows (the forward's mean is over all positions).
static Value lowerCrossEntropyGrad(CrossEntropyGradOp op,
                                   PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getLogits());
  int64_t rows = shape[0] * shape[1];
  Value logits = reshape(rewriter, loc, op.getLogits(), {rows, shape[2]});
  Value targets = rewriter.create<tensor::CollapseShapeOp>(
      loc, RankedTensorType::get({rows}, elementOf(op.getTargets())),
      op.getTargets(), ArrayRef<ReassociationIndices>{{0, 1}});
  Value grad =
      softmaxCrossEntropyGrad(rewriter, loc, logits, targets, op.getGrad());
  return reshape(rewriter, loc, grad, shape);
}

/// tfc.classify_loss_grad: for `ce` the softmax cross-entropy gradient over
/// the batch; for `bce` on one logit `z` with label `y`,
/// `(sigmoid(z) - y) * grad / batch`.
static Value lowerClassifyLossGrad(ClassifyLossGradOp op,
                                   PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  if (op.getKind() == ClassifyLossKind::ce)
    return softmaxCrossEntropyGrad(rewriter, loc, op.getLogits(),
                                   op.getLabels(), op.getGrad());
  ArrayRef<int64_t> shape = shapeOf(op.getLogits());
  Type element = elementOf(op.getLogits());
  double inverseRows = 1.0 / static_cast<double>(shape[0]);
  AffineMap identity = rewriter.getMultiDimIdentityMap(2);
  AffineMap rowMap = loopDims(rewriter, 2, {0});
  AffineMap scalarMap = loopDims(rewriter, 2, {});
  return elementwise(
      rewriter, loc, shape, element,
      ValueRange{op.getLogits(), op.getLabels(), op.getGrad()},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value one = floatConstant(b, l, element, 1.0);
        // sigmoid(z) = 1 / (1 + exp(-z)); exp overflowing to +inf gives 0.
        Value expNeg =
            b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, args[0]));
        Value sigmoid = b.create<arith::DivFOp>(
            l, one, b.create<arith::AddFOp>(l, one, expNeg));
        Value label = b.create<arith::SIToFPOp>(l, element, args[1]);
        Value scale = b.create<arith::MulFOp>(
            l, args[2], floatConstant(b, l, element, inverseRows));
        return b.create<arith::MulFOp>(
            l, b.create<arith::SubFOp>(l, sigmoid, label), scale);
      },
      {identity, rowMap, scalarMap});
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// The golden-ratio increment of splitmix64.
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
/// The two multipliers of the splitmix64 finaliser.
constexpr uint64_t kMix1 = 0xBF58476D1CE4E5B9ULL;
constexpr uint64_t kMix2 = 0x94D049BB133111EBULL;

/// tfc.dropout with a seed. The mask is a pure function of (seed, stream,
/// i), where `i` is the element's row-major linear index over the whole
/// tensor; in unsigned 64-bit arithmetic (wrapping, `>>` logical):
///
///   x = (seed * 0x9E3779B97F4A7C15) ^ (stream << 40) ^ i
///   z = x + 0x9E3779B97F4A7C15
///   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
///   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
///   z =  z ^ (z >> 31)
///   u = (z >> 40) / 2^24                       (the top 24 bits, in [0, 1))
///
/// that is one splitmix64 step from state `x`. Element `i` is kept iff
/// `u >= rate`, evaluated exactly as `(z >> 40) >= ceil(rate * 2^24)` (the
/// same for f32 and f64), and a kept element is multiplied by
/// `1 / (1 - rate)`. The whole computation is one element-wise generic
/// reading `linalg.index`, so every run, device and the gradient (the same
/// op on the output gradient) see the same mask. A dropout without a seed
/// is not lowered: it must be stripped or seeded first.
static FailureOr<Value> lowerDropout(DropoutOp op, PatternRewriter &rewriter) {
  Value seed = op.getSeed();
  if (!seed)
    return rewriter.notifyMatchFailure(
        op, "needs a seed (tfc-autodiff) or removal (tfc-strip-dropout)");
  double rate = op.getRate().convertToDouble();
  if (rate == 0.0)
    return op.getInput();
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  unsigned rank = shape.size();
  Type element = elementOf(op.getInput());
  SmallVector<int64_t> strides(rank, 1);
  for (int d = static_cast<int>(rank) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  auto threshold =
      static_cast<uint64_t>(std::ceil(rate * static_cast<double>(1 << 24)));
  uint64_t streamBits = static_cast<uint64_t>(op.getStream()) << 40;
  double keepScale = 1.0 / (1.0 - rate);
  AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
  AffineMap scalarMap = loopDims(rewriter, rank, {});
  return elementwise(
      rewriter, loc, shape, element, ValueRange{op.getInput(), seed},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value linear = i64Constant(b, l, 0);
        for (unsigned d = 0; d < rank; ++d) {
          Value index = b.create<arith::IndexCastOp>(
              l, b.getI64Type(), b.create<linalg::IndexOp>(l, d));
          if (strides[d] != 1)
            index = b.create<arith::MulIOp>(l, index,
                                            i64Constant(b, l, strides[d]));
          linear = b.create<arith::AddIOp>(l, linear, index);
        }
        auto shiftXorMul = [&](Value z, uint64_t shift,
                               uint64_t multiplier) -> Value {
          Value shifted =
              b.create<arith::ShRUIOp>(l, z, i64Constant(b, l, shift));
          Value mixed = b.create<arith::XOrIOp>(l, z, shifted);
          return b.create<arith::MulIOp>(l, mixed,
                                         i64Constant(b, l, multiplier));
        };
        Value key =
            b.create<arith::MulIOp>(l, args[1], i64Constant(b, l, kGolden));
        key = b.create<arith::XOrIOp>(l, key, i64Constant(b, l, streamBits));
        key = b.create<arith::XOrIOp>(l, key, linear);
        Value z = b.create<arith::AddIOp>(l, key, i64Constant(b, l, kGolden));
        z = shiftXorMul(z, 30, kMix1);
        z = shiftXorMul(z, 27, kMix2);
        z = b.create<arith::XOrIOp>(
            l, z, b.create<arith::ShRUIOp>(l, z, i64Constant(b, l, 31)));
        Value top = b.create<arith::ShRUIOp>(l, z, i64Constant(b, l, 40));
        Value keep = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::uge, top,
                                             i64Constant(b, l, threshold));
        Value scaled = b.create<arith::MulFOp>(
            l, args[0], floatConstant(b, l, element, keepScale));
        return b.create<arith::SelectOp>(l, keep, scaled,
                                         floatConstant(b, l, element, 0.0));
      },
      {identity, scalarMap});
}

void mlir::tfc::populateGradLoweringPatterns(RewritePatternSet &patterns) {
  addStaticLowerings(patterns, lowerTranspose, lowerOuterSum, lowerSumLeading,
                     lowerScale, lowerShiftLeft, lowerEmbeddingGrad,
                     lowerTakeTokenGrad, lowerLayerNormGrad,
                     lowerActivationGrad, lowerCrossEntropyGrad,
                     lowerClassifyLossGrad, lowerDropout);
}
