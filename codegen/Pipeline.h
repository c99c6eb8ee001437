//===- Pipeline.h - The stages that both back ends share --------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_PIPELINE_H
#define TFC_CODEGEN_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tfc {

/// Registers the dialects and external models (bufferization, translation to
/// LLVM IR) that the CPU pipeline needs.
void registerCodegenDialects(mlir::DialectRegistry &registry);

/// What a back end asks of the target-independent middle. Each back end
/// fills it (cpuTargetChoices() in codegen/cpu, gpuTargetChoices() in
/// codegen/gpu); the shared passes take it through their options.
struct TargetChoices {
  /// Blocked attention's and Performer attention's (batch, head) pairs run
  /// as the parallel iterations of an `scf.forall`, one pair per thread
  /// (the CPU); otherwise they stay batch-wide ops that the back end maps
  /// to kernels (the GPU).
  bool attentionPairsAsThreads = true;
  /// Passes of the back end that lower softmax attention before the shared
  /// ones do (the GPU's tfc-row-attention with `--gpu-attention=rows`);
  /// they run when fusion is on.
  std::function<void(mlir::OpPassManager &)> addAttentionPasses;
};

/// What the pipelines build, beyond their defaults.
struct PipelineOptions {
  /// The back end's choices (the CPU's by default).
  TargetChoices target;
  /// Generate the training entry points.
  bool train = true;
  /// Run the fusion passes (blocked attention, fused element-wise chains);
  /// off, every tfc op is lowered on its own (`tfc compile --no-fusion`).
  bool fusion = true;
  /// Rows of the query and key blocks of tfc-blocked-attention; 0 lets the
  /// pass choose per attention (128 for softmax, a band's best for
  /// Longformer).
  int64_t attentionBlock = 0;
  /// Recompute Performer attention in its gradient instead of keeping the
  /// forward's features, chunk states and scores (`tfc compile
  /// --recompute-attention`; tfc-lower-to-linalg's `recompute-attention`).
  bool recomputeAttention = false;
  /// Performer attention runs by (batch, head) pairs (tfc-performer-heads),
  /// whose gradient recomputes each pair's features whatever
  /// recomputeAttention says.
  bool performerByPairs() const {
    return fusion && target.attentionPairsAsThreads;
  }
  /// Recompute cheap element-wise forward results (GELU and LayerNorm
  /// outputs) where the backward reads them instead of keeping them
  /// (tfc-recompute-elementwise; `tfc compile --recompute-elementwise`).
  bool recomputeElementwise = false;
  /// `--precision=bf16`: contraction operands rounded to bf16
  /// (tfc-precision).
  bool bf16 = false;
  /// The CPU has AVX512-BF16: bf16 contractions run on `vdpbf16ps`
  /// (tfc-vectorize-contractions' `bf16-dot`) and LLVM rounds with
  /// `vcvtneps2bf16`; else the contractions widen to float32 and the
  /// rounding is integer arithmetic (tfc-expand-bf16).
  bool cpuAvx512Bf16 = false;
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

/// Which conversions between float32 and bf16 become integer arithmetic
/// (tfc-expand-bf16): none, the widenings (a CPU with AVX512-BF16, whose
/// roundings are one instruction), or both ways (a CPU without it).
enum class Bf16Expansion { none, widenings, all };

/// Host code on buffers (loops, vectors, OpenMP, calls) → the LLVM
/// dialect, the entry points with bare pointers: the last stage of the CPU
/// pipeline, and of the GPU target's host code.
void buildLoopsToLLVMPipeline(mlir::OpPassManager &pm,
                              Bf16Expansion bf16 = Bf16Expansion::none);

/// Registers `tfc-to-linalg` and `tfc-linalg-to-buffers` as pass pipelines
/// (for tfc-opt).
void registerCodegenPipelines();

} // namespace tfc

#endif // TFC_CODEGEN_PIPELINE_H
