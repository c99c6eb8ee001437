//===- LoweringUtils.h - Builders shared by the tfc lowerings ---*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The builders that several lowering files of this folder share: the
/// pattern of every lowering (StaticLowering), reshapes, scaling, contractions,
/// the scaled softmax of the resampling attention and the clamped ids of
/// the embedding and the losses. Private to conversion/TfcToLinalg.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_TFCTOLINALG_LOWERINGUTILS_H
#define TFC_CONVERSION_TFCTOLINALG_LOWERINGUTILS_H

#include "passes/AttentionBuilders.h"
#include "passes/Utils.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc::lowering {

using attention::loopDims;
using attention::mergeHeads;
using attention::splitHeads;

/// Whether every shaped operand and result of `op` has a static shape.
bool hasStaticShapes(Operation *op);

namespace detail {
/// Replaces `op` by `values`.
inline LogicalResult replaceOp(PatternRewriter &rewriter, Operation *op,
                               ValueRange values) {
  rewriter.replaceOp(op, values);
  return success();
}

/// Replaces `op` by `values` unless the lowering declined the op.
template <typename Values>
LogicalResult replaceOp(PatternRewriter &rewriter, Operation *op,
                        FailureOr<Values> values) {
  if (failed(values))
    return failure();
  return replaceOp(rewriter, op, ValueRange(*values));
}
} // namespace detail

/// The pattern of every lowering: rewrites an `OpT` whose shapes are all
/// static into the values `build(op, rewriter)` creates, one per result of
/// the op. `build` returns a `Value`, a `SmallVector<Value>`, or a
/// `FailureOr` of either where it may decline an op (by
/// `notifyMatchFailure`, before it creates anything).
template <typename OpT, typename BuildFn>
class StaticLowering : public OpRewritePattern<OpT> {
public:
  StaticLowering(MLIRContext *context, BuildFn build)
      : OpRewritePattern<OpT>(context), build(std::move(build)) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    return detail::replaceOp(rewriter, op, build(op, rewriter));
  }

private:
  BuildFn build;
};

/// Adds the StaticLowering of `OpT` by `build`.
template <typename OpT, typename BuildFn>
void addStaticLowering(RewritePatternSet &patterns, BuildFn build) {
  patterns.add<StaticLowering<OpT, BuildFn>>(patterns.getContext(),
                                             std::move(build));
}

/// Adds the StaticLowering by each of `builds` of the op it takes.
template <typename... Results, typename... OpTs>
void addStaticLowerings(RewritePatternSet &patterns,
                        Results (*...builds)(OpTs, PatternRewriter &)) {
  (addStaticLowering<OpTs>(patterns, builds), ...);
}

/// The dimensions `0, 1, ..., count - 1`.
SmallVector<unsigned> leadingDims(unsigned count);

/// Expands `value` to `shape` with `tensor.expand_shape`; `groups` lists, for
/// each source dimension, the result dimensions it becomes.
Value expand(OpBuilder &b, Location loc, Value value,
             ArrayRef<ReassociationIndices> groups, ArrayRef<int64_t> shape);

/// Collapses `value` with `tensor.collapse_shape`; `groups` lists, for each
/// result dimension, the source dimensions merged into it.
Value collapse(OpBuilder &b, Location loc, Value value,
               ArrayRef<ReassociationIndices> groups);

/// Collapses every dimension but the last: `[..., n] -> [rows, n]`.
Value toRows(OpBuilder &b, Location loc, Value value);

/// Expands `[rows, n]` back to `leading` followed by `n`, the inverse of
/// `toRows` for a value whose leading dimensions were `leading`.
Value fromRows(OpBuilder &b, Location loc, Value rows,
               ArrayRef<int64_t> leading);

/// Element-wise `lhs + rhs` of two tensors of the same type.
Value add(OpBuilder &b, Location loc, Value lhs, Value rhs);

/// A tensor of `shape` whose last dimension is `vector` (`[shape.back()]`),
/// repeated over the leading dimensions.
Value broadcastLastDim(OpBuilder &b, Location loc, Value vector,
                       ArrayRef<int64_t> shape);

/// `nn.Linear` over the last dimension: `x[..., in] W[out, in]^T + bias[out]`
/// (no bias when `bias` is null). `x` has rank 2 or more.
Value linear(OpBuilder &b, Location loc, Value x, Value weight,
             Value bias = Value());

/// Element-wise `value * factor`.
Value scale(OpBuilder &b, Location loc, Value value, double factor);

/// A `linalg.generic` accumulating `lhs * rhs` into `init`. Its loops are the
/// dimensions of `init` followed by `numReductions` reduction dimensions;
/// `lhsMap` and `rhsMap` index the operands from those loops.
Value contract(OpBuilder &b, Location loc, Value init, Value lhs,
               AffineMap lhsMap, Value rhs, AffineMap rhsMap,
               unsigned numReductions);

/// `contract` into a zero tensor of `shape`.
Value contractNew(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Value lhs, AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                  unsigned numReductions);

/// Softmax of `factor * scores` over the last dimension, for `factor > 0`.
/// Entries equal to `-inf` (masked) get probability 0; every row must hold a
/// finite entry.
Value scaledSoftmax(OpBuilder &b, Location loc, Value scores, double factor);

/// The row statistics of a LayerNorm over `x` (`[rows, width]`), computed in
/// one order for the forward and the gradient: `centred = x - mean` and
/// `inverseStd = 1 / sqrt(var + eps)` per row, with the biased variance.
struct LayerNormStatistics {
  Value inverseWidth; ///< The scalar `1 / width`.
  Value centred;      ///< `[rows, width]`.
  Value inverseStd;   ///< `[rows]`.
};
LayerNormStatistics layerNormStatistics(OpBuilder &b, Location loc, Value x,
                                        double eps);

/// What attention shortening and up-sampling compute before their output
/// projection, built in one order for the forward and for the gradient's
/// recomputation. `query`, `key` and `value` are split into heads, and
/// `attended` has its heads merged again (`[batch, n, width]`).
struct ResamplingAttention {
  Value query, key, value, probs, attended;
};

/// Attention shortening: the pooled queries (`pooled`, the group means of
/// `x`) attend, per head, to the positions of their own group. `key` and
/// `value` are `[batch, groups, factor, heads, head_dim]`, `probs`
/// `[batch, groups, heads, factor]`. `weights` are `Wq, Wk, Wv, Wo`.
ResamplingAttention shorteningAttention(OpBuilder &b, Location loc, Value x,
                                        Value pooled, int64_t factor,
                                        int64_t heads, ValueRange weights);

/// Attention up-sampling: full-resolution position `p` of `residual` attends,
/// per head, to the positions `i <= p / factor` of `shortened`. `probs` is
/// `[batch, seq, heads, groups]`, zero where masked.
ResamplingAttention upsamplingAttention(OpBuilder &b, Location loc,
                                        Value shortened, Value residual,
                                        int64_t factor, int64_t heads,
                                        ValueRange weights);

/// Moves the positions of `x [batch, seq, width]` by `amount` along the
/// sequence and fills with zeros: `amount > 0` keeps the first
/// `seq - amount` positions behind `amount` zeros (`tfc.shift_right`),
/// `amount < 0` the last `seq + amount` in front of `-amount` zeros
/// (`tfc.shift_left`). `amount == 0` returns `x`.
Value shiftPositions(OpBuilder &b, Location loc, Value x, int64_t amount);

/// The mean of the `[rows]` vector `values`, as a 0-d tensor: the loss of a
/// batch from its per-row losses.
Value meanOfRows(OpBuilder &b, Location loc, Value values);

/// Repeats each position of `[batch, groups, width]` `factor` times:
/// `[batch, groups * factor, width]`.
Value repeatPositions(OpBuilder &b, Location loc, Value x, int64_t factor);

/// Clamps an i32 id to `[0, limit)` as an index; ids outside map to 0 (read
/// row 0), in the embedding, the losses and their gradients alike.
Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t limit);

} // namespace mlir::tfc::lowering

#endif // TFC_CONVERSION_TFCTOLINALG_LOWERINGUTILS_H
