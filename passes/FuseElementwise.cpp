//===- FuseElementwise.cpp - The tfc-fuse-elementwise pass ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Fuses chains of element-wise `linalg.generic` ops on tensors into one op:
/// a bias add feeding an activation feeding a residual add becomes one loop
/// nest that reads the inputs once and writes the result once, with no
/// intermediate tensor (and so no intermediate buffer after bufferization).
/// The same holds in the gradient (activation gradients, dropout masks,
/// the sums of gradient contributions).
///
/// A producer is fused into its consumer when
///   - both are element-wise (all loops parallel) `linalg.generic`s;
///   - the producer's result has no other use (fusing a value that is also
///     read elsewhere would compute it twice);
///   - the consumer reads it through a permutation (no broadcast, which
///     would recompute each producer element many times).
/// Contractions and reductions are never consumers here: their bodies must
/// stay recognisable to the contraction kernels.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/Utils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFUSEELEMENTWISE
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Whether the producer of `operand` (an input of an element-wise consumer)
/// may be fused into the consumer.
bool shouldFuse(OpOperand &operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand.getOwner());
  auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer || !consumer.hasPureTensorSemantics() ||
      !isAllParallel(consumer) || !isAllParallel(producer) ||
      producer->getNumResults() != 1 || !operand.get().hasOneUse())
    return false;
  if (!consumer.getMatchingIndexingMap(&operand).isPermutation())
    return false;
  return linalg::areElementwiseOpsFusable(&operand);
}

/// Fuses one producer into `consumer` (see shouldFuse).
struct FuseElementwiseProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      if (shouldFuse(*operand) &&
          succeeded(fuseProducerIntoConsumer(rewriter, operand)))
        return success();
    }
    return failure();
  }
};

struct TfcFuseElementwisePass
    : public tfc::impl::TfcFuseElementwiseBase<TfcFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseElementwiseProducer>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
