//===- LaunchToRuntime.cpp - The tfc-gpu-launch-to-runtime pass -----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPULAUNCHTORUNTIME
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// A constant global of the host module, external so that the runtime can
/// read it.
void createConstantGlobal(OpBuilder &b, Location loc, StringRef name, Type type,
                          Attribute value) {
  b.create<LLVM::GlobalOp>(loc, type, /*isConstant=*/true,
                           LLVM::Linkage::External, name, value);
}

/// The aligned address of buffer `value`: the aligned pointer of the
/// buffer it views, plus the byte shifts of the `memref.view`s on the way.
/// The kernels add the static offsets of their argument types themselves
/// (bare-pointer calling convention), but a `memref.view` moves the aligned
/// pointer, and `expand-strided-metadata` in the host's lowering rewrites
/// `extract_aligned_pointer_as_index` of any view-like op to that of its
/// source, which would drop the shift (every arena buffer would start at
/// the arena's first byte).
Value alignedAddress(OpBuilder &b, Location loc, Value value) {
  Value root = value;
  SmallVector<Value> shifts;
  while (Operation *def = root.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      shifts.push_back(view.getByteShift());
      root = view.getSource();
    } else if (auto viewLike = dyn_cast<ViewLikeOpInterface>(def)) {
      root = viewLike.getViewSource();
    } else {
      break;
    }
  }
  Value address = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, root);
  for (Value shift : llvm::reverse(shifts))
    address = b.create<arith::AddIOp>(loc, address, shift);
  return address;
}

/// `value` as the 64 bits of a kernel argument slot.
Value toSlot(OpBuilder &b, Location loc, Value value) {
  Type i64 = b.getI64Type();
  Type type = value.getType();
  if (isa<MemRefType>(type))
    return b.create<arith::IndexCastUIOp>(loc, i64,
                                          alignedAddress(b, loc, value));
  if (type.isIndex())
    return b.create<arith::IndexCastOp>(loc, i64, value);
  if (auto floatType = dyn_cast<FloatType>(type)) {
    Type bits = b.getIntegerType(floatType.getWidth());
    value = b.create<arith::BitcastOp>(loc, bits, value);
    type = bits;
  }
  if (type.getIntOrFloatBitWidth() < 64)
    return b.create<arith::ExtUIOp>(loc, i64, value);
  return value;
}

struct LaunchToRuntime
    : public mlir::tfc::impl::TfcGpuLaunchToRuntimeBase<LaunchToRuntime> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto binary = module.lookupSymbol<gpu::BinaryOp>(kKernelModule);
    if (!binary) {
      module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
      return;
    }
    if (binary.getObjects().size() != 1) {
      binary.emitOpError("expected one object (one GPU architecture)");
      return signalPassFailure();
    }
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    bool isPtx = object.getFormat() == gpu::CompilationTarget::Assembly;
    std::string image = object.getObject().getValue().str();
    // Math that became libdevice calls needs libdevice linked in (f64
    // transcendental functions; f32 ones are polynomials).
    if (isPtx) {
      StringRef text = image;
      for (size_t at = text.find(".extern .func"); at != StringRef::npos;
           at = text.find(".extern .func", at + 1)) {
        StringRef line = text.substr(at).take_until(
            [](char c) { return c == '\n' || c == ';'; });
        size_t name = line.find("__nv_");
        if (name == StringRef::npos)
          continue;
        binary.emitOpError("calls CUDA's libdevice (")
            << line.substr(name).take_until([](char c) { return c == '('; })
            << ") but no libdevice was linked: install the CUDA toolkit "
               "(nvvm/libdevice) or build in f32";
        return signalPassFailure();
      }
    }
    // The driver reads PTX as a C string (the serializer ends it with one
    // NUL already).
    if (isPtx && (image.empty() || image.back() != '\0'))
      image.push_back('\0');

    // The kernel names in the order of their numbers (tfc_k<n>), and each
    // kernel's dynamic shared memory (a constant of its launches).
    llvm::StringMap<int32_t> kernelIndex, kernelShared;
    std::string names;
    int32_t count = 0;
    WalkResult walked = module.walk([&](gpu::LaunchFuncOp launch) {
      StringRef name = launch.getKernelName().getValue();
      if (Value size = launch.getDynamicSharedMemorySize()) {
        APInt bytes;
        if (!matchPattern(size, m_ConstantInt(&bytes))) {
          launch.emitOpError("expected a constant dynamic shared memory size");
          return WalkResult::interrupt();
        }
        kernelShared[name] = bytes.getSExtValue();
      }
      if (kernelIndex.count(name))
        return WalkResult::advance();
      int32_t index = 0;
      name.drop_front(kKernelPrefix.size()).getAsInteger(10, index);
      kernelIndex[name] = index;
      count = std::max(count, index + 1);
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    std::vector<std::string> ordered(count);
    SmallVector<int32_t> sharedBytes(count, 0);
    for (auto &entry : kernelIndex) {
      ordered[entry.second] = entry.first().str();
      sharedBytes[entry.second] = kernelShared.lookup(entry.first());
    }
    for (const std::string &name : ordered)
      names += name + '\0';

    Location loc = binary.getLoc();
    OpBuilder b(binary);
    auto i8 = b.getI8Type();
    createConstantGlobal(b, loc, "tfc_gpu_image",
                         LLVM::LLVMArrayType::get(i8, image.size()),
                         b.getStringAttr(image));
    createConstantGlobal(b, loc, "tfc_gpu_image_size", b.getI64Type(),
                         b.getI64IntegerAttr(image.size()));
    createConstantGlobal(b, loc, "tfc_gpu_image_format", b.getI32Type(),
                         b.getI32IntegerAttr(isPtx ? 0 : 1));
    createConstantGlobal(b, loc, "tfc_gpu_kernel_names",
                         LLVM::LLVMArrayType::get(i8, names.size()),
                         b.getStringAttr(names));
    createConstantGlobal(b, loc, "tfc_gpu_kernel_count", b.getI32Type(),
                         b.getI32IntegerAttr(count));
    createConstantGlobal(
        b, loc, "tfc_gpu_kernel_shared_bytes",
        LLVM::LLVMArrayType::get(b.getI32Type(), count),
        DenseIntElementsAttr::get(
            RankedTensorType::get({count}, b.getI32Type()), sharedBytes));
    // The architecture, sm_<n> as n, which the device must reach.
    int32_t arch = 0;
    if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
      nvvm.getChip().drop_front(3).rtrim('a').getAsInteger(10, arch);
    createConstantGlobal(b, loc, "tfc_gpu_arch", b.getI32Type(),
                         b.getI32IntegerAttr(arch));

    // void tfc_gpu_launch(i32, i64 x 6, i64 slots, i32 count)
    b.setInsertionPoint(binary);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto launchType =
        b.getFunctionType({i32, i64, i64, i64, i64, i64, i64, i64, i32}, {});
    auto launchFn = b.create<func::FuncOp>(loc, "tfc_gpu_launch", launchType);
    launchFn.setPrivate();

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      SmallVector<gpu::LaunchFuncOp> launches;
      func.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
      if (launches.empty())
        continue;
      int64_t maxArgs = 1;
      for (gpu::LaunchFuncOp launch : launches)
        maxArgs = std::max<int64_t>(maxArgs, launch.getNumKernelOperands());
      OpBuilder fb(func.getBody());
      auto slots = fb.create<memref::AllocaOp>(func.getLoc(),
                                               MemRefType::get({maxArgs}, i64));
      for (gpu::LaunchFuncOp launch : launches) {
        OpBuilder lb(launch);
        Location l = launch.getLoc();
        for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
          Value index = lb.create<arith::ConstantIndexOp>(l, i);
          lb.create<memref::StoreOp>(l, toSlot(lb, l, operand), slots,
                                     ValueRange{index});
        }
        SmallVector<Value> args = {lb.create<arith::ConstantIntOp>(
            l, kernelIndex.lookup(launch.getKernelName().getValue()), 32)};
        for (Value size : {launch.getGridSizeX(), launch.getGridSizeY(),
                           launch.getGridSizeZ(), launch.getBlockSizeX(),
                           launch.getBlockSizeY(), launch.getBlockSizeZ()})
          args.push_back(lb.create<arith::IndexCastOp>(l, i64, size));
        args.push_back(toSlot(lb, l, slots));
        args.push_back(lb.create<arith::ConstantIntOp>(
            l, launch.getNumKernelOperands(), 32));
        lb.create<func::CallOp>(l, launchFn, args);
        launch.erase();
      }
    }
    binary.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
