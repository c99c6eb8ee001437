//===- CpuPipeline.cpp - linalg on tensors to the LLVM dialect for a CPU --===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/CpuPipeline.h"

#include "codegen/Pipeline.h"
#include "codegen/cpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace tfc {
TargetChoices cpuTargetChoices() { return TargetChoices(); }
} // namespace tfc

void ::tfc::buildLinalgToLLVMPipeline(OpPassManager &pm,
                                      const PipelineOptions &options) {
  buildLinalgToBuffersPipeline(pm);
  // A LayerNorm's or a softmax cross-entropy's row-wise ops: one pass over
  // the rows, before the contraction kernels and outlining take the ops
  // that are left one by one.
  if (options.fusion)
    pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcFuseRows());
  // Loop nests that would step along a strided dimension innermost (a
  // depth-wise convolution's reductions) run along contiguous memory.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcInterchangeLoops());
  // Element-wise ops over [.., H, Dh] run one loop over contiguous memory,
  // not a short Dh loop that LLVM would unroll and gather around.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcCollapseDims());
  pm.addPass(mlir::tfc::createTfcStaticBuffers());
  pm.addPass(createCanonicalizerPass());
  // Each distinct linalg op becomes one kernel before anything lowers it,
  // so that the passes below lower every kernel once, not once per layer.
  mlir::tfc::TfcOutlineKernelsOptions linalgKernels;
  linalgKernels.linalgOps = true;
  pm.addPass(mlir::tfc::createTfcOutlineKernels(linalgKernels));

  mlir::tfc::TfcVectorizeContractionsOptions contractions;
  contractions.bf16Dot = options.cpuAvx512Bf16;
  pm.addPass(mlir::tfc::createTfcVectorizeContractions(contractions));
  // Element-wise ops over a short row (blocked attention's [T, Dh] blocks
  // rescaled by row) run by whole vectors along it, not by gathers across.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcVectorizeShortRows());
  // A sum over rows (a bias gradient) runs on threads by blocks of
  // columns, which it would otherwise read on one thread.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcParallelColumnSums());
  // Blocked attention's (batch, head) pairs become the outermost parallel
  // loop of their nest, which the threads share.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcParallelOuterLoops());
  // Reductions carry their accumulator in a register, so that LLVM
  // vectorises them.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcPromoteAccumulators());
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcFastMath());
  pm.addPass(mlir::tfc::createTfcOutlineKernels());
  pm.addPass(createConvertSCFToOpenMPPass());
  // Inlines the memref.alloca_scope that wraps each parallel body, and
  // hoists the contraction kernels' stack panels out of their scopes to
  // one per thread at the start of the omp.parallel region.
  pm.addPass(createCanonicalizerPass());
  buildLoopsToLLVMPipeline(pm, !options.bf16 ? Bf16Expansion::none
                               : options.cpuAvx512Bf16
                                   ? Bf16Expansion::widenings
                                   : Bf16Expansion::all);
  // The arenas in 2 MiB pages where the system gives them on request.
  pm.addPass(mlir::tfc::createTfcAdviseHugePages());
}

void ::tfc::registerCpuCodegenPipelines() {
  PassPipelineRegistration<>(
      "tfc-linalg-to-llvm", "linalg on tensors to the LLVM dialect",
      [](OpPassManager &pm) { ::tfc::buildLinalgToLLVMPipeline(pm); });
}
