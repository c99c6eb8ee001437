//===- Passes.td - tfc conversion passes -------------------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_PASSES_TD
#define TFC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfcLowerToLinalg : Pass<"tfc-lower-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Lowers tfc operations to linalg, tensor, arith and math";
  let description = [{
    Rewrites every tfc operation except `tfc.param` into operations on
    tensors: `linalg.generic` and named linalg ops for the math, `tensor`
    reshapes and slices, `scf.for` for the prefix sums of causal Performer
    attention. `tfc.dropout` must have been removed (`tfc-strip-dropout`) or
    lowered by the training pipeline first. The patterns run as a partial
    dialect conversion with the tfc dialect illegal but for `tfc.param`, so
    an operation no pattern lowers fails the pass ("failed to legalize"),
    and what they build is then folded.

    The gradient of an attention recomputes what it needs from the forward
    with the forward's own ops, so that CSE merges the two and the forward's
    intermediate values are kept until the gradient reads them. With
    `recompute-attention`, the gradient of Performer attention projects
    through the transposed feature matrix instead: its recomputation is
    then an independent copy that CSE leaves alone, the forward's features,
    chunk states and scores die with the forward, and one layer's worth of
    them exists at a time (less memory, the feature maps and chunk sums
    computed twice). Softmax and Longformer attention by blocks
    (`tfc-blocked-attention`) recompute their probabilities anyway.
  }];
  let options = [
    Option<"recomputeAttention", "recompute-attention", "bool",
           /*default=*/"false",
           "Recompute Performer attention's features, chunk states and "
           "scores in its gradient instead of keeping the forward's">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def TfcPerformerHeads : Pass<"tfc-performer-heads", "mlir::func::FuncOp"> {
  let summary = "Performer attention and its gradient as one loop over (batch, head) pairs";
  let description = [{
    Replaces each `tfc.attention` and `tfc.attention_grad` of the
    `#tfc.performer` kind (static shapes, more than one (batch, head) pair)
    by an `scf.forall` over its (batch, head) pairs, whose body is the same
    op on the pair's `[1, S, Dh]` slices of the query, key, value and output
    gradient (`heads 1`, the mask's row of the batch, the features whole),
    lowered in place by tfc-lower-to-linalg's patterns, with the unit batch
    and head dimensions of its linalg ops dropped. Each thread then runs the
    whole FAVOR+ chain of a pair (features, stabilisers, chunk scores,
    chunk states and their prefix scans, numerator and denominator) on
    tensors that stay in its cache, where each op over `[B, S, H, M]` would
    stream the batch's features through memory. The gradient's loop
    recomputes the pair's features and chunk states, so the training step
    keeps no `[B, S, H, M]` tensor between its forward and its gradient.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

#endif // TFC_CONVERSION_PASSES_TD
