//===- ParallelColumnSums.cpp - The tfc-parallel-column-sums pass ---------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs a sum over rows (a bias gradient, `db[c] = sum_{b,s} dy[b, s, c]`,
/// or a LayerNorm's scale and shift gradients) on threads, by blocks of
/// columns. Such an op has its reductions outermost and the column loop
/// innermost (tfc-interchange-loops puts it there, so that it vectorises
/// along contiguous memory); with no parallel loop outside its reductions,
/// tfc-parallel-outer-loops would leave it on one thread, which then reads
/// the whole `[B * S, N]` gradient while the others wait. Here the column
/// loop is split into blocks, and the loop over blocks goes outermost as
/// an `scf.parallel`:
///
///   scf.parallel %c0 = 0 to N step C              // blocks of columns
///     linalg.reduce ins(dy[:, :, c0 : c0 + C])    // the same op on the
///                   outs(db[c0 : c0 + C])         //   block's columns
///
/// Each column still adds its rows in the same order, so the results are
/// bit-identical to the op run whole, on any number of threads.
///
/// An op on buffers qualifies when it is outside every parallel loop, its
/// loop ranges are constants, its innermost loop is parallel and every
/// other loop a reduction, every operand is either indexed by that loop
/// through its last dimension or not at all (a per-row scale read by every
/// column), its body reads no loop index, and it has enough elements to
/// pay for waking the threads. Every other op is left alone.
///
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCPARALLELCOLUMNSUMS
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The narrowest block of columns where the column count allows: 64 f32
/// elements are four cache lines of each row. Halving it until it divides
/// the columns stops at a quarter of it, one cache line.
constexpr int64_t kMinBlockBytes = 256;
/// Blocks enough to share between threads; wider columns make wider blocks.
constexpr int64_t kBlocks = 8;

/// Whether `map` indexes loop `loop` through its last result; sets
/// `usesLoop` to whether it indexes it at all.
bool indexesLast(AffineMap map, unsigned loop, bool &usesLoop) {
  usesLoop = map.isFunctionOfDim(loop);
  if (!usesLoop)
    return true;
  if (map.getNumResults() == 0)
    return false;
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!last || last.getPosition() != loop)
    return false;
  // Only the last result may use the loop.
  for (AffineExpr result : map.getResults().drop_back())
    if (result.isFunctionOfDim(loop))
      return false;
  return true;
}

/// How one sum over rows is split.
struct ColumnPlan {
  /// Columns of the op, and columns per block.
  int64_t columns = 0, block = 0;
  /// The buffers that run along the columns, each taken by block.
  SmallVector<Value> columnOperands;
};

/// How to split `op` by blocks of columns, or nullopt when it is not a sum
/// over rows that this pass splits.
std::optional<ColumnPlan> planColumns(linalg::LinalgOp op, int64_t minWork) {
  if (!op.hasPureBufferSemantics() || op->getNumResults() != 0 ||
      op->getParentOfType<scf::ParallelOp>() ||
      op->getParentOfType<scf::ForallOp>())
    return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (loops < 2)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d + 1 < loops; ++d)
    if (iterators[d] != utils::IteratorType::reduction)
      return std::nullopt;
  unsigned column = loops - 1;
  if (iterators[column] != utils::IteratorType::parallel)
    return std::nullopt;
  if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t work = 1;
  for (int64_t range : ranges) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    work *= range;
  }
  if (work < minWork)
    return std::nullopt;

  // Every operand runs along the columns in its last dimension or not at
  // all, and a buffer read both ways would be split for one use only.
  llvm::SmallDenseMap<Value, bool> split;
  ColumnPlan plan;
  Type elementType;
  for (OpOperand &operand : op->getOpOperands()) {
    bool usesColumn = false;
    if (!indexesLast(op.getMatchingIndexingMap(&operand), column, usesColumn))
      return std::nullopt;
    if (usesColumn && !isa<MemRefType>(operand.get().getType()))
      return std::nullopt;
    if (!usesColumn && op.isDpsInit(&operand))
      return std::nullopt;
    auto [it, inserted] = split.try_emplace(operand.get(), usesColumn);
    if (!inserted && it->second != usesColumn)
      return std::nullopt;
    if (!usesColumn || !inserted)
      continue;
    plan.columnOperands.push_back(operand.get());
    if (!elementType)
      elementType = cast<MemRefType>(operand.get().getType()).getElementType();
  }
  if (!elementType || !elementType.isIntOrFloat())
    return std::nullopt;

  int64_t columns = ranges[column];
  int64_t elementBytes = std::max<int64_t>(
      1, static_cast<int64_t>(elementType.getIntOrFloatBitWidth()) / 8);
  int64_t block = std::max(kMinBlockBytes / elementBytes, columns / kBlocks);
  while (block > 1 && columns % block != 0)
    block /= 2;
  if (block * elementBytes < kMinBlockBytes / 4 || columns / block < 2)
    return std::nullopt;
  plan.columns = columns;
  plan.block = block;
  return plan;
}

/// Rewrites `op` as an `scf.parallel` over blocks of `plan.block` columns,
/// each running `op` on the block's columns of its column operands.
void splitColumns(linalg::LinalgOp op, const ColumnPlan &plan) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value lower = builder.create<arith::ConstantIndexOp>(loc, 0);
  Value upper = builder.create<arith::ConstantIndexOp>(loc, plan.columns);
  Value step = builder.create<arith::ConstantIndexOp>(loc, plan.block);
  auto loop = builder.create<scf::ParallelOp>(loc, lower, upper, step);
  builder.setInsertionPointToStart(loop.getBody());
  Value first = loop.getInductionVars().front();

  IRMapping mapping;
  for (Value operand : plan.columnOperands) {
    auto type = cast<MemRefType>(operand.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes;
    for (int64_t size : type.getShape())
      sizes.push_back(builder.getIndexAttr(size));
    SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
    offsets.back() = first;
    sizes.back() = builder.getIndexAttr(plan.block);
    mapping.map(operand, builder.create<memref::SubViewOp>(
                             loc, operand, offsets, sizes, strides));
  }
  builder.clone(*op, mapping);
  op->erase();
}

struct TfcParallelColumnSumsPass
    : public tfc::impl::TfcParallelColumnSumsBase<TfcParallelColumnSumsPass> {
  using TfcParallelColumnSumsBase::TfcParallelColumnSumsBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, ColumnPlan>> sums;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<ColumnPlan> plan = planColumns(op, minWork))
        sums.push_back({op, std::move(*plan)});
    });
    for (auto &[op, plan] : sums)
      splitColumns(op, plan);
    splitOps += sums.size();
  }
};

} // namespace
