//===- Passes.td - tfc passes of the GPU back end ----------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPU_PASSES_TD
#define TFC_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    the first loop's log-sum-exp and `D` (when causal, from the last query
    down to the key's own row, so that consecutive keys read the same
    query at the same time). When the gradient's forward (the same
    operands) comes before it in its block, as in a training step, the
    forward's loop also writes each row's log-sum-exp, and the query rows'
    loop reads it and computes `D` from the forward's output row instead of
    running over the keys twice. A row that attends no key gives
    zeros, and a padding key zero gradients, as in the dense lowering.
    Neither loop stores more than `[B, H, S]` numbers besides its results:
    no `[S, S]` matrix and no block of one.

    This is the GPU target's form of softmax attention under
    `tfc compile --target=cuda --gpu-attention=rows`: each iteration is one
    thread, the threads of a block consecutive query rows of one head.
    Other kinds are left to tfc-blocked-attention and tfc-lower-to-linalg.

    With `flash-forward` (`--gpu-attention=flash`, bf16 builds), a forward
    of float32 operands with a head dimension of 16, 32 or 64 (lengths that
    64 does not divide padded with zero rows to a multiple of it, the
    padding keys masked where a real query could attend them, and the
    results sliced back), or 128 and lengths that 64 divides, is one
    FlashAttention kernel on the tensor cores instead (a `gpu.launch` with the attribute
    `tfc.flash_attention_tile = [64, BN, Dh]`): a block of 4 warps per
    (64 query rows, batch, head) with the Q tile in registers, K and V
    tiles of BN keys (64; 32 for Dh 128) through two stages of shared
    memory by `cp.async`, `S = Q K^T` and `O += P V` by
    `mma.sync.m16n8k16` on bf16 with float32 accumulators, the online
    softmax in registers (exp2 with the scale and log2(e) folded in, row
    maxima and sums by warp shuffles), key tiles above the diagonal
    skipped when causal, padding keys masked. Its operands are rounded to
    bf16 by an element-wise op each and reach it through
    `bufferization.to_memref`; its output and log-sum-exp are buffers of
    their own that `bufferization.to_tensor` returns. Its gradient, for
    heads of at most 64 channels, is `D = rowsum(dO O)` (an element-wise
    sum), dO rounded to bf16 and two kernels of the same shape: one per
    query block, holding Q and dO and streaming K and V (`dQ += dS K`),
    one per key block, holding K and V and streaming Q and dO (`dV +=
    P^T dO`, `dK += dS^T Q`); each recomputes P from the forward's
    log-sum-exp, so that dQ needs no atomics and every sum has one order.
    Heads of 128 channels keep the row loops for the gradient, which then
    read the forward's log-sum-exp and the same bf16 operands, widened.
    With `flash-forward` a `#tfc.longformer` attention with at most 8
    global tokens (equal lengths) runs as the same kernels, its sliding
    window a band of key-minus-query offsets (`dilation` apart): each
    block visits only the streamed tiles that meet the band, and masks the
    scores of those that meet its edges (all of them under a dilation);
    the scores of its global columns are kept where the band drops them,
    a query block also visiting the tiles of the global columns that its
    rows attend and a key block that holds one every query tile that
    attends it. Its global rows are one-row attentions through the global
    projections that replace the kernel's rows: non-causal, row loops
    like softmax attention's over the global query's rows at the global
    positions (gathered, then scattered back); causal, longformerGlobalRows
    as tfc-lower-to-linalg builds them. Their output gradient is zeroed
    before the gradient kernels, and the global projections' gradients
    are those of the global rows. Its gradient runs as the two
    gradient kernels after such a forward, and is otherwise left, as
    every other Longformer attention, to tfc-blocked-attention.
    The kernels use shared memory, barriers and warp-wide instructions;
    `--gpu-emulate` runs them on the CPU (tfc-gpu-emulate-launches),
    and only a GPU run checks their timing.
  }];
  let options = [
    Option<"flashForward", "flash-forward", "bool", /*default=*/"false",
           "Forwards that the FlashAttention kernel takes run as that "
           "kernel (bf16 operands)">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::bufferization::BufferizationDialect",
    "mlir::gpu::GPUDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect",
    "mlir::nvgpu::NVGPUDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
    "mlir::vector::VectorDialect",
  ];
}

def TfcGpuMapKernels : Pass<"tfc-gpu-map-kernels", "mlir::ModuleOp"> {
  let summary = "Maps the top-level loop nests of the entry points to gpu.launch";
  let description = [{
    Runs on buffers after the linalg ops have become loops
    (`convert-linalg-to-parallel-loops`). In every host function:

    - a top-level `scf.parallel` becomes a `gpu.launch` of one thread per
      iteration: its dimensions are linearised row-major, so that
      consecutive threads of `threadIdx.x` take consecutive iterations of
      the innermost dimension (coalesced accesses), in blocks of
      `block-size` threads (a full block even for fewer iterations, the
      threads past the end idle, so that a small kernel can be grouped
      with its neighbours); the loops inside it run in each thread;
    - a `gpu.launch` already there (the contractions of
      tfc-gpu-tile-contractions) is kept as it is;
    - an `scf.for` whose body holds parallel loops or launches stays on
      the host, and its body is mapped the same way (the query-block loops
      of blocked attention launch one kernel per block);
    - any other loop nest or store that touches memory becomes a kernel of
      one thread (a serial loop, such as the scatter of the embedding
      gradient);
    - scalar reads on the host (the optimizer's step and schedule, the
      gradient norm) and the scalar arithmetic on them are moved into the
      kernels that use them, since the host cannot read device memory.
      Views whose layout is not static (slices at loop-dependent offsets)
      and constant globals are moved into the kernels too, so that every
      memref a kernel receives is a static buffer passed as a bare pointer.

    Every entry point records the byte size of each argument in
    `tfc.gpu.arg_bytes`, and the arguments that a kernel writes in
    `tfc.gpu.written` (argument numbers), for the copies between host and
    device.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the mapped loops">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcGpuGatherPads : Pass<"tfc-gpu-gather-pads", "mlir::func::FuncOp"> {
  let summary = "Makes each pad one element-wise op that reads its source "
                "at clamped indices";
  let description = [{
    Runs on linalg on tensors, before bufferization. A `tensor.pad` would
    become a fill of the whole padded buffer and a copy of the source into
    its interior: two kernels, the copy waiting for the fill (and, once
    tfc-gpu-merge-launches has merged one pad's fill with the kernel
    before it, Primer's three convolutions of a layer chained through
    their padded buffers). A pad of static shapes and static low and high
    amounts, padded with one value from outside its body, becomes instead
    a `linalg.generic` over the padded shape: at index `i` of a padded
    dimension it reads the source at `min(max(i - low, 0), size - 1)` and
    selects the padding value where `i - low` is outside `[0, size)`.
    One kernel, which the element-wise op after it (a bf16 copy) merges
    with, and which depends on its source alone. The values are the
    same.
  }];
  let statistics = [
    Statistic<"gatheredPads", "gathered-pads", "Pads made element-wise ops">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def TfcGpuFlashRoundings
    : Pass<"tfc-gpu-flash-roundings", "mlir::func::FuncOp"> {
  let summary = "A FlashAttention kernel stores the bf16 roundings of its "
                "float32 outputs itself";
  let description = [{
    A FlashAttention kernel (a `gpu.launch` with `tfc.flash_attention_tile`,
    on buffers) stores its float32 outputs (the gradient's dQ, dK and dV)
    two channels of a row at a time, each store an `llvm.store` marked
    `tfc.flash_row_store` at a byte offset from the buffer's aligned
    pointer. A bf16 build then rounds each output to bf16 in an
    element-wise op of its own for the contractions that read it: one more
    kernel, which reads the whole output back.

    Among the next 16 ops after such a kernel, a rounding (a
    `linalg.generic` of identity maps whose body is one `arith.truncf` to
    bf16) of a whole buffer that the kernel stores this way is applied in
    the kernel instead: after each marked store to that buffer, the pair
    rounded to bf16 is stored at half the byte offset in the rounding's
    output. That output must be a buffer of the same shape that neither
    the kernel nor the ops between use; the ops between must not write the
    kernel's buffer. The search stops at an op whose effects are unknown.
    The float32 stores stay (the bias gradients read them); the results are
    the same, element for element.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

def TfcGpuForallConsumers
    : Pass<"tfc-gpu-forall-consumers", "mlir::func::FuncOp"> {
  let summary = "Applies element-wise ops on what an scf.forall writes by "
                "rows inside it";
  let description = [{
    tfc-row-attention's loops (`scf.forall` on buffers, at the top level
    of a function) write each row of their outputs once, as a vector: a
    1-D in-bounds `vector.transfer_write` at index 0 of a unit-stride
    `memref.subview` whose sizes are 1 but the innermost, of a buffer
    allocated just for the loop (nothing uses it before) that nothing else
    in the loop writes (but a copy of the row onto itself, which
    bufferization leaves). A bf16 build
    then rounds each output to bf16 in an element-wise op of its own: one
    more kernel, reading the whole output back.

    Among the next 16 ops after such a loop, up to 4 `linalg.generic` ops
    are applied inside it instead, right after the row's write, on the
    vector just written, when each: has parallel loops and identity maps
    only, over buffers of the written buffer's shape; reads exactly one
    buffer that the loop writes by rows (or that an earlier such op
    writes), and other inputs that neither the loop nor the ops between
    write (their rows read with `vector.transfer_read` where the row is
    written); writes inits whose values its body does not read, allocated
    buffers that neither the loop nor the ops between read or write; and
    has a body of element-wise ops (applied to vectors; values from
    outside broadcast). Its inits' rows are then written likewise and
    later ops may read them. The search stops at an op whose effects are
    unknown or that writes a buffer the loop writes by rows. The results
    are the same, element for element.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect"];
}

def TfcGpuElideCopies : Pass<"tfc-gpu-elide-copies", "mlir::func::FuncOp"> {
  let summary = "Makes the op that writes a copied buffer write the copy's "
                "destination instead";
  let description = [{
    A `linalg.copy` (on buffers) from a whole view of an allocation into a
    fresh allocation of the function's block that nothing has touched
    before the copy goes, and the source's last writer writes the
    destination (through one reshape to its own view's shape) instead, when:
    that writer is a linalg op of parallel loops directly in the block whose
    one init is a whole view of the source with the identity map, whose
    body does not read the init's value, and which reads nothing else of
    the source; and the source's next access after the copy is a dealloc
    or another such whole write, or there is none. The source's contents
    between its writer and the copy were then read by the copy alone. The
    destination's allocation moves up before the writer.

    The FlashAttention forward's bf16 Q, K and V are such copies: each is
    a buffer of its own, which the gradient kernels read, filled from the
    buffer that the projection's rounding (a tensor-core kernel's
    epilogue) wrote, and that One-Shot Bufferize lets the next layer's
    rounding reuse. Without the copies the projections' kernels write them
    directly, a kernel less per layer.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def TfcGpuParallelDimsFirst
    : Pass<"tfc-gpu-parallel-dims-first", "mlir::func::FuncOp"> {
  let summary = "Puts the parallel dimensions of every linalg op before its reductions";
  let description = [{
    `convert-linalg-to-parallel-loops` makes an `scf.parallel` of the
    parallel dimensions that come before the first reduction only. An op
    that reduces over an outer dimension (the bias gradient: a sum over the
    batch and sequence of `[B, S, D]` into `[D]`, the LayerNorm weight
    gradients) would become host loops over the reduction launching one
    kernel per iteration. This pass permutes the dimensions of such ops
    (named ops generalised first) so that every parallel dimension comes
    first: one kernel, one thread per output element, each summing over
    the reduction dimensions in their original order (so the sums are the
    CPU's, term for term, unless tfc-gpu-split-reductions then splits a
    long one).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TfcGpuRowKernels : Pass<"tfc-gpu-row-kernels", "mlir::func::FuncOp"> {
  let summary = "Fuses consecutive ops over the same rows into one kernel of a "
                "warp per row";
  let description = [{
    tfc-gpu-map-kernels gives a row reduction (LayerNorm's mean and
    variance, its gradient's row sums, a cross-entropy's row maximum and
    sum) one thread per row, each reading its row alone, and each op of a
    LayerNorm a launch of its own. This pass finds, among the linalg ops on
    buffers at the top level of a function, each row reduction (static
    loops, parallel but for the last, which reduces over a row's `W`
    columns into outputs indexed by the other loops, the `R` rows, by a
    body `out <op> term` with `op` a sum, maximum or minimum) and grows a
    chain around it, forwards and backwards, over the ops next to it
    (stepping over allocations and ops free of memory effects): generics
    and fills whose loops run over the same `R` rows, their extents
    multiplying to `R`, then, if at all, over the `W` columns, writing at
    (row, column) or, without the columns or for a reduction, at the row.
    An op joins only while every buffer that the chain writes is read and
    written by the chain at (row, column) or at the row alone, through
    views laid out row-major without gaps, whose differing views do not
    overlap: each row's ops then read only what that row's ops wrote
    before them, and the chain can run row by row. Growing forwards, the
    chain may step over up to 4 ops that cannot join (a LayerNorm
    gradient's column sums before the residual's add), when the ops that
    join after them read a buffer that the chain writes, write no buffer
    that the stepped-over ops read or write, read none that they write,
    and use only values that can be defined before the first of them; the kernel then runs before that op, the allocations
    and views that it needs moved up.

    The chain becomes one `gpu.launch` (`tfc.row_kernel = [R, W, lanes]`)
    of blocks of 256 threads, `lanes` threads per row (the `lanes` option,
    or the largest power of two below it that divides `W`). Each op runs in
    order in every row's lanes: an op over the columns as a loop over the
    lane's columns `lane + lanes * i`; a reduction's lane starts from the
    neutral value of its combiner, and the lanes' partial results are then
    combined by a butterfly of `gpu.shuffle xor` (offsets lanes/2 down to
    1), so that each lane holds the row's result; the first lane stores a
    value per row, and the chain's later ops take it from the register.
    Sums are thus added in another order than on the CPU (by lane, then
    across lanes). With `lanes=1` there are no shuffles and a thread runs
    a row. Shuffled values are 32-bit.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"32",
           "Threads per row, a power of two of at most 32 (1: one thread "
           "per row, no shuffles)">
  ];
  let statistics = [
    Statistic<"fusedChains", "fused-chains", "Chains fused into row kernels">,
    Statistic<"fusedOps", "fused-ops", "Ops fused into row kernels">
  ];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcGpuSplitReductions
    : Pass<"tfc-gpu-split-reductions", "mlir::func::FuncOp"> {
  let summary = "Splits a long sum with few outputs into partial sums and their sum";
  let description = [{
    tfc-gpu-map-kernels gives a linalg op one thread per output, each
    running the reductions, so a sum with few outputs and many terms leaves
    the GPU idle: the squared norm of the gradient (one output, every
    parameter) runs on one thread, a bias or LayerNorm gradient (256
    outputs, 4,096 rows) on one block. A linalg op on buffers at the top
    level of a function, with its parallel dimensions first indexing its
    float outputs in order, a body that adds a term of its inputs to each
    output (`out + f(ins)`), static extents, at least 1,024 terms per
    output, and inputs that read the longest reduction dimension (extent
    E), if at all, as one of their dimensions, becomes two ops: buffers of
    [P, outputs...] zeros and the partial sums into them, sum p of each
    output adding the elements p, p + P, p + 2P, ... of that dimension
    (consecutive threads read consecutive elements; the inputs are viewed
    as [E / P, P] there), then each output plus its P partial sums in
    order. P is the largest divisor of E that keeps outputs x P at 32,768
    threads or fewer, P at 8,192 or fewer and each partial sum at least 16
    terms long, and at least 2. A contraction that tfc-gpu-tile-contractions
    will tile into fewer than 65,536 threads (a weight gradient `X^T dY`,
    its 4,096 rows of the batch summed into 256 x 256 outputs: 4,096
    threads) is split too, whatever its outputs: P is the smallest divisor
    of E that brings its threads to 65,536, each partial sum at least 64
    terms long (the largest such divisor when none does), and the partial
    sums are a batched contraction that tfc-gpu-tile-contractions tiles.
    Other ops, `linalg.index` in the body and sums inside loops are left as
    they are. The terms are added in another order than on the CPU.
  }];
  let statistics = [
    Statistic<"splitOps", "split-ops", "Sums split into partial sums">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def TfcGpuTileContractions
    : Pass<"tfc-gpu-tile-contractions", "mlir::func::FuncOp"> {
  let summary = "Maps a contraction to a kernel of register tiles";
  let description = [{
    tfc-gpu-map-kernels would give a contraction one thread per output
    element, loading one element of each operand per multiply-add. A
    linalg op on static float buffers with one output indexed by its
    parallel dimensions alone, exactly one reduction dimension k, at least
    two parallel dimensions (n the output's innermost; m the innermost
    other one that an input reading k but not n reads and no input reading
    k and n does, such as the query of attention's P V over [batch, query,
    head, channel]; the others batch dimensions), projected-permutation
    indexing maps, an input reading m and k but not n, one reading n and k
    but not m, and
    a body without regions becomes a `gpu.launch` of blocks of 256 threads
    in which each thread computes TM x TN output elements: TN = 4 columns
    when n has at least 128 elements (2 from 64, else 1), TM = 4 rows (8
    when TN is 1, at most m's extent). A thread's columns are 32 apart, so
    that a warp reads and writes 32 consecutive elements, and the threads
    of a warp share their rows. Per step of k the thread loads each input
    once per row and column it depends on and applies the op's body to
    each of its TM x TN accumulators, which stay in registers (`scf.for`
    `iter_args`) from the output's initial values to the stores. Elements
    beyond the output's edge read the last row or column and are not
    stored. Each element adds its terms in the order of k with the op's
    own body, as one thread per element would.

    With `shared-memory` (the default), a contraction of two inputs (one of
    each kind) with at least 64 rows and 64 columns and a k extent that 8
    divides is staged through shared memory instead: a block of 256
    threads computes a 64 x 64 tile of outputs, 4 x 4 per thread (rows
    4 ty + i, columns tx + 16 j of the tile), and its k loop steps by 16
    (or 8): the block copies the 64 x 16 tile of each operand into a
    workgroup buffer, consecutive threads reading consecutive elements of
    the operand's innermost dimension (so an operand whose innermost
    dimension is k, such as a weight used transposed, is read coalesced
    too), waits at a barrier, and each thread applies the body for the 16
    k of the step in order, then waits again. Without `shared-memory`,
    each thread reads its operands from global memory: the same sums, term
    for term.
  }];
  let options = [
    Option<"sharedMemory", "shared-memory", "bool", /*default=*/"true",
           "Stage the operands of large contractions in shared memory">
  ];
  let statistics = [
    Statistic<"tiledOps", "tiled-ops", "Contractions mapped to register tiles">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcGpuTensorCoreContractions
    : Pass<"tfc-gpu-tensor-core-contractions", "mlir::func::FuncOp"> {
  let summary = "Maps a bf16 contraction to a kernel of tensor-core mma tiles";
  let description = [{
    A linalg op on buffers at the top level of a function, with two static
    bf16 inputs and a static float32 output (identity layouts), one
    reduction dimension k, projected-permutation maps, an output whose
    innermost dimension is n, a column input that reads n and k with one of
    them innermost, a row input likewise with m and k and not n, where m is
    the output's second innermost dimension or, when the column input reads
    that one, the one other output dimension that it does not read (a
    Performer chunk's positions, a head between them and the channels);
    the others are batch dimensions; a body
    `acc + a * b` (inputs widened by `arith.extf` or not), n a multiple of
    64 or 32, m and k of 8, becomes a `gpu.launch` of blocks of 128
    threads (4 warps, 2 x 2) on the tensor cores:

    - a block computes BM x BN outputs, the largest of 128 x 128, 128 x
      64 and 64 x 128 that n divides, and m too when 64 divides m, and
      that gives at least
      `min-blocks` blocks (264 by default: two per multiprocessor of an
      H100 or H200), else 64 x 64; for an n that 64 does not divide, 128 x
      32 or else 64 x 32; as many stages of shared memory as fit
      in 48 KiB, at most `stages`; the launch states its plan as
      `tfc.tensor_core_tile = [BM, BN, 32, stages]`;
    - a warp computes (BM / 2) x (BN / 2) of them as 16 x 8 tiles of
      `mma.sync.m16n8k16` with bf16 operands and float32 accumulators,
      written as `llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"`
      (nvgpu and nvvm reject bf16 mma operands in MLIR 19);
    - the k loop steps by 32 through two stages of shared memory: while
      the warps multiply the tiles of one stage, `cp.async` copies (16
      bytes, `nvgpu.device_async_copy`) fill the other with the next k
      step's BM x 32 tile of the row input and 32 x BN tile of the column
      input, each in the input's own orientation with 8 elements of
      padding per row (the rows an `ldmatrix` reads then fall in distinct
      banks);
    - when the row tiles run past m (hourglass_enwik8's 8 x 2,049 tokens),
      the last one's copies read row m - 1 instead (min) and its stores,
      with the epilogue and consumers, are made for the rows below m only;
      when the k steps run past k, the last one's copies past k copy zeros
      (a source size of 0 bytes, from k 0);
    - the fragments are read by `nvgpu.ldmatrix` x4, with `.trans` for an
      input whose innermost dimension is not k (an activation used
      transposed, as in a weight gradient, or a weight stored [in, out]);
    - the accumulators start from the output's elements, or from zero when
      a `linalg.fill` of zeros into the same buffer comes just before the
      op (the fill is then erased), stay in registers through the k loop
      and are stored once after it, two adjacent columns per store;
    - when the output is a `memref.alloc` that the fill of zeros, the op,
      the next op and deallocations alone use, and the next op is an
      element-wise `arith.truncf` of it into a bf16 buffer of the same
      shape (identity maps and layout), the kernel stores the accumulators
      rounded to bf16 (round to nearest even) into that buffer, and the
      float32 buffer, the fill and the `truncf` op are erased;
    - otherwise, when the contraction has no batch dimensions, the first op
      after it in its block that uses its output is an element-wise
      `linalg.generic` over the same `[m, n]` (the output read with the
      identity map, as an input or as the init it writes in place; every
      init a float32 or bf16 buffer with the identity layout; a body
      without regions or `linalg.index`: a bias, a residual, an
      activation, a rounding), and the ops in between (at most 64) do not
      use the output's buffer, write what that op reads or touch what it
      writes, the kernel applies that op's body to the accumulators, two
      columns at a time, loading its other inputs, and stores its results
      (allocations and views that it uses and that come later move before
      the kernel). The op is erased;
    - then, among the next 64 ops, up to 4 element-wise `linalg.generic`
      ops that read, whole and with the identity map, a buffer that the
      kernel writes (the output, an init of that op or of an earlier such
      op), through views of its elements in order (a `[B, S, n]` view of
      the `[m, n]` output), over loops whose innermost extent is n, and
      that write buffers with the identity layout and map that the ops
      between do not touch and the kernel does not read: a bf16 copy of
      the output, an activation (GELU's polynomial included) and its
      rounding, an activation's gradient from the output and a saved
      input. The kernel applies them as it stores, to the values it holds
      (the row spread over the outer loops), loading their other inputs;
      the search stops at an op that writes what the kernel writes. The
      ops are erased;
    - a buffer that only the contraction, its fill, the epilogue and these
      ops use (the float32 output of a bf16 build's projection, an
      activation's float32 gradient) is not stored: it, its views and its
      deallocations are erased.

    A contraction whose 64 x 64 tiles give fewer than `min-blocks` blocks,
    without batch dimensions, is first split along k into S parts (the
    fewest, a power of two up to 64, that give `min-blocks` blocks, each
    part a multiple of 32 and at least 256 long; for a k that 32 does not
    divide, the fewest of any number up to 64 that give them, each part a
    multiple of 8 and at least 256 long, else the most such parts, as for
    hourglass_enwik8's 8 x 2,049 tokens, 3 parts of 5,464): its operands are viewed with k as [S, k / S]
    (`memref.expand_shape`), the parts are a contraction with S as its
    batch dimension into a new buffer of [S, m, n] partial outputs filled
    with zeros, and one element-wise op then adds the S parts, in order, to
    the output (or writes their sum, when a fill of zeros came before),
    reading part p through the map (m, n) -> (p, m, n) of that one buffer.
    Weight gradients, whose k is the batch's tokens, are the case.

    With `warpgroup-mma` (the pipeline sets it for `--gpu-arch=sm_90a`),
    a contraction whose k is a multiple of 64, or not of 32 (its last k
    step then cut short as above), runs on Hopper's warpgroup mma instead, in the same blocks of 128 threads (one warpgroup) and the
    same tiles, accumulator layout and stores (the epilogue and consumers
    above included):

    - the k loop steps by 64; its stages (at most `stages` and the k
      steps, as many as fit in 111 KiB, so that two blocks share a
      multiprocessor; two at least) are in dynamic shared memory (`gpu.dynamic_shared_memory`,
      1024 bytes more than they take, viewed from its first 1024-byte
      boundary as one `memref<N x bf16>`): all stages of the row operand's
      tile, then all of the column operand's, each in the 128-byte swizzle
      (rows of 64 bf16, the 16-byte chunk c of row r at c XOR r mod 8);
      a K-major operand (k innermost) is a row per m (n), an M- or N-major
      one a row per k of 64 m (n), in atoms of 64 by the tile's k;
    - each k step waits for its tile's `cp.async` copies, makes them
      visible to the async proxy (`nvvm.fence.proxy` async.shared) and to
      every thread (a barrier), issues `nvvm.wgmma.mma_async` m64nBNk16
      (bf16 operands, float32 accumulators, an LLVM struct of BN / 2 per
      thread) for each 64 rows of the block and each 16 of k, as one
      group, waits for the step before (`wgmma.wait_group 1`) and, after a
      barrier, copies the tile `stages - 1` steps ahead into the stage
      that step used; after the loop, `wgmma.wait_group 0`;
    - each operand is described by a 64-bit matrix descriptor: its shared
      address, 1024 bytes between groups of 8 rows (the stride byte
      offset), 16 (K-major, unused) or one atom (M- or N-major) between
      groups of 64 of its rows (the leading byte offset), the 128-byte
      swizzle; a K-major operand is A "row" (B "col"), the other
      transposed;
    - the launch gets `dynamic_shared_memory_size`, states
      `tfc.warpgroup_mma`, and its tile as `[BM, BN, 64, stages]`.

    The products are summed in another order than on the CPU and with
    bf16 operands; `--gpu-emulate` runs this kernel on the CPU
    (tfc-gpu-emulate-launches).
  }];
  let options = [
    Option<"maxStages", "stages", "int64_t", /*default=*/"4",
           "The most stages of shared memory (at least 2; fewer where they "
           "do not fit in 48 KiB)">,
    Option<"splitK", "split-k", "bool", /*default=*/"true",
           "Split contractions with too few blocks along k">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", /*default=*/"false",
           "Hopper (sm_90a): contractions whose k is a multiple of 64 (or "
           "not of 32) run "
           "on the warpgroup mma (wgmma) from 128-byte swizzled tiles in "
           "dynamic shared memory">,
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"264",
           "The blocks that a tile must give to be chosen, and below which "
           "k is split (264: two per multiprocessor of an H100 or H200)">
  ];
  let statistics = [
    Statistic<"mappedOps", "mapped-ops", "Contractions mapped to tensor cores">,
    Statistic<"splitOps", "split-ops", "Contractions split along k">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::nvgpu::NVGPUDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcGpuParallelScatter
    : Pass<"tfc-gpu-parallel-scatter", "mlir::func::FuncOp"> {
  let summary = "Runs a scatter-add loop nest as one thread per channel";
  let description = [{
    The embedding gradient is lowered as `scf.for` over the positions
    around `scf.for` over the channels, adding each position's gradient
    into the row of its token in a buffer carried through both loops; with
    no parallel loop, tfc-gpu-map-kernels would run it as a kernel of one
    thread. When such a nest, at the top level of a function, accumulates
    into a buffer of its own that every load and store of the inner body
    indexes by the channel last, whose outer body only computes indices
    (no store, no read of that buffer) and whose inner bounds are defined
    outside it, the channels touch disjoint elements: the nest becomes an
    `scf.parallel` over the channels around the loop over the positions.
    The same holds for the nest that bufferization leaves when the table
    was written before it (tied embeddings: the logits' weight gradient),
    which stores into the table in place with no `iter_args`: its table
    must be a `memref.alloc` that the inner body reads only by that name
    and the outer body not at all.
    Each element still gets its terms in the order of the positions, so
    the sums are the same.

    When the table is a static `[rows, channels]` buffer of at most
    `max-table-rows` rows that the inner body reads and writes at one row
    computed outside it (the token's), the parallel loop is over (row,
    channel) instead: every element of the table is a thread, which runs
    over all the positions and adds those whose row is its own (an
    `scf.if`), in the same order, so the sums are still the same. A
    character vocabulary's table then takes `rows` times as many threads,
    each adding only its row's positions instead of every position's; a
    word vocabulary's keeps a thread per channel, since each of its
    threads would read every position's token for few terms.
  }];
  let options = [
    Option<"maxTableRows", "max-table-rows", "int64_t", /*default=*/"1024",
           "The most rows of a table whose elements are a thread each">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def TfcGpuMergeLaunches
    : Pass<"tfc-gpu-merge-launches", "mlir::func::FuncOp"> {
  let summary = "Merges consecutive kernels whose threads depend only on "
                "themselves";
  let description = [{
    Runs on the host functions after tfc-gpu-map-kernels. Two `gpu.launch`
    ops one after the other (with only allocations and operations free of
    memory effects between them) become one kernel, the first's body
    before the second's in every thread, when:

    - their grids and blocks are the same values or the same constants,
      and neither has async dependencies, attributions, barriers or any
      memory access other than `memref.load` and `memref.store` (the
      tensor-core and attention kernels keep their own launches);
    - wherever one writes what the other reads or writes (one buffer, in
      slices that may overlap: static slices of it that do not are apart),
      both access it through one host view and at one index tuple, the
      same expression of the thread's ids in both, from which the
      linear thread id `blockIdx.x * blockDim.x + threadIdx.x` (or
      `threadIdx.x` in a grid of one block) can be recovered (the id
      itself, or its `divui` and `remui` by one constant, recursively):
      each element is then read and written by one thread only, which in
      the merged kernel runs the first body's accesses before the
      second's, as the two launches did. A kernel of one thread merges
      with another of one thread whatever they access.

    A merged kernel takes at most `max-arguments` values from the host.

    Launches of the same shape up to `window` launches apart merge too,
    when one of them can move next to the other: the earlier one down to
    the later one when the launches between touch nothing that it writes
    and write nothing that it reads, or else the later one up to the
    earlier one on the same terms, with the host operations that make its
    views and buffers (free of memory effects, or allocations) moving up
    before the earlier one.

    A reduction's zero fill, the reduction and the elementwise step after
    it (LayerNorm's mean and variance, the bias gradients' sums) become one
    kernel, and so do chains of elementwise kernels over the same elements
    that tfc-fuse-elementwise left apart and the bf16 copies of a layer's
    weights. Nothing is computed in a
    different order, so the results are the same, bit for bit.
  }];
  let options = [
    Option<"window", "window", "int64_t", /*default=*/"32",
           "How many launches back a launch looks for one to merge with">,
    Option<"maxArguments", "max-arguments", "int64_t", /*default=*/"512",
           "The most values a merged kernel may take from the host (each "
           "an 8-byte parameter; a kernel's parameters are limited to "
           "4,352 bytes before PTX ISA 8.1)">
  ];
}

def TfcGpuLastBlockFinals
    : Pass<"tfc-gpu-last-block-finals", "mlir::ModuleOp"> {
  let summary = "Runs a one-thread kernel in the last block to finish of "
                "the kernel before it";
  let description = [{
    Runs on the host functions after tfc-gpu-merge-launches. A split
    reduction's final sum (the loss over its partial sums, the gradient's
    norm and clipping factor) is a `gpu.launch` of one block of one
    thread, without shared memory, barriers or shuffles, just after the
    launch that writes the partials (only allocations and operations free
    of memory effects between). It becomes part of that launch, which
    moves to its place:

    - after its body, every thread fences its writes at device scope
      (`membar.gl`) and the block waits at a barrier;
    - its first thread adds one to a counter of its own, a private
      `memref.global` (`tfc_blocks_done`, zero when the program loads),
      with `memref.atomic_rmw`; the block that reads the grid's size less
      one is the last to finish, every other block's writes fenced before
      their count;
    - that thread fences again, runs the one-thread kernel's body (its ids
      0, its sizes 1) and stores 0 back into the counter for the next
      launch.

    The launch before must have a grid of constant extents, one block of
    operations and no asynchronous tokens or dynamic shared memory. The
    final runs the same operations in the same order, so the results are
    the same, bit for bit; one launch is saved per split reduction (the
    optimizer step becomes the gradient norm's kernel and AdamW's).
    tfc-gpu-emulate-launches runs the barrier by running the threads'
    code before it, then after it.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"fusedLaunches", "fused-launches",
              "One-thread kernels run in the last block of the kernel before">
  ];
}

def TfcGpuGroupLaunches
    : Pass<"tfc-gpu-group-launches", "mlir::func::FuncOp"> {
  let summary = "Makes one launch of consecutive kernels that do not depend "
                "on each other";
  let description = [{
    Runs on the host functions after tfc-gpu-last-block-finals. Consecutive
    `gpu.launch` ops (with only allocations and operations free of memory
    effects between them) become one launch whose blocks are shared out
    among them in order, when:

    - up to `window` launches between them that cannot join are stepped
      over when the members before them do not depend on them nor they
      on those members (the members move down past them to the last
      member's place); one group is gathered per block size at once, so
      that the tensor-core kernels (128 threads) and the element-wise and
      row kernels (256) between them each form theirs, every launch being
      stepped over by the groups of other sizes or closing them; grouping
      is repeated up to three rounds, since it brings the launches it
      stepped over next to each other;

    - their grids and blocks are 1-D and of constant extents, their
      blocks of the same size, and none has private attributions or async
      dependencies; launches with dynamic shared memory (a constant
      amount, and no workgroup attributions: the warpgroup mma kernels)
      group only with each other, the grouped launch taking the most
      that a member takes;
    - none writes what another reads or writes: a kernel reads every
      buffer it takes from the host and writes one when an op in it
      writes the buffer (or a view of it) or takes its address (the
      tensor-core kernels' stores); buffers are compared by their static
      slices, as tfc-gpu-merge-launches does; a kernel with a write that
      cannot be traced is not grouped;
    - their shared memory fits: the same attribution types in the same
      order (then shared, since a block runs one member), or at most 48
      KiB added up;
    - at most `max-launches` of them, taking at most `max-arguments`
      values from the host (constants, which outlining sinks into the
      kernel, do not count).

    In the grouped launch (`tfc.grouped_launches = n`, with the members'
    other attributes, such as `tfc.flash_attention_tile`), blocks
    `[f_i, f_i + g_i)` run member i's body (an `scf.if` chain on the
    block id, uniform over a block, so the members' barriers stay valid)
    with block id `blockIdx.x - f_i` and grid size `g_i`, its own. The
    query, key and value projections of one input and the weight
    gradients of a layer, tensor-core kernels each, become one launch;
    so do independent element-wise and row kernels of the same block.
    The results are those of the separate launches, bit for bit.
  }];
  let options = [
    Option<"maxLaunches", "max-launches", "int64_t", /*default=*/"8",
           "The most kernels in one group">,
    Option<"window", "window", "int64_t", /*default=*/"8",
           "The most launches a group steps over">,
    Option<"maxArguments", "max-arguments", "int64_t", /*default=*/"512",
           "The most values a grouped kernel may take from the host (each "
           "an 8-byte parameter)">
  ];
  let statistics = [
    Statistic<"groupedLaunches", "grouped-launches", "Launches made of groups">,
    Statistic<"launchesInGroups", "launches-in-groups", "Launches grouped">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::scf::SCFDialect"];
}

def TfcGpuEmulateLaunches
    : Pass<"tfc-gpu-emulate-launches", "mlir::func::FuncOp"> {
  let summary = "Runs each gpu.launch on the host, as loops over its blocks and threads";
  let description = [{
    A check of the GPU kernels on a machine without a GPU
    (`tfc compile --target=cuda --gpu-emulate`): every `gpu.launch` becomes
    an `scf.for` over its blocks whose body runs the block's threads one
    after another, part by part, with the block and thread ids and
    sizes of the launch's body replaced by those loops' indices and bounds
    (y and z are 0). The kernels then run, in the same order, as CPU code
    that the CPU pipeline compiles, so their results can be compared with
    the CPU target's.

    A part is a run of operations between two points where the threads
    meet: a barrier, or an instruction that a warp or warpgroup executes
    together (`gpu.shuffle`, `nvgpu.ldmatrix`, `mma.sync.m16n8k16` on bf16
    through `llvm.call_intrinsic`, `nvvm.wgmma.mma_async` on bf16). Each part
    is a loop over the threads, run by every thread before the next
    begins. A thread's value used in a later part is kept in a slot, a
    stack array with one element per thread, unless it is free of memory
    effects and computed again where it is used; what every thread
    computes alike runs once per block. A loop or branch holding a meeting
    point must have the same bounds or condition for every thread: it runs
    once per block with its parts inside, the values it carries in slots
    (or as the loop's own, when the same for every thread). A meeting
    instruction is two loops over the threads: one puts the operands in
    slots, the other computes each thread's results from its warp's
    operands, by the PTX ISA's fragment and shared-memory layouts
    (EmulatedInstructions.cpp). Shared memory, static and dynamic, is a
    stack buffer of each block.

    `cp.async` copies complete at once (loads and stores, zeros past the
    source's elements): their groups and waits go, and so do the
    warpgroup mma's fences and waits and the device fences (`membar.gl`);
    NVVM's `ex2` and `lg2` become math's. Any other NVVM or NVGPU
    operation is an error. What an emulation cannot check is timing: a
    race that a missing barrier or wait leaves on a GPU.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def TfcGpuOutlineKernels : Pass<"tfc-gpu-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Outlines every gpu.launch into one gpu.module of distinct kernels";
  let description = [{
    Each `gpu.launch` becomes a `gpu.func` of the single module
    `@tfc_kernels` and a `gpu.launch_func` of it; the constants it uses
    are moved into it first (immediates rather than arguments), and its
    shared-memory buffers are aligned to 16 bytes (`llvm.align`), as the
    16-byte copies and `ldmatrix` loads of tensor-core kernels need. Its
    buffer arguments are declared 16-byte aligned (`llvm.align`): each is
    the aligned pointer of a device allocation or an arena plus the
    64-byte multiples of `memref.view` shifts, the kernel adding its
    type's static offset itself, so that LLVM knows the alignment of
    every access and loads a thread's consecutive elements (a row of
    attention) 16 bytes at a time. Kernels equal to an
    earlier one (the same operations on the same argument types: the layers
    of one shape) are not repeated: their launches call the first one.
    The globals the kernels use (constants, and the block counters of
    tfc-gpu-last-block-finals) are copied into the module. The
    number of launches that `tfc_train_step` and `tfc_optimizer_step` make
    becomes the manifest's `kernels_per_step`: a launch inside host loops
    (blocked attention's loops over blocks) counts once per iteration,
    the loops' bounds evaluated by folding from constants and induction
    variables; where a bound around a launch does not fold, the function's
    launches count once each.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def TfcGpuNativeMath : Pass<"tfc-gpu-native-math", "mlir::gpu::GPUModuleOp"> {
  let summary = "Calls of libdevice that PTX has an instruction for become LLVM intrinsics";
  let description = [{
    Runs after `convert-gpu-to-nvvm`, which turns every math operation into
    a call of CUDA's libdevice (`__nv_floorf`, `__nv_fabsf`, ...); the
    kernels can only call libdevice when a CUDA toolkit is there to link
    it. The calls of functions that PTX has an instruction for (`floor`,
    `ceil`, `trunc`, `rint`, `fabs`, `copysign`, `fma`, `sqrt`, in f32 and
    f64: what the polynomial `exp`, `tanh`, `log` and `erf` of
    tfc-fast-math are made of) become LLVM intrinsics, which the NVPTX back
    end emits as instructions, so f32 models need no libdevice.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def TfcGpuLaunchToRuntime : Pass<"tfc-gpu-launch-to-runtime", "mlir::ModuleOp"> {
  let summary = "Replaces gpu.launch_func and gpu.binary by calls of the runtime's CUDA glue";
  let description = [{
    Runs after `gpu-module-to-binary`, on the host code before its lowering
    to LLVM. The kernel image of `gpu.binary @tfc_kernels` (PTX or fatbin)
    becomes the global `tfc_gpu_image` (with `tfc_gpu_image_size`,
    `tfc_gpu_image_format`: 0 PTX, 1 fatbin or cubin, and `tfc_gpu_arch`,
    the `n` of `sm_<n>`), the kernel names
    become `tfc_gpu_kernel_names` (NUL-separated) and
    `tfc_gpu_kernel_count`, and each kernel's dynamic shared memory (a
    constant of its launches, 0 for none) `tfc_gpu_kernel_shared_bytes`
    (int32 per kernel), which the runtime allows the kernel above 48 KiB
    and passes to every launch of it. Each `gpu.launch_func` becomes a
    call of

      void tfc_gpu_launch(int32_t kernel, int64_t gx, int64_t gy, int64_t gz,
                          int64_t bx, int64_t by, int64_t bz,
                          int64_t *args, int32_t count)

    with its arguments stored in one 8-byte slot each (a buffer as its
    aligned device address, scalars zero-extended), which the runtime
    passes to `cuLaunchKernel`. A buffer that a `memref.view` cuts from an
    arena is passed at the arena's address plus the view's byte shift; a
    subview or `reinterpret_cast` at its source's, since the kernel adds
    the static offset of its argument type itself. The module loses `gpu.container_module`.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def TfcGpuDeviceBuffers : Pass<"tfc-gpu-device-buffers", "mlir::ModuleOp"> {
  let summary = "Puts the arenas and the entry points' buffers in device memory";
  let description = [{
    Runs on the host code in the LLVM dialect. Each arena global
    (`__tfc_arena_<n>`) is replaced by a call of
    `tfc_gpu_arena(n, bytes)`, which returns device memory that the runtime
    allocates once. Each pointer argument of an entry point (`tfc_*`) is
    replaced, for the kernels, by the device copy that
    `tfc_gpu_to_device(id, host, bytes)` returns; before returning, the
    arguments named in `tfc.gpu.written` are copied back with
    `tfc_gpu_to_host(host, device, bytes)`. The byte sizes come from the
    `tfc.gpu.arg_bytes` attribute that `tfc-gpu-map-kernels` records.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // TFC_CODEGEN_GPU_PASSES_TD
