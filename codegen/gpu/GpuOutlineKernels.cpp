//===- OutlineKernels.cpp - The tfc-gpu-outline-kernels pass --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"
#include "passes/ManifestText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUOUTLINEKERNELS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The alignment of every buffer argument's pointer. A kernel receives,
/// per buffer, the aligned pointer of the buffer it views plus the byte
/// shifts of the `memref.view`s on the way (tfc-gpu-launch-to-runtime),
/// and adds its type's static offset itself: the buffers are device
/// allocations (256-byte aligned) and arenas, the shifts multiples of 64
/// bytes (tfc-static-buffers).
constexpr int64_t kArgumentAlignment = 16;

/// The most host loop iterations that launchesRun evaluates before giving
/// up (a step's host loops are a few thousand block iterations at most).
constexpr int64_t kMaxHostIterations = 1 << 22;

/// The launches that running `block` makes, its host loops run with the
/// integer values in `known` (constants, induction variables and what
/// folds from them: the key-block bounds of causal blocked attention
/// depend on the query block); `aroundLaunches` holds the operations with
/// launches inside them. None when a loop around launches has a bound
/// that does not fold, or the loops run too long.
std::optional<int64_t>
launchesRun(Block &block, const llvm::DenseSet<Operation *> &aroundLaunches,
            llvm::DenseMap<Value, Attribute> &known, int64_t &budget) {
  auto valueOf = [&](Value v) -> std::optional<int64_t> {
    if (auto integer = dyn_cast_or_null<IntegerAttr>(known.lookup(v)))
      return integer.getInt();
    return std::nullopt;
  };
  int64_t total = 0;
  for (Operation &op : block) {
    if (isa<gpu::LaunchFuncOp>(op)) {
      ++total;
      continue;
    }
    bool launches = aroundLaunches.contains(&op);
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && launches) {
      std::optional<int64_t> lower = valueOf(loop.getLowerBound());
      std::optional<int64_t> upper = valueOf(loop.getUpperBound());
      std::optional<int64_t> step = valueOf(loop.getStep());
      if (!lower || !upper || !step || *step <= 0)
        return std::nullopt;
      for (int64_t i = *lower; i < *upper; i += *step) {
        if (--budget < 0)
          return std::nullopt;
        known[loop.getInductionVar()] =
            IntegerAttr::get(loop.getInductionVar().getType(), i);
        std::optional<int64_t> inner =
            launchesRun(*loop.getBody(), aroundLaunches, known, budget);
        if (!inner)
          return std::nullopt;
        total += *inner;
      }
      continue;
    }
    if (launches)
      return std::nullopt;
    // Integer arithmetic of known values: what it folds to.
    if (op.getNumResults() != 1 || op.getNumRegions() != 0 ||
        !op.getResult(0).getType().isIntOrIndex())
      continue;
    SmallVector<Attribute> operands;
    for (Value operand : op.getOperands())
      operands.push_back(known.lookup(operand));
    SmallVector<OpFoldResult> folded;
    known.erase(op.getResult(0)); // an earlier iteration's value
    if (succeeded(op.fold(operands, folded)) && folded.size() == 1)
      if (auto value = dyn_cast<Attribute>(folded[0]))
        known[op.getResult(0)] = value;
  }
  return total;
}

/// The launches of one call of `func`: each launch times the iterations of
/// the host loops around it; each launch once when the loops do not fold.
int64_t launchesPerCall(func::FuncOp func) {
  int64_t launches = 0;
  llvm::DenseSet<Operation *> aroundLaunches;
  func.walk([&](gpu::LaunchFuncOp launch) {
    ++launches;
    for (Operation *op = launch->getParentOp(); op != func;
         op = op->getParentOp())
      aroundLaunches.insert(op);
  });
  llvm::DenseMap<Value, Attribute> known;
  int64_t budget = kMaxHostIterations;
  if (std::optional<int64_t> run =
          launchesRun(func.getBody().front(), aroundLaunches, known, budget))
    return *run;
  return launches;
}

/// The text of `kernel` without its name: equal for kernels that do the
/// same work on the same argument types.
std::string kernelKey(gpu::GPUFuncOp kernel) {
  StringAttr name = kernel.getNameAttr();
  kernel.setName("kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().useLocalScope());
  kernel.setName(name);
  return text;
}

struct OutlineKernels
    : public mlir::tfc::impl::TfcGpuOutlineKernelsBase<OutlineKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::LaunchOp> launches;
    module.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    if (launches.empty())
      return;

    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = b.create<gpu::GPUModuleOp>(module.getLoc(), kKernelModule);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    SymbolTable kernelSymbols(kernels);
    llvm::StringMap<gpu::GPUFuncOp> distinct;

    for (gpu::LaunchOp launch : launches) {
      // Constants (which canonicalization hoists out of the launches) go
      // back in: immediates in the kernel, not arguments; so do the
      // undefined structs that the warpgroup mma's accumulators start as.
      if (failed(sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
            return isa<arith::ConstantOp, LLVM::UndefOp>(op);
          })))
        return signalPassFailure();
      SmallVector<Value> operands;
      std::string name = kKernelPrefix.str() + std::to_string(distinct.size());
      gpu::GPUFuncOp kernel = outlineKernelFunc(launch, name, operands);
      // Shared buffers aligned to 16 bytes, as cp.async and ldmatrix need
      // (the attribution would otherwise get its element's alignment).
      for (unsigned i = 0; i < kernel.getNumWorkgroupAttributions(); ++i)
        kernel.setWorkgroupAttributionAttr(
            i, LLVM::LLVMDialect::getAlignAttrName(),
            OpBuilder(kernel).getI64IntegerAttr(16));
      // Buffer arguments say how their pointers are aligned, from which
      // LLVM knows the alignment of each access and loads a thread's
      // consecutive elements 16 bytes at a time (a row of attention, say).
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
        if (isa<MemRefType>(kernel.getArgument(i).getType()))
          kernel.setArgAttr(
              i, LLVM::LLVMDialect::getAlignAttrName(),
              OpBuilder(kernel).getI64IntegerAttr(kArgumentAlignment));
      auto [it, inserted] = distinct.try_emplace(kernelKey(kernel), kernel);
      if (inserted) {
        kernelSymbols.insert(kernel);
      } else {
        kernel.erase();
        kernel = it->second;
      }
      OpBuilder lb(launch);
      lb.create<gpu::LaunchFuncOp>(
          launch.getLoc(), kernel, launch.getGridSizeOperandValues(),
          launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), operands);
      launch.erase();
    }

    // The globals that kernels use (constants, and the block counters of
    // tfc-gpu-last-block-finals), copied into their module.
    kernels.walk([&](memref::GetGlobalOp get) {
      if (kernelSymbols.lookup(get.getName()))
        return;
      auto global = module.lookupSymbol<memref::GlobalOp>(get.getName());
      if (global)
        kernelSymbols.insert(global->clone());
    });

    int64_t perStep = 0;
    for (StringRef entry : {"tfc_train_step", "tfc_optimizer_step"})
      if (auto func = module.lookupSymbol<func::FuncOp>(entry))
        perStep += launchesPerCall(func);
    if (perStep != 0)
      setManifestRecord(module, "kernels_per_step", std::to_string(perStep));
  }
};

} // namespace
