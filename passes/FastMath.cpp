//===- FastMath.cpp - The tfc-fast-math pass ------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFASTMATH
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcFastMathPass : public tfc::impl::TfcFastMathBase<TfcFastMathPass> {
  void runOnOperation() override {
    auto flags = arith::FastMathFlagsAttr::get(
        &getContext(), arith::FastMathFlags::reassoc |
                           arith::FastMathFlags::contract);
    getOperation().walk([&](arith::ArithFastMathInterface op) {
      op->setAttr(op.getFastMathAttrName(), flags);
    });
  }
};
} // namespace
