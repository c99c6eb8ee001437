//===- LoweringUtils.h - Helpers for lowering tfc ops to linalg -*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Small builders shared by the lowering patterns of tfc-lower-to-linalg:
/// constants, empty and filled tensors, reshapes, GEMMs and element-wise or
/// reducing `linalg.generic`s. All shapes are static.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_LOWERINGUTILS_H
#define TFC_PASSES_LOWERINGUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc {

/// The shape of a ranked tensor value.
ArrayRef<int64_t> shapeOf(Value value);
/// The element type of a ranked tensor value.
Type elementOf(Value value);

/// A scalar float constant of type `type`.
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);
/// An `index` constant.
Value indexConstant(OpBuilder &b, Location loc, int64_t value);

/// `max(x, y)` as the offset that keeps a softmax's exponentials in range
/// (the row maximum of scores or logits): marked `nnan` and `nsz`, so that
/// it compiles to the machine's max instruction instead of the sequence
/// that orders NaN and signed zeros. A NaN among the inputs still reaches
/// the result through `exp(x - max)`, and either zero is as good an
/// offset as the other.
Value stabilizerMax(OpBuilder &b, Location loc, Value x, Value y);

/// `tensor.empty` of the given shape.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type element);
/// A tensor of the given shape filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type element, double value);

/// Reshapes a contiguous static tensor to `shape` (same element count), by
/// collapsing to 1-D and expanding.
Value reshape(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> shape);

/// `a[M, K] * w[N, K]^T -> [M, N]` (nn.Linear without bias). When `w` is
/// itself a transpose `v^T` (`tfc.transpose`, or `linalg.transpose` once
/// lowered; a linear layer's input gradient `dy W`), `a * v` instead, so
/// that no transposed copy of `v` is made: the same products summed in
/// the same order.
Value matmulTransposeB(OpBuilder &b, Location loc, Value a, Value w);

/// Identity map and parallel iterators of rank `rank`.
SmallVector<utils::IteratorType> parallelIterators(unsigned rank);

/// An element-wise `linalg.generic` over `inputs` (all of `shape`, or
/// broadcast through `inputMaps` when given) producing one tensor of
/// `shape`. `body` receives the block arguments of the inputs (and the
/// output last) and returns the value to yield.
Value elementwise(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type element,
    ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body,
    ArrayRef<AffineMap> inputMaps = {});

/// Reduces `input` over its last dimension with `combine(acc, x)`, starting
/// from `init`; the result drops the last dimension.
Value reduceLastDim(OpBuilder &b, Location loc, Value input, double init,
                    function_ref<Value(OpBuilder &, Location, Value, Value)>
                        combine);

//===----------------------------------------------------------------------===//
// Pattern sets of tfc-lower-to-linalg, one per source file.
//===----------------------------------------------------------------------===//

/// Embedding, positions, linear, layer norm, activation, add, take_token,
/// losses (LowerDenseOps.cpp).
void populateDenseLoweringPatterns(RewritePatternSet &patterns);
/// tfc.attention of every kind (LowerAttention.cpp).
void populateAttentionLoweringPatterns(RewritePatternSet &patterns);
/// tfc.attention_grad of every kind (LowerAttentionGrad.cpp).
/// With `recompute`, the gradient of Performer attention recomputes the
/// forward's features, chunk states and scores in a form CSE does not merge
/// with the forward's (see tfc-lower-to-linalg).
void populateAttentionGradLoweringPatterns(RewritePatternSet &patterns,
                                           bool recompute = false);
/// Rotary positions, depth-wise conv, shift, shortening and up-sampling
/// (LowerSequenceOps.cpp).
void populateSequenceLoweringPatterns(RewritePatternSet &patterns);
/// Gradients of depth-wise conv, shortening and up-sampling
/// (LowerSequenceGrad.cpp).
void populateSequenceGradLoweringPatterns(RewritePatternSet &patterns);
/// Gradient building blocks and seeded dropout (LowerGradOps.cpp).
void populateGradLoweringPatterns(RewritePatternSet &patterns);

/// An `scf.forall` over the `batch * heads` (batch, head) pairs of an
/// attention, with `inits` as its shared outputs, and the pair's batch and
/// head indices (`pair / heads`, `pair % heads`), built at the start of its
/// body; `b` is left inserting before the body's terminator.
struct PairLoop {
  scf::ForallOp loop;
  Value batch, head;
};
PairLoop buildPairLoop(OpBuilder &b, Location loc, int64_t batch, int64_t heads,
                       ValueRange inits);

/// Inside each of `loops` (the loops over (batch, head) pairs of
/// tfc-blocked-attention and tfc-performer-heads), drops the unit batch and
/// head dimensions of the linalg ops, so that each works on the pair's own
/// `[S, ...]` tensors, and folds reshapes of `tensor.empty` into empties of
/// the new shape (a fill into a collapsed empty would escape
/// tfc-unshare-fills once CSE merges it).
LogicalResult dropPairDims(ArrayRef<scf::ForallOp> loops);

} // namespace mlir::tfc

#endif // TFC_PASSES_LOWERINGUTILS_H
