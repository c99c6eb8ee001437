//===- NativeMath.cpp - The tfc-gpu-native-math pass ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUNATIVEMATH
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Replaces the call `call` by the intrinsic `To` on the same operands.
template <typename To>
void replaceBy(LLVM::CallOp call) {
  OpBuilder b(call);
  auto intrinsic =
      b.create<To>(call.getLoc(), call.getResultTypes(), call.getArgOperands());
  call.replaceAllUsesWith(intrinsic->getResults());
  call.erase();
}

struct NativeMath : public mlir::tfc::impl::TfcGpuNativeMathBase<NativeMath> {
  void runOnOperation() override {
    using Replace = void (*)(LLVM::CallOp);
    llvm::StringMap<Replace> native;
    for (StringRef suffix : {"", "f"}) {
      std::string s = suffix.str();
      native["__nv_floor" + s] = replaceBy<LLVM::FFloorOp>;
      native["__nv_ceil" + s] = replaceBy<LLVM::FCeilOp>;
      native["__nv_trunc" + s] = replaceBy<LLVM::FTruncOp>;
      native["__nv_rint" + s] = replaceBy<LLVM::RoundEvenOp>;
      native["__nv_fabs" + s] = replaceBy<LLVM::FAbsOp>;
      native["__nv_copysign" + s] = replaceBy<LLVM::CopySignOp>;
      native["__nv_fma" + s] = replaceBy<LLVM::FMAOp>;
      native["__nv_sqrt" + s] = replaceBy<LLVM::SqrtOp>;
    }
    gpu::GPUModuleOp module = getOperation();
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      if (call.getCallee() && native.count(*call.getCallee()))
        calls.push_back(call);
    });
    for (LLVM::CallOp call : calls)
      native[*call.getCallee()](call);
    // The declarations left without callers.
    SmallVector<LLVM::LLVMFuncOp> unused;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (fn.isExternal() && native.count(fn.getName()) &&
          SymbolTable::symbolKnownUseEmpty(fn, module))
        unused.push_back(fn);
    for (LLVM::LLVMFuncOp fn : unused)
      fn.erase();
  }
};

} // namespace
