//===- Pipeline.h - From tfc IR to a native executable ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_PIPELINE_H
#define TFC_CODEGEN_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tfc {

/// Registers the dialects and external models (bufferization, translation to
/// LLVM IR) that the CPU pipeline needs.
void registerCodegenDialects(mlir::DialectRegistry &registry);

/// tfc IR → linalg on tensors: derives the training step (when `train`),
/// strips dropout from the evaluation graph, flattens the parameters,
/// generates the optimizer, lowers the tfc ops and exports the C ABI.
void buildTfcToLinalgPipeline(mlir::OpPassManager &pm, bool train = true);

/// linalg on tensors → LLVM dialect: inlining, one-shot bufferization,
/// buffer deallocation, loops, and the conversions to LLVM (bare-pointer
/// calling convention for the entry points).
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm);

/// Translates an LLVM-dialect module to LLVM IR, optimises it at -O3 for
/// `cpu` ("native" or "" = this machine) at `optLevel` (0-3) and writes an
/// object file. Returns an error message, empty on success.
std::string emitObjectFile(mlir::ModuleOp module, const std::string &cpu,
                           const std::string &path, bool emitLLVMIR,
                           unsigned optLevel = 3);

/// Registers `tfc-to-linalg` and `tfc-linalg-to-llvm` as pass pipelines
/// (for tfc-opt).
void registerCodegenPipelines();

/// Links `object` with the runtime libraries into the executable `output`.
/// `toolDir` is the folder of the running `tfc`, from which the runtime
/// libraries are found. Returns an error message, empty on success.
std::string linkExecutable(const std::string &object, const std::string &output,
                           const std::string &toolDir);

} // namespace tfc

#endif // TFC_CODEGEN_PIPELINE_H
