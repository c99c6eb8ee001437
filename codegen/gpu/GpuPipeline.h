//===- GpuPipeline.h - From linalg to NVVM kernels and host code -*- C++
//-*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPU_GPUPIPELINE_H
#define TFC_CODEGEN_GPU_GPUPIPELINE_H

#include "codegen/Pipeline.h"

#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tfc {

/// What the GPU pipeline generates code for.
struct GpuTargetOptions {
  /// The NVIDIA architecture (`--gpu-arch`).
  std::string arch = "sm_90";
  /// The PTX ISA version of the generated PTX (`+ptx80`: CUDA 12.0 drivers
  /// and later load it).
  std::string ptxFeatures = "+ptx80";
  /// A CUDA toolkit folder with `bin/ptxas`: the kernels become a fatbin
  /// (cubin and PTX). Empty: PTX only, compiled by the driver at load.
  std::string toolkit;
  /// CUDA's libdevice bitcode, for the f64 math functions; empty when none.
  std::string libdevice;
};

/// The GPU's choices for the target-independent middle: attention's ops
/// stay batch-wide (the kernels take the batch and heads), and with
/// `rowAttention` softmax attention is lowered to loops over rows
/// (tfc-row-attention, `tfc compile --gpu-attention=rows`), and with
/// `flashForward` too its forwards that fit to FlashAttention kernels on
/// the tensor cores (`--gpu-attention=flash`, bf16 builds).
TargetChoices gpuTargetChoices(bool rowAttention, bool flashForward = false);

/// Registers the dialects, external models and translations that the GPU
/// pipeline needs.
void registerGpuCodegenDialects(mlir::DialectRegistry &registry);

/// linalg on tensors → host code in the LLVM dialect, with the kernels
/// compiled to PTX (or a fatbin) and embedded as `tfc_gpu_image`:
/// bufferization, loops, mapping to kernels, one arena per entry point,
/// outlining, NVVM, serialisation, launches through the runtime.
void buildLinalgToGpuPipeline(mlir::OpPassManager &pm,
                              const GpuTargetOptions &options);

/// linalg on tensors → the gpu.module of the kernels in the NVVM dialect,
/// before serialisation (`tfc compile --emit=nvvm`).
void buildLinalgToNVVMPipeline(mlir::OpPassManager &pm,
                               const GpuTargetOptions &options);

/// The kernels of a module on buffers (`gpu.launch` ops) → the gpu.module
/// of the kernels in the NVVM dialect: outlining, then the lowering of each
/// kernel; the second half of buildLinalgToNVVMPipeline.
void buildKernelsToNVVMPipeline(mlir::OpPassManager &pm,
                                const GpuTargetOptions &options);

/// linalg on tensors → LLVM dialect for the CPU, with the loops mapped to
/// the kernels of the GPU `arch` and each kernel run by loops over its
/// blocks and threads (tfc-gpu-emulate-launches): a check of the kernels
/// without a GPU (`tfc compile --target=cuda --gpu-emulate`).
void buildLinalgToEmulatedGpuPipeline(mlir::OpPassManager &pm,
                                      llvm::StringRef arch);

/// Registers the GPU passes and `tfc-linalg-to-nvvm` (for tfc-opt).
void registerGpuCodegenPipelines();

/// The CUDA toolkit folder: $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, the folder
/// above the `ptxas` on PATH, or /usr/local/cuda, the first that has both
/// `bin/ptxas` and `nvvm/libdevice`, else the first that has `bin/ptxas`;
/// empty when there is none.
std::string findCudaToolkit();

/// The libdevice bitcode of the CUDA toolkit folder `toolkit`
/// (`nvvm/libdevice/libdevice.10.bc`); empty when it has none.
std::string findLibdevice(llvm::StringRef toolkit);

} // namespace tfc

#endif // TFC_CODEGEN_GPU_GPUPIPELINE_H
