//===- Passes.td - tfc passes ------------------------------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_TD
#define TFC_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfcStripDropout : Pass<"tfc-strip-dropout", "mlir::ModuleOp"> {
  let summary = "Removes dropout for evaluation and sampling";
  let description = [{
    Replaces every `tfc.dropout` by its input: the graph an evaluation or
    generation entry point runs, where dropout is the identity.
  }];
  let dependentDialects = ["mlir::tfc::TfcDialect"];
}

#endif // TFC_PASSES_TD
