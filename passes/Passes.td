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
    Replaces every `tfc.dropout` that has no seed by its input: the graph
    an evaluation or generation entry point runs, where dropout is the
    identity. Seeded dropout (in `@train_step`) stays.
  }];
  let dependentDialects = ["mlir::tfc::TfcDialect"];
}

def TfcAutodiff : Pass<"tfc-autodiff", "mlir::ModuleOp"> {
  let summary = "Builds @train_step: the loss and its gradients, by reverse mode";
  let description = [{
    Clones `@forward(tokens, targets, mask) -> (loss, logits)` into
    `@train_step(tokens, targets, mask, seed) -> (loss, grads...)`: dropout
    gets the step's `seed` and a distinct `stream` per op, then the ops are
    walked in reverse, each differentiable op contributing the gradients of
    its operands through its VJPOpInterface (summed with `tfc.add` where a
    value is used several times). One result per `tfc.param` that receives a
    gradient; the function attribute `tfc.param_grads` names them.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TfcFlattenParams : Pass<"tfc-flatten-params", "mlir::ModuleOp"> {
  let summary = "Places every tfc.param in one flat parameter buffer";
  let description = [{
    Gives `@forward` a leading argument `%params: tensor<Nxf32>` (the flat
    parameter buffer) and replaces each `tfc.param` by a slice of it,
    reshaped. Offsets follow the order of first appearance, each aligned to
    16 elements (64 bytes). The manifest (names, offsets, shapes, init
    schemes, kinds) is recorded as the module attribute `tfc.manifest`, an
    array of dictionaries, and `tfc.param_count`. `tfc.flops` records the
    multiply-add FLOPs of `@forward`'s matmuls: the linear layers, Performer's
    feature maps and contractions (with causal FAVOR+'s per-chunk scores),
    and softmax and Longformer attention over the (query, key) pairs their
    masks keep (the causal triangle; the window band, dilation included,
    plus the global rows and columns).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def TfcBuildOptimizer : Pass<"tfc-build-optimizer", "mlir::ModuleOp"> {
  let summary = "Generates @optimizer_step from the spec's training settings";
  let description = [{
    Builds `@optimizer_step(params, grads, m, v, step, schedule) -> (params,
    m, v, stats)` over the flat buffers, in linalg on tensors: the global
    gradient norm, clipping, the learning-rate schedule (constant, linear,
    cosine, inverse square root, after linear warm-up) and the Adam or AdamW
    update with bias correction, fused into one element-wise kernel per run
    of trainable tensors (buffers such as Performer features are left as
    they are). `schedule` holds the base learning rate, the run's number of
    steps (where linear and cosine decay reach zero) and the warm-up steps
    (0: none); `stats` returns the gradient norm before clipping and the rate
    used. Reads the module attributes `tfc.training` (optimizer, betas, eps,
    weight decay, clip, schedule kind) and `tfc.manifest`; the spec's `lr`,
    `steps` and `warmup` reach the runtime through the manifest.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def TfcBlockedAttention : Pass<"tfc-blocked-attention", "mlir::ModuleOp"> {
  let summary = "Softmax and Longformer attention by blocks, without an S x S matrix";
  let description = [{
    Lowers `tfc.attention` and `tfc.attention_grad` of the `#tfc.softmax`
    and `#tfc.longformer` kinds to loops over query and key blocks
    (`scf.for`) of linalg ops on tensors, in the way of FlashAttention: an
    online softmax per query block, one stored log-sum-exp per row, and a
    gradient that recomputes each block of probabilities from it. Causal
    attention skips the key blocks above the diagonal; a Longformer's local
    rows visit only the key blocks that meet their sliding-window band
    (dilation included) plus one block of global columns, so its time and
    memory grow linearly in the sequence length. Blocks are `block-size`
    rows (the whole length when shorter). With `block-size=0` (the
    default) the pass chooses: 128 rows for softmax attention; for a
    Longformer, among 128 and the powers of two below it down to 16, the
    block that minimises the key columns each row visits (every column of
    the key blocks that meet its query block's band) weighted by
    `(T + 16) / T` for the fixed cost of a block of `T` rows, a narrower
    block only where it costs at least 10% less than the best wider one: a
    window of 128 gets blocks of 64 rather than 128, which visit 192
    columns per row instead of 384. The blocks may cover a longer length
    than the attention's: with `block-size=N`, the length rounded up to a
    multiple of N; with `block-size=0`, a
    length past 128 that is no multiple of 128 rounded up to a multiple of
    the widest power of two from 128 down to 16 that adds at most 1/8 of
    padding (4,000 and 4,095 to 4,096, 200 to 224). The queries, keys and
    values then get zero rows, a key mask hides the padding keys from every
    real query, and the padding rows of the results are dropped. Other
    kinds, and attentions whose query and key lengths differ, are left to
    tfc-lower-to-linalg's dense lowering.

    With `parallel-heads` (the CPU target), the block loops of each
    (batch, head) pair are one iteration of an `scf.forall` over all pairs,
    and the ops inside it drop the pair's unit dimensions: each thread runs
    a pair's blocks one after another on `[T, T]` and `[T, Dh]` buffers
    that stay in its cache, where each op over `[B, H, T, T]` would stream
    the whole batch and fork the threads.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"0",
           "Rows of a query block and columns of a key block (0: chosen "
           "per attention)">,
    Option<"parallelHeads", "parallel-heads", "bool", /*default=*/"false",
           "Run the blocks of each (batch, head) pair as one iteration of an "
           "scf.forall, on blocks without batch and head dimensions">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def TfcPerformerHeads : Pass<"tfc-performer-heads", "mlir::ModuleOp"> {
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

def TfcRowAttention : Pass<"tfc-row-attention", "mlir::ModuleOp"> {
  let summary = "Softmax attention as loops over rows, with no score matrix";
  let description = [{
    Lowers `tfc.attention` and `tfc.attention_grad` of the `#tfc.softmax`
    kind (static shapes; causal only when the query and key lengths are
    equal) to `scf.forall` loops over (batch, head, row) on tensors. The
    forward's iteration for query row `i` runs over the keys `i` may attend
    (`j <= i` when causal, real keys of the mask), keeping the running
    maximum, normaliser and `[Dh]` accumulator of an online softmax in
    registers (`vector` values), and writes its output row. The gradient is
    two such loops: one per query row, which recomputes the softmax's
    log-sum-exp and `D = dO . O` and accumulates `dQ`, and one per key row,
    which accumulates `dK` and `dV` over the queries that attend it from
    the first loop's log-sum-exp and `D`. A row that attends no key gives
    zeros, and a padding key zero gradients, as in the dense lowering.
    Neither loop stores more than `[B, H, S]` numbers besides its results:
    no `[S, S]` matrix and no block of one.

    This is the GPU target's form of softmax attention under
    `tfc compile --target=cuda --gpu-attention=rows`: each iteration is one
    thread, the threads of a block consecutive query rows of one head.
    Other kinds are left to tfc-blocked-attention and tfc-lower-to-linalg.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
    "mlir::vector::VectorDialect",
  ];
}

def TfcFuseElementwise : Pass<"tfc-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses chains of element-wise linalg.generic ops into one";
  let description = [{
    On linalg on tensors, fuses an element-wise `linalg.generic` into the
    element-wise `linalg.generic` that consumes it (bias add, activation,
    dropout mask, residual add, scaling; their gradients), so that a chain
    becomes one loop nest with no intermediate tensor. A producer is fused
    only when its result has no other use and the consumer reads it through
    a permutation (no broadcast); contractions and reductions are not
    consumers, so the contraction kernels still recognise them.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TfcFuseRows : Pass<"tfc-fuse-rows", "mlir::ModuleOp"> {
  let summary = "Fuses row-wise linalg ops on buffers into one loop over row tiles";
  let description = [{
    On buffers, a run of linalg ops over the same rows (their first loop is
    parallel with the same extent: a LayerNorm's row sums, normalisation and
    scale, a softmax cross-entropy's row maximum, sum and loss, and their
    gradients) becomes one `scf.parallel` over tiles of rows, each iteration
    running every op of the run on its tile, so that every op after the
    first reads what the one before wrote from cache. Every buffer an op
    writes must be read by the other ops of the run through the same
    row-indexed view (row r depends only on row r); buffers that do not
    depend on the row (a scale vector) may be read whole. Contractions, ops
    that read the row index, and ops with dynamic shapes are not taken; any
    op with memory effects that is not taken ends a run. Each op computes
    the same values in the same order as before.
  }];
  let options = [
    Option<"tileBytes", "tile-bytes", "int64_t", /*default=*/"32768",
           "Bytes of row-indexed data per tile of rows">,
    Option<"minTiles", "min-tiles", "int64_t", /*default=*/"8",
           "Fewest tiles of a fused run (runs with fewer rows are left alone)">
  ];
  let statistics = [
    Statistic<"fusedRuns", "fused-runs", "Runs of row-wise ops fused">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcCollapseDims : Pass<"tfc-collapse-dims", "mlir::ModuleOp"> {
  let summary = "Merges the trailing contiguous loops of element-wise ops";
  let description = [{
    On buffers, an element-wise linalg op (all loops parallel, no loop
    indices read) whose trailing loops every operand holds contiguously in
    memory gets them merged into one loop, so that a short innermost loop
    (the head dimension) does not make LLVM unroll it and vectorise the
    strided loop around it with gathers. Outside a parallel loop, the loops
    in front keep at least 16 iterations for the threads.
  }];
  let statistics = [
    Statistic<"collapsedOps", "collapsed-ops",
              "Element-wise ops whose trailing loops were merged">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def TfcInterchangeLoops : Pass<"tfc-interchange-loops", "mlir::ModuleOp"> {
  let summary = "Puts innermost the loop along every operand's contiguous dimension";
  let description = [{
    On buffers, a `linalg.generic` whose operands all have unit stride in
    their last dimension, all indexed there by the same parallel loop, with
    reduction loops after it (a depth-wise convolution and its weight
    gradient, column sums), gets that loop moved innermost, so that its
    loop nest steps along contiguous memory and vectorises. The reductions
    keep their order, so results are bit-identical.
  }];
  let statistics = [
    Statistic<"interchangedOps", "interchanged-ops",
              "Generic ops whose contiguous loop moved innermost">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TfcFuseEpilogues : Pass<"tfc-fuse-epilogues", "mlir::ModuleOp"> {
  let summary = "Pairs contractions with their element-wise consumers";
  let description = [{
    On linalg on tensors, after `tfc-fuse-elementwise`: when the result of
    a contraction (a linalg op whose body is `out + a * b`) has one use, an
    all-parallel `linalg.generic` in the same block that reads it through
    the identity map and its other inputs through projected permutations
    (bias `[n]`, residual `[m, n]`) with a body of scalar arith, which may
    read positions through `linalg.index` (blocked attention's causal or
    banded mask on a score block), but no math dialect (GELU's tanh or erf
    ran slower on the accumulators than in a loop of its own), that
    consumer is rewritten to update C in place (C becomes its output
    and is no longer an input) and the contraction moves right before it,
    marked `tfc.epilogue`. The consumer first grows: element-wise ops
    after it, also behind `tensor.collapse_shape`/`expand_shape` (the bias
    add on `[B*S, N]`, the residual add on `[B, S, N]`), are collapsed to
    C's shape and fused into it while each result has one use (not one
    that reads positions: its merged loops' indices would need divisions).
    `tfc-outline-kernels=linalg-ops` then outlines
    the pair as one kernel, and `tfc-vectorize-contractions` applies the
    consumer to the accumulator registers after the last K panel, so that C
    is stored once and never read again. Where the mark is ignored the pair
    computes what the two ops did. A result with several uses, a broadcast
    of C, a reduction or a consumer over another iteration space is left
    alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TfcLowerToLinalg : Pass<"tfc-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers tfc operations to linalg, tensor, arith and math";
  let description = [{
    Rewrites every tfc operation except `tfc.param` into operations on
    tensors: `linalg.generic` and named linalg ops for the math, `tensor`
    reshapes and slices, `scf.for` for the prefix sums of causal Performer
    attention. `tfc.dropout` must have been removed (`tfc-strip-dropout`) or
    lowered by the training pipeline first.

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

def TfcPrecision : Pass<"tfc-precision", "mlir::ModuleOp"> {
  let summary = "Rounds the operands of float32 contractions to bf16 (--precision=bf16)";
  let description = [{
    The rule of `--precision=bf16` (docs/precision.md), as far as it goes
    today: every linalg op on tensors that is a contraction `acc + a * b`
    (two inputs, one output, one reduction loop) with float32 operands
    and output gets each input rounded to bf16 by an element-wise
    `arith.truncf` op (round to nearest even) just before it, and reads
    them widened back by `arith.extf`, summing in float32 into its float32
    output. Named contractions (`linalg.matmul`, `linalg.matmul_transpose_b`)
    become `linalg.generic` first; the contraction keeps its discardable
    attributes (the fusion passes' marks). Everything else stays float32:
    master weights, gradients as they accumulate, Adam moments,
    normalisation and softmax statistics, the loss. The GPU target runs
    such contractions on tensor cores (tfc-gpu-tensor-core-contractions);
    the CPU target computes them in float32 from the rounded operands.
  }];
  let statistics = [
    Statistic<"roundedOps", "rounded-ops", "Contractions given bf16 operands">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def TfcRecomputeElementwise : Pass<"tfc-recompute-elementwise", "mlir::ModuleOp"> {
  let summary = "Recomputes cheap element-wise forward results in the backward";
  let description = [{
    In `@train_step`, a `linalg.generic` of the forward (before the op that
    computes the loss, the step's first result) that maps its inputs to one
    result element by element, with at most `max-body-ops` `arith` and
    `math` ops and without reading its output, and whose result the
    backward reads again (directly or through `tensor` views), is cloned
    right before the first backward op that reads it, and the backward's
    reads take the clone (its views rebuilt on it). It is done only when
    every input is kept until there anyway (a function argument, a
    constant, or a tensor that is read at or after that point) or is
    itself recomputed there from such inputs: the result of a forward
    `linalg.generic` of the same kind, or a reduction of that kind from a
    constant `linalg.fill`, at most `max-depth` producers deep. A GELU's
    output, read by the next projection's weight gradient, is recomputed
    from the GELU's input, which the GELU's gradient reads; a LayerNorm's
    output, read by the weight gradients of the projections after it,
    from the LayerNorm's input, which its gradient reads, through the row
    means, centred rows and inverse deviations. The forward's
    result then dies after its last forward read, and one layer's copy
    exists at a time in the backward instead of every layer's. The clone
    carries a `tfc.recomputed` unit attribute, which keeps CSE from merging
    it back. Results smaller than `min-bytes` (none by default) are left
    alone.
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "int64_t", /*default=*/"32",
           "Most arith/math ops in the body of a recomputed op">,
    Option<"maxDepth", "max-depth", "int64_t", /*default=*/"4",
           "Most producers between a recomputed result and the inputs "
           "that are kept">,
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"0",
           "Smallest result, in bytes, worth recomputing">
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed",
              "Ops recomputed in the backward">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
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

def TfcMaterializeInsertChains
    : Pass<"tfc-materialize-insert-chains", "mlir::ModuleOp"> {
  let summary = "Writes insert_slice chains that end in a buffer straight into it";
  let description = [{
    Where `bufferization.materialize_in_destination ... in restrict writable
    %out` (a buffer nothing else uses) writes a chain of `tensor.insert_slice`
    ops into a `linalg.fill` of a `tensor.empty`, each link used only by the
    next, the chain becomes a `linalg.fill` of `%out` and one
    `materialize_in_destination` per slice into a `memref.subview` of `%out`.
    A 1-d chain into any other tensor, its slices at constant offsets and
    disjoint, becomes one write per slice and copies of the base's elements
    around them; its sink need not be `restrict` (the optimizer's new
    parameters and moments, the update of the trained prefix inserted into
    the old buffers, whose memory they may be). The subviews are made up
    front, next to the fill. When the sink is `restrict` and the slices
    have constant bounds and do not overlap, each is written (`restrict`:
    the views are distinct) right after its source is computed, so that
    `eliminate-empty-tensors` computes the source in its slice of `%out`
    and no temporary or copy is left; otherwise all are written in the
    chain's order where the chain was materialized. The flat gradient buffer of `@train_step` is such a chain,
    one link per parameter; One-Shot Bufferize's conflict analysis of a
    chain takes time cubic in its length, while the per-slice writes leave
    it nothing to check. Runs after inlining, before bufferization.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def TfcUnshareFills : Pass<"tfc-unshare-fills", "mlir::ModuleOp"> {
  let summary = "Gives every user of a tensor linalg.fill a fill of its own";
  let description = [{
    CSE merges identical `linalg.fill` ops on `tensor.empty`, so one fill
    feeds several destination-passing ops; one-shot bufferization then
    copies the filled buffer before each in-place update. This pass,
    run right before bufferization, clones the fill (and its
    `tensor.empty`) right before every op that takes it as an init
    (destination) operand, so each accumulator is filled in place and
    nothing is copied; ops that only read it keep the original.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def TfcSliceInputs : Pass<"tfc-slice-inputs", "mlir::ModuleOp"> {
  let summary = "Reads each slice of a read-only input buffer as a tensor of its own";
  let description = [{
    Replaces `tensor.extract_slice` of a read-only `bufferization.to_tensor`
    (`restrict`, not `writable`: the flat parameter buffer of an entry
    point) by a `memref.subview` of the buffer and a `to_tensor` of that.
    The elements read are the same, and bufferization makes the same
    subview of either; but One-Shot Bufferize no longer holds every
    parameter in one alias set, whose analysis took time quadratic in the
    number of parameters. Run right before bufferization.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def TfcUnshareEmpties : Pass<"tfc-unshare-empties", "mlir::ModuleOp"> {
  let summary = "Gives every user of a tensor.empty one of its own";
  let description = [{
    CSE merges the `tensor.empty` ops of one shape, so in a deep model one
    `tensor.empty` is the destination of the same kernel in every layer.
    One-Shot Bufferize then analyses one alias set holding every one of
    those results, checking each in-place write against every read of the
    set, in time that grows with the square of the layer count or faster.
    This pass, run right before bufferization, replaces a `tensor.empty`
    that has several uses by one clone per use, right before its user. An
    empty tensor has no defined contents, so the values computed do not
    change.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def TfcStaticBuffers : Pass<"tfc-static-buffers", "mlir::ModuleOp"> {
  let summary = "Places every static allocation in one arena per function, reusing memory";
  let description = [{
    After bufferization, replaces each `memref.alloc` of static shape that is
    not inside a loop by a `memref.view` at a fixed offset of a module-level
    byte arena (`memref.global`, uninitialised, 64-byte aligned), and
    erases the matching `memref.dealloc`s. The entry points (functions that
    no other function calls and that call none) never run at the same time,
    so they share one arena as large as the largest of them; any other
    function gets an arena of its own. A buffer is
    live from its allocation to the last top-level operation that uses it
    or a view of it (to the end when it is returned); buffers whose live
    ranges do not overlap share bytes (largest first, each at the lowest
    free offset), so the arena holds the peak of live activations, not
    their sum. The generated entry points are not re-entrant, so a step
    reuses the same memory as the step before: no allocator calls and no
    fresh pages after the first step. An allocation in the body of an
    `scf.forall` (blocked attention's (batch, head) pairs) belongs to one
    iteration and to the thread that runs it: it becomes a `memref.alloca`
    there, smallest first, while the body's stack buffers take at most
    1 MiB together; the larger rest stay heap buffers, freed at the end of
    the iteration. Any other allocation left inside a loop (one whose
    buffer escapes an iteration) is an error.

    When the module holds the manifest (`tfc_model_manifest`, from
    tfc-export-abi), its `activation_bytes` record becomes the arena bytes
    of `tfc_forward` (and of the functions it calls), and a
    `train_activation_bytes` record gives those of `tfc_train_step` and
    `tfc_optimizer_step`, and an `arena_bytes` record the bytes of all
    arenas together; a `thread_heap_bytes` record, when some iteration has
    heap buffers, the most that one iteration takes (each worker thread
    holds that much besides the arenas).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcAdviseHugePages : Pass<"tfc-advise-huge-pages", "mlir::ModuleOp"> {
  let summary = "Asks the kernel for transparent huge pages over the arenas";
  let description = [{
    Runs on the LLVM dialect, after the arenas of tfc-static-buffers have
    become `llvm.mlir.global`s. For every arena of at least 2 MiB (one huge
    page), a constructor (`llvm.mlir.global_ctors`, internal function
    `@tfc_advise_huge_pages`) calls `madvise(start, length, MADV_HUGEPAGE)`
    over the 4 KiB pages the arena covers, so that a system whose
    transparent huge pages are given on request maps the arenas in 2 MiB
    pages: fewer page faults on the first step, fewer TLB misses on every
    step. The advice is a hint and its result is not read. A module
    without such an arena is left unchanged; one that already has global
    constructors is an error.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def TfcFastMath : Pass<"tfc-fast-math", "mlir::ModuleOp"> {
  let summary = "Fast float arithmetic: polynomial f32 math, reassociation";
  let description = [{
    Replaces the f32 transcendental functions (`math.exp`, `tanh`, `log`,
    `erf`, ...) by MLIR's polynomial approximations (a few ulp), which
    vectorise, where libm would be called one element at a time; f64 math
    is left to libm. Then adds the `reassoc` and `contract` fast-math flags
    to every floating-point arith operation, keeping the flags it already
    has, so that LLVM vectorises the reductions of the generated loops (dot
    products, row sums) and fuses multiply-adds. Results may differ from
    the sequential order in the last bits. NaN and infinity semantics are
    kept (no `nnan`/`ninf` added), so a diverging loss is still detected;
    only the maxima that offset a softmax's exponentials (scores, logits,
    Performer's stabiliser) are built with `nnan` and `nsz`, which makes
    them the machine's max instruction: a NaN among their inputs still
    reaches the result through `exp(x - max)`.
  }];
  let options = [
    Option<"expandPow", "expand-pow", "bool", /*default=*/"false",
           "Also write powf as exp(b log a) (for the GPU, which has no libm; "
           "its exp and log then become polynomials in f32)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def TfcOutlineKernels : Pass<"tfc-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Moves each top-level loop nest into a function of its own";
  let description = [{
    After the linalg ops have become loops, every loop nest at the top level
    of a function becomes a private `noinline` function (a kernel) called
    with the buffers and values it uses. LLVM then optimises many small
    functions instead of one function of thousands of loops, which keeps
    compile times of deep models short. A loop nest whose kernel would be
    equivalent to an earlier one (same signature, same operations and
    attributes, locations aside; repeated layers of one shape) calls that
    kernel instead, so each distinct kernel is compiled once. A buffer whose
    layout has a static offset (a slice of the flat parameter buffer, at
    another offset in every layer) is passed at offset 0 with the offset as
    an `index` argument, so that the kernels of all layers have the same
    signature.

    With `linalg-ops`, every top-level linalg op on buffers is outlined in
    the same way instead, into a kernel marked `tfc.kernel`, and functions
    so marked are left whole by later runs. A contraction marked
    `tfc.epilogue` and its epilogue (the next linalg op, with only
    operations free of memory effects between them, updating its output in
    place) go into one kernel. Run before the linalg ops are
    lowered, this lowers each distinct kernel once rather than every
    layer's copy of it.

    Without `linalg-ops`, the number of loop nests that `tfc_train_step`
    and `tfc_optimizer_step` run (kernel calls and loops left in place)
    becomes the manifest's `kernels_per_step`.
  }];
  let options = [
    Option<"linalgOps", "linalg-ops", "bool", /*default=*/"false",
           "Outline linalg ops on buffers instead of loop nests">
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def TfcVectorizeContractions
    : Pass<"tfc-vectorize-contractions", "mlir::ModuleOp"> {
  let summary = "Register-tiled vector kernels for linalg contractions";
  let description = [{
    Rewrites every linalg op on buffers whose body is `out + a * b` with a
    reduction dimension shared by both inputs (matmuls, batched and
    transposed ones, attention scores and values, their gradients) into a
    BLAS-like loop nest: the input that carries C's innermost dimension is
    packed panel by panel (256 deep) into a zero-padded contiguous buffer,
    and register tiles of 8 rows x 2 vectors (12 x 1 for narrow outputs)
    accumulate vector FMAs over each panel, masked at the edge of N; the
    rows left at the edge of M make one tile of their own height. A
    contraction of at least 65536 multiply-adds forks threads: over its
    leading parallel outer loops (batch, head, chunk) when they have at
    least 8 iterations and the panel fits in 64 KiB, each iteration then
    packing into a panel of its own on the stack (`memref.alloca` in a
    `memref.alloca_scope`); else over its row blocks, with one shared
    global panel. A `linalg.fill` of zeros into C right before the
    contraction (nothing with memory effects in between, no outer loop
    reducing into C) is erased; the first K panel's accumulators start
    from zero instead of loading C. Every output element sums its products
    in order, so the result does not depend on how the work is split.
    A contraction marked `tfc.epilogue` (`tfc-fuse-epilogues`) takes its
    epilogue, the element-wise op after it that updates C in place: after
    the last K panel, that op's body runs on the accumulator vectors (its
    inputs along N loaded as vectors masked like C, the others broadcast;
    `linalg.index` of N the lanes' columns, of another dimension its index
    broadcast) before the store, and the op is erased. Other linalg ops
    are left alone.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def TfcVectorizeShortRows : Pass<"tfc-vectorize-short-rows", "mlir::ModuleOp"> {
  let summary = "Writes element-wise ops over a short row as vector operations";
  let description = [{
    On buffers, after `tfc-vectorize-contractions`: an all-parallel
    `linalg.generic` with constant loop ranges whose innermost loop has at
    most 64 iterations, a multiple of the vector's lanes (16 for f32),
    where every operand (integers of 8 bits or more, floats) is read
    through a projected permutation that ends in that loop over a unit
    stride, or, for an input, does not use it (broadcast), and whose body
    is scalar arith and math without loop indices, becomes loops over the
    outer dimensions around a loop over the row by whole vectors:
    `vector.load` or a broadcast scalar per input, the body on vectors,
    `vector.store` per output. Blocked attention's per-row rescaling of
    its `[T, Dh]` blocks is such an op; as loops, LLVM would unroll the
    short row whole and vectorise the loop around it with gathers and
    scatters. The outer loops are an `scf.parallel` when the op is outside
    every parallel loop and has 8192 elements or more, else `scf.for`.
    Other ops are left alone.
  }];
  let statistics = [
    Statistic<"vectorizedOps", "vectorized-ops",
              "Element-wise ops written as vector operations along the row">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def TfcParallelColumnSums : Pass<"tfc-parallel-column-sums", "mlir::ModuleOp"> {
  let summary = "Runs a sum over rows on threads by blocks of columns";
  let description = [{
    On buffers, outside every parallel loop: a linalg op whose loop ranges
    are constants, whose innermost loop is parallel and every other loop a
    reduction (a bias gradient summed over the batch's rows, a LayerNorm's
    scale and shift gradients), whose operands each run along that loop in
    their last dimension or not at all, whose body reads no loop index, and
    which has `min-work` elements or more, becomes an `scf.parallel` over
    blocks of columns (256 bytes of each row, or wider to make at most 8
    blocks, halved until the block divides the columns, down to 64 bytes;
    at least 2 blocks), each running the op on its block's columns
    through `memref.subview`s. tfc-parallel-outer-loops would otherwise
    leave such an op on one thread. Every column adds its rows in the same
    order as before, so results are bit-identical on any number of
    threads. Other ops are left alone.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "Elements below which a sum stays on one thread">
  ];
  let statistics = [
    Statistic<"splitOps", "split-ops",
              "Sums over rows split into blocks of columns on threads">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcPromoteAccumulators : Pass<"tfc-promote-accumulators", "mlir::ModuleOp"> {
  let summary = "Carries the accumulator of a reduction loop in a register";
  let description = [{
    An `scf.for` whose body loads one buffer element at indices defined
    outside the loop, and stores to it once after (the reduction loop of a
    linalg op lowered to loops: row sums, row maxima, row-wise dot
    products), loads the element once before the loop, carries it through
    `iter_args` and stores it once after. With the load and store in the
    loop, LLVM cannot prove that the other loads do not alias the element
    (every buffer is in one arena) and leaves the reduction scalar.
  }];
  let statistics = [
    Statistic<"promotedLoops", "promoted-loops",
              "Reduction loops whose accumulator moved into iter_args">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcParallelOuterLoops : Pass<"tfc-parallel-outer-loops", "mlir::ModuleOp"> {
  let summary = "Keeps the outermost scf.parallel of a nest when it is worth threads";
  let description = [{
    An `scf.parallel` nested in another one, or one whose loop nest runs
    fewer than `min-work` innermost iterations (counted from constant loop
    bounds; loops with vector code always count as enough), becomes a nest
    of `scf.for`. Of the others, only the leading dimensions that make at
    least 16 iterations stay parallel; the rest become inner `scf.for`
    loops, which LLVM vectorises (a collapsed OpenMP loop recomputes every
    index with divisions and does not vectorise). What is left parallel is
    one loop per kernel, which `convert-scf-to-openmp` turns into a single
    fork and join. When a loop becomes sequential whole, the stack buffers
    at the start of its body (a parallel body is an allocation scope, a
    sequential one is not) move before it and serve every iteration.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"8192",
           "Innermost iterations below which a loop nest runs on one thread">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

#endif // TFC_PASSES_TD
