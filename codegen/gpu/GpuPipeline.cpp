//===- GpuPipeline.cpp - From linalg to NVVM kernels and host code --------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/GpuPipeline.h"

#include "codegen/Pipeline.h"
#include "codegen/gpu/Passes.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;

namespace tfc {
TargetChoices gpuTargetChoices(bool rowAttention, bool flashForward) {
  TargetChoices choices;
  choices.attentionPairsAsThreads = false;
  if (rowAttention)
    choices.addAttentionPasses = [flashForward](OpPassManager &pm) {
      mlir::tfc::TfcRowAttentionOptions options;
      options.flashForward = flashForward;
      pm.addPass(mlir::tfc::createTfcRowAttention(options));
    };
  return choices;
}
} // namespace tfc

namespace {
/// Lets the inliner move the NVGPU dialect's ops (the `cp.async` copies and
/// `ldmatrix` loads of a FlashAttention kernel, built on tensors) into the
/// callers of their function, as it moves the GPU dialect's.
struct NVGPUInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void ::tfc::registerGpuCodegenDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, nvgpu::NVGPUDialect>();
  registry.addExtension(+[](MLIRContext *, nvgpu::NVGPUDialect *dialect) {
    dialect->addInterfaces<NVGPUInlinerInterface>();
  });
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

/// The attach-target options of `options`; `libs` holds the link list.
static GpuNVVMAttachTargetOptions
attachTargetOptions(const ::tfc::GpuTargetOptions &options,
                    std::vector<std::string> &libs) {
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.arch;
  attach.features = options.ptxFeatures;
  attach.optLevel = 3;
  if (!options.libdevice.empty())
    libs.push_back(options.libdevice);
  attach.linkLibs = libs;
  return attach;
}

/// The mapping of loops to kernels that both the GPU and its emulation
/// run, the same for both. `arch` chooses the tensor-core contractions'
/// instruction: Hopper's warpgroup mma on sm_90a, `mma.sync` elsewhere.
static void buildKernelMappingPipeline(OpPassManager &pm, StringRef arch) {
  // Pads (Primer's convolutions): one kernel each, not a fill and a copy.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuGatherPads());
  ::tfc::buildLinalgToBuffersPipeline(pm);
  // A FlashAttention operand's bf16 rounding written into the buffer of
  // its own that its kernels read, not copied there.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuElideCopies());
  // The same polynomial f32 math as on the CPU (no libdevice calls), and
  // contracted multiply-adds.
  mlir::tfc::TfcFastMathOptions fastMath;
  fastMath.expandPow = true;
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcFastMath(fastMath));
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuParallelDimsFirst());
  // tfc-row-attention's loops round their outputs to bf16 as they write
  // them, not in a kernel of their own.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuForallConsumers());
  // FlashAttention kernels store the bf16 copies of their outputs too.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuFlashRoundings());
  // Long sums with few outputs (the gradient's norm, bias and LayerNorm
  // gradients) run as many threads' partial sums, not one thread or block.
  // Contractions of bf16 operands: tensor-core kernels, before any is
  // split or tiled for the SIMT cores.
  mlir::tfc::TfcGpuTensorCoreContractionsOptions tensorCores;
  tensorCores.warpgroupMma = arch == "sm_90a";
  pm.addNestedPass<func::FuncOp>(
      mlir::tfc::createTfcGpuTensorCoreContractions(tensorCores));
  // Ops over the same rows (LayerNorm, its gradient, a cross-entropy): one
  // kernel, a warp per row.
  mlir::tfc::TfcGpuRowKernelsOptions rowKernels;
  rowKernels.lanes = 32;
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuRowKernels(rowKernels));
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuSplitReductions());
  // Contractions: a register tile of outputs per thread.
  mlir::tfc::TfcGpuTileContractionsOptions tiling;
  tiling.sharedMemory = true;
  pm.addNestedPass<func::FuncOp>(
      mlir::tfc::createTfcGpuTileContractions(tiling));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // tfc-row-attention's loops over rows: one thread per iteration.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  // The embedding gradient's scatter-add: one thread per channel.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuParallelScatter());
  pm.addPass(mlir::tfc::createTfcGpuMapKernels());
  // A thread's reduction loop (a contraction's k loop, a row sum) carries
  // its output element in a register instead of loading and storing it in
  // global memory at every step; the sums are the same, term for term.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcPromoteAccumulators());
  // Consecutive kernels whose threads read only what they wrote themselves
  // (a reduction's fill, the reduction, its elementwise step after it): one
  // launch. The folded ids and indices are what it compares.
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuMergeLaunches());
  // A split reduction's one-thread final sum: in the last block to finish
  // of the kernel that writes its partial sums.
  pm.addPass(mlir::tfc::createTfcGpuLastBlockFinals());
  // Consecutive kernels that do not depend on each other (the Q, K and V
  // projections, a layer's weight gradients): one launch, its blocks
  // shared out among them.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuGroupLaunches());
}

void ::tfc::buildLinalgToEmulatedGpuPipeline(OpPassManager &pm,
                                             StringRef arch) {
  buildKernelMappingPipeline(pm, arch);
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcGpuEmulateLaunches());
  pm.addPass(mlir::tfc::createTfcStaticBuffers());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(mlir::tfc::createTfcOutlineKernels());
  // Any CPU runs it: rounding to bf16 without AVX512-BF16's instruction.
  ::tfc::buildLoopsToLLVMPipeline(pm, ::tfc::Bf16Expansion::all);
}

void ::tfc::buildLinalgToNVVMPipeline(OpPassManager &pm,
                                      const GpuTargetOptions &options) {
  buildKernelMappingPipeline(pm, options.arch);
  pm.addPass(mlir::tfc::createTfcStaticBuffers());
  pm.addPass(createCanonicalizerPass());
  buildKernelsToNVVMPipeline(pm, options);
}

void ::tfc::buildKernelsToNVVMPipeline(OpPassManager &pm,
                                       const GpuTargetOptions &options) {
  pm.addPass(mlir::tfc::createTfcGpuOutlineKernels());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  std::vector<std::string> libs;
  pm.addPass(createGpuNVVMAttachTarget(attachTargetOptions(options, libs)));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // The cp.async copies and ldmatrix loads of the tensor-core kernels.
  kernels.addPass(createConvertNVGPUToNVVMPass());
  kernels.addPass(createConvertSCFToCFPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // NVVM ops without a direct LLVM translation of all their operands (the
  // source size of a cp.async is dropped silently without it).
  kernels.addPass(createConvertNVVMToLLVMPass());
  // The registers of tfc-row-attention's rows (`vector` values), which
  // convert-gpu-to-nvvm leaves.
  kernels.addPass(createConvertVectorToLLVMPass());
  kernels.addPass(mlir::tfc::createTfcGpuNativeMath());
  // math.fma of the polynomials, which convert-gpu-to-nvvm leaves.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void ::tfc::buildLinalgToGpuPipeline(OpPassManager &pm,
                                     const GpuTargetOptions &options) {
  buildLinalgToNVVMPipeline(pm, options);
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = options.toolkit.empty() ? "isa" : "fatbin";
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // The host code: launches through the runtime, then LLVM.
  pm.addPass(mlir::tfc::createTfcGpuLaunchToRuntime());
  ::tfc::buildLoopsToLLVMPipeline(pm);
  pm.addPass(mlir::tfc::createTfcGpuDeviceBuffers());
}

namespace {
/// The options of the tfc-gpu-kernels-to-nvvm pipeline.
struct KernelsToNVVMOptions : public PassPipelineOptions<KernelsToNVVMOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The GPU architecture, sm_<n>"),
                           llvm::cl::init("sm_90")};
};
} // namespace

void ::tfc::registerGpuCodegenPipelines() {
  mlir::tfc::registerTfcGpuPasses();
  PassPipelineRegistration<KernelsToNVVMOptions>(
      "tfc-linalg-to-nvvm",
      "linalg on tensors to kernels in the NVVM dialect (no toolkit)",
      [](OpPassManager &pm, const KernelsToNVVMOptions &options) {
        ::tfc::GpuTargetOptions target;
        target.arch = options.chip;
        ::tfc::buildLinalgToNVVMPipeline(pm, target);
      });
  PassPipelineRegistration<KernelsToNVVMOptions>(
      "tfc-gpu-kernels-to-nvvm",
      "gpu.launch ops on buffers to kernels in the NVVM dialect (no "
      "toolkit): the part of tfc-linalg-to-nvvm after the mapping",
      [](OpPassManager &pm, const KernelsToNVVMOptions &options) {
        ::tfc::GpuTargetOptions target;
        target.arch = options.chip;
        ::tfc::buildKernelsToNVVMPipeline(pm, target);
      });
}

namespace tfc {
std::string findLibdevice(llvm::StringRef toolkit) {
  if (toolkit.empty())
    return "";
  llvm::SmallString<256> path(toolkit);
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::exists(path) ? path.str().str() : "";
}

std::string findCudaToolkit() {
  auto hasPtxas = [](llvm::StringRef dir) {
    llvm::SmallString<256> ptxas(dir);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    return llvm::sys::fs::can_execute(ptxas);
  };
  // Candidates in order of preference: the environment, the folder above
  // the ptxas on PATH (which may be a wrapper script outside any toolkit),
  // and CUDA's default install folder.
  llvm::SmallVector<std::string> candidates;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *dir = std::getenv(var))
      candidates.push_back(dir);
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    candidates.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
            .str());
  candidates.push_back("/usr/local/cuda");
  // A complete toolkit (ptxas and libdevice) first, else any ptxas.
  for (const std::string &dir : candidates)
    if (hasPtxas(dir) && !findLibdevice(dir).empty())
      return dir;
  for (const std::string &dir : candidates)
    if (hasPtxas(dir))
      return dir;
  return "";
}
} // namespace tfc
