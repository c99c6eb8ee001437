//===- Pipeline.cpp - From tfc IR to a native executable ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/Pipeline.h"

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
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

void ::tfc::registerCodegenDialects(DialectRegistry &registry) {
  registry.insert<mlir::tfc::TfcDialect, func::FuncDialect, arith::ArithDialect,
                  linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                  tensor::TensorDialect, bufferization::BufferizationDialect,
                  memref::MemRefDialect, cf::ControlFlowDialect,
                  vector::VectorDialect, omp::OpenMPDialect,
                  LLVM::LLVMDialect>();
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
  pm.addPass(mlir::tfc::createTfcStripDropout());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(mlir::tfc::createTfcFlattenParams());
  if (options.train)
    pm.addPass(mlir::tfc::createTfcBuildOptimizer());
  if (options.fusion && options.rowAttention)
    pm.addPass(mlir::tfc::createTfcRowAttention());
  // Each Performer attention a loop over (batch, head) pairs on the CPU,
  // lowered in place; the GPU maps the batch-wide ops instead.
  if (options.performerByPairs())
    pm.addPass(mlir::tfc::createTfcPerformerHeads());
  if (options.fusion) {
    mlir::tfc::TfcBlockedAttentionOptions blocked;
    blocked.blockSize = options.attentionBlock;
    blocked.parallelHeads = options.parallelHeads;
    pm.addPass(mlir::tfc::createTfcBlockedAttention(blocked));
  }
  mlir::tfc::TfcLowerToLinalgOptions lowering;
  lowering.recomputeAttention = options.recomputeAttention;
  pm.addPass(mlir::tfc::createTfcLowerToLinalg(lowering));
  if (options.fusion) {
    pm.addPass(mlir::tfc::createTfcFuseElementwise());
    pm.addPass(mlir::tfc::createTfcFuseEpilogues());
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
  pm.addPass(mlir::tfc::createTfcMaterializeInsertChains());
  pm.addPass(mlir::tfc::createTfcUnshareFills());
  // One alias set per tensor.empty use, not one per shape (CSE merged them).
  pm.addPass(mlir::tfc::createTfcUnshareEmpties());
  // One alias set per parameter, not one for the whole flat buffer.
  pm.addPass(mlir::tfc::createTfcSliceInputs());
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
  // itself, which tfc-fuse-rows would otherwise take for row-wise work.
  pm.addPass(createCanonicalizerPass());
}

void ::tfc::buildLinalgToLLVMPipeline(OpPassManager &pm,
                                      const PipelineOptions &options) {
  buildLinalgToBuffersPipeline(pm);
  // A LayerNorm's or a softmax cross-entropy's row-wise ops: one pass over
  // the rows, before the contraction kernels and outlining take the ops
  // that are left one by one.
  if (options.fusion)
    pm.addPass(mlir::tfc::createTfcFuseRows());
  // Loop nests that would step along a strided dimension innermost (a
  // depth-wise convolution's reductions) run along contiguous memory.
  pm.addPass(mlir::tfc::createTfcInterchangeLoops());
  // Element-wise ops over [.., H, Dh] run one loop over contiguous memory,
  // not a short Dh loop that LLVM would unroll and gather around.
  pm.addPass(mlir::tfc::createTfcCollapseDims());
  pm.addPass(mlir::tfc::createTfcStaticBuffers());
  pm.addPass(createCanonicalizerPass());
  // Each distinct linalg op becomes one kernel before anything lowers it,
  // so that the passes below lower every kernel once, not once per layer.
  mlir::tfc::TfcOutlineKernelsOptions linalgKernels;
  linalgKernels.linalgOps = true;
  pm.addPass(mlir::tfc::createTfcOutlineKernels(linalgKernels));

  pm.addPass(mlir::tfc::createTfcVectorizeContractions());
  // Element-wise ops over a short row (blocked attention's [T, Dh] blocks
  // rescaled by row) run by whole vectors along it, not by gathers across.
  pm.addPass(mlir::tfc::createTfcVectorizeShortRows());
  // A sum over rows (a bias gradient) runs on threads by blocks of
  // columns, which it would otherwise read on one thread.
  pm.addPass(mlir::tfc::createTfcParallelColumnSums());
  // Blocked attention's (batch, head) pairs become the outermost parallel
  // loop of their nest, which the threads share.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(mlir::tfc::createTfcParallelOuterLoops());
  // Reductions carry their accumulator in a register, so that LLVM
  // vectorises them.
  pm.addPass(mlir::tfc::createTfcPromoteAccumulators());
  pm.addPass(mlir::tfc::createTfcFastMath());
  pm.addPass(mlir::tfc::createTfcOutlineKernels());
  pm.addPass(createConvertSCFToOpenMPPass());
  // Inlines the memref.alloca_scope that wraps each parallel body, and
  // hoists the contraction kernels' stack panels out of their scopes to
  // one per thread at the start of the omp.parallel region.
  pm.addPass(createCanonicalizerPass());
  buildLoopsToLLVMPipeline(pm);
  // The arenas in 2 MiB pages where the system gives them on request.
  pm.addPass(mlir::tfc::createTfcAdviseHugePages());
}

void ::tfc::buildLoopsToLLVMPipeline(OpPassManager &pm) {
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
      "tfc-to-linalg",
      "tfc IR to linalg on tensors with the C entry point",
      [](OpPassManager &pm) { ::tfc::buildTfcToLinalgPipeline(pm); });
  PassPipelineRegistration<>(
      "tfc-linalg-to-buffers",
      "linalg on tensors to linalg on buffers (one-shot bufferization)",
      [](OpPassManager &pm) { ::tfc::buildLinalgToBuffersPipeline(pm); });
  PassPipelineRegistration<>(
      "tfc-linalg-to-llvm", "linalg on tensors to the LLVM dialect",
      [](OpPassManager &pm) { ::tfc::buildLinalgToLLVMPipeline(pm); });
}

namespace tfc {
std::string emitObjectFile(ModuleOp module, const std::string &cpu,
                           const std::string &path, bool emitLLVMIR,
                           unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "model");
  if (!llvmModule)
    return "translation to LLVM IR failed";

  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return error;
  std::string cpuName = cpu;
  std::string features;
  if (cpuName.empty() || cpuName == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
    for (auto &feature : hostFeatures)
      features += (feature.second ? "+" : "-") + feature.first().str() + ",";
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, options, llvm::Reloc::PIC_,
      // The static activation buffers of a large model exceed the 2 GiB
      // that the small code model can address.
      llvm::CodeModel::Medium,
      optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                      : llvm::CodeGenOptLevel::None));
  if (!machine)
    return "no target machine for cpu '" + cpuName + "'";
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  auto optimize = makeOptimizingTransformer(optLevel, 0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return llvm::toString(std::move(err));

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return path + ": " + ec.message();
  if (emitLLVMIR) {
    llvmModule->print(out.os(), nullptr);
  } else {
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, out.os(), nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return "the target cannot emit object files";
    codegen.run(*llvmModule);
  }
  return finishOutput(out, path);
}

std::string finishOutput(llvm::ToolOutputFile &out, const std::string &path) {
  out.os().flush();
  if (!out.os().has_error()) {
    out.keep();
    return "";
  }
  std::string message = path + ": " + out.os().error().message();
  out.os().clear_error();
  if (!llvm::sys::fs::is_regular_file(path))
    out.keep();
  return message;
}

std::string linkExecutable(const std::string &object,
                           const std::string &output,
                           const std::string &toolDir, bool cuda) {
  llvm::SmallString<256> libDir(toolDir);
  llvm::sys::path::append(libDir, "..", "lib");
  std::string runtimeMain = (libDir + "/libtfcrt_main.a").str();
  std::string runtime = (libDir + "/libtfcrt.a").str();
  std::string runtimeCuda = (libDir + "/libtfcrt_cuda.a").str();
  // A GPU executable runs where only the NVIDIA driver is installed: no
  // MPI, no OpenMP, libstdc++ inside.
  if (cuda)
    runtimeMain = (libDir + "/libtfcrt_main_serial.a").str();
  for (const std::string &lib : {runtimeMain, runtime, runtimeCuda})
    if (!llvm::sys::fs::exists(lib))
      return lib + ": runtime library not found";
  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName("c++");
  if (!linker)
    linker = llvm::sys::findProgramByName("g++");
  if (!linker)
    linker = llvm::sys::findProgramByName("clang++-19");
  if (!linker)
    return "no C++ linker (c++, g++ or clang++-19) on PATH";
  // The generated kernels fork threads through OpenMP (libomp of LLVM).
  std::string ompDir = TFC_OPENMP_LIB_DIR;
  std::string ompSearch = "-L" + ompDir, ompRpath = "-Wl,-rpath," + ompDir;
  std::vector<llvm::StringRef> args = {*linker, object, runtimeMain};
  llvm::SmallVector<llvm::StringRef> mpiArgs;
  if (cuda) {
    // The driver glue loads libcuda at run time (dlopen).
    args.insert(args.end(), {runtimeCuda, runtime, "-ldl",
                             "-static-libstdc++", "-static-libgcc"});
  } else {
    args.insert(args.end(), {runtime, ompSearch, ompRpath, "-lomp"});
    // MPI, when the runtime was built with it (data-parallel `train`).
    llvm::StringRef(TFC_MPI_LINK_ARGS).split(mpiArgs, '|', -1, false);
  }
  args.insert(args.end(), mpiArgs.begin(), mpiArgs.end());
  args.insert(args.end(), {"-lm", "-lpthread", "-o", output});
  // The linker's messages go to a file; a failure reports its first line.
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("tfc-link", "log", log))
    log.clear();
  else
    llvm::sys::RemoveFileOnSignal(log);
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(
      *linker, args, std::nullopt,
      log.empty() ? llvm::ArrayRef<std::optional<llvm::StringRef>>()
                  : llvm::ArrayRef<std::optional<llvm::StringRef>>(redirects),
      0, 0, &error);
  std::string message;
  if (!log.empty()) {
    if (auto text = llvm::MemoryBuffer::getFile(log))
      message = (*text)->getBuffer().split('\n').first.trim().str();
    llvm::sys::fs::remove(log);
    llvm::sys::DontRemoveFileOnSignal(log);
  }
  if (status == 0)
    return "";
  std::string why = !message.empty() ? message : error;
  return "linking " + output + " failed" + (why.empty() ? "" : ": " + why);
}
} // namespace tfc
