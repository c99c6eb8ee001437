//===- Pipeline.h - From tfc IR to a native executable ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_PIPELINE_H
#define TFC_CODEGEN_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/ToolOutputFile.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tfc {

/// Registers the dialects and external models (bufferization, translation to
/// LLVM IR) that the CPU pipeline needs.
void registerCodegenDialects(mlir::DialectRegistry &registry);

/// What the pipelines build, beyond their defaults.
struct PipelineOptions {
  /// Generate the training entry points.
  bool train = true;
  /// Run the fusion passes (blocked attention, fused element-wise chains);
  /// off, every tfc op is lowered on its own (`tfc compile --no-fusion`).
  bool fusion = true;
  /// Rows of the query and key blocks of tfc-blocked-attention; 0 lets the
  /// pass choose per attention (128 for softmax, a band's best for
  /// Longformer).
  int64_t attentionBlock = 0;
  /// Run blocked attention's and Performer attention's (batch, head) pairs
  /// as the parallel iterations of an `scf.forall` (the CPU target; the GPU
  /// target maps the block ops and the batch-wide ops to kernels instead).
  bool parallelHeads = true;
  /// Lower softmax attention to loops over rows (tfc-row-attention) instead
  /// of blocks (`tfc compile --target=cuda --gpu-attention=rows`).
  bool rowAttention = false;
  /// Recompute Performer attention in its gradient instead of keeping the
  /// forward's features, chunk states and scores (`tfc compile
  /// --recompute-attention`; tfc-lower-to-linalg's `recompute-attention`).
  bool recomputeAttention = false;
  /// Performer attention runs by (batch, head) pairs (tfc-performer-heads),
  /// whose gradient recomputes each pair's features whatever
  /// recomputeAttention says.
  bool performerByPairs() const { return fusion && parallelHeads; }
  /// Recompute cheap element-wise forward results (GELU and LayerNorm
  /// outputs) where the backward reads them instead of keeping them
  /// (tfc-recompute-elementwise; `tfc compile --recompute-elementwise`).
  bool recomputeElementwise = false;
  /// `--precision=bf16`: contraction operands rounded to bf16
  /// (tfc-precision).
  bool bf16 = false;
};

/// tfc IR → linalg on tensors: derives the training step (when
/// `options.train`), strips dropout from the evaluation graph, flattens the
/// parameters, generates the optimizer, runs the target-independent fusion
/// passes (when `options.fusion`), lowers the tfc ops and exports the C ABI.
void buildTfcToLinalgPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options = {});

/// linalg on tensors → buffers, for both targets: inlining, the rewrites
/// that keep bufferization in place, one-shot bufferization and hoisting of
/// buffers out of loops.
void buildLinalgToBuffersPipeline(mlir::OpPassManager &pm);

/// linalg on tensors → LLVM dialect: inlining, one-shot bufferization,
/// row-wise fusion (when `options.fusion`), arenas, kernels, loops, and the
/// conversions to LLVM (bare-pointer calling convention for the entry
/// points).
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm,
                               const PipelineOptions &options = {});

/// Host code on buffers (loops, vectors, OpenMP, calls) → the LLVM
/// dialect, the entry points with bare pointers: the last stage of the CPU
/// pipeline, and of the GPU target's host code.
void buildLoopsToLLVMPipeline(mlir::OpPassManager &pm);

/// Translates an LLVM-dialect module to LLVM IR, optimises it at -O3 for
/// `cpu` ("native" or "" = this machine) at `optLevel` (0-3) and writes an
/// object file. Returns an error message, empty on success.
std::string emitObjectFile(mlir::ModuleOp module, const std::string &cpu,
                           const std::string &path, bool emitLLVMIR,
                           unsigned optLevel = 3);

/// Registers `tfc-to-linalg` and `tfc-linalg-to-llvm` as pass pipelines
/// (for tfc-opt).
void registerCodegenPipelines();

/// Flushes `out`, written at `path`, and keeps it; on a write error (a
/// full disk) returns "<path>: <error>" instead, removing a partial
/// regular file (a device such as /dev/full is left alone).
std::string finishOutput(llvm::ToolOutputFile &out, const std::string &path);

/// Links `object` with the runtime libraries into the executable `output`.
/// `toolDir` is the folder of the running `tfc`, from which the runtime
/// libraries are found. A `cuda` executable links the CUDA driver glue
/// (libtfcrt_cuda) instead of OpenMP, the runtime without MPI and
/// libstdc++ statically, so that it needs only the NVIDIA driver. Returns an error message, empty on
/// success.
std::string linkExecutable(const std::string &object, const std::string &output,
                           const std::string &toolDir, bool cuda = false);

} // namespace tfc

#endif // TFC_CODEGEN_PIPELINE_H
