//===- StaticBuffers.cpp - The tfc-static-buffers pass --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCSTATICBUFFERS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcStaticBuffersPass
    : public tfc::impl::TfcStaticBuffersBase<TfcStaticBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder builder(&getContext());
    SmallVector<memref::AllocOp> allocs;
    module.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    unsigned counter = 0;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
        alloc.emitOpError() << "has a dynamic shape or a non-identity layout; "
                               "tfc needs static buffers";
        return signalPassFailure();
      }
      if (alloc->getParentOfType<LoopLikeOpInterface>()) {
        alloc.emitOpError() << "is inside a loop and cannot become a static "
                               "buffer";
        return signalPassFailure();
      }
      std::string name = "__tfc_buffer_" + std::to_string(counter++);
      builder.setInsertionPointToStart(module.getBody());
      builder.create<memref::GlobalOp>(
          alloc.getLoc(), name, builder.getStringAttr("private"), type,
          builder.getUnitAttr(), /*constant=*/false,
          builder.getI64IntegerAttr(64));
      builder.setInsertionPoint(alloc);
      Value global =
          builder.create<memref::GetGlobalOp>(alloc.getLoc(), type, name);
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.getResult().replaceAllUsesWith(global);
      alloc.erase();
    }
  }
};
} // namespace
