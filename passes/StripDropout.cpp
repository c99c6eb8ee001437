//===- StripDropout.cpp - The tfc-strip-dropout pass ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCSTRIPDROPOUT
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcStripDropoutPass
    : public tfc::impl::TfcStripDropoutBase<TfcStripDropoutPass> {
  void runOnOperation() override {
    getOperation().walk([](DropoutOp op) {
      if (op.getSeed())
        return;
      op.getResult().replaceAllUsesWith(op.getInput());
      op.erase();
    });
  }
};
} // namespace
