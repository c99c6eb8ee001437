//===- PerformerHeads.cpp - The tfc-performer-heads pass ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs each `tfc.attention` and `tfc.attention_grad` of the
/// `#tfc.performer` kind as one `scf.forall` over its (batch, head) pairs,
/// so that the whole chain of FAVOR+ ops of a pair (feature projections,
/// stabilisers, exponential features, chunk scores, chunk states and their
/// prefix scans, numerator and denominator, and in the gradient the same
/// read backwards) runs on one thread over the pair's own `[S, M]` and
/// `[S, Dh]` tensors, which stay in its cache:
///
///   forall p in 0 .. B*H                           // b = p / H, h = p % H
///     q, k, v = query, key, value[b, :, h*Dh : (h+1)*Dh]   // [1, S, Dh]
///     out[b, :, h*Dh : (h+1)*Dh] = attention heads 1 (q, k, v, mask[b])
///
/// where each op over `[B, S, H, M]` would stream the whole batch's
/// features through memory and fork the threads. The pair's attention and
/// gradient are lowered in place by tfc-lower-to-linalg's own patterns
/// (chunked causal FAVOR+, or the non-causal sums), and their linalg ops
/// drop the pair's unit dimensions.
///
/// The gradient's loop recomputes the pair's features and chunk states
/// instead of reading the forward's, which no longer exist outside the
/// forward's loop: the training step keeps no `[B, S, H, M]` tensor.
/// Attentions of one batch and one head are left alone.
///
//===----------------------------------------------------------------------===//

#include "conversion/Passes.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/Utils.h"

#include "dialect/TfcDialect.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCPERFORMERHEADS
#include "conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The (batch, head) pair `[b, :, column : column + headDim]` of a
/// `[B, S, D]` tensor (`headDim` > 0), or the row `[b, :]` of a `[B, S]`
/// mask (`headDim` == 0).
struct PairSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

PairSlice pairSlice(OpBuilder &b, Value x, Value batch, Value column,
                    int64_t headDim) {
  ArrayRef<int64_t> shape = shapeOf(x);
  PairSlice slice;
  slice.offsets = {batch, b.getIndexAttr(0)};
  slice.sizes = {b.getIndexAttr(1), b.getIndexAttr(shape[1])};
  slice.strides.assign(shape.size(), b.getIndexAttr(1));
  if (headDim) {
    slice.offsets.push_back(column);
    slice.sizes.push_back(b.getIndexAttr(headDim));
  }
  return slice;
}

/// The batch, heads and head width of `query [B, S, D]` split in `heads`.
struct Pairs {
  int64_t batch, heads, headDim;
};

/// Replaces `op` (a tfc.attention or tfc.attention_grad of `pairs`) by an
/// `scf.forall` over its (batch, head) pairs whose body builds the op of
/// one pair with `build` from the pair's slices of `inputs` (`[B, S, D]`,
/// sliced by batch and head) and of `mask` (`[B, S]`, sliced by batch; null
/// when the op has none), and writes each of its results at the pair's
/// place in a `[B, S, D]` tensor. Returns the loop.
scf::ForallOp
splitPairs(Operation *op, const Pairs &pairs, ArrayRef<Value> inputs,
           Value mask,
           function_ref<SmallVector<Value>(OpBuilder &, Location,
                                           ArrayRef<Value>, Value)>
               build) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> inits;
  for (Value result : op->getResults())
    inits.push_back(emptyTensor(b, loc, shapeOf(result), elementOf(result)));
  PairLoop pairLoop = buildPairLoop(b, loc, pairs.batch, pairs.heads, inits);
  scf::ForallOp loop = pairLoop.loop;
  Value batch = pairLoop.batch;
  Value column = b.create<arith::MulIOp>(loc, pairLoop.head,
                                         indexConstant(b, loc, pairs.headDim));
  auto sliceOf = [&](Value x, int64_t headDim) -> Value {
    PairSlice slice = pairSlice(b, x, batch, column, headDim);
    return b.create<tensor::ExtractSliceOp>(loc, x, slice.offsets, slice.sizes,
                                            slice.strides);
  };
  SmallVector<Value> sliced;
  for (Value input : inputs)
    sliced.push_back(sliceOf(input, pairs.headDim));
  Value pairMask = mask ? sliceOf(mask, 0) : Value();
  SmallVector<Value> results = build(b, loc, sliced, pairMask);
  b.setInsertionPointToEnd(loop.getTerminator().getBody());
  for (auto [result, shared] :
       llvm::zip_equal(results, loop.getRegionIterArgs())) {
    PairSlice slice = pairSlice(b, shared, batch, column, pairs.headDim);
    b.create<tensor::ParallelInsertSliceOp>(loc, result, shared, slice.offsets,
                                            slice.sizes, slice.strides);
  }
  op->replaceAllUsesWith(loop.getResults());
  op->erase();
  return loop;
}

/// The pairs of `op` (a tfc.attention or tfc.attention_grad), or nothing
/// when the pass leaves it alone: another kind, dynamic shapes, one pair
/// only.
template <typename AttentionLikeOp>
std::optional<Pairs> pairsOf(AttentionLikeOp op) {
  if (!isa<PerformerAttr>(op.getKind()))
    return std::nullopt;
  for (Value value : op->getOperands())
    if (!cast<RankedTensorType>(value.getType()).hasStaticShape())
      return std::nullopt;
  ArrayRef<int64_t> shape = shapeOf(op.getQuery());
  int64_t heads = op.getHeads();
  Pairs pairs{shape[0], heads, shape[2] / heads};
  if (pairs.batch * pairs.heads == 1)
    return std::nullopt;
  return pairs;
}

scf::ForallOp splitForward(AttentionOp op, const Pairs &pairs) {
  Attribute kind = op.getKind();
  Value features = op.getFeatures();
  return splitPairs(
      op, pairs, {op.getQuery(), op.getKey(), op.getValue()}, op.getMask(),
      [&](OpBuilder &b, Location loc, ArrayRef<Value> in,
          Value mask) -> SmallVector<Value> {
        Value result = b.create<AttentionOp>(
            loc, in[0].getType(), kind, b.getI64IntegerAttr(1), in[0], in[1],
            in[2], mask, features, Value(), Value(), Value());
        return {result};
      });
}

scf::ForallOp splitGradient(AttentionGradOp op, const Pairs &pairs) {
  Attribute kind = op.getKind();
  Value features = op.getFeatures();
  return splitPairs(
      op, pairs, {op.getQuery(), op.getKey(), op.getValue(), op.getGrad()},
      op.getMask(),
      [&](OpBuilder &b, Location loc, ArrayRef<Value> in,
          Value mask) -> SmallVector<Value> {
        Type type = in[0].getType();
        auto grad = b.create<AttentionGradOp>(
            loc, type, type, type, TypeRange{}, kind, b.getI64IntegerAttr(1),
            in[0], in[1], in[2], mask, features, Value(), Value(), Value(),
            in[3]);
        return {grad.getQueryGrad(), grad.getKeyGrad(), grad.getValueGrad()};
      });
}

struct TfcPerformerHeadsPass
    : public tfc::impl::TfcPerformerHeadsBase<TfcPerformerHeadsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    SmallVector<scf::ForallOp> loops;
    for (Operation *op : ops) {
      if (auto forward = dyn_cast<AttentionOp>(op)) {
        if (std::optional<Pairs> pairs = pairsOf(forward))
          loops.push_back(splitForward(forward, *pairs));
      } else if (auto grad = dyn_cast<AttentionGradOp>(op)) {
        if (std::optional<Pairs> pairs = pairsOf(grad))
          loops.push_back(splitGradient(grad, *pairs));
      }
    }
    if (loops.empty())
      return;
    // The pair's ops are lowered here, so that their unit dimensions can be
    // dropped before anything else sees them.
    RewritePatternSet patterns(&getContext());
    populateAttentionLoweringPatterns(patterns);
    populateAttentionGradLoweringPatterns(patterns);
    FrozenRewritePatternSet lowering(std::move(patterns));
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    for (scf::ForallOp loop : loops)
      if (failed(applyPatternsAndFoldGreedily(loop, lowering, config)))
        return signalPassFailure();
    if (failed(dropPairDims(loops)))
      signalPassFailure();
  }
};

} // namespace
