//===- VectorizeShortRows.cpp - The tfc-vectorize-short-rows pass ---------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes an element-wise linalg op on buffers whose innermost loop is a
/// short row as vector operations along that row. Blocked attention keeps
/// per-row state next to `[T, Dh]` blocks: the running output is rescaled
/// row by row, `acc[t, e] *= c[t]`, and divided by the row sums at the
/// end. `c` does not run along `e`, so tfc-collapse-dims cannot merge the
/// loops, and the innermost loop has `Dh` (16, 32) iterations. LLVM unrolls
/// such a loop completely before vectorising and then vectorises the loop
/// around it, whose accesses are `Dh` elements apart: a gather and a
/// scatter per vector. Here the row becomes whole vectors instead:
///
///   scf.for %t = 0 to T                              // outer loops
///     scf.for %e = 0 to Dh step 16                   // the row, by vectors
///       %a = vector.load %acc[%t, %e] : vector<16xf32>
///       %c = vector.broadcast (memref.load %c[%t])   // not along the row
///       vector.store (%a * %c), %acc[%t, %e]
///
/// The gradient's `D[t] = sum_e dO[t, e] * O[t, e]` is the same loop
/// nest with the row reduced: its vectors accumulate along the row in
/// registers and are summed across lanes once per row:
///
///   %v = scf.for %e = 0 to Dh step 16 iter_args(%a = zeros) {
///     scf.yield %a + dO[t, e:e+16] * O[t, e:e+16]
///   }
///   D[t] = vector.reduction <add>, %v, D[t]
///
/// An op qualifies when its loops have constant ranges, all parallel but
/// for the innermost one, which may be a reduction (`out = out + f(ins)`,
/// or `*`, `maximumf`, `minimumf`, with the output read only there, and
/// not along the row), its innermost loop has at most kShortRowElements
/// iterations (any number when the body rounds to a narrower float) and a
/// multiple of the vector's lanes (as many as fill a register with the
/// widest operand), every operand is a buffer of integers (8 bits or more)
/// or floats read through a projected permutation that either ends in the
/// innermost loop, over a unit stride, or does not use it (an input only:
/// broadcast), and its body is scalar arith and math without loop indices.
/// The outer loops are an `scf.parallel` when the op is outside every
/// parallel loop and has enough elements for threads, else a nest of
/// `scf.for`. Longer rows are left to LLVM, which vectorises them along
/// the row, but for roundings: LLVM 19 vectorises those at most 8 lanes
/// wide (4 in practice, with shuffles to join them), and a loop of them
/// often not at all.
///
/// tfc-collapse-dims makes most roundings one loop over contiguous
/// buffers, so an all-parallel rounding qualifies with a single loop too.
/// Outside parallel loops, with enough elements, its threads take chunks
/// of the row:
///
///   scf.parallel %c = 0 to N / chunk
///     scf.for %e = %c * chunk to (%c + 1) * chunk step 16
///       vector.store (truncf (vector.load %x[%e])), %x16[%e]
///
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCVECTORIZESHORTROWS
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The longest row written as vectors here: LLVM unrolls shorter loops
/// whole and then gathers across them; longer ones it vectorises itself.
constexpr int64_t kShortRowElements = 64;
/// Elements below which the outer loops stay on one thread (the default
/// of tfc-parallel-outer-loops' `min-work`, which counts any loop nest with
/// vector code as enough work).
constexpr int64_t kParallelElements = 8192;
/// Elements of a one-loop rounding that one thread rounds at a time (or
/// the largest power-of-two part of it that divides the loop).
constexpr int64_t kRoundingChunkElements = 4096;

/// How one operand is read along the row.
enum class RowAccess { Vector, Broadcast };

/// How one op runs along its row.
struct RowPlan {
  /// Elements per vector.
  int64_t lanes = 0;
  /// How each operand (inputs, then outputs) is read.
  SmallVector<RowAccess> access;
  /// For a row that is reduced: the op that combines the output with the
  /// body's value, and the matching kind of vector.reduction.
  Operation *combiner = nullptr;
  vector::CombiningKind kind = vector::CombiningKind::ADD;
};

/// For an op whose innermost loop is its only reduction: the body's last
/// op when it combines the output (used nowhere else) with a value computed
/// from the inputs alone, by a float add, mul, maximumf or minimumf; null
/// otherwise.
Operation *rowCombiner(linalg::GenericOp op, vector::CombiningKind &kind) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return nullptr;
  Block &body = *op.getBlock();
  Operation *combiner = body.getTerminator()->getOperand(0).getDefiningOp();
  BlockArgument out = body.getArguments().back();
  if (!combiner || combiner->getBlock() != &body ||
      combiner->getNextNode() != body.getTerminator() || !out.hasOneUse() ||
      out.getUses().begin()->getOwner() != combiner ||
      combiner->getOperand(0) == combiner->getOperand(1))
    return nullptr;
  if (isa<arith::AddFOp>(combiner))
    kind = vector::CombiningKind::ADD;
  else if (isa<arith::MulFOp>(combiner))
    kind = vector::CombiningKind::MUL;
  else if (isa<arith::MaximumFOp>(combiner))
    kind = vector::CombiningKind::MAXIMUMF;
  else if (isa<arith::MinimumFOp>(combiner))
    kind = vector::CombiningKind::MINIMUMF;
  else
    return nullptr;
  return combiner;
}

/// The identity of `kind`: where the vectors of a reduced row start.
double identityOf(vector::CombiningKind kind) {
  switch (kind) {
  case vector::CombiningKind::MUL:
    return 1.0;
  case vector::CombiningKind::MAXIMUMF:
    return -std::numeric_limits<double>::infinity();
  case vector::CombiningKind::MINIMUMF:
    return std::numeric_limits<double>::infinity();
  default:
    return 0.0;
  }
}

/// Whether `op`'s body rounds a float to a narrower one (a bf16 copy of a
/// contraction operand). LLVM 19 vectorises such a rounding at most 8
/// lanes wide, and a loop of them often not at all, so its rows are
/// written as vectors here at any length.
bool roundsToNarrowerFloat(linalg::GenericOp op) {
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<arith::TruncFOp>(inner);
  });
}

/// How `op` runs along its row, or nothing when it does not qualify (see
/// the file comment).
std::optional<RowPlan> planRow(linalg::GenericOp op) {
  // A one-loop op is left to LLVM, which vectorises it, but for a
  // rounding: tfc-collapse-dims has made most of those one loop long.
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      (op.getNumLoops() == 1 &&
       (!roundsToNarrowerFloat(op) || !isAllParallel(op))) ||
      op.getNumDpsInits() == 0 || op.hasIndexSemantics() ||
      !isVectorizableEpilogueBody(*op.getBlock()))
    return std::nullopt;
  RowPlan plan;
  if (!isAllParallel(op)) {
    plan.combiner = rowCombiner(op, plan.kind);
    if (!plan.combiner)
      return std::nullopt;
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  unsigned row = op.getNumLoops() - 1;
  if (ranges[row] > kShortRowElements && !roundsToNarrowerFloat(op))
    return std::nullopt;
  // A vector per row step holds as many elements as fill a register of the
  // widest operand: a rounding to bf16 reads 16 floats per step, not 32.
  int64_t width = 0;
  SmallVector<RowAccess> &access = plan.access;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isIntOrFloat() ||
        type.getElementType().getIntOrFloatBitWidth() < 8)
      return std::nullopt;
    width =
        std::max<int64_t>(width, type.getElementType().getIntOrFloatBitWidth());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return std::nullopt;
    if (!map.isFunctionOfDim(row)) {
      // An output that does not run along the row is the reduction's.
      if (op.isDpsInit(&operand) && !plan.combiner)
        return std::nullopt;
      access.push_back(RowAccess::Broadcast);
      continue;
    }
    if (op.isDpsInit(&operand) && plan.combiner)
      return std::nullopt;
    if (cast<AffineDimExpr>(map.getResults().back()).getPosition() != row ||
        !hasUnitInnerStride(type))
      return std::nullopt;
    access.push_back(RowAccess::Vector);
  }
  if (kVectorBits % width != 0 || ranges[row] % (kVectorBits / width) != 0)
    return std::nullopt;
  plan.lanes = kVectorBits / width;
  return plan;
}

/// Emits the vector form of `op` in its place and erases it.
void vectorizeRow(linalg::GenericOp op, const RowPlan &plan) {
  int64_t lanes = plan.lanes;
  ArrayRef<RowAccess> access = plan.access;
  OpBuilder builder(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned row = op.getNumLoops() - 1;
  auto index = [&](int64_t v) -> Value {
    return builder.create<arith::ConstantIndexOp>(loc, v);
  };
  int64_t elements = 1;
  for (int64_t range : ranges)
    elements *= range;
  bool onThreads = !op->getParentOfType<scf::ParallelOp>() &&
                   !op->getParentOfType<scf::ForallOp>() &&
                   elements >= kParallelElements;
  SmallVector<Value> dims(op.getNumLoops());
  // The row loop's bounds: the whole row, or, for a one-loop op on
  // threads, one chunk of it.
  Value rowBegin = index(0), rowEnd = index(ranges[row]);
  if (onThreads && row == 0) {
    int64_t chunk = kRoundingChunkElements;
    while (ranges[row] % chunk != 0)
      chunk /= 2;
    auto loop = builder.create<scf::ParallelOp>(
        loc, ValueRange{index(0)}, ValueRange{index(ranges[row] / chunk)},
        ValueRange{index(1)});
    builder.setInsertionPointToStart(loop.getBody());
    rowBegin = builder.create<arith::MulIOp>(loc, loop.getInductionVars()[0],
                                             index(chunk));
    rowEnd = builder.create<arith::AddIOp>(loc, rowBegin, index(chunk));
  } else if (onThreads) {
    SmallVector<Value> lower, upper, steps;
    for (unsigned d = 0; d < row; ++d) {
      lower.push_back(index(0));
      upper.push_back(index(ranges[d]));
      steps.push_back(index(1));
    }
    auto loop = builder.create<scf::ParallelOp>(loc, lower, upper, steps);
    builder.setInsertionPointToStart(loop.getBody());
    for (unsigned d = 0; d < row; ++d)
      dims[d] = loop.getInductionVars()[d];
  } else {
    for (unsigned d = 0; d < row; ++d) {
      auto loop =
          builder.create<scf::ForOp>(loc, index(0), index(ranges[d]), index(1));
      builder.setInsertionPointToStart(loop.getBody());
      dims[d] = loop.getInductionVar();
    }
  }
  auto vectorOf = [&](Type type) { return VectorType::get({lanes}, type); };
  Block &body = *op.getBlock();
  BlockArgument out = body.getArguments().back();
  // A reduced row carries one vector of partial results through its loop,
  // starting from the combiner's identity.
  SmallVector<Value> carried;
  if (plan.combiner) {
    Type element = out.getType();
    carried.push_back(builder.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(
                 vectorOf(element),
                 builder.getFloatAttr(element, identityOf(plan.kind)))));
  }
  auto rowLoop =
      builder.create<scf::ForOp>(loc, rowBegin, rowEnd, index(lanes), carried);
  builder.setInsertionPointToStart(rowLoop.getBody());
  dims[row] = rowLoop.getInductionVar();

  auto indicesOf = [&](OpOperand &operand) {
    SmallVector<Value> at;
    for (AffineExpr expr : op.getMatchingIndexingMap(&operand).getResults())
      at.push_back(dims[cast<AffineDimExpr>(expr).getPosition()]);
    return at;
  };
  IRMapping mapping;
  if (plan.combiner)
    mapping.map(out, rowLoop.getRegionIterArgs()[0]);
  for (auto [i, operand] : llvm::enumerate(op->getOpOperands())) {
    BlockArgument argument = body.getArgument(i);
    // An output's value is read only where the body uses it (a reduction's
    // once per row, after the row).
    if (op.isDpsInit(&operand) && (argument.use_empty() || plan.combiner))
      continue;
    Type element = cast<MemRefType>(operand.get().getType()).getElementType();
    Value value =
        access[i] == RowAccess::Vector
            ? builder
                  .create<vector::LoadOp>(loc, vectorOf(element), operand.get(),
                                          indicesOf(operand))
                  .getResult()
            : builder
                  .create<vector::BroadcastOp>(
                      loc, vectorOf(element),
                      builder.create<memref::LoadOp>(loc, operand.get(),
                                                     indicesOf(operand)))
                  .getResult();
    mapping.map(argument, value);
  }
  SmallVector<Value> results =
      cloneBodyOnVectors(builder, loc, body, lanes, mapping);
  if (plan.combiner) {
    // The lanes' partial results, then across the lanes into the output.
    builder.create<scf::YieldOp>(loc, results[0]);
    builder.setInsertionPointAfter(rowLoop);
    OpOperand *init = op.getDpsInitOperand(0);
    Value previous =
        builder.create<memref::LoadOp>(loc, init->get(), indicesOf(*init));
    auto combiner = cast<arith::ArithFastMathInterface>(plan.combiner);
    Value total = builder.create<vector::ReductionOp>(
        loc, plan.kind, rowLoop.getResult(0), previous,
        combiner.getFastMathFlagsAttr().getValue());
    builder.create<memref::StoreOp>(loc, total, init->get(), indicesOf(*init));
    op->erase();
    return;
  }
  for (auto [i, result] : llvm::enumerate(results)) {
    OpOperand *init = op.getDpsInitOperand(i);
    builder.create<vector::StoreOp>(loc, result, init->get(), indicesOf(*init));
  }
  op->erase();
}

struct TfcVectorizeShortRowsPass
    : public tfc::impl::TfcVectorizeShortRowsBase<TfcVectorizeShortRowsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, RowPlan>> rows;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<RowPlan> plan = planRow(op))
        rows.push_back({op, std::move(*plan)});
    });
    for (auto &[op, plan] : rows)
      vectorizeRow(op, plan);
    vectorizedOps += rows.size();
  }
};

} // namespace
