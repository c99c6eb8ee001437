//===- Passes.td - tfc passes ------------------------------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_TD
#define TFC_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfcStripDropout : Pass<"tfc-strip-dropout", "mlir::func::FuncOp"> {
  let summary = "Removes dropout for evaluation and sampling";
  let description = [{
    Replaces every `tfc.dropout` that has no seed by its input: the graph
    an evaluation or generation entry point runs, where dropout is the
    identity. Seeded dropout (in `@train_step`) stays.
  }];
  let dependentDialects = ["mlir::tfc::TfcDialect"];
}

def TfcExpandBf16 : Pass<"tfc-expand-bf16", "mlir::ModuleOp"> {
  let summary = "Rounds to bf16 and widens from it by integer arithmetic";
  let description = [{
    Every `arith.truncf` from float32 to bf16 and `arith.extf` from bf16 to
    float32, on scalars and vectors, becomes integer arithmetic on the bits
    (MLIR's bf16 expansion: round to nearest even, NaN kept a NaN). For a
    CPU without AVX512-BF16, where LLVM would call `__truncsfbf2`, which
    GCC 12's libgcc lacks. The rounding is the same as the instruction's.
    With `roundings=false`, only the widenings (a shift of the bits, which
    is exact): for a CPU with AVX512-BF16, whose roundings are one
    instruction but whose widenings LLVM 19 would take apart into one
    element at a time in the loops it vectorises.
  }];
  let options = [
    Option<"roundings", "roundings", "bool", /*default=*/"true",
           "Expand the roundings to bf16 too, not only the widenings">
  ];
  let statistics = [
    Statistic<"expandedOps", "expanded-ops", "Conversions expanded">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
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

def TfcBlockedAttention : Pass<"tfc-blocked-attention", "mlir::func::FuncOp"> {
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

def TfcFuseElementwise : Pass<"tfc-fuse-elementwise", "mlir::func::FuncOp"> {
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

def TfcFuseEpilogues : Pass<"tfc-fuse-epilogues", "mlir::func::FuncOp"> {
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

def TfcPrecision : Pass<"tfc-precision", "mlir::ModuleOp"> {
  let summary = "Rounds contraction operands and saved activations to bf16 (--precision=bf16)";
  let description = [{
    The rule of `--precision=bf16` (docs/precision.md), as far as it goes
    today: every linalg op on tensors that is a contraction `acc + a * b`
    (two inputs, one output, one reduction loop) with float32 operands
    and output gets each input rounded to bf16 by an element-wise
    `arith.truncf` op (round to nearest even), and reads them widened back
    by `arith.extf`, summing in float32 into its float32 output. A value
    is rounded once, by one op right after its definition, and every
    reader shares that copy: the weights' bf16 copy serves the forward and
    the backward pass, an activation's its projection and the weight
    gradient. A float32 tensor that an element-wise op widens from bf16
    (`arith.extf` of it, identity maps: a FlashAttention kernel's output,
    stored in bf16) is not rounded: its bf16 copy is the tensor it widens.
    A reshape, or a slice in a loop of a tensor from outside
    the loop, is taken again of its source's bf16 copy: a tensor that
    blocked attention's loops read block by block (Q, K, V, dO) is
    rounded once, outside them. In
    `@train_step`, the backward's element-wise ops and reductions that
    read a float32 result of a forward element-wise op (a GELU's input, a
    LayerNorm's) read its bf16 copy instead, so that only that copy is
    kept from the forward for them; the values that the loss is computed
    from without a contraction in between (the logits) stay float32.
    Last, a rounding whose float32 input nothing else reads folds into
    the all-parallel op that computes it: the op writes the bf16 copy
    itself and the float32 tensor is gone. When that op is a marked
    contraction's epilogue (a projection's bias add), the epilogue becomes
    a rounded one: it reads the contraction's result as its last input
    and writes the bf16 copy to a buffer of its own (allocated before the
    contraction), and the contraction keeps its mark, so that its kernel
    stores the rounded values of its accumulators. Named contractions (`linalg.matmul`, `linalg.matmul_transpose_b`)
    become `linalg.generic` first; the contraction keeps its discardable
    attributes (the fusion passes' marks). Everything else stays float32:
    master weights, gradients as they accumulate, Adam moments,
    normalisation and softmax statistics, the loss. The GPU target runs
    such contractions on tensor cores (tfc-gpu-tensor-core-contractions);
    the CPU target computes them in float32 from the rounded operands.
  }];
  let statistics = [
    Statistic<"roundedOps", "rounded-ops", "Contractions given bf16 operands">,
    Statistic<"savedInBF16", "saved-in-bf16",
              "Forward results that the backward reads as their bf16 copy">,
    Statistic<"foldedRoundings", "folded-roundings",
              "Roundings folded into the op that computes their input">
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
    : Pass<"tfc-materialize-insert-chains", "mlir::func::FuncOp"> {
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

def TfcUnshareFills : Pass<"tfc-unshare-fills", "mlir::func::FuncOp"> {
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

def TfcSliceInputs : Pass<"tfc-slice-inputs", "mlir::func::FuncOp"> {
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

def TfcUnshareEmpties : Pass<"tfc-unshare-empties", "mlir::func::FuncOp"> {
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
    or a view of it (to the end when it is returned; an operand of a
    contraction marked `tfc.epilogue`, to its epilogue, which the
    contraction's kernel runs while it still reads it); buffers whose live
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

def TfcFastMath : Pass<"tfc-fast-math", "mlir::func::FuncOp"> {
  let summary = "Fast float arithmetic: polynomial f32 math, reassociation";
  let description = [{
    Replaces the f32 transcendental functions (`math.exp`, `tanh`, `log`,
    `erf`, ...) by polynomial approximations (a few ulp), which vectorise,
    where libm would be called one element at a time; f64 math is left to
    libm. `exp` is `2^k p(r)` with `p` of degree 5 (2 ulp, 15 instructions
    where MLIR's takes 20: attention's exponentials are a quarter of its
    time on the CPU), the others MLIR's. Then adds the `reassoc` and `contract` fast-math flags
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

def TfcPromoteAccumulators
    : Pass<"tfc-promote-accumulators", "mlir::func::FuncOp"> {
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

#endif // TFC_PASSES_TD
