//===- Passes.td - tfc passes of the CPU back end ----------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_CPU_PASSES_TD
#define TFC_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfcFuseRows : Pass<"tfc-fuse-rows", "mlir::func::FuncOp"> {
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
    that read the row index, ops with dynamic shapes, and the epilogue of a
    contraction marked `tfc.epilogue` that its kernel applies to the
    accumulators (attention's scaled and masked scores) are not taken; any
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

def TfcInterchangeLoops : Pass<"tfc-interchange-loops", "mlir::func::FuncOp"> {
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

def TfcCollapseDims : Pass<"tfc-collapse-dims", "mlir::func::FuncOp"> {
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
    broadcast) before the store, and the op is erased. A rounded epilogue
    (`tfc-precision`: it reads C as its last input and writes a bf16
    buffer of its own) is taken the same way, its results stored to that
    buffer instead of C (C then holds only the earlier K panels' sums).
    A contraction of
    bf16 inputs into float32 (`--precision=bf16`, an even K) packs B as
    bf16 pairs along K, each column's two k adjacent, and each step of its
    K loop takes two k: with `bf16-dot`, one `vdpbf16ps` per accumulator
    vector (`llvm.x86.avx512bf16.dpbf16ps.512`, A's pair broadcast as one
    32-bit word, its last operand, into which LLVM folds the load), else two float32 FMAs of the widened pairs in the
    instruction's order (odd k, then even); an A that does not run along K
    is copied per row block and K panel into a row panel on the thread's
    stack, by pairs of k (a block of an A that runs along M by two vector
    loads of its rows and an interleave per pair). A B that runs along K
    is packed by register transposes of 16 x 16 tiles (of pairs for
    bf16), the depth left over (a 16-wide head's 8 pairs) by narrower
    ones of halving depth, joined into whole vectors. A bf16 B that runs
    along N and spans several K panels (a weight gradient's activations)
    has the same rows of the next panel prefetched while each panel is
    packed, when a panel of it fits in 256 KiB. Each tile prefetches the
    next tile's part of C for writing, unless all of C fits in 256 KiB.
    Other linalg ops are left alone.
  }];
  let options = [
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "The target has AVX512-BF16: bf16 contractions run on vdpbf16ps">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def TfcVectorizeShortRows
    : Pass<"tfc-vectorize-short-rows", "mlir::func::FuncOp"> {
  let summary = "Writes element-wise ops over a short row as vector operations";
  let description = [{
    On buffers, after `tfc-vectorize-contractions`: an all-parallel
    `linalg.generic` with constant loop ranges whose innermost loop has at
    most 64 iterations (any number when the body rounds to a narrower
    float, such as a bf16 copy of a contraction operand, which LLVM 19
    vectorises at most 8 lanes wide), a multiple of the vector's lanes (as
    many as fill 512 bits with the widest operand: 16 for f32), where every operand (integers of 8 bits or more, floats) is read
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
    A rounding qualifies with a single loop too (the form
    `tfc-collapse-dims` leaves most in); outside parallel loops, with 8192
    elements or more, its threads take chunks of up to 4096 elements.
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

def TfcParallelColumnSums
    : Pass<"tfc-parallel-column-sums", "mlir::func::FuncOp"> {
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

def TfcParallelOuterLoops
    : Pass<"tfc-parallel-outer-loops", "mlir::func::FuncOp"> {
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

#endif // TFC_CODEGEN_CPU_PASSES_TD
