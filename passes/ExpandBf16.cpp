//===- ExpandBf16.cpp - The tfc-expand-bf16 pass --------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Conversions between float32 and bf16 as integer arithmetic, for a CPU
/// without AVX512-BF16: there LLVM would round through a call to
/// `__truncsfbf2`, which GCC 12's libgcc does not have.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCEXPANDBF16
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
/// Whether `op` converts between float32 and bf16 (scalars or vectors).
bool convertsBf16(Operation *op) {
  if (!isa<arith::TruncFOp, arith::ExtFOp>(op))
    return false;
  Type in = getElementTypeOrSelf(op->getOperand(0).getType());
  Type out = getElementTypeOrSelf(op->getResult(0).getType());
  return (in.isF32() && out.isBF16()) || (in.isBF16() && out.isF32());
}

struct TfcExpandBf16Pass
    : public tfc::impl::TfcExpandBf16Base<TfcExpandBf16Pass> {
  void runOnOperation() override {
    int64_t conversions = 0;
    getOperation().walk([&](Operation *op) {
      if (convertsBf16(op))
        ++conversions;
    });
    expandedOps += conversions;
    if (conversions == 0)
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      signalPassFailure();
  }
};
} // namespace
