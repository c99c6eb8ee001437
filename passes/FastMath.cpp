//===- FastMath.cpp - The tfc-fast-math pass ------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFASTMATH
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcFastMathPass : public tfc::impl::TfcFastMathBase<TfcFastMathPass> {
  using TfcFastMathBase::TfcFastMathBase;

  void runOnOperation() override {
    // Polynomial forms of exp, tanh, log, erf... on f32, which LLVM
    // vectorises, instead of scalar calls into libm. f64 keeps libm.
    RewritePatternSet patterns(&getContext());
    if (expandPow) {
      // powf(a, b) as exp(b log a), both polynomials in f32.
      RewritePatternSet pow(&getContext());
      populateExpandPowFPattern(pow);
      if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(pow))))
        return signalPassFailure();
    }
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Flags an op already carries (a softmax offset's nnan and nsz) stay.
    // Conversions whose flags are optional and absent (the bf16 rounding's
    // arith.truncf and arith.extf) have no arithmetic to contract.
    getOperation().walk([&](arith::ArithFastMathInterface op) {
      if (!op.getFastMathFlagsAttr())
        return;
      auto flags = arith::FastMathFlagsAttr::get(
          &getContext(), op.getFastMathFlagsAttr().getValue() |
                             arith::FastMathFlags::reassoc |
                             arith::FastMathFlags::contract);
      op->setAttr(op.getFastMathAttrName(), flags);
    });
  }
};
} // namespace
