//===- FastMath.cpp - The tfc-fast-math pass ------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFASTMATH
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// `exp(x)` on f32 scalars and vectors as `2^k p(r)`, with `k` the integer
/// nearest to `x log2(e)`, `r = x - k ln 2` (in [-ln2/2, ln2/2], ln 2
/// split in two so that `k ln 2` is exact) and `p` a degree-5 polynomial,
/// fitted to `e^r` in relative error (at most 1e-7; with float32 rounding,
/// 2 ulp, as MLIR's expansion). MLIR's expansion (Cephes's) uses a degree-7
/// polynomial and clamps `k` as well as `x`: this one compiles to 15
/// instructions where that compiles to 20, and attention's exponentials are a
/// quarter of its time on the CPU.
///
/// `x` is clamped to [kLowest, kHighest] by comparisons that keep a NaN.
/// `2^k` is built in the exponent bits as `2^(k-1)` and `p` is doubled (its
/// coefficients times 2, exactly), so that `k = 128`, an x in (88.38, 88.8],
/// still gives `p 2^k`, which is infinite only above float32's largest
/// number. For x under -87 (results under 1.7e-38, within 1.4 times the
/// smallest normal float32), k - 1 is -127 or less and the result is 0, as
/// it is for -inf.
struct ExpPolynomial : public OpRewritePattern<math::ExpOp> {
  /// Above MLIR's own pattern, which would match too.
  explicit ExpPolynomial(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  static constexpr double kLowest = -87.3; // k >= -126: k - 1 + 127 >= 0.
  static constexpr double kHighest = 88.8; // above ln(FLT_MAX): infinity.
  /// ln 2 = kLn2High + kLn2Low, kLn2High with 9 significant bits.
  static constexpr double kLn2High = 0.693359375;
  static constexpr double kLn2Low = -2.12194440e-4;
  /// p(r) / 2 ~ e^r, coefficients of r^0 ... r^5 (float32 values).
  static constexpr double kCoefficients[6] = {1.0,
                                              0.9999997019767761,
                                              0.4999914765357971,
                                              0.16667640209197998,
                                              0.04189838469028473,
                                              0.008290218189358711};

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto vectorType = dyn_cast<VectorType>(type);
    Type intType = b.getI32Type();
    if (vectorType)
      intType = VectorType::get(vectorType.getShape(), intType);
    auto splat = [&](Type of, TypedAttr scalar) -> Value {
      if (vectorType)
        return b.create<arith::ConstantOp>(
            DenseElementsAttr::get(cast<ShapedType>(of), scalar));
      return b.create<arith::ConstantOp>(scalar);
    };
    auto f = [&](double value) {
      return splat(type, b.getF32FloatAttr(value));
    };
    auto i = [&](int32_t value) {
      return splat(intType, b.getI32IntegerAttr(value));
    };
    // select(x uge lo, x, lo) keeps a NaN, as max would not.
    Value x = op.getOperand();
    Value lowest = f(kLowest), highest = f(kHighest);
    x = b.create<arith::SelectOp>(
        b.create<arith::CmpFOp>(arith::CmpFPredicate::UGE, x, lowest), x,
        lowest);
    x = b.create<arith::SelectOp>(
        b.create<arith::CmpFOp>(arith::CmpFPredicate::ULE, x, highest), x,
        highest);
    Value k =
        b.create<math::RoundEvenOp>(b.create<arith::MulFOp>(x, f(M_LOG2E)));
    Value r = b.create<math::FmaOp>(k, f(-kLn2High), x);
    r = b.create<math::FmaOp>(k, f(-kLn2Low), r);
    Value p = f(2 * kCoefficients[5]);
    for (int power = 4; power >= 0; --power)
      p = b.create<math::FmaOp>(p, r, f(2 * kCoefficients[power]));
    Value exponent =
        b.create<arith::AddIOp>(b.create<arith::FPToSIOp>(intType, k), i(126));
    Value scale = b.create<arith::BitcastOp>(
        type, b.create<arith::ShLIOp>(exponent, i(23)));
    rewriter.replaceOp(op, b.create<arith::MulFOp>(p, scale));
    return success();
  }
};

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
    patterns.add<ExpPolynomial>(&getContext());
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
