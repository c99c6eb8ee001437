//===- UnshareEmpties.cpp - The tfc-unshare-empties pass ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// CSE merges every `tensor.empty` of one shape in a function into a single
/// op, so in a deep model one `tensor.empty` is the destination of the same
/// kernel in every layer (hundreds of uses). One-Shot Bufferize then sees a
/// single alias set that holds every one of those results and checks each
/// in-place write against every read of the set: time that grows with the
/// square of the layer count or faster. This pass gives every use of a
/// `tensor.empty` that has several a `tensor.empty` of its own, right before
/// its user, so that each alias set is as small as the dataflow makes it.
/// An empty tensor has no defined contents, so the values computed are the
/// same.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCUNSHAREEMPTIES
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcUnshareEmptiesPass
    : public tfc::impl::TfcUnshareEmptiesBase<TfcUnshareEmptiesPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse() && !empty->use_empty())
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties) {
      // Every use gets a clone placed right before its user (the sizes, if
      // any, dominate the original and so the user too); the original goes.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      for (OpOperand *use : uses) {
        OpBuilder builder(use->getOwner());
        use->set(builder.clone(*empty)->getResult(0));
      }
      empty->erase();
    }
  }
};
} // namespace
