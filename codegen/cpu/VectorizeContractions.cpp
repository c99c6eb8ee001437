//===- VectorizeContractions.cpp - The tfc-vectorize-contractions pass ----===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
//
// Rewrites every linalg contraction on buffers (`C += A * B` summed over one
// or more reduction dimensions: the matmuls of linear layers and their
// gradients, attention scores and values, Performer feature maps) into a
// register-tiled loop nest of vector FMAs, the structure of a BLAS kernel:
//
//   for each outer index (batch dims, other row dims, other reductions)
//     for kc in [0, K) step KC                  // K panel in cache
//       pack B[kc:kc+KC, :] into a zero-padded panel [Npad/NR][KC][NR]
//         (slivers [KC][NR] one cache line apart)
//       scf.parallel mb over row blocks of MR   // the threads split rows
//         for n0 in [0, Npad) step NR
//           prefetch the next tile's C (unless C fits in L2)
//           acc[MR][NR] = C[m0:m0+MR, n0:n0+NR]  (masked at the N edge)
//           for k in [0, KC): acc[r] += bcast(A[m0+r, k]) * Bpanel[n0/NR][k]
//           C[m0:m0+MR, n0:n0+NR] = acc
//
// N is the innermost dimension of C (unit stride), M a row dimension of A
// and C, K a reduction dimension of A and B. The rows left at the M edge
// run as one tile of their own height. Nothing is reassociated across k, so
// results do not depend on the number of threads.
//
// A contraction with many independent outer iterations (the batch, chunk
// and head loops of attention) forks once instead: the leading parallel
// outer loops become one `scf.parallel`, each iteration packs into a panel
// of its own on the stack (`memref.alloca` in a `memref.alloca_scope`), and
// its row blocks run in order. A contraction inside a parallel loop
// already (blocked attention's per-head `scf.forall`) runs on the thread of
// its iteration, with a panel on that thread's stack.
//
// When C is filled with zeros right before the contraction, the fill is
// dropped and the accumulators of the first K panel start from zero.
//
// A contraction that tfc-fuse-epilogues marked `tfc.epilogue` is followed
// by its epilogue, an element-wise `linalg.generic` that updates C in place
// (bias, activation, residual). Its body is applied to the accumulators of
// the last K panel, on vectors, before they are stored: its other inputs
// are loaded at the tile's position (as vectors masked like C when they run
// along N, else one element broadcast), positions it reads (`linalg.index`,
// an attention mask) are the lanes' columns along N and the tile's index
// along the other dimensions, and the epilogue op goes with the
// contraction. C is then stored once and not read again. A rounded
// epilogue (tfc-precision: one that reads C as its last input and writes
// C's bf16 copy to a buffer of its own) is applied the same way, and the
// last K panel's tiles store into its buffer instead of C. An epilogue the
// kernel cannot take (an input read across N) stays a loop nest of its own.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ContractionEpilogue.h"
#include "codegen/cpu/ContractionPlan.h"
#include "codegen/cpu/Passes.h"
#include "codegen/cpu/RegisterShuffles.h"
#include "passes/ManifestText.h"
#include "passes/Utils.h"
#include "runtime/ManifestFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>
#include <vector>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCVECTORIZECONTRACTIONS
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
/// Builds the tiled kernel of one contraction in place of its linalg op.
class ContractionEmitter {
public:
  ContractionEmitter(ContractionPlan contraction, Value panel, bool bf16Dot)
      : plan(contraction), panel(panel), npad(contraction.panelWidth),
        lanes(contraction.lanes), vectorsPerRow(contraction.vectorsPerRow),
        rowsPerBlock(contraction.rowsPerBlock), kStep(contraction.bf16 ? 2 : 1),
        bf16Dot(bf16Dot), builder(contraction.op), loc(contraction.op.getLoc()),
        dims(contraction.sizes.size()),
        vectorType(VectorType::get({lanes}, contraction.elementType)),
        panelVectorType(
            VectorType::get({lanes * kStep}, contraction.panelType)) {}

  void emit() {
    emitOuter(0);
    plan.op->erase();
    if (plan.epilogue)
      plan.epilogue->erase();
    if (plan.zeroFill)
      plan.zeroFill->erase();
  }

private:
  Value index(int64_t v) {
    return builder.create<arith::ConstantIndexOp>(loc, v);
  }

  /// Loops over the dimensions that are neither M, N nor K.
  void emitOuter(size_t i) {
    if (i == 0 && plan.parallelOuter > 0)
      return emitParallelOuter();
    if (i == plan.outer.size())
      return emitPanels();
    int64_t d = plan.outer[i];
    auto loop = builder.create<scf::ForOp>(loc, index(0), index(plan.sizes[d]),
                                           index(1));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(loop.getBody());
    dims[d] = loop.getInductionVar();
    emitOuter(i + 1);
  }

  /// The leading `parallelOuter` loops as one `scf.parallel` over their
  /// linearised iteration space (one dimension, so that
  /// tfc-parallel-outer-loops keeps it whole and puts no loop between the
  /// fork and the panel); each iteration packs into its own panel on the
  /// stack.
  void emitParallelOuter() {
    int64_t iterations = 1;
    for (unsigned i = 0; i < plan.parallelOuter; ++i)
      iterations *= plan.sizes[plan.outer[i]];
    auto loop = builder.create<scf::ParallelOp>(loc, ValueRange{index(0)},
                                                ValueRange{index(iterations)},
                                                ValueRange{index(1)});
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(loop.getBody());
    Value rest = loop.getInductionVars()[0];
    for (unsigned i = plan.parallelOuter; i-- > 0;) {
      int64_t size = plan.sizes[plan.outer[i]];
      if (i == 0) {
        dims[plan.outer[i]] = rest;
        break;
      }
      dims[plan.outer[i]] =
          builder.create<arith::RemUIOp>(loc, rest, index(size));
      rest = builder.create<arith::DivUIOp>(loc, rest, index(size));
    }
    panel = emitScopedStackPanel(plan.panelElements);
    emitOuter(plan.parallelOuter);
  }

  /// A panel of `elements` of B's type on this thread's stack, in a
  /// `memref.alloca_scope` that frees it at the end of the current
  /// iteration (or the panel is hoisted to one per thread); the builder
  /// moves into the scope.
  Value emitScopedStackPanel(int64_t elements) {
    auto scope = builder.create<memref::AllocaScopeOp>(loc, TypeRange{});
    Block *body = new Block();
    scope.getBodyRegion().push_back(body);
    builder.setInsertionPointToStart(body);
    builder.create<memref::AllocaScopeReturnOp>(loc, ValueRange{});
    builder.setInsertionPointToStart(body);
    return builder.create<memref::AllocaOp>(
        loc, MemRefType::get({elements}, plan.panelType),
        builder.getI64IntegerAttr(64));
  }

  SmallVector<Value> indices(AffineMap map) {
    SmallVector<Value> result;
    for (AffineExpr expr : map.getResults())
      result.push_back(dims[cast<AffineDimExpr>(expr).getPosition()]);
    return result;
  }

  /// Loops over K panels: pack B, then run the row blocks.
  void emitPanels() {
    int64_t kSize = plan.sizes[plan.k];
    auto loop = builder.create<scf::ForOp>(loc, index(0), index(kSize),
                                           index(kPanelDepth));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(loop.getBody());
    Value kc = loop.getInductionVar();
    // A constant depth when every panel is full, so that the loops over it
    // have constant trip counts.
    Value depth =
        kSize <= kPanelDepth || kSize % kPanelDepth == 0
            ? index(std::min(kSize, kPanelDepth))
            : builder.create<arith::MinSIOp>(
                  loc, index(kPanelDepth),
                  builder.create<arith::SubIOp>(loc, index(kSize), kc));
    emitPack(kc, depth);
    emitRowBlocks(kc, depth);
  }

  /// Where B[.., kc + kk, .., n] goes in the panel. The panel is a row of
  /// slivers, one per register tile of columns, each `depth x tile`
  /// elements with the tile's columns innermost: the kernel reads one
  /// sliver from start to end, and the packing writes whole vectors. With
  /// bf16 operands a sliver's rows are pairs of k, `tile x 2` elements with
  /// each column's two k adjacent: the layout of `vdpbf16ps`'s operand.
  Value panelIndex(Value kk, Value n) {
    int64_t tile = lanes * vectorsPerRow;
    Value sliver = builder.create<arith::DivUIOp>(loc, n, index(tile));
    Value column = builder.create<arith::RemUIOp>(loc, n, index(tile));
    Value start =
        builder.create<arith::MulIOp>(loc, sliver, index(plan.sliverElements));
    if (plan.bf16) {
      Value pair = builder.create<arith::DivUIOp>(loc, kk, index(2));
      Value half = builder.create<arith::RemUIOp>(loc, kk, index(2));
      Value row = builder.create<arith::MulIOp>(loc, pair, index(2 * tile));
      Value at = builder.create<arith::AddIOp>(
          loc, builder.create<arith::MulIOp>(loc, column, index(2)), half);
      return builder.create<arith::AddIOp>(
          loc, start, builder.create<arith::AddIOp>(loc, row, at));
    }
    Value row = builder.create<arith::MulIOp>(loc, kk, index(tile));
    return builder.create<arith::AddIOp>(
        loc, start, builder.create<arith::AddIOp>(loc, row, column));
  }

  /// The panel holds B[.., kc + kk, .., n] for n < N, zeros up to the
  /// whole tile.
  void emitPack(Value kc, Value depth) {
    int64_t nSize = plan.sizes[plan.n];
    if (plan.packing == ContractionPlan::Packing::AlongN && !plan.bf16)
      return emitPackAlongN(kc, depth, npad);
    if (plan.packing == ContractionPlan::Packing::AlongN) {
      // bf16: whole vectors, the edge one element at a time (without
      // AVX512-BF16, LLVM masks a load of bf16 through library calls).
      int64_t nVectors = nSize / lanes * lanes;
      if (nVectors > 0)
        emitPackAlongN(kc, depth, nVectors);
      if (nVectors < nSize)
        emitScalarPack(kc, index(0), depth, nVectors, nSize, splitsRows());
    } else if (plan.packing == ContractionPlan::Packing::Elements) {
      emitScalarPack(kc, index(0), depth, 0, nSize, splitsRows());
    } else {
      // Whole tiles of `lanes` columns by `lanes` k (pairs of k for bf16)
      // through registers, the edges one element at a time.
      int64_t nTiles = nSize / lanes * lanes, kTile = lanes * kStep;
      std::optional<int64_t> constantDepth = getConstantIntValue(depth);
      Value kTiles =
          constantDepth
              ? index(*constantDepth / kTile * kTile)
              : builder.create<arith::SubIOp>(
                    loc, depth,
                    builder.create<arith::RemUIOp>(loc, depth, index(kTile)));
      emitTransposedPack(kc, index(0), kTiles, lanes, nTiles);
      // A constant depth left over (a head of 16 is 8 pairs of k) by
      // narrower tiles of halving depth, what is left of it one element at
      // a time.
      Value kDone = kTiles;
      bool rowsLeft = !constantDepth;
      if (constantDepth) {
        int64_t done = *constantDepth / kTile * kTile;
        for (int64_t units = lanes / 2; units >= 2; units /= 2) {
          if (*constantDepth - done < units * kStep)
            continue;
          emitTransposedPack(kc, index(done), index(done + units * kStep),
                             units, nTiles);
          done += units * kStep;
        }
        kDone = index(done);
        rowsLeft = done < *constantDepth;
      }
      if (nTiles < nSize)
        emitScalarPack(kc, index(0), kDone, nTiles, nSize);
      if (rowsLeft)
        emitScalarPack(kc, kDone, depth, 0, nSize);
    }
    if (nSize == npad)
      return;
    OpBuilder::InsertionGuard guard(builder);
    auto kLoop = builder.create<scf::ForOp>(loc, index(0), depth, index(1));
    builder.setInsertionPointToStart(kLoop.getBody());
    auto zLoop =
        builder.create<scf::ForOp>(loc, index(nSize), index(npad), index(1));
    builder.setInsertionPointToStart(zLoop.getBody());
    Value zero = builder.create<arith::ConstantOp>(
        loc, builder.getFloatAttr(plan.panelType, 0.0));
    builder.create<memref::StoreOp>(
        loc, zero, panel,
        panelIndex(kLoop.getInductionVar(), zLoop.getInductionVar()));
  }

  /// The panel's columns [0, nEnd) by vectors along N: masked loads of B
  /// (zeros past N; bf16 is packed by whole vectors only) and whole-vector
  /// stores, which write the zero padding too when `nEnd` is the panel's
  /// width. The threads split the rows when they split the row blocks.
  /// With bf16 operands, rows k and k + 1 are loaded and interleaved into
  /// one vector of pairs.
  void emitPackAlongN(Value kc, Value depth, int64_t nEnd) {
    int64_t nSize = plan.sizes[plan.n];
    OpBuilder::InsertionGuard guard(builder);
    Value kk = emitLoop(index(0), depth, kStep, splitsRows());
    Value k = builder.create<arith::AddIOp>(loc, kc, kk);
    if (prefetchesNextPanel())
      emitPrefetchNextPanelRows(k);
    auto nLoop =
        builder.create<scf::ForOp>(loc, index(0), index(nEnd), index(lanes));
    builder.setInsertionPointToStart(nLoop.getBody());
    Value n0 = nLoop.getInductionVar();
    dims[plan.n] = n0;
    Value mask = builder.create<vector::CreateMaskOp>(
        loc, VectorType::get({lanes}, builder.getI1Type()),
        ValueRange{builder.create<arith::SubIOp>(loc, index(nSize), n0)});
    auto rowType = VectorType::get({lanes}, plan.panelType);
    Value zeros = builder.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(rowType,
                                    builder.getFloatAttr(plan.panelType, 0.0)));
    SmallVector<Value, 2> rows;
    for (int64_t i = 0; i < kStep; ++i) {
      dims[plan.k] =
          i == 0 ? k : builder.create<arith::AddIOp>(loc, k, index(i));
      rows.push_back(
          plan.bf16 ? builder
                          .create<vector::LoadOp>(loc, rowType, plan.b,
                                                  indices(plan.bMap))
                          .getResult()
                    : builder
                          .create<vector::MaskedLoadOp>(loc, rowType, plan.b,
                                                        indices(plan.bMap),
                                                        mask, zeros)
                          .getResult());
    }
    Value value = plan.bf16 ? interleavePairs(builder, loc, rows[0], rows[1],
                                              plan.panelType)
                            : rows[0];
    builder.create<vector::StoreOp>(loc, value, panel, panelIndex(kk, n0));
  }

  /// Whether the bf16 pack along N prefetches B's rows of the next K panel
  /// (a weight gradient's activations, K the batch's tokens): B then comes
  /// from memory while the tiles of this panel run, where the pack would
  /// wait for it, when this panel and the next fit in the cache next to
  /// the core together.
  bool prefetchesNextPanel() const {
    int64_t panelBytes = kPanelDepth * plan.sizes[plan.n] *
                         plan.panelType.getIntOrFloatBitWidth() / 8;
    return plan.bf16 && plan.sizes[plan.k] > kPanelDepth &&
           panelBytes <= kCacheResidentBytes;
  }

  /// Prefetches rows k and k + 1 of B one K panel ahead (the last row past
  /// K), one prefetch per 64-byte line.
  void emitPrefetchNextPanelRows(Value k) {
    OpBuilder::InsertionGuard guard(builder);
    int64_t line = kCacheLineBytes * 8 / plan.panelType.getIntOrFloatBitWidth();
    auto nLoop = builder.create<scf::ForOp>(
        loc, index(0), index(plan.sizes[plan.n]), index(line));
    builder.setInsertionPointToStart(nLoop.getBody());
    dims[plan.n] = nLoop.getInductionVar();
    for (int64_t i = 0; i < kStep; ++i) {
      dims[plan.k] = builder.create<arith::MinSIOp>(
          loc, builder.create<arith::AddIOp>(loc, k, index(kPanelDepth + i)),
          index(plan.sizes[plan.k] - 1));
      builder.create<memref::PrefetchOp>(loc, plan.b, indices(plan.bMap),
                                         /*isWrite=*/false,
                                         /*localityHint=*/3,
                                         /*isDataCache=*/true);
    }
  }

  /// The panel's rows [kLo, kHi) and columns [nLo, nHi), one element at a
  /// time; the threads split the rows when `parallel`.
  void emitScalarPack(Value kc, Value kLo, Value kHi, int64_t nLo, int64_t nHi,
                      bool parallel = false) {
    OpBuilder::InsertionGuard guard(builder);
    Value kk = emitLoop(kLo, kHi, 1, parallel);
    dims[plan.k] = builder.create<arith::AddIOp>(loc, kc, kk);
    auto nLoop =
        builder.create<scf::ForOp>(loc, index(nLo), index(nHi), index(1));
    builder.setInsertionPointToStart(nLoop.getBody());
    dims[plan.n] = nLoop.getInductionVar();
    Value value =
        builder.create<memref::LoadOp>(loc, plan.b, indices(plan.bMap));
    builder.create<memref::StoreOp>(loc, value, panel,
                                    panelIndex(kk, nLoop.getInductionVar()));
  }

  /// The panel's rows [kBegin, kEnd), a multiple of `units` k (pairs of k
  /// for bf16, each pair one 32-bit element), and columns [0, nTiles), a
  /// multiple of `lanes`, when B runs along K with unit stride (B = W^T of
  /// a linear layer, K^T of attention scores): each group of `units`
  /// columns is `units` vector loads of B along K, transposed in
  /// registers, and the `lanes / units` groups' transposes are joined into
  /// `units` vector stores along N. Element by element, LLVM would gather
  /// along N. When the threads split the row blocks, they split the tile
  /// rows, or the tiles' columns when there is one tile row.
  void emitTransposedPack(Value kc, Value kBegin, Value kEnd, int64_t units,
                          int64_t nTiles) {
    std::optional<int64_t> begin = getConstantIntValue(kBegin),
                           end = getConstantIntValue(kEnd);
    if (nTiles == 0 || (begin && end && *begin >= *end))
      return;
    bool oneTileRow = begin && end && *end - *begin <= units * kStep;
    OpBuilder::InsertionGuard guard(builder);
    Value k0 =
        emitLoop(kBegin, kEnd, units * kStep, splitsRows() && !oneTileRow);
    dims[plan.k] = builder.create<arith::AddIOp>(loc, kc, k0);
    Value n0 =
        emitLoop(index(0), index(nTiles), lanes, splitsRows() && oneTileRow);
    auto loadType = VectorType::get({units * kStep}, plan.panelType);
    auto unitsType = VectorType::get({units}, builder.getI32Type());
    SmallVector<SmallVector<Value>> groups;
    for (int64_t g = 0; g < lanes / units; ++g) {
      SmallVector<Value> rows;
      for (int64_t i = 0; i < units; ++i) {
        dims[plan.n] =
            builder.create<arith::AddIOp>(loc, n0, index(g * units + i));
        Value row = builder.create<vector::LoadOp>(loc, loadType, plan.b,
                                                   indices(plan.bMap));
        if (plan.bf16)
          row = builder.create<vector::BitCastOp>(loc, unitsType, row);
        rows.push_back(row);
      }
      groups.push_back(transposeTile(builder, loc, rows));
    }
    for (int64_t j = 0; j < units; ++j) {
      // Row j of every group's transpose, joined pairwise into one vector.
      SmallVector<Value> parts;
      for (SmallVector<Value> &group : groups)
        parts.push_back(group[j]);
      while (parts.size() > 1) {
        SmallVector<Value> joined;
        for (size_t i = 0; i < parts.size(); i += 2) {
          int64_t length =
              cast<VectorType>(parts[i].getType()).getNumElements();
          joined.push_back(builder.create<vector::ShuffleOp>(
              loc, parts[i], parts[i + 1],
              llvm::to_vector(llvm::seq<int64_t>(0, 2 * length))));
        }
        parts = std::move(joined);
      }
      Value row = parts.front();
      if (plan.bf16)
        row = builder.create<vector::BitCastOp>(loc, panelVectorType, row);
      Value kk = builder.create<arith::AddIOp>(loc, k0, index(j * kStep));
      builder.create<vector::StoreOp>(loc, row, panel, panelIndex(kk, n0));
    }
  }

  /// Whether the threads split the row blocks of each K panel (and its
  /// packing): the contraction is big, and no outer loop is split instead.
  bool splitsRows() const {
    int64_t mSize = plan.m < 0 ? 1 : plan.sizes[plan.m];
    int64_t macs = mSize * plan.sizes[plan.n] * plan.sizes[plan.k];
    return plan.parallelOuter == 0 && !plan.parallelLoop &&
           macs >= kParallelMacs && mSize > rowsPerBlock;
  }

  /// A loop from `lower` to `upper` by `step`, an `scf.parallel` when
  /// `parallel`; the builder moves into its body. Returns the index.
  Value emitLoop(Value lower, Value upper, int64_t step, bool parallel) {
    if (parallel) {
      auto loop = builder.create<scf::ParallelOp>(
          loc, ValueRange{lower}, ValueRange{upper}, ValueRange{index(step)});
      builder.setInsertionPointToStart(loop.getBody());
      return loop.getInductionVars()[0];
    }
    auto loop = builder.create<scf::ForOp>(loc, lower, upper, index(step));
    builder.setInsertionPointToStart(loop.getBody());
    return loop.getInductionVar();
  }

  /// The row blocks, split between threads when the contraction is big.
  void emitRowBlocks(Value kc, Value depth) {
    int64_t mSize = plan.m < 0 ? 1 : plan.sizes[plan.m];
    int64_t blocks = (mSize + rowsPerBlock - 1) / rowsPerBlock;
    OpBuilder::InsertionGuard guard(builder);
    Value block = emitLoop(index(0), index(blocks), 1, splitsRows());
    Value m0 = builder.create<arith::MulIOp>(loc, block, index(rowsPerBlock));
    if (packsRows()) {
      // The block's rows of A (A's type is B's, bf16).
      rowPanel = emitScopedStackPanel(rowsPerBlock * kPanelDepth);
      emitRowPack(m0, kc, depth);
    }
    auto nLoop = builder.create<scf::ForOp>(loc, index(0), index(npad),
                                            index(lanes * vectorsPerRow));
    builder.setInsertionPointToStart(nLoop.getBody());
    Value n0 = nLoop.getInductionVar();
    // Full blocks take the wide kernel; the last block, the rows left over,
    // a kernel of its own height.
    emitByBlockWholeness(
        m0, [&] { emitTile(m0, rowsPerBlock, n0, kc, depth); },
        [&] { emitTile(m0, mSize % rowsPerBlock, n0, kc, depth); });
  }

  /// Emits `whole` for the row block at `m0` when it has all its rows and
  /// `edge` for the last block when M leaves it fewer: the code of the
  /// block's rows is one or the other, behind an `scf.if` only when M is
  /// not a multiple of the block.
  void emitByBlockWholeness(Value m0, function_ref<void()> whole,
                            function_ref<void()> edge) {
    OpBuilder::InsertionGuard guard(builder);
    int64_t mSize = plan.m < 0 ? 1 : plan.sizes[plan.m];
    if (mSize % rowsPerBlock == 0) {
      whole();
      return;
    }
    Value full = builder.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::sle,
        builder.create<arith::AddIOp>(loc, m0, index(rowsPerBlock)),
        index(mSize));
    auto branch = builder.create<scf::IfOp>(loc, full, /*withElse=*/true);
    builder.setInsertionPointToStart(&branch.getThenRegion().front());
    whole();
    builder.setInsertionPointToStart(&branch.getElseRegion().front());
    edge();
  }

  /// Whether A's rows are packed per row block (bf16 operands, A not
  /// running along K with unit stride: a weight gradient's x^T): a pair of
  /// k is then one load from the row panel, not two loads put together in
  /// every tile of the block.
  bool packsRows() const {
    return plan.bf16 && plan.m >= 0 && !runsAlong(plan.a, plan.aMap, plan.k);
  }

  /// Where A[m0 + r, kc + kk] goes in the row panel: by pairs of k, each
  /// pair's `rowsPerBlock` rows of two.
  Value rowPanelIndex(Value kk, Value r) {
    Value pair = builder.create<arith::DivUIOp>(loc, kk, index(2));
    Value half = builder.create<arith::RemUIOp>(loc, kk, index(2));
    Value start =
        builder.create<arith::MulIOp>(loc, pair, index(2 * rowsPerBlock));
    Value at = builder.create<arith::AddIOp>(
        loc, builder.create<arith::MulIOp>(loc, r, index(2)), half);
    return builder.create<arith::AddIOp>(loc, start, at);
  }

  /// The row panel of the block at `m0` for the K panel at `kc`. When A
  /// runs along M with unit stride, each block's pairs of k are two vector
  /// loads of its rows (a whole block's, or the rows left at the edge of
  /// M), interleaved as 16-bit integers and stored whole; else element by
  /// element.
  void emitRowPack(Value m0, Value kc, Value depth) {
    if (!runsAlong(plan.a, plan.aMap, plan.m)) {
      emitRowPackByElement(m0, kc, depth);
      return;
    }
    emitByBlockWholeness(
        m0, [&] { emitRowPackByVector(m0, kc, depth, rowsPerBlock); },
        [&] {
          emitRowPackByVector(m0, kc, depth, plan.sizes[plan.m] % rowsPerBlock);
        });
  }

  /// The row panel of the block at `m0`, `rows` rows (all of a whole
  /// block, the rest of M for the last), of an A that runs along M: per
  /// pair of k, two vector loads interleaved into one store.
  void emitRowPackByVector(Value m0, Value kc, Value depth, int64_t rows) {
    OpBuilder::InsertionGuard guard(builder);
    auto kLoop = builder.create<scf::ForOp>(loc, index(0), depth, index(2));
    builder.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    Value k = builder.create<arith::AddIOp>(loc, kc, kk);
    dims[plan.m] = m0;
    auto rowType = VectorType::get({rows}, plan.panelType);
    SmallVector<Value, 2> pair;
    for (int64_t i = 0; i < 2; ++i) {
      dims[plan.k] =
          i == 0 ? k : builder.create<arith::AddIOp>(loc, k, index(1));
      pair.push_back(builder.create<vector::LoadOp>(loc, rowType, plan.a,
                                                    indices(plan.aMap)));
    }
    builder.create<vector::StoreOp>(
        loc, interleavePairs(builder, loc, pair[0], pair[1], plan.panelType),
        rowPanel, rowPanelIndex(kk, index(0)));
  }

  /// The row panel of the block at `m0`, element by element: the rows of
  /// the block that M holds.
  void emitRowPackByElement(Value m0, Value kc, Value depth) {
    OpBuilder::InsertionGuard guard(builder);
    int64_t mSize = plan.sizes[plan.m];
    Value rows = builder.create<arith::MinSIOp>(
        loc, index(rowsPerBlock),
        builder.create<arith::SubIOp>(loc, index(mSize), m0));
    auto kLoop = builder.create<scf::ForOp>(loc, index(0), depth, index(1));
    builder.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    dims[plan.k] = builder.create<arith::AddIOp>(loc, kc, kk);
    auto rLoop = builder.create<scf::ForOp>(loc, index(0), rows, index(1));
    builder.setInsertionPointToStart(rLoop.getBody());
    Value r = rLoop.getInductionVar();
    dims[plan.m] = builder.create<arith::AddIOp>(loc, m0, r);
    Value value =
        builder.create<memref::LoadOp>(loc, plan.a, indices(plan.aMap));
    builder.create<memref::StoreOp>(loc, value, rowPanel, rowPanelIndex(kk, r));
  }

  /// acc[rows][vectorsPerRow] over one K panel, from and back to C.
  void emitTile(Value m0, int64_t rows, Value n0, Value kc, Value depth) {
    int64_t nSize = plan.sizes[plan.n];
    auto maskType = VectorType::get({lanes}, builder.getI1Type());
    SmallVector<Value> columns, masks;
    for (int64_t v = 0; v < vectorsPerRow; ++v) {
      Value column = builder.create<arith::AddIOp>(loc, n0, index(v * lanes));
      columns.push_back(column);
      Value left = builder.create<arith::SubIOp>(loc, index(nSize), column);
      masks.push_back(
          builder.create<vector::CreateMaskOp>(loc, maskType, left));
    }
    Value zeros = builder.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(
                 vectorType, builder.getFloatAttr(plan.elementType, 0.0)));
    auto rowIndex = [&](int64_t r) -> Value {
      return r == 0 ? m0 : builder.create<arith::AddIOp>(loc, m0, index(r));
    };
    SmallVector<SmallVector<Value>> cIndices;
    for (int64_t r = 0; r < rows; ++r) {
      if (plan.m >= 0)
        dims[plan.m] = rowIndex(r);
      for (int64_t v = 0; v < vectorsPerRow; ++v) {
        dims[plan.n] = columns[v];
        cIndices.push_back(indices(plan.cMap));
      }
    }
    if (rows == rowsPerBlock && plan.m >= 0 && prefetchesC())
      emitPrefetchNextTile(m0, n0);
    auto loadC = [&](OpBuilder &b) {
      SmallVector<Value> loaded;
      for (auto [i, at] : llvm::enumerate(cIndices))
        loaded.push_back(b.create<vector::MaskedLoadOp>(
            loc, vectorType, plan.c, at, masks[i % vectorsPerRow], zeros));
      return loaded;
    };
    // C starts from zero when its fill was dropped: the first K panel
    // starts from zeros, later ones from what the earlier ones stored.
    SmallVector<Value> init;
    if (!plan.zeroFill) {
      init = loadC(builder);
    } else if (plan.sizes[plan.k] <= kPanelDepth) {
      init.assign(cIndices.size(), zeros);
    } else {
      SmallVector<Type> types(cIndices.size(), vectorType);
      Value first = builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                  kc, index(0));
      auto branch = builder.create<scf::IfOp>(
          loc, first,
          [&](OpBuilder &b, Location l) {
            b.create<scf::YieldOp>(l,
                                   SmallVector<Value>(cIndices.size(), zeros));
          },
          [&](OpBuilder &b, Location l) {
            b.create<scf::YieldOp>(l, loadC(b));
          });
      init = branch.getResults();
    }
    auto kLoop =
        builder.create<scf::ForOp>(loc, index(0), depth, index(kStep), init);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(kLoop.getBody());
      Value kk = kLoop.getInductionVar();
      Value k = builder.create<arith::AddIOp>(loc, kc, kk);
      dims[plan.k] = k;
      SmallVector<Value> panelVectors;
      for (int64_t v = 0; v < vectorsPerRow; ++v)
        panelVectors.push_back(builder.create<vector::LoadOp>(
            loc, panelVectorType, panel, panelIndex(kk, columns[v])));
      SmallVector<Value> next;
      for (int64_t r = 0; r < rows; ++r) {
        if (plan.m >= 0)
          dims[plan.m] = rowIndex(r);
        if (plan.bf16) {
          Value pairs = emitBroadcastPair(k, kk, r);
          for (int64_t v = 0; v < vectorsPerRow; ++v)
            next.push_back(
                emitPairDot(pairs, panelVectors[v],
                            kLoop.getRegionIterArgs()[r * vectorsPerRow + v]));
          continue;
        }
        Value scalar =
            builder.create<memref::LoadOp>(loc, plan.a, indices(plan.aMap));
        Value broadcast =
            builder.create<vector::BroadcastOp>(loc, vectorType, scalar);
        for (int64_t v = 0; v < vectorsPerRow; ++v)
          next.push_back(builder.create<vector::FMAOp>(
              loc, broadcast, panelVectors[v],
              kLoop.getRegionIterArgs()[r * vectorsPerRow + v]));
      }
      builder.create<scf::YieldOp>(loc, next);
    }
    SmallVector<Value> results(kLoop.getResults());
    auto store = [&](Value buffer, ValueRange values) {
      for (int64_t i = 0, e = init.size(); i < e; ++i)
        builder.create<vector::MaskedStoreOp>(
            loc, buffer, cIndices[i], masks[i % vectorsPerRow], values[i]);
    };
    if (!plan.epilogue)
      return store(plan.c, results);
    // The epilogue runs once, on the accumulators of the last K panel.
    int64_t kSize = plan.sizes[plan.k];
    auto applyEpilogue = [&]() {
      SmallVector<Value> out;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < vectorsPerRow; ++v)
          out.push_back(emitEpilogueOnVector(
              builder, loc, plan, dims, results[r * vectorsPerRow + v],
              rowIndex(r), columns[v], masks[v]));
      return out;
    };
    if (kSize <= kPanelDepth)
      return store(plan.epilogueOutput, applyEpilogue());
    Value last = builder.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, kc,
        index((kSize - 1) / kPanelDepth * kPanelDepth));
    if (plan.epilogueOutput != plan.c) {
      // A rounded epilogue's results go to its own output, the earlier
      // panels' sums to C.
      auto branch = builder.create<scf::IfOp>(loc, last, /*withElse=*/true);
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&branch.getThenRegion().front());
      store(plan.epilogueOutput, applyEpilogue());
      builder.setInsertionPointToStart(&branch.getElseRegion().front());
      return store(plan.c, results);
    }
    auto branch = builder.create<scf::IfOp>(
        loc, last,
        [&](OpBuilder &b, Location l) {
          b.create<scf::YieldOp>(l, applyEpilogue());
        },
        [&](OpBuilder &b, Location l) { b.create<scf::YieldOp>(l, results); });
    store(plan.c, branch.getResults());
  }

  /// A[.., k, ..] and A[.., k + 1, ..] (bf16) at the tile's row `r`, as
  /// one 32-bit pair broadcast to every lane: `vdpbf16ps`'s other operand.
  /// One load, from A when it runs along K with unit stride, else from the
  /// row panel; two without one (a row without M).
  Value emitBroadcastPair(Value k, Value kk, int64_t r) {
    auto pairType = VectorType::get({2}, plan.panelType);
    Value pair;
    if (rowPanel) {
      pair = builder.create<vector::LoadOp>(loc, pairType, rowPanel,
                                            rowPanelIndex(kk, index(r)));
    } else if (runsAlong(plan.a, plan.aMap, plan.k)) {
      dims[plan.k] = k;
      pair = builder.create<vector::LoadOp>(loc, pairType, plan.a,
                                            indices(plan.aMap));
    } else {
      SmallVector<Value, 2> elements;
      for (int64_t i = 0; i < 2; ++i) {
        dims[plan.k] =
            i == 0 ? k : builder.create<arith::AddIOp>(loc, k, index(1));
        elements.push_back(
            builder.create<memref::LoadOp>(loc, plan.a, indices(plan.aMap)));
      }
      pair = builder.create<vector::FromElementsOp>(loc, pairType, elements);
      dims[plan.k] = k;
    }
    Type i32 = builder.getI32Type();
    Value word = builder.create<vector::ExtractOp>(
        loc,
        builder.create<vector::BitCastOp>(loc, VectorType::get({1}, i32), pair),
        0);
    Value words = builder.create<vector::BroadcastOp>(
        loc, VectorType::get({lanes}, i32), word);
    return builder.create<vector::BitCastOp>(loc, panelVectorType, words);
  }

  /// `acc` plus, in each lane, the dot product of its pair of bf16 in `a`
  /// and in `b`: `vdpbf16ps` (odd elements first, then even), or, without
  /// it (`bf16-dot` off), the same two products as float32 FMAs in the
  /// same order.
  Value emitPairDot(Value a, Value b, Value acc) {
    // A's broadcast pair goes last, where the instruction takes a memory
    // operand: LLVM folds its load into the instruction as a broadcast
    // (`{1to16}`) instead of a `vbroadcastss` of its own, which a tile one
    // vector wide (a 16-wide head's P V, dS K) needs for every
    // `vdpbf16ps` and which made it a third slower. The products are the
    // same either way round.
    if (bf16Dot)
      return builder
          .create<LLVM::CallIntrinsicOp>(
              loc, vectorType,
              builder.getStringAttr("llvm.x86.avx512bf16.dpbf16ps.512"),
              ValueRange{acc, b, a})
          .getResult(0);
    // A pair is one 32-bit word, its odd element the high half: widening
    // a bf16 to float32 is placing its bits high. On the integers, as
    // LLVM would take a bf16 vector op through a library call.
    auto wordsType = VectorType::get({lanes}, builder.getI32Type());
    auto constant = [&](uint32_t value) -> Value {
      return builder.create<arith::ConstantOp>(
          loc,
          DenseElementsAttr::get(wordsType, builder.getI32IntegerAttr(
                                                static_cast<int32_t>(value))));
    };
    auto widen = [&](Value pairs, bool odd) -> Value {
      Value words = builder.create<vector::BitCastOp>(loc, wordsType, pairs);
      Value high =
          odd ? builder.create<arith::AndIOp>(loc, words, constant(0xffff0000u))
                    .getResult()
              : builder.create<arith::ShLIOp>(loc, words, constant(16))
                    .getResult();
      return builder.create<vector::BitCastOp>(loc, vectorType, high);
    };
    for (bool odd : {true, false})
      acc =
          builder.create<vector::FMAOp>(loc, widen(a, odd), widen(b, odd), acc);
    return acc;
  }

  /// Whether the tiles prefetch the next tile's C: not when all of C fits
  /// in the cache next to the core (an attention block's scores), where
  /// the prefetches' clamped addresses would cost more than the misses
  /// they hide.
  bool prefetchesC() const {
    auto type = cast<MemRefType>(plan.c.getType());
    return !type.hasStaticShape() ||
           type.getNumElements() * type.getElementTypeBitWidth() / 8 >
               kCacheResidentBytes;
  }

  /// Prefetches (for writing) the part of C of the tile that follows the one
  /// at (`m0`, `n0`) in this thread's order: the next columns, or the next
  /// row block from the first column. Its K loop then hides the misses
  /// that would otherwise stall the next tile's first loads and stores of
  /// C. Indices past C's edges are clamped to the last row and column.
  void emitPrefetchNextTile(Value m0, Value n0) {
    int64_t tile = lanes * vectorsPerRow;
    int64_t mSize = plan.sizes[plan.m], nSize = plan.sizes[plan.n];
    Value nextColumn = builder.create<arith::AddIOp>(loc, n0, index(tile));
    Value wraps = builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge,
                                                nextColumn, index(npad));
    Value row = builder.create<arith::SelectOp>(
        loc, wraps, builder.create<arith::AddIOp>(loc, m0, index(rowsPerBlock)),
        m0);
    Value column =
        builder.create<arith::SelectOp>(loc, wraps, index(0), nextColumn);
    for (int64_t r = 0; r < rowsPerBlock; ++r) {
      dims[plan.m] = builder.create<arith::MinSIOp>(
          loc, builder.create<arith::AddIOp>(loc, row, index(r)),
          index(mSize - 1));
      for (int64_t v = 0; v < vectorsPerRow; ++v) {
        dims[plan.n] = builder.create<arith::MinSIOp>(
            loc, builder.create<arith::AddIOp>(loc, column, index(v * lanes)),
            index(nSize - 1));
        builder.create<memref::PrefetchOp>(loc, plan.c, indices(plan.cMap),
                                           /*isWrite=*/true,
                                           /*localityHint=*/3,
                                           /*isDataCache=*/true);
      }
    }
  }

  ContractionPlan plan;
  Value panel;
  int64_t npad, lanes, vectorsPerRow, rowsPerBlock;
  /// The k that one step of the kernel's K loop multiplies: 2 for bf16.
  int64_t kStep;
  /// Whether the target has `vdpbf16ps` (AVX512-BF16).
  bool bf16Dot;
  /// The current row block's rows of A (packsRows()), or null.
  Value rowPanel;
  OpBuilder builder;
  Location loc;
  SmallVector<Value> dims;
  /// The accumulators' vectors (C's element type), and the panel's.
  VectorType vectorType, panelVectorType;
};

struct TfcVectorizeContractionsPass
    : public mlir::tfc::impl::TfcVectorizeContractionsBase<
          TfcVectorizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<ContractionPlan> plans;
    module.walk([&](linalg::LinalgOp op) {
      if (auto plan = planContraction(op))
        plans.push_back(*plan);
    });
    // One packing panel per element type, as large as the largest use;
    // contractions run one after another, so they share it.
    llvm::DenseMap<Type, int64_t> panelSizes;
    // Inside a parallel loop, one panel per element type on the stack of
    // each iteration, as large as the largest use in the loop.
    llvm::DenseMap<std::pair<Operation *, Type>, int64_t> loopPanelSizes;
    for (ContractionPlan &plan : plans) {
      if (plan.parallelLoop) {
        int64_t &size = loopPanelSizes[{plan.parallelLoop, plan.panelType}];
        size = std::max(size, plan.panelElements);
        continue;
      }
      if (plan.parallelOuter > 0)
        continue;
      int64_t &size = panelSizes[plan.panelType];
      size = std::max(size, plan.panelElements);
    }
    llvm::DenseMap<std::pair<Operation *, Type>, Value> loopPanels;
    for (auto [key, size] : loopPanelSizes) {
      Block &body = key.first->getRegion(0).front();
      OpBuilder at(&body, body.begin());
      loopPanels[key] = at.create<memref::AllocaOp>(
          key.first->getLoc(), MemRefType::get({size}, key.second),
          at.getI64IntegerAttr(64));
    }
    llvm::DenseMap<Type, memref::GlobalOp> panels;
    OpBuilder builder(&getContext());
    builder.setInsertionPointToStart(module.getBody());
    for (auto [type, size] : panelSizes) {
      auto memrefType = MemRefType::get({size}, type);
      std::string name =
          type.isBF16()
              ? std::string("__tfc_panel_bf16")
              : "__tfc_panel_f" + std::to_string(type.getIntOrFloatBitWidth());
      panels[type] = builder.create<memref::GlobalOp>(
          module.getLoc(), name, builder.getStringAttr("private"), memrefType,
          builder.getUnitAttr(), /*constant=*/false,
          builder.getI64IntegerAttr(64));
    }
    for (ContractionPlan &plan : plans) {
      // Views of the epilogue's inputs may come between the two (only
      // operations without memory effects): the kernel goes at the
      // epilogue's place.
      if (plan.epilogue)
        plan.op->moveBefore(plan.epilogue);
      Value panel;
      if (plan.parallelLoop) {
        panel = loopPanels.lookup({plan.parallelLoop, plan.panelType});
      } else if (plan.parallelOuter == 0) {
        memref::GlobalOp global = panels[plan.panelType];
        OpBuilder at(plan.op);
        panel = at.create<memref::GetGlobalOp>(
            plan.op.getLoc(), global.getType(), global.getSymName());
      }
      ContractionEmitter(plan, panel, bf16Dot).emit();
    }
    // The executable checks at start-up that its CPU has vdpbf16ps.
    if (bf16Dot && llvm::any_of(plans, [](const ContractionPlan &plan) {
          return plan.bf16;
        }))
      setManifestRecord(module, ::tfc::manifest::kCpuFeatures,
                        ::tfc::manifest::kCpuFeatureAvx512Bf16);
  }
};
} // namespace
