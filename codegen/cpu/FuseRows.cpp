//===- FuseRows.cpp - The tfc-fuse-rows pass ------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Fuses the row-wise work of a LayerNorm, a softmax cross-entropy or their
/// gradients into one pass over the rows. These lower to several linalg ops
/// over the same rows (a row sum, a per-row scale, a normalisation, a second
/// row sum...), and each op would otherwise stream the whole `[rows, width]`
/// tensor through memory before the next one starts. Here a run of such ops
/// becomes one `scf.parallel` over tiles of rows whose body runs every op on
/// its tile:
///
///   scf.parallel %r = 0 to rows step tile {
///     op1 on rows [r, r + tile)      // e.g. the row sums
///     op2 on rows [r, r + tile)      // reads op1's rows, still in cache
///     ...
///   }
///
/// The tile is the number of rows whose data fit in the L1 cache, so every
/// op after the first reads what the one before wrote from cache. Nothing
/// changes inside an op: each element is computed by the same operations in
/// the same order, so results are bit-identical to the unfused ones.
///
/// An op joins the run when, on buffers with static shapes,
///   - its first loop is parallel and has the run's row count;
///   - each of its buffers is either indexed by that loop in its first
///     dimension and nowhere else (a row-indexed buffer), or is an input
///     that does not depend on it (a whole buffer, such as a scale vector);
///   - its body does not read the row index (`linalg.index 0`);
///   - it is not a contraction, which the contraction kernels take, nor
///     the epilogue that a contraction's kernel applies to its
///     accumulators;
/// and the run stays row-local: a buffer written by an op of the run is
/// accessed by every op of the run through the same row-indexed view, so
/// that row r of an op depends only on row r of the ops before it. Ops with
/// no memory effects and allocations may sit between the ops of a run; any
/// other op ends it. A run needs at least two ops that are not fills, and
/// enough rows for `min-tiles` tiles, which the threads share. Runs are
/// looked for in every block, loop bodies included (the online softmax in
/// the block loops of blocked attention), except the bodies of parallel
/// loops.
///
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ContractionPlan.h"
#include "codegen/cpu/Passes.h"

#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFUSEROWS
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// How an op of a run accesses one of its buffers.
enum class Access { Row, Whole };

/// One buffer operand of a candidate op.
struct BufferUse {
  Value value;
  Value root;
  Access access;
  bool written;
};

/// The allocation or argument that `value` is a view of. Any op that makes
/// a memref out of another one (subview, reshape, transpose, cast...) counts
/// as a view of its first memref operand.
Value rootOf(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    auto source = llvm::find_if(op->getOperands(), [](Value operand) {
      return isa<MemRefType>(operand.getType());
    });
    if (source == op->getOperands().end())
      break;
    value = *source;
  }
  return value;
}

/// True when `op` is a contraction (`out + a * b` over a reduction), which
/// tfc-vectorize-contractions lowers on its own.
bool isContraction(linalg::LinalgOp op) {
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         op.getNumReductionLoops() > 0 && isMulAddBody(op);
}

/// The buffer uses of `op` when it may join a run over `rows` rows (its
/// first loop); nothing otherwise.
std::optional<SmallVector<BufferUse>> candidateUses(linalg::LinalgOp op,
                                                    int64_t &rows) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getIteratorTypesArray()[0] != utils::IteratorType::parallel ||
      isContraction(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  rows = ranges[0];
  bool readsRowIndex = false;
  op->walk([&](linalg::IndexOp index) {
    if (index.getDim() == 0)
      readsRowIndex = true;
  });
  if (readsRowIndex)
    return std::nullopt;

  SmallVector<BufferUse> uses;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type) {
      if (isa<ShapedType>(operand.get().getType()))
        return std::nullopt;
      continue; // A scalar (a fill's value).
    }
    if (!type.hasStaticShape())
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool written = op.isDpsInit(&operand);
    if (!map.isFunctionOfDim(0)) {
      if (written)
        return std::nullopt;
      uses.push_back(
          {operand.get(), rootOf(operand.get()), Access::Whole, false});
      continue;
    }
    // Row-indexed: d0 is the first result and appears nowhere else.
    auto first = dyn_cast<AffineDimExpr>(map.getResult(0));
    if (!first || first.getPosition() != 0 || type.getDimSize(0) != rows)
      return std::nullopt;
    for (AffineExpr result : map.getResults().drop_front())
      if (result.isFunctionOfDim(0))
        return std::nullopt;
    uses.push_back(
        {operand.get(), rootOf(operand.get()), Access::Row, written});
  }
  return uses;
}

/// A run of ops over the same rows, being collected.
struct Run {
  int64_t rows = 0;
  SmallVector<linalg::LinalgOp> ops;
  /// Per root buffer: the row-indexed view through which the run writes it.
  llvm::DenseMap<Value, Value> writtenViews;
  /// Per root buffer: every value through which the run reads it, each
  /// with how (a row or the whole buffer).
  llvm::DenseMap<Value, SmallVector<std::pair<Value, Access>>> reads;

  /// Adds `op` with `uses` when the run stays row-local; false otherwise.
  bool tryAdd(linalg::LinalgOp op, int64_t opRows, ArrayRef<BufferUse> uses) {
    if (!ops.empty() && opRows != rows)
      return false;
    for (const BufferUse &use : uses) {
      auto written = writtenViews.find(use.root);
      if (written != writtenViews.end() &&
          (use.access != Access::Row || written->second != use.value))
        return false;
      if (use.written) {
        auto read = reads.find(use.root);
        if (read != reads.end())
          for (auto [value, access] : read->second)
            if (value != use.value || access != Access::Row)
              return false;
        // An op that writes a buffer reaches it through one view only.
        for (const BufferUse &other : uses)
          if (&other != &use && other.root == use.root &&
              other.value != use.value)
            return false;
      }
    }
    rows = opRows;
    ops.push_back(op);
    for (const BufferUse &use : uses) {
      if (use.written)
        writtenViews.try_emplace(use.root, use.value);
      else
        reads[use.root].push_back({use.value, use.access});
    }
    return true;
  }

  void clear() {
    ops.clear();
    writtenViews.clear();
    reads.clear();
    rows = 0;
  }
};

/// Bytes of one row of every row-indexed buffer the run touches.
int64_t bytesPerRow(const Run &run) {
  llvm::DenseSet<Value> seen;
  int64_t bytes = 0;
  for (linalg::LinalgOp op : run.ops)
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type || !seen.insert(operand.get()).second ||
          !op.getMatchingIndexingMap(&operand).isFunctionOfDim(0))
        continue;
      bytes += type.getNumElements() / type.getDimSize(0) *
               type.getElementTypeBitWidth() / 8;
    }
  return bytes;
}

struct TfcFuseRowsPass : public tfc::impl::TfcFuseRowsBase<TfcFuseRowsPass> {
  using TfcFuseRowsBase::TfcFuseRowsBase;

  /// The rows per tile of `run`: the largest divisor of its row count whose
  /// rows fit in `tileBytes` and that leaves `minTiles` tiles for the
  /// threads to share.
  int64_t tileRows(const Run &run) {
    int64_t perRow = std::max<int64_t>(1, bytesPerRow(run));
    int64_t tile = std::max<int64_t>(1, tileBytes / perRow);
    tile = std::min(tile, std::max<int64_t>(1, run.rows / minTiles));
    while (run.rows % tile)
      --tile;
    return tile;
  }

  /// Replaces the ops of `run` by one loop over its row tiles.
  void fuse(Run &run) {
    linalg::LinalgOp last = run.ops.back();
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    Location loc = last->getLoc();
    int64_t tile = tileRows(run);
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value upper = b.create<arith::ConstantIndexOp>(loc, run.rows);
    Value step = b.create<arith::ConstantIndexOp>(loc, tile);
    auto loop = b.create<scf::ParallelOp>(loc, ValueRange{zero},
                                          ValueRange{upper}, ValueRange{step});
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value row = loop.getInductionVars()[0];
    IRMapping mapping;
    llvm::DenseMap<Value, Value> tiles;
    for (linalg::LinalgOp op : run.ops) {
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        if (!type || !op.getMatchingIndexingMap(&operand).isFunctionOfDim(0) ||
            tiles.count(operand.get()))
          continue;
        SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes,
            strides(type.getRank(), b.getIndexAttr(1));
        offsets[0] = row;
        for (int64_t extent : type.getShape())
          sizes.push_back(b.getIndexAttr(extent));
        sizes[0] = b.getIndexAttr(tile);
        Value view = b.create<memref::SubViewOp>(loc, operand.get(), offsets,
                                                 sizes, strides);
        tiles[operand.get()] = view;
        mapping.map(operand.get(), view);
      }
      b.clone(*op, mapping);
    }
    for (linalg::LinalgOp op : run.ops)
      op->erase();
    ++fusedRuns;
  }

  void runOnBlock(Block &block) {
    SmallVector<Run> runs;
    Run run;
    auto close = [&]() {
      // A fill whose buffer no other op of the run uses initialises what
      // ops after the run use (such as the zero accumulator of a
      // contraction, which the contraction kernel folds into its first
      // panel): it stays where it is.
      llvm::erase_if(run.ops, [&](linalg::LinalgOp op) {
        auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
        if (!fill)
          return false;
        Value root = rootOf(fill.getOutputs()[0]);
        return llvm::none_of(run.ops, [&](linalg::LinalgOp other) {
          return other != op &&
                 llvm::any_of(other->getOperands(), [&](Value operand) {
                   return isa<MemRefType>(operand.getType()) &&
                          rootOf(operand) == root;
                 });
        });
      });
      int64_t work = llvm::count_if(run.ops, [](linalg::LinalgOp op) {
        return !isa<linalg::FillOp>(op.getOperation());
      });
      // Fewer rows than tiles would run on fewer threads than the ops did.
      if (work >= 2 && run.rows >= minTiles)
        runs.push_back(run);
      run.clear();
    };
    // A contraction's epilogue that its kernel applies to the accumulators
    // stays with it: taken into a run, it would be a pass of its own over
    // the stored C (attention's scaled and masked scores, a bias and a
    // residual before a LayerNorm).
    llvm::SmallPtrSet<Operation *, 4> epilogues;
    for (Operation &op : block)
      if (auto contraction = dyn_cast<linalg::LinalgOp>(&op))
        if (isContraction(contraction) && contraction->hasAttr(kEpilogueAttr))
          if (std::optional<ContractionPlan> plan =
                  planContraction(contraction);
              plan && plan->epilogue)
            epilogues.insert(plan->epilogue);
    for (Operation &op : block) {
      if (epilogues.contains(&op)) {
        close();
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op)) {
        int64_t rows = 0;
        std::optional<SmallVector<BufferUse>> uses =
            candidateUses(linalgOp, rows);
        if (uses && run.tryAdd(linalgOp, rows, *uses))
          continue;
        close();
        if (uses)
          run.tryAdd(linalgOp, rows, *uses);
        continue;
      }
      // Views, constants and allocations (which the loop, inserted after
      // the run's last op, still follows) do not end a run.
      if ((isMemoryEffectFree(&op) && op.getNumRegions() == 0) ||
          isa<memref::AllocOp>(op))
        continue;
      close();
    }
    close();
    for (Run &fused : runs)
      fuse(fused);
  }

  void runOnOperation() override {
    // Every block, the bodies of loops included (the block loops of blocked
    // attention), except those of parallel loops, whose ops the threads
    // already split.
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      if (!block->getParentOp()->getParentOfType<scf::ParallelOp>() &&
          !isa<scf::ParallelOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      runOnBlock(*block);
  }
};

} // namespace
