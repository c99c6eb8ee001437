//===- Pipeline.cpp - The stages that both back ends share ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// tfc IR to linalg on tensors (the target-independent middle), linalg on
/// tensors to buffers, and host loops to the LLVM dialect: the stages from
/// which the CPU back end (codegen/cpu) and the GPU back end (codegen/gpu)
/// build their pipelines.
///
//===----------------------------------------------------------------------===//

#include "codegen/Pipeline.h"

#include "conversion/Passes.h"
#include "dialect/TfcDialect.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void ::tfc::registerCodegenDialects(DialectRegistry &registry) {
  registry
      .insert<mlir::tfc::TfcDialect, func::FuncDialect, arith::ArithDialect,
              linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
              tensor::TensorDialect, bufferization::BufferizationDialect,
              memref::MemRefDialect, cf::ControlFlowDialect,
              vector::VectorDialect, omp::OpenMPDialect, LLVM::LLVMDialect>();
  func::registerInlinerExtension(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

void ::tfc::buildTfcToLinalgPipeline(OpPassManager &pm,
                                     const PipelineOptions &options) {
  if (options.train)
    pm.addPass(mlir::tfc::createTfcAutodiff());
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcStripDropout());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(mlir::tfc::createTfcFlattenParams());
  if (options.train)
    pm.addPass(mlir::tfc::createTfcBuildOptimizer());
  if (options.fusion && options.target.addAttentionPasses)
    options.target.addAttentionPasses(pm);
  // Each Performer attention a loop over (batch, head) pairs on the CPU,
  // lowered in place; the GPU maps the batch-wide ops instead.
  if (options.performerByPairs())
    pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcPerformerHeads());
  if (options.fusion) {
    mlir::tfc::TfcBlockedAttentionOptions blocked;
    blocked.blockSize = options.attentionBlock;
    blocked.parallelHeads = options.target.attentionPairsAsThreads;
    pm.addNestedPass<func::FuncOp>(
        mlir::tfc::createTfcBlockedAttention(blocked));
  }
  mlir::tfc::TfcLowerToLinalgOptions lowering;
  lowering.recomputeAttention = options.recomputeAttention;
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcLowerToLinalg(lowering));
  if (options.fusion) {
    pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcFuseElementwise());
    pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcFuseEpilogues());
  }
  // After CSE, which lets the backward share what it recomputes itself
  // (a LayerNorm gradient's centred rows) with the forward's, so that the
  // recomputation below starts from what the backward keeps anyway.
  if (options.train && options.recomputeElementwise) {
    pm.addPass(createCSEPass());
    pm.addPass(mlir::tfc::createTfcRecomputeElementwise());
  }
  // Last of the passes on tensors, so that the fusion passes see the
  // float32 graph and the rounding ops stand alone before each contraction.
  if (options.bf16)
    pm.addPass(mlir::tfc::createTfcPrecision());
  pm.addPass(mlir::tfc::createTfcExportAbi());
}

void ::tfc::buildLinalgToBuffersPipeline(OpPassManager &pm) {
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // The packed gradients are written slice by slice into the output buffer
  // (One-Shot Bufferize's analysis of a long insert_slice chain is cubic).
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcMaterializeInsertChains());
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcUnshareFills());
  // One alias set per tensor.empty use, not one per shape (CSE merged them).
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcUnshareEmpties());
  // One alias set per parameter, not one for the whole flat buffer.
  pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcSliceInputs());
  // Ops whose result is only written into a `restrict` output buffer (a
  // slice of the flat gradient) compute straight into it instead of into a
  // temporary that is then copied.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());

  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  // Copies become linalg.copy, lowered to loops like every other kernel
  // (memref.copy of a strided view would call a library function).
  bufferization.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                              Value to) -> LogicalResult {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  // A result computed in its output buffer leaves a copy of the buffer onto
  // itself, which tfc-fuse-rows would otherwise take for row-wise work; so
  // does a slice that an `scf.forall` iteration computes in place, as a
  // copy between two equal subviews of it, which CSE makes one first.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}

void ::tfc::buildLoopsToLLVMPipeline(OpPassManager &pm, Bf16Expansion bf16) {
  if (bf16 != Bf16Expansion::none) {
    mlir::tfc::TfcExpandBf16Options expansion;
    expansion.roundings = bf16 == Bf16Expansion::all;
    pm.addPass(mlir::tfc::createTfcExpandBf16(expansion));
  }
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // LLVM intrinsics first (fma, sqrt, exp...: inline code or vector
  // instructions); what has none (f64 tanh, erf) becomes a libm call.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void ::tfc::registerCodegenPipelines() {
  PassPipelineRegistration<>(
      "tfc-to-linalg", "tfc IR to linalg on tensors with the C entry point",
      [](OpPassManager &pm) { ::tfc::buildTfcToLinalgPipeline(pm); });
  PassPipelineRegistration<>(
      "tfc-linalg-to-buffers",
      "linalg on tensors to linalg on buffers (one-shot bufferization)",
      [](OpPassManager &pm) { ::tfc::buildLinalgToBuffersPipeline(pm); });
}
