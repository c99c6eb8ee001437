//===- UnshareFills.cpp - The tfc-unshare-fills pass ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
//
// CSE merges every `linalg.fill` of the same value into the same shape of
// `tensor.empty`, so one fill often initialises several accumulators (the
// zeros of two projections, of a numerator and a state). Bufferization must
// then keep the filled buffer intact for its later users and copies it
// before each in-place update: a fill and a copy of the whole tensor where
// one fill would do. This pass gives every destination use of such a fill
// (an init operand of a destination-style op) a fill of its own, into a
// `tensor.empty` of its own, right before the user.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCUNSHAREFILLS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcUnshareFillsPass
    : public tfc::impl::TfcUnshareFillsBase<TfcUnshareFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && fill->getNumResults() == 1 &&
          !fill->getResult(0).hasOneUse() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      Value result = fill->getResult(0);
      auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
      // Every destination (an init that its op updates in place) gets a
      // fill of its own; reads keep sharing the original, which goes when
      // nothing reads it.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : result.getUses()) {
        auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
        if (dps && dps.isDpsInit(&use))
          uses.push_back(&use);
      }
      for (OpOperand *use : uses) {
        OpBuilder builder(use->getOwner());
        Operation *newEmpty = builder.clone(*empty);
        IRMapping mapping;
        mapping.map(empty.getResult(), newEmpty->getResult(0));
        Operation *newFill = builder.clone(*fill, mapping);
        use->set(newFill->getResult(0));
      }
      if (fill->use_empty())
        fill->erase();
      if (empty->use_empty())
        empty->erase();
    }
  }
};
} // namespace
