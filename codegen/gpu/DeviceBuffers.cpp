//===- DeviceBuffers.cpp - The tfc-gpu-device-buffers pass ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUDEVICEBUFFERS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

struct DeviceBuffers
    : public mlir::tfc::impl::TfcGpuDeviceBuffersBase<DeviceBuffers> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    Type voidType = LLVM::LLVMVoidType::get(ctx);

    // Arenas: device memory from the runtime.
    auto arenaFn =
        LLVM::lookupOrCreateFn(module, "tfc_gpu_arena", {i32, i64}, ptr);
    SmallVector<LLVM::GlobalOp> arenas;
    for (auto global : module.getOps<LLVM::GlobalOp>())
      if (global.getSymName().starts_with(kArenaPrefix))
        arenas.push_back(global);
    for (LLVM::GlobalOp global : arenas) {
      int32_t number = 0;
      global.getSymName()
          .drop_front(kArenaPrefix.size())
          .getAsInteger(10, number);
      int64_t bytes = 0;
      if (auto array = dyn_cast<LLVM::LLVMArrayType>(global.getType()))
        bytes = array.getNumElements();
      SmallVector<LLVM::AddressOfOp> uses;
      module.walk([&](LLVM::AddressOfOp address) {
        if (address.getGlobalName() == global.getSymName())
          uses.push_back(address);
      });
      for (LLVM::AddressOfOp address : uses) {
        OpBuilder b(address);
        Location loc = address.getLoc();
        Value n = b.create<LLVM::ConstantOp>(loc, i32, number);
        Value size = b.create<LLVM::ConstantOp>(loc, i64, bytes);
        auto call = b.create<LLVM::CallOp>(loc, arenaFn, ValueRange{n, size});
        address.replaceAllUsesWith(call.getResult());
        address.erase();
      }
      global.erase();
    }

    // Entry points: their buffers copied to the device and back.
    auto toDevice = LLVM::lookupOrCreateFn(module, "tfc_gpu_to_device",
                                           {i32, ptr, i64}, ptr);
    auto toHost = LLVM::lookupOrCreateFn(module, "tfc_gpu_to_host",
                                         {ptr, ptr, i64}, voidType);
    int32_t bufferId = 0;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      auto bytes = func->getAttrOfType<DenseI64ArrayAttr>("tfc.gpu.arg_bytes");
      auto written = func->getAttrOfType<DenseI64ArrayAttr>("tfc.gpu.written");
      if (!bytes || !written || func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      if (bytes.size() != static_cast<int64_t>(entry.getNumArguments())) {
        func.emitOpError("has ")
            << entry.getNumArguments() << " arguments, tfc.gpu.arg_bytes "
            << bytes.size();
        return signalPassFailure();
      }
      OpBuilder b(&entry, entry.begin());
      Location loc = func.getLoc();
      SmallVector<Value> device;
      for (BlockArgument arg : entry.getArguments()) {
        Value id = b.create<LLVM::ConstantOp>(loc, i32, bufferId++);
        Value size =
            b.create<LLVM::ConstantOp>(loc, i64, bytes[arg.getArgNumber()]);
        auto call =
            b.create<LLVM::CallOp>(loc, toDevice, ValueRange{id, arg, size});
        arg.replaceAllUsesExcept(call.getResult(), call);
        device.push_back(call.getResult());
      }
      func.walk([&](LLVM::ReturnOp ret) {
        OpBuilder rb(ret);
        for (int64_t i : written.asArrayRef()) {
          Value size = rb.create<LLVM::ConstantOp>(loc, i64, bytes[i]);
          rb.create<LLVM::CallOp>(
              loc, toHost, ValueRange{entry.getArgument(i), device[i], size});
        }
      });
    }
  }
};

} // namespace
