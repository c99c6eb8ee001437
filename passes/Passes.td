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

def TfcFlattenParams : Pass<"tfc-flatten-params", "mlir::ModuleOp"> {
  let summary = "Places every tfc.param in one flat parameter buffer";
  let description = [{
    Gives `@forward` a leading argument `%params: tensor<Nxf32>` (the flat
    parameter buffer) and replaces each `tfc.param` by a slice of it,
    reshaped. Offsets follow the order of first appearance, each aligned to
    16 elements (64 bytes). The manifest (names, offsets, shapes, init
    schemes, kinds) is recorded as the module attribute `tfc.manifest`, an
    array of dictionaries, and `tfc.param_count`.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def TfcLowerToLinalg : Pass<"tfc-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers tfc operations to linalg, tensor, arith and math";
  let description = [{
    Rewrites every tfc operation except `tfc.param` into operations on
    tensors: `linalg.generic` and named linalg ops for the math, `tensor`
    reshapes and slices, `scf.for` for the prefix sums of causal Performer
    attention. `tfc.dropout` must have been removed (`tfc-strip-dropout`) or
    lowered by the training pipeline first.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def TfcExportAbi : Pass<"tfc-export-abi", "mlir::ModuleOp"> {
  let summary = "Wraps @forward into the C entry point of ModelABI.h";
  let description = [{
    Creates `func.func @tfc_forward(params, tokens, targets, mask, logits,
    loss)` on memrefs, which calls the tensor-level `@forward` and writes its
    results into the given buffers (`bufferization.materialize_in_destination`),
    and the global `tfc_model_manifest` holding the manifest text; `@forward`
    becomes private so that it is inlined.
  }];
  let dependentDialects = [
    "mlir::bufferization::BufferizationDialect",
    "mlir::memref::MemRefDialect",
    "mlir::LLVM::LLVMDialect",
  ];
}

def TfcStaticBuffers : Pass<"tfc-static-buffers", "mlir::ModuleOp"> {
  let summary = "Turns every static allocation into a buffer allocated once";
  let description = [{
    After bufferization, replaces each `memref.alloc` of static shape that is
    not inside a loop by a module-level `memref.global` (uninitialised,
    64-byte aligned) read with `memref.get_global`, and erases the matching
    `memref.dealloc`s. The generated entry points are not re-entrant, so a
    step reuses the same memory as the step before: no allocator calls and
    no fresh pages after the first step. An allocation left inside a loop
    (one whose buffer escapes an iteration) is an error.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

#endif // TFC_PASSES_TD
