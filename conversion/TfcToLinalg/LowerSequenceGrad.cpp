//===- LowerSequenceGrad.cpp - Lowering of sequence gradient ops ----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Lowers the gradient operations of the sequence-mixing tfc ops,
/// `tfc.dconv_grad`, `tfc.shorten_grad` and `tfc.upsample_grad`, into
/// `linalg`, `tensor`, `arith` and `math` on statically shaped tensors.
///
/// Each pattern differentiates the forward lowering of LowerSequenceOps.cpp:
/// it recomputes what the backward pass needs from the forward operands (the
/// attention weights of the attention-based resampling, for instance) and
/// applies the chain rule to every path from the operands to the result.
///
/// Conventions are those of the forward lowering: activations are
/// `[batch, seq, width]`, a width of `heads * head_dim` is split into heads as
/// channel `c = h * head_dim + e`, and linear layers follow `nn.Linear`
/// (`y = x W^T + b`, `W` as `[out, in]`), whose gradients are
/// `dx = dy W`, `dW = dy^T x` and `db = sum dy` over the rows.
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

/// Element-wise sum of tensors of the same type.
static Value addAll(OpBuilder &b, Location loc, ValueRange terms) {
  return elementwise(b, loc, shapeOf(terms[0]), elementOf(terms[0]), terms,
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       Value sum = args[0];
                       for (unsigned i = 1; i < terms.size(); ++i)
                         sum = nb.create<arith::AddFOp>(nloc, sum, args[i]);
                       return sum;
                     });
}

/// The input gradient of a linear layer: `dy[..., out] W[out, in]`.
static Value projectBack(OpBuilder &b, Location loc, Value grad, Value weight) {
  Value rows = toRows(b, loc, grad);
  Value init = filledTensor(b, loc, {shapeOf(rows)[0], shapeOf(weight)[1]},
                            elementOf(grad), 0.0);
  Value dx =
      b.create<linalg::MatmulOp>(loc, TypeRange{init.getType()},
                                 ValueRange{rows, weight}, ValueRange{init})
          .getResult(0);
  return fromRows(b, loc, dx, shapeOf(grad).drop_back());
}

/// The weight gradient of a linear layer, `dy^T x` summed over every row:
/// `[..., out]` and `[..., in]` give `[out, in]`.
static Value weightGrad(OpBuilder &b, Location loc, Value grad, Value input) {
  Value gradRows = toRows(b, loc, grad), inputRows = toRows(b, loc, input);
  Value init =
      filledTensor(b, loc, {shapeOf(gradRows)[1], shapeOf(inputRows)[1]},
                   elementOf(grad), 0.0);
  return b
      .create<linalg::MatmulTransposeAOp>(loc, TypeRange{init.getType()},
                                          ValueRange{gradRows, inputRows},
                                          ValueRange{init})
      .getResult(0);
}

/// Sums `value` over every dimension not in `kept`; the result has the kept
/// dimensions, in the order listed.
static Value sumOver(OpBuilder &b, Location loc, Value value,
                     ArrayRef<unsigned> kept) {
  ArrayRef<int64_t> shape = shapeOf(value);
  unsigned rank = shape.size();
  SmallVector<int64_t> outShape;
  for (unsigned dim : kept)
    outShape.push_back(shape[dim]);
  Value zeros = filledTensor(b, loc, outShape, elementOf(value), 0.0);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  for (unsigned dim : kept)
    iterators[dim] = utils::IteratorType::parallel;
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{zeros.getType()}, ValueRange{value}, ValueRange{zeros},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                          loopDims(b, rank, kept)},
      iterators, [](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(
            nloc, nb.create<arith::AddFOp>(nloc, args[1], args[0]).getResult());
      });
  return generic.getResult(0);
}

/// The gradient of the scores of `probs = softmax(factor * scores)` (over the
/// last dimension) given the gradient of the probabilities:
/// `factor * probs * (dprobs - sum_j probs[j] dprobs[j])`. Masked entries,
/// whose probability is 0, get gradient 0.
static Value scaledSoftmaxGrad(OpBuilder &b, Location loc, Value probs,
                               Value probsGrad, double factor) {
  ArrayRef<int64_t> shape = shapeOf(probs);
  unsigned rank = shape.size();
  Type element = elementOf(probs);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = loopDims(b, rank, leadingDims(rank - 1));
  Value rowDot = contractNew(b, loc, shape.drop_back(), probs, identity,
                             probsGrad, identity, 1);
  return elementwise(
      b, loc, shape, element, {probs, probsGrad, rowDot},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value centred = nb.create<arith::SubFOp>(nloc, args[1], args[2]);
        Value weighted = nb.create<arith::MulFOp>(nloc, args[0], centred);
        Value c = floatConstant(nb, nloc, element, factor);
        return nb.create<arith::MulFOp>(nloc, weighted, c).getResult();
      },
      {identity, identity, rowMap});
}

/// Sums each group of `factor` consecutive positions:
/// `[batch, seq, width] -> [batch, seq / factor, width]`.
static Value sumGroups(OpBuilder &b, Location loc, Value x, int64_t factor) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t batch = shape[0], groups = shape[1] / factor, width = shape[2];
  Value grouped =
      expand(b, loc, x, {{0}, {1, 2}, {3}}, {batch, groups, factor, width});
  return sumOver(b, loc, grouped, {0, 1, 3});
}

/// Mean over each group of `factor` consecutive positions, as the forward
/// average pooling computes it (a sum scaled by `1 / factor`).
static Value averageGroups(OpBuilder &b, Location loc, Value x,
                           int64_t factor) {
  return scale(b, loc, sumGroups(b, loc, x, factor),
               1.0 / static_cast<double>(factor));
}

/// Pads dimension 1 of a rank-3 tensor with `low` zeros in front and `high`
/// zeros behind.
static Value padSequence(OpBuilder &b, Location loc, Value x, int64_t low,
                         int64_t high) {
  Value zero = floatConstant(b, loc, elementOf(x), 0.0);
  SmallVector<OpFoldResult> lows = {b.getIndexAttr(0), b.getIndexAttr(low),
                                    b.getIndexAttr(0)};
  SmallVector<OpFoldResult> highs = {b.getIndexAttr(0), b.getIndexAttr(high),
                                     b.getIndexAttr(0)};
  return b.create<tensor::PadOp>(loc, Type(), x, lows, highs, zero);
}

/// Whether the operands of a resampling gradient have the shapes its lowering
/// assumes: `full` is `[batch, seq, width]` with `seq` divisible by `factor`,
/// `shortened` is `[batch, seq / factor, width]`, every weight has its shape in
/// `weightShapes`, and, for the attention kinds (`needsHeads`), `heads` is
/// given and divides the width.
static bool resampleShapesMatch(Value full, Value shortened, int64_t factor,
                                ValueRange weights,
                                ArrayRef<SmallVector<int64_t>> weightShapes,
                                bool needsHeads,
                                std::optional<uint64_t> heads) {
  ArrayRef<int64_t> shape = shapeOf(full);
  if (shape.size() != 3 || factor <= 0 || shape[1] % factor != 0)
    return false;
  if (shapeOf(shortened) !=
      ArrayRef<int64_t>({shape[0], shape[1] / factor, shape[2]}))
    return false;
  if (weights.size() != weightShapes.size())
    return false;
  for (auto [weight, expected] : llvm::zip(weights, weightShapes))
    if (shapeOf(weight) != ArrayRef<int64_t>(expected))
      return false;
  if (!needsHeads)
    return true;
  return heads && *heads > 0 && shape[2] % static_cast<int64_t>(*heads) == 0;
}

//===----------------------------------------------------------------------===//
// tfc.dconv_grad
//===----------------------------------------------------------------------===//

/// `tfc.dconv_grad` of `out[b, s, c] = bias[c] + sum_j w[j, c] x[b, s - j, c]`:
///
/// - `dx[b, s, c] = sum_{j, s + j < seq} w[j, c] dy[b, s + j, c]`, a
///   reduction over `j` of `dy` padded with `kernel - 1` zeros behind;
/// - `dw[j, c] = sum_{b, s >= j} dy[b, s, c] x[b, s - j, c]`, a reduction over
///   batch and positions of `x` padded with `kernel - 1` zeros in front;
/// - `dbias[c] = sum_{b, s} dy[b, s, c]`.
static FailureOr<SmallVector<Value>>
lowerDepthwiseConvGrad(DepthwiseConvGradOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = op.getInput(), grad = op.getGrad();
  ArrayRef<int64_t> shape = shapeOf(x);
  ArrayRef<int64_t> weightShape = shapeOf(op.getWeight());
  if (shape.size() != 3 || weightShape.size() != 3 ||
      weightShape[1] * weightShape[2] != shape[2])
    return rewriter.notifyMatchFailure(
        op, "needs [batch, seq, heads * head_dim] and a matching weight");
  int64_t kernel = weightShape[0], width = shape[2];
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx);

  // [kernel, heads, head_dim] -> [kernel, width].
  Value weight = collapse(rewriter, loc, op.getWeight(), {{0}, {1, 2}});

  // Loops (b, s, c, j): padded position s + j is dy[s + j], zero past the
  // end.
  Value gradPadded = padSequence(rewriter, loc, grad, 0, kernel - 1);
  Value inputGrad = contractNew(rewriter, loc, shape, gradPadded,
                                AffineMap::get(4, 0, {d0, d1 + d3, d2}, ctx),
                                weight, loopDims(rewriter, 4, {3, 2}), 1);

  // Loops (j, c, b, s): padded position s + kernel - 1 - j is x[s - j],
  // zero before the start.
  Value inputPadded = padSequence(rewriter, loc, x, kernel - 1, 0);
  Value weightGradFlat = contractNew(
      rewriter, loc, {kernel, width}, grad, loopDims(rewriter, 4, {2, 3, 1}),
      inputPadded, AffineMap::get(4, 0, {d2, d3 + (kernel - 1) - d0, d1}, ctx),
      2);
  Value weightGradOut =
      expand(rewriter, loc, weightGradFlat, {{0}, {1, 2}}, weightShape);

  Value biasGrad = expand(rewriter, loc, sumOver(rewriter, loc, grad, {2}),
                          {{0, 1}}, weightShape.drop_front());
  return SmallVector<Value>{inputGrad, weightGradOut, biasGrad};
}

//===----------------------------------------------------------------------===//
// tfc.shorten_grad
//===----------------------------------------------------------------------===//

/// Regroups `[batch, seq, width]` into the rows of linear resampling,
/// `[batch, seq / factor, factor * width]` (group positions side by side).
static Value groupRows(OpBuilder &b, Location loc, Value x, int64_t factor) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t batch = shape[0], groups = shape[1] / factor, width = shape[2];
  Value grouped =
      expand(b, loc, x, {{0}, {1, 2}, {3}}, {batch, groups, factor, width});
  return collapse(b, loc, grouped, {{0}, {1}, {2, 3}});
}

/// The inverse of `groupRows`: `[batch, groups, factor * width]` back to
/// `[batch, groups * factor, width]`.
static Value ungroupRows(OpBuilder &b, Location loc, Value rows,
                         int64_t factor) {
  ArrayRef<int64_t> shape = shapeOf(rows);
  int64_t batch = shape[0], groups = shape[1], width = shape[2] / factor;
  Value grouped =
      expand(b, loc, rows, {{0}, {1}, {2, 3}}, {batch, groups, factor, width});
  return collapse(b, loc, grouped, {{0}, {1, 2}, {3}});
}

/// Gradients of attention shortening (see `shortenAttention` in
/// LowerSequenceOps.cpp). With `P` the pooled input, `Q = P Wq^T`,
/// `K = x Wk^T`, `V = x Wv^T`, `A` the softmax over each group of the scaled
/// scores `Q . K` and `O = A V`, the result is `P + O Wo^T`. Backward from
/// `dy`: `dO = dy Wo`, `dA = dO . V`, `dV = A^T dO`, the scores' gradient
/// `dS` through the softmax, `dQ = dS K`, `dK = dS^T Q`; then
/// `dP = dy + dQ Wq` spreads evenly over each group, and
/// `dx = dP / factor (repeated) + dK Wk + dV Wv`.
static SmallVector<Value> shortenAttentionGrad(OpBuilder &b, Location loc,
                                               Value x, Value grad,
                                               int64_t factor, int64_t heads,
                                               ValueRange weights) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t batch = shape[0], groups = shape[1] / factor, width = shape[2];
  int64_t headDim = width / heads;
  double scoreScale = 1.0 / std::sqrt(static_cast<double>(headDim));
  Value wq = weights[0], wk = weights[1], wv = weights[2], wo = weights[3];

  // Forward recomputation.
  Value pooled = averageGroups(b, loc, x, factor);
  ResamplingAttention forward =
      shorteningAttention(b, loc, x, pooled, factor, heads, weights);
  Value query = forward.query, key = forward.key, value = forward.value;
  Value probs = forward.probs, attended = forward.attended;

  // Output projection.
  Value outputWeightGrad = weightGrad(b, loc, grad, attended);
  Value attendedGrad = splitHeads(b, loc, projectBack(b, loc, grad, wo), heads);

  // Through A V. dA[b, n, h, j] = sum_e dO[b, n, h, e] v[b, n, j, h, e];
  // loops (b, n, h, j, e).
  Value probsGrad = contractNew(b, loc, {batch, groups, heads, factor},
                                attendedGrad, loopDims(b, 5, {0, 1, 2, 4}),
                                value, loopDims(b, 5, {0, 1, 3, 2, 4}), 1);
  // dV[b, n, j, h, e] = p[b, n, h, j] dO[b, n, h, e]; loops (b, n, j, h, e).
  Value valueGrad = contractNew(b, loc, {batch, groups, factor, heads, headDim},
                                probs, loopDims(b, 5, {0, 1, 3, 2}),
                                attendedGrad, loopDims(b, 5, {0, 1, 3, 4}), 0);

  // Through the softmax and Q . K.
  Value scoresGrad = scaledSoftmaxGrad(b, loc, probs, probsGrad, scoreScale);
  // dQ[b, n, h, e] = sum_j dS[b, n, h, j] k[b, n, j, h, e]; loops
  // (b, n, h, e, j).
  Value queryGrad = contractNew(b, loc, {batch, groups, heads, headDim},
                                scoresGrad, loopDims(b, 5, {0, 1, 2, 4}), key,
                                loopDims(b, 5, {0, 1, 4, 2, 3}), 1);
  // dK[b, n, j, h, e] = dS[b, n, h, j] q[b, n, h, e]; loops (b, n, j, h, e).
  Value keyGrad = contractNew(b, loc, {batch, groups, factor, heads, headDim},
                              scoresGrad, loopDims(b, 5, {0, 1, 3, 2}), query,
                              loopDims(b, 5, {0, 1, 3, 4}), 0);

  // Back to [batch, seq, width] and through the projections.
  auto mergeGroups = [&](Value v) {
    return collapse(b, loc, v, {{0}, {1, 2}, {3, 4}});
  };
  Value queryRows = mergeHeads(b, loc, queryGrad);
  Value keyRows = mergeGroups(keyGrad), valueRows = mergeGroups(valueGrad);
  Value queryWeightGrad = weightGrad(b, loc, queryRows, pooled);
  Value keyWeightGrad = weightGrad(b, loc, keyRows, x);
  Value valueWeightGrad = weightGrad(b, loc, valueRows, x);

  // The pooled input feeds the residual and the queries.
  Value pooledGrad = addAll(b, loc, {grad, projectBack(b, loc, queryRows, wq)});
  Value poolingGrad = scale(b, loc, repeatPositions(b, loc, pooledGrad, factor),
                            1.0 / static_cast<double>(factor));
  Value inputGrad = addAll(b, loc,
                           {poolingGrad, projectBack(b, loc, keyRows, wk),
                            projectBack(b, loc, valueRows, wv)});
  return {inputGrad, queryWeightGrad, keyWeightGrad, valueWeightGrad,
          outputWeightGrad};
}

/// `tfc.shorten_grad` of every kind.
static FailureOr<SmallVector<Value>>
lowerShortenGrad(ShortenGradOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = op.getInput(), grad = op.getGrad();
  int64_t factor = static_cast<int64_t>(op.getFactor());
  ValueRange weights = op.getWeights();
  if (shapeOf(x).size() != 3)
    return rewriter.notifyMatchFailure(op, "needs [batch, seq, width]");
  int64_t width = shapeOf(x).back();
  SmallVector<SmallVector<int64_t>> weightShapes;
  if (op.getKind() == ShortenKind::linear)
    weightShapes = {{width, factor * width}, {width}};
  else if (op.getKind() == ShortenKind::attention)
    weightShapes.assign(4, {width, width});
  if (!resampleShapesMatch(x, grad, factor, weights, weightShapes,
                           op.getKind() == ShortenKind::attention,
                           op.getHeads()))
    return rewriter.notifyMatchFailure(op, "unexpected operand shapes");

  SmallVector<Value> results;
  switch (op.getKind()) {
  case ShortenKind::avg:
    // Each position receives its group's gradient over `factor`.
    results.push_back(scale(rewriter, loc,
                            repeatPositions(rewriter, loc, grad, factor),
                            1.0 / static_cast<double>(factor)));
    break;
  case ShortenKind::linear: {
    // The forward reads x as rows of factor * width values: a reshape, so
    // the input gradient is the rows' gradient reshaped back.
    Value rows = groupRows(rewriter, loc, x, factor);
    results.push_back(ungroupRows(
        rewriter, loc, projectBack(rewriter, loc, grad, weights[0]), factor));
    results.push_back(weightGrad(rewriter, loc, grad, rows));
    results.push_back(sumOver(rewriter, loc, grad, {2}));
    break;
  }
  case ShortenKind::attention:
    results =
        shortenAttentionGrad(rewriter, loc, x, grad, factor,
                             static_cast<int64_t>(*op.getHeads()), weights);
    break;
  }
  return results;
}

//===----------------------------------------------------------------------===//
// tfc.upsample_grad
//===----------------------------------------------------------------------===//

/// Gradients of attention up-sampling (see `upsampleAttention` in
/// LowerSequenceOps.cpp). With `Q = r Wq^T` from the residual, `K = s Wk^T`
/// and `V = s Wv^T` from the shortened input, `A` the softmax of the scaled,
/// masked scores (`i * factor <= p`) and `O = A V`, the result is
/// `repeat(s) + O Wo^T`. Backward from `dy`: `dO = dy Wo`, `dA = dO . V`,
/// `dV = A^T dO`, `dS` through the softmax (zero where masked),
/// `dQ = dS K`, `dK = dS^T Q`; then `dr = dQ Wq` and
/// `ds = sum over each group of dy + dK Wk + dV Wv`.
static SmallVector<Value> upsampleAttentionGrad(OpBuilder &b, Location loc,
                                                Value shortened, Value residual,
                                                Value grad, int64_t factor,
                                                int64_t heads,
                                                ValueRange weights) {
  ArrayRef<int64_t> shape = shapeOf(residual);
  int64_t batch = shape[0], seq = shape[1], width = shape[2];
  int64_t groups = seq / factor, headDim = width / heads;
  double scoreScale = 1.0 / std::sqrt(static_cast<double>(headDim));
  Value wq = weights[0], wk = weights[1], wv = weights[2], wo = weights[3];

  // Forward recomputation.
  ResamplingAttention forward =
      upsamplingAttention(b, loc, shortened, residual, factor, heads, weights);
  Value query = forward.query, key = forward.key, value = forward.value;
  Value probs = forward.probs, attended = forward.attended;

  // Output projection.
  Value outputWeightGrad = weightGrad(b, loc, grad, attended);
  Value attendedGrad = splitHeads(b, loc, projectBack(b, loc, grad, wo), heads);

  // Through A V. dA[b, p, h, i] = sum_e dO[b, p, h, e] v[b, i, h, e]; loops
  // (b, p, h, i, e).
  Value probsGrad = contractNew(b, loc, {batch, seq, heads, groups},
                                attendedGrad, loopDims(b, 5, {0, 1, 2, 4}),
                                value, loopDims(b, 5, {0, 3, 2, 4}), 1);
  // dV[b, i, h, e] = sum_p p[b, p, h, i] dO[b, p, h, e]; loops
  // (b, i, h, e, p).
  Value valueGrad = contractNew(b, loc, {batch, groups, heads, headDim}, probs,
                                loopDims(b, 5, {0, 4, 2, 1}), attendedGrad,
                                loopDims(b, 5, {0, 4, 2, 3}), 1);

  // Through the softmax and Q . K.
  Value scoresGrad = scaledSoftmaxGrad(b, loc, probs, probsGrad, scoreScale);
  // dQ[b, p, h, e] = sum_i dS[b, p, h, i] k[b, i, h, e]; loops
  // (b, p, h, e, i).
  Value queryGrad = contractNew(b, loc, {batch, seq, heads, headDim},
                                scoresGrad, loopDims(b, 5, {0, 1, 2, 4}), key,
                                loopDims(b, 5, {0, 4, 2, 3}), 1);
  // dK[b, i, h, e] = sum_p dS[b, p, h, i] q[b, p, h, e]; loops
  // (b, i, h, e, p).
  Value keyGrad = contractNew(b, loc, {batch, groups, heads, headDim},
                              scoresGrad, loopDims(b, 5, {0, 4, 2, 1}), query,
                              loopDims(b, 5, {0, 4, 2, 3}), 1);

  // Through the projections.
  Value queryRows = mergeHeads(b, loc, queryGrad);
  Value keyRows = mergeHeads(b, loc, keyGrad);
  Value valueRows = mergeHeads(b, loc, valueGrad);
  Value residualGrad = projectBack(b, loc, queryRows, wq);
  Value shortenedGrad =
      addAll(b, loc,
             {sumGroups(b, loc, grad, factor), projectBack(b, loc, keyRows, wk),
              projectBack(b, loc, valueRows, wv)});
  return {shortenedGrad,
          residualGrad,
          weightGrad(b, loc, queryRows, residual),
          weightGrad(b, loc, keyRows, shortened),
          weightGrad(b, loc, valueRows, shortened),
          outputWeightGrad};
}

/// `tfc.upsample_grad` of every kind.
static FailureOr<SmallVector<Value>>
lowerUpsampleGrad(UpsampleGradOp op, PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value shortened = op.getInput(), residual = op.getResidual();
  Value grad = op.getGrad();
  int64_t factor = static_cast<int64_t>(op.getFactor());
  ValueRange weights = op.getWeights();
  ArrayRef<int64_t> residualShape = shapeOf(residual);
  Type element = elementOf(residual);
  if (residualShape.size() != 3)
    return rewriter.notifyMatchFailure(op, "needs [batch, seq, width]");
  int64_t width = residualShape.back();
  SmallVector<SmallVector<int64_t>> weightShapes;
  if (op.getKind() == UpsampleKind::linear)
    weightShapes = {{factor * width, width}, {factor * width}};
  else if (op.getKind() == UpsampleKind::attention)
    weightShapes.assign(4, {width, width});
  if (!resampleShapesMatch(residual, shortened, factor, weights, weightShapes,
                           op.getKind() == UpsampleKind::attention,
                           op.getHeads()) ||
      shapeOf(grad) != residualShape)
    return rewriter.notifyMatchFailure(op, "unexpected operand shapes");

  SmallVector<Value> results;
  switch (op.getKind()) {
  case UpsampleKind::naive:
    // Each shortened position receives the sum of its copies' gradients.
    results.push_back(sumGroups(rewriter, loc, grad, factor));
    results.push_back(filledTensor(rewriter, loc, residualShape, element, 0.0));
    break;
  case UpsampleKind::linear: {
    // The gradient of the forward's [batch, groups, factor * width] rows
    // is a reshape of the result's gradient.
    Value rowsGrad = groupRows(rewriter, loc, grad, factor);
    results.push_back(projectBack(rewriter, loc, rowsGrad, weights[0]));
    results.push_back(filledTensor(rewriter, loc, residualShape, element, 0.0));
    results.push_back(weightGrad(rewriter, loc, rowsGrad, shortened));
    results.push_back(sumOver(rewriter, loc, rowsGrad, {2}));
    break;
  }
  case UpsampleKind::attention:
    results =
        upsampleAttentionGrad(rewriter, loc, shortened, residual, grad, factor,
                              static_cast<int64_t>(*op.getHeads()), weights);
    break;
  }
  return results;
}
void mlir::tfc::populateSequenceGradLoweringPatterns(
    RewritePatternSet &patterns) {
  addStaticLowerings(patterns, lowerDepthwiseConvGrad, lowerShortenGrad,
                     lowerUpsampleGrad);
}
