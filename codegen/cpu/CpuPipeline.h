//===- CpuPipeline.h - The CPU back end's pipeline --------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_CPU_CPUPIPELINE_H
#define TFC_CODEGEN_CPU_CPUPIPELINE_H

#include "codegen/Pipeline.h"

namespace tfc {

/// The CPU's choices for the target-independent middle: attention's
/// (batch, head) pairs on the threads.
TargetChoices cpuTargetChoices();

/// linalg on tensors → LLVM dialect: inlining, one-shot bufferization,
/// row-wise fusion (when `options.fusion`), arenas, kernels, loops, and the
/// conversions to LLVM (bare-pointer calling convention for the entry
/// points).
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm,
                               const PipelineOptions &options = {});

/// Registers `tfc-linalg-to-llvm` as a pass pipeline (for tfc-opt).
void registerCpuCodegenPipelines();

} // namespace tfc

#endif // TFC_CODEGEN_CPU_CPUPIPELINE_H
