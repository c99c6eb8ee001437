//===- LowerToLinalg.cpp - The tfc-lower-to-linalg pass -------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Applies every lowering pattern of this folder (populateTfcToLinalgPatterns)
/// as a partial dialect conversion in which the tfc dialect is illegal but
/// for `tfc.param`, then folds what the patterns built.
///
//===----------------------------------------------------------------------===//

#include "conversion/Passes.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/DialectConversion.h"
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
    ConversionTarget target(getContext());
    target.addIllegalDialect<TfcDialect>();
    target.addLegalOp<ParamOp>();
    // What the patterns build (linalg, tensor, arith, math, scf) is legal.
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    // The conversion driver does not fold what the patterns build; fold it
    // as the rewrites of the other passes would.
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    (void)applyPatternsAndFoldGreedily(
        getOperation(), RewritePatternSet(&getContext()), config);
  }
};
} // namespace
