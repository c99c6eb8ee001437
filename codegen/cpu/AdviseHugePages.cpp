//===- AdviseHugePages.cpp - The tfc-advise-huge-pages pass ---------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
//
// The arenas of tfc-static-buffers are zero-initialised globals: memory the
// kernel maps on first touch, in 4 KiB pages wherever transparent huge pages
// are given only on request (`/sys/kernel/mm/transparent_hugepage/enabled`
// set to `madvise`, as on the machines tfc is benchmarked on). A training
// step streams through gigabytes of them, one TLB entry per 4 KiB. This pass
// gives the module a constructor that asks for huge pages over every arena
// of at least one huge page (2 MiB):
//
//   madvise(align_up(arena, 4096), align_down(arena + bytes, 4096) - ...,
//           MADV_HUGEPAGE)
//
// before `main` runs (or when a library holding the model is loaded). The
// advice is a hint: where the kernel has no transparent huge pages it
// fails and nothing changes, and the result is not read.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCADVISEHUGEPAGES
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
/// Bytes of a transparent huge page on x86-64; smaller arenas hold none.
constexpr int64_t kHugePageBytes = int64_t(2) << 20;
/// Bytes of a base page: madvise takes a range that starts on one.
constexpr int64_t kPageBytes = 4096;
/// `MADV_HUGEPAGE` of Linux's <sys/mman.h>.
constexpr int32_t kAdviseHugePage = 14;
/// The constructor this pass adds.
constexpr llvm::StringLiteral kConstructorName = "tfc_advise_huge_pages";

struct TfcAdviseHugePagesPass
    : public tfc::impl::TfcAdviseHugePagesBase<TfcAdviseHugePagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<LLVM::GlobalOp, int64_t>> arenas;
    for (auto global : module.getOps<LLVM::GlobalOp>()) {
      if (!global.getSymName().starts_with(kArenaPrefix))
        continue;
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (!array || !array.getElementType().isInteger(8)) {
        global.emitOpError() << "is an arena but not an array of bytes";
        return signalPassFailure();
      }
      int64_t bytes = array.getNumElements();
      if (bytes >= kHugePageBytes)
        arenas.push_back({global, bytes});
    }
    if (arenas.empty())
      return;
    if (module.lookupSymbol(kConstructorName)) {
      module.emitError() << "already has @" << kConstructorName;
      return signalPassFailure();
    }
    if (!module.getOps<LLVM::GlobalCtorsOp>().empty()) {
      module.emitError() << "already has llvm.mlir.global_ctors; "
                         << "tfc-advise-huge-pages adds the only one";
      return signalPassFailure();
    }

    MLIRContext *ctx = &getContext();
    Location loc = module.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());

    LLVM::LLVMFuncOp madvise =
        LLVM::lookupOrCreateFn(module, "madvise", {ptr, i64, i32}, i32);

    auto constructor = builder.create<LLVM::LLVMFuncOp>(
        loc, kConstructorName,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {}),
        LLVM::Linkage::Internal);
    OpBuilder body(ctx);
    body.setInsertionPointToEnd(constructor.addEntryBlock(body));
    auto constant = [&](Type type, int64_t value) -> Value {
      return body.create<LLVM::ConstantOp>(loc, type, value);
    };
    Value pageMask = constant(i64, ~(kPageBytes - 1));
    Value advice = constant(i32, kAdviseHugePage);
    for (auto [global, bytes] : arenas) {
      Value address = body.create<LLVM::PtrToIntOp>(
          loc, i64, body.create<LLVM::AddressOfOp>(loc, global));
      Value first = body.create<LLVM::AndOp>(
          loc,
          body.create<LLVM::AddOp>(loc, address, constant(i64, kPageBytes - 1)),
          pageMask);
      Value end = body.create<LLVM::AndOp>(
          loc, body.create<LLVM::AddOp>(loc, address, constant(i64, bytes)),
          pageMask);
      Value length = body.create<LLVM::SubOp>(loc, end, first);
      Value start = body.create<LLVM::IntToPtrOp>(loc, ptr, first);
      body.create<LLVM::CallOp>(loc, madvise,
                                ValueRange{start, length, advice});
    }
    body.create<LLVM::ReturnOp>(loc, ValueRange{});

    builder.create<LLVM::GlobalCtorsOp>(
        loc, builder.getArrayAttr(FlatSymbolRefAttr::get(constructor)),
        builder.getArrayAttr(builder.getI32IntegerAttr(65535)));
  }
};
} // namespace
