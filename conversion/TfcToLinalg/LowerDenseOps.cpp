//===- LowerDenseOps.cpp - Lowering of dense and loss ops -----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Patterns of tfc-lower-to-linalg for the position-wise operations:
/// embedding, positions, linear, layer norm, activations, residual add, CLS
/// selection and the losses.
///
//===----------------------------------------------------------------------===//

#include "conversion/TfcToLinalg/LoweringUtils.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

/// The loop index `dim` of the enclosing linalg.generic as a float.
static Value indexAsFloat(OpBuilder &b, Location loc, unsigned dim,
                          Type element) {
  Value index = b.create<linalg::IndexOp>(loc, dim);
  Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
  return b.create<arith::SIToFPOp>(loc, element, i64);
}

/// `tfc.embedding`: row `ids[b, s]` of the table (clamped, see
/// `clampedIndex`) for each position.
static Value lowerEmbedding(EmbeddingOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value table = op.getTable();
  int64_t vocab = shapeOf(table)[0];
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  AffineMap idsMap = loopDims(rewriter, 3, {0, 1});
  return elementwise(
      rewriter, loc, shape, elementOf(table), ValueRange{op.getIds()},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value row = clampedIndex(b, l, args[0], vocab);
        Value col = b.create<linalg::IndexOp>(l, 2);
        return b.create<tensor::ExtractOp>(l, table, ValueRange{row, col});
      },
      {idsMap});
}

/// `tfc.sinusoidal_positions`: the encoding is a `[seq, d_model]` table,
/// computed once and added to every sequence of the batch (computed per
/// element of `[batch, seq, d_model]`, its exp and sin or cos would run
/// batch times over).
static Value lowerSinusoidalPositions(SinusoidalPositionsOp op,
                                      PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  Type element = elementOf(op.getInput());
  double logBase = std::log(10000.0) / static_cast<double>(shape[2]);
  Value table = elementwise(
      rewriter, loc, shape.drop_front(), element, ValueRange{},
      [&](OpBuilder &b, Location l, ValueRange) -> Value {
        // angle = p * exp(-(2i) * ln(10000) / d) for channels 2i and 2i+1.
        Value position = indexAsFloat(b, l, 0, element);
        Value channel = b.create<linalg::IndexOp>(l, 1);
        Value two = indexConstant(b, l, 2);
        Value parity = b.create<arith::RemUIOp>(l, channel, two);
        Value evenChannel = b.create<arith::SubIOp>(l, channel, parity);
        Value even64 =
            b.create<arith::IndexCastOp>(l, b.getI64Type(), evenChannel);
        Value evenF = b.create<arith::SIToFPOp>(l, element, even64);
        Value exponent = b.create<arith::MulFOp>(
            l, evenF, floatConstant(b, l, element, -logBase));
        Value frequency = b.create<math::ExpOp>(l, exponent);
        Value angle = b.create<arith::MulFOp>(l, position, frequency);
        Value isOdd = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne,
                                              parity, indexConstant(b, l, 0));
        return b.create<arith::SelectOp>(l, isOdd,
                                         b.create<math::CosOp>(l, angle),
                                         b.create<math::SinOp>(l, angle));
      });
  AffineMap identity = rewriter.getMultiDimIdentityMap(3);
  AffineMap tableMap = loopDims(rewriter, 3, {1, 2});
  return elementwise(rewriter, loc, shape, element,
                     ValueRange{op.getInput(), table},
                     [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                       return b.create<arith::AddFOp>(l, args[0], args[1]);
                     },
                     {identity, tableMap});
}

/// `tfc.learned_positions`: the `[seq, d_model]` table added to every
/// sequence of the batch.
static Value lowerLearnedPositions(LearnedPositionsOp op,
                                   PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  AffineMap identity = rewriter.getMultiDimIdentityMap(3);
  AffineMap tableMap = loopDims(rewriter, 3, {1, 2});
  return elementwise(rewriter, loc, shape, elementOf(op.getInput()),
                     ValueRange{op.getInput(), op.getTable()},
                     [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                       return b.create<arith::AddFOp>(l, args[0], args[1]);
                     },
                     {identity, tableMap});
}

/// `tfc.linear`: the input flattened to rows, times the transposed weight,
/// plus the bias if any, and reshaped back.
static Value lowerLinear(LinearOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> inShape = shapeOf(op.getInput());
  int64_t in = inShape.back();
  int64_t rows = 1;
  for (int64_t extent : inShape.drop_back())
    rows *= extent;
  int64_t out = shapeOf(op.getWeight())[0];
  Value x = reshape(rewriter, loc, op.getInput(), {rows, in});
  Value y = matmulTransposeB(rewriter, loc, x, op.getWeight());
  if (Value bias = op.getBias()) {
    AffineMap identity = rewriter.getMultiDimIdentityMap(2);
    AffineMap biasMap = loopDims(rewriter, 2, {1});
    y = elementwise(rewriter, loc, {rows, out}, elementOf(y),
                    ValueRange{y, bias},
                    [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                      return b.create<arith::AddFOp>(l, args[0], args[1]);
                    },
                    {identity, biasMap});
  }
  return reshape(rewriter, loc, y, shapeOf(op.getResult()));
}

/// `tfc.layer_norm` over the last dimension:
/// `(x - mean) / sqrt(var + eps) * gamma + beta` per row.
static Value lowerLayerNorm(LayerNormOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  Type element = elementOf(op.getInput());
  int64_t width = shape.back();
  int64_t rows = 1;
  for (int64_t extent : shape.drop_back())
    rows *= extent;
  Value x = reshape(rewriter, loc, op.getInput(), {rows, width});
  LayerNormStatistics stats =
      layerNormStatistics(rewriter, loc, x, op.getEps().convertToDouble());
  Value centred = stats.centred, inverseStd = stats.inverseStd;
  AffineMap identity = rewriter.getMultiDimIdentityMap(2);
  AffineMap rowMap = loopDims(rewriter, 2, {0});
  AffineMap colMap = loopDims(rewriter, 2, {1});
  Value y = elementwise(
      rewriter, loc, {rows, width}, element,
      ValueRange{centred, inverseStd, op.getGamma(), op.getBeta()},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value normalised = b.create<arith::MulFOp>(l, args[0], args[1]);
        Value scaled = b.create<arith::MulFOp>(l, normalised, args[2]);
        return b.create<arith::AddFOp>(l, scaled, args[3]);
      },
      {identity, rowMap, colMap, colMap});
  return reshape(rewriter, loc, y, shape);
}

/// The activation of `kind` applied to `x`.
static Value activate(OpBuilder &b, Location loc, ActivationKind kind,
                      Value x) {
  Type element = x.getType();
  Value zero = floatConstant(b, loc, element, 0.0);
  switch (kind) {
  case ActivationKind::relu:
    return b.create<arith::MaximumFOp>(loc, x, zero);
  case ActivationKind::squared_relu: {
    Value r = b.create<arith::MaximumFOp>(loc, x, zero);
    return b.create<arith::MulFOp>(loc, r, r);
  }
  case ActivationKind::gelu: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), PyTorch's "tanh" GELU.
    Value cube =
        b.create<arith::MulFOp>(loc, x, b.create<arith::MulFOp>(loc, x, x));
    Value inner = b.create<arith::AddFOp>(
        loc, x,
        b.create<arith::MulFOp>(loc, cube,
                                floatConstant(b, loc, element, 0.044715)));
    Value scaled = b.create<arith::MulFOp>(
        loc, inner, floatConstant(b, loc, element, std::sqrt(2.0 / M_PI)));
    Value t = b.create<math::TanhOp>(loc, scaled);
    Value onePlus =
        b.create<arith::AddFOp>(loc, t, floatConstant(b, loc, element, 1.0));
    Value half =
        b.create<arith::MulFOp>(loc, x, floatConstant(b, loc, element, 0.5));
    return b.create<arith::MulFOp>(loc, half, onePlus);
  }
  }
  llvm_unreachable("unknown activation");
}

/// `tfc.activation`: one element-wise generic applying `activate`.
static Value lowerActivation(ActivationOp op, PatternRewriter &rewriter) {
  ActivationKind kind = op.getKind();
  return elementwise(rewriter, op.getLoc(), shapeOf(op.getInput()),
                     elementOf(op.getInput()), ValueRange{op.getInput()},
                     [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                       return activate(b, l, kind, args[0]);
                     });
}

/// `tfc.add`: one element-wise generic.
static Value lowerAdd(AddOp op, PatternRewriter &rewriter) {
  return elementwise(rewriter, op.getLoc(), shapeOf(op.getLhs()),
                     elementOf(op.getLhs()),
                     ValueRange{op.getLhs(), op.getRhs()},
                     [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                       return b.create<arith::AddFOp>(l, args[0], args[1]);
                     });
}

/// `tfc.take_token`: the slice of `[batch, seq, d]` at `position`, of the
/// result's type.
static Value lowerTakeToken(TakeTokenOp op, PatternRewriter &rewriter) {
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(op.getPosition()),
                                       rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(shape[0]),
                                     rewriter.getIndexAttr(1),
                                     rewriter.getIndexAttr(shape[2])};
  SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
  return rewriter.create<tensor::ExtractSliceOp>(
      op.getLoc(), op.getResult().getType(), op.getInput(), offsets, sizes,
      strides);
}

/// Mean over rows of `logsumexp(logits[r]) - logits[r, target[r]]`, for
/// `logits` [rows, classes] and i32 `targets` [rows].
static Value meanSoftmaxCrossEntropy(OpBuilder &b, Location loc, Value logits,
                                     Value targets) {
  ArrayRef<int64_t> shape = shapeOf(logits);
  int64_t rows = shape[0], classes = shape[1];
  Type element = elementOf(logits);
  Value max = rowMaxima(b, loc, logits);
  AffineMap identity = b.getMultiDimIdentityMap(2);
  AffineMap rowMap = loopDims(b, 2, {0});
  Value shifted =
      elementwise(b, loc, shape, element, ValueRange{logits, max},
                  [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                    return nb.create<math::ExpOp>(
                        l, nb.create<arith::SubFOp>(l, args[0], args[1]));
                  },
                  {identity, rowMap});
  Value sum = sumLastDim(b, loc, shifted);
  Value perRow =
      elementwise(b, loc, {rows}, element, ValueRange{max, sum, targets},
                  [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                    Value row = nb.create<linalg::IndexOp>(l, 0);
                    Value target = clampedIndex(nb, l, args[2], classes);
                    Value picked = nb.create<tensor::ExtractOp>(
                        l, logits, ValueRange{row, target});
                    Value lse = nb.create<arith::AddFOp>(
                        l, args[0], nb.create<math::LogOp>(l, args[1]));
                    return nb.create<arith::SubFOp>(l, lse, picked);
                  });
  return meanOfRows(b, loc, perRow);
}

/// `tfc.cross_entropy`: `[batch, seq, vocab]` flattened to
/// `[batch * seq, vocab]` rows for `meanSoftmaxCrossEntropy`.
static Value lowerCrossEntropy(CrossEntropyOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape = shapeOf(op.getLogits());
  int64_t rows = shape[0] * shape[1];
  Value logits = reshape(rewriter, loc, op.getLogits(), {rows, shape[2]});
  auto targetsType = RankedTensorType::get({rows}, elementOf(op.getTargets()));
  Value targets = rewriter.create<tensor::CollapseShapeOp>(
      loc, targetsType, op.getTargets(),
      ArrayRef<ReassociationIndices>{{0, 1}});
  return meanSoftmaxCrossEntropy(rewriter, loc, logits, targets);
}

/// `tfc.classify_loss`: for `ce` the mean softmax cross-entropy over the
/// batch; for `bce` on one logit per row the mean binary cross-entropy with
/// logits.
static Value lowerClassifyLoss(ClassifyLossOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  if (op.getKind() == ClassifyLossKind::ce)
    return meanSoftmaxCrossEntropy(rewriter, loc, op.getLogits(),
                                   op.getLabels());
  // bce on one logit z with label y: max(z, 0) - z y + log(1 + exp(-|z|)).
  int64_t rows = shapeOf(op.getLogits())[0];
  Type element = elementOf(op.getLogits());
  Value z = reshape(rewriter, loc, op.getLogits(), {rows});
  Value perRow = elementwise(
      rewriter, loc, {rows}, element, ValueRange{z, op.getLabels()},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value logit = args[0];
        Value label = b.create<arith::SIToFPOp>(l, element, args[1]);
        Value zero = floatConstant(b, l, element, 0.0);
        Value positive = b.create<arith::MaximumFOp>(l, logit, zero);
        Value absolute = b.create<math::AbsFOp>(l, logit);
        Value negAbs = b.create<arith::NegFOp>(l, absolute);
        Value softplus =
            b.create<math::Log1pOp>(l, b.create<math::ExpOp>(l, negAbs));
        Value zy = b.create<arith::MulFOp>(l, logit, label);
        return b.create<arith::AddFOp>(
            l, b.create<arith::SubFOp>(l, positive, zy), softplus);
      });
  return meanOfRows(rewriter, loc, perRow);
}

void mlir::tfc::populateDenseLoweringPatterns(RewritePatternSet &patterns) {
  addStaticLowerings(patterns, lowerEmbedding, lowerSinusoidalPositions,
                     lowerLearnedPositions, lowerLinear, lowerLayerNorm,
                     lowerActivation, lowerAdd, lowerTakeToken,
                     lowerCrossEntropy, lowerClassifyLoss);
}
