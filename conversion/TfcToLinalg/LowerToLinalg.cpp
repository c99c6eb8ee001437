//===- LowerToLinalg.cpp - The tfc-lower-to-linalg pass -------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Applies every lowering pattern of this folder (populateTfcToLinalgPatterns)
/// and checks that no tfc operation but `tfc.param` is left.
///
//===----------------------------------------------------------------------===//

#include "conversion/Passes.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCLOWERTOLINALG
#include "conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

void mlir::tfc::populateTfcToLinalgPatterns(RewritePatternSet &patterns,
                                            bool recomputeAttention) {
  populateDenseLoweringPatterns(patterns);
  populateAttentionLoweringPatterns(patterns);
  populateAttentionGradLoweringPatterns(patterns, recomputeAttention);
  populateSequenceLoweringPatterns(patterns);
  populateSequenceGradLoweringPatterns(patterns);
  populateGradLoweringPatterns(patterns);
}

namespace {
struct TfcLowerToLinalgPass
    : public tfc::impl::TfcLowerToLinalgBase<TfcLowerToLinalgPass> {
  using TfcLowerToLinalgBase::TfcLowerToLinalgBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTfcToLinalgPatterns(patterns, recomputeAttention);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      return signalPassFailure();
    WalkResult result = getOperation().walk([](Operation *op) {
      if (isa<TfcDialect>(op->getDialect()) && !isa<ParamOp>(op)) {
        op->emitOpError() << "was not lowered to linalg";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
