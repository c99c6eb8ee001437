//===- SpecToTfc.h - Builds the tfc forward graph of a spec -----*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_IR_SPECTOTFC_H
#define TFC_FRONTEND_IR_SPECTOTFC_H

#include "frontend/Spec.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace tfc {

/// Options that override or complete the spec when building IR.
struct ImportOptions {
  int64_t batch = 0;   ///< 0: training.batch from the spec.
  int64_t seqLen = 0;  ///< 0: training.seq_len from the spec.
  bool useF64 = false; ///< Build in float64 (gradient checks).
};

/// Builds a module holding `func.func @forward(tokens, targets, mask) ->
/// (loss, logits)` in the tfc dialect for `spec`. Parameters are
/// `tfc.param` ops named as in a PyTorch state dict (docs/weights.md).
/// Returns null after emitting a diagnostic when the overrides make the
/// spec inconsistent.
mlir::OwningOpRef<mlir::ModuleOp> buildForwardModule(mlir::MLIRContext &ctx,
                                                     const spec::Spec &spec,
                                                     const ImportOptions &opts);

} // namespace tfc

#endif // TFC_FRONTEND_IR_SPECTOTFC_H
