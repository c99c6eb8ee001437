//===- ExpandBf16.cpp - The tfc-expand-bf16 pass --------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Conversions between float32 and bf16 as integer arithmetic: for a CPU
/// without AVX512-BF16, both ways (there LLVM would round through a call
/// to `__truncsfbf2`, which GCC 12's libgcc does not have); for one with
/// it, the widenings only, which LLVM 19 would otherwise scalarise.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCEXPANDBF16
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
/// Whether `op` widens bf16 to float32 (scalars or vectors).
bool widensBf16(Operation *op) {
  return isa<arith::ExtFOp>(op) &&
         getElementTypeOrSelf(op->getOperand(0).getType()).isBF16() &&
         getElementTypeOrSelf(op->getResult(0).getType()).isF32();
}

/// Whether `op` rounds float32 to bf16 (scalars or vectors).
bool roundsToBf16(Operation *op) {
  return isa<arith::TruncFOp>(op) &&
         getElementTypeOrSelf(op->getOperand(0).getType()).isF32() &&
         getElementTypeOrSelf(op->getResult(0).getType()).isBF16();
}

/// A widening from bf16 as the bits shifted into the high half of a
/// float32, exactly (MLIR's expansion, alone).
struct WidenByShift : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!widensBf16(op))
      return failure();
    Location loc = op.getLoc();
    Type type = op.getIn().getType();
    auto like = [&](Type element) -> Type {
      if (auto vector = dyn_cast<VectorType>(type))
        return vector.clone(element);
      return element;
    };
    Value bits = rewriter.create<arith::BitcastOp>(
        loc, like(rewriter.getI16Type()), op.getIn());
    Type wide = like(rewriter.getI32Type());
    Value widened = rewriter.create<arith::ExtUIOp>(loc, wide, bits);
    Value shifted = rewriter.create<arith::ShLIOp>(
        loc, widened, createScalarOrSplatConstant(rewriter, loc, wide, 16));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), shifted);
    return success();
  }
};

struct TfcExpandBf16Pass
    : public tfc::impl::TfcExpandBf16Base<TfcExpandBf16Pass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t conversions = 0;
    getOperation().walk([&](Operation *op) {
      if (widensBf16(op) || (roundings && roundsToBf16(op)))
        ++conversions;
    });
    expandedOps += conversions;
    if (conversions == 0)
      return;
    RewritePatternSet patterns(&getContext());
    if (roundings)
      arith::populateExpandBFloat16Patterns(patterns);
    else
      patterns.add<WidenByShift>(&getContext());
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      signalPassFailure();
  }
};
} // namespace
