//===- CollapseDims.cpp - The tfc-collapse-dims pass ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Merges the trailing loops of an element-wise linalg op on buffers into
/// one loop when every operand is contiguous over them. Attention's tensors
/// end in the head dimension (`[B, S, H, Dh]`, Performer's chunk states
/// `[B, C, H, M, Dh]`), so an element-wise op over them has an innermost loop
/// of `Dh` (32) iterations. LLVM unrolls such a short loop completely before
/// vectorising, and then vectorises the loop around it, whose accesses are
/// `Dh` elements apart: gathers and scatters, one element at a time. Over
/// one merged loop of `H * M * Dh` contiguous elements it emits plain
/// vector loads and stores.
///
///   [1, 8, 256, 32] (strides 65536, 8192, 32, 1)  ->  [1, 65536]
///
/// An op qualifies when all its loops are parallel, its body does not read
/// loop indices, and every operand that the trailing loops index holds them
/// as its trailing dimensions, in order, contiguous in memory. In a parallel
/// loop's body (a tfc-fuse-rows tile) every such loop merges; elsewhere the
/// loops in front keep at least 16 iterations for tfc-parallel-outer-loops to
/// split between threads, so that the merged loop stays innermost and serial.
///
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCCOLLAPSEDIMS
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Iterations the loops in front of a merged loop keep, outside parallel
/// loops (tfc-parallel-outer-loops shares at least this many).
constexpr int64_t kLeadingIterations = 16;

/// Whether dimensions `first..` of `type`, as indexed by `map` (a
/// projected permutation), are contiguous in memory, in loop order.
bool contiguousFrom(MemRefType type, AffineMap map, unsigned first) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  // The results of `map` that are loops `first..`, in order, must be the
  // trailing dimensions of the buffer.
  unsigned rank = type.getRank();
  unsigned loops = map.getNumDims() - first;
  if (loops > rank)
    return false;
  for (unsigned i = 0; i < loops; ++i) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(rank - loops + i));
    if (!dim || dim.getPosition() != first + i)
      return false;
  }
  // Each dimension steps over the whole of the ones after it (a dimension
  // of size 1 is never stepped over, whatever its stride).
  int64_t inner = 1;
  for (unsigned d = rank; d-- > rank - loops;) {
    if (type.getDimSize(d) == 1)
      continue;
    if (ShapedType::isDynamic(strides[d]) || strides[d] != inner)
      return false;
    inner = strides[d] * type.getDimSize(d);
  }
  return true;
}

/// The first loop of the trailing run of loops of `op` to merge, or
/// nothing.
std::optional<unsigned> firstMergedLoop(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp, linalg::CopyOp>(op.getOperation()) ||
      !op.hasPureBufferSemantics() ||
      op.getNumLoops() != op.getNumParallelLoops() || op.getNumLoops() < 2 ||
      op.hasIndexSemantics())
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (sizes.back() == 1)
    return std::nullopt;
  // The longest trailing run that every operand holds contiguously.
  unsigned first = loops - 1;
  // An operand that none of the run's loops index (a scale broadcast along
  // them) does not constrain it.
  auto holds = [&](unsigned from) {
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (!type || !type.hasStaticShape())
        return false;
      bool indexed = false;
      for (unsigned d = from; d < loops; ++d)
        indexed |= map.isFunctionOfDim(d);
      if (indexed && !contiguousFrom(type, map, from))
        return false;
    }
    return true;
  };
  if (!holds(first))
    return std::nullopt;
  // Leading loops of one iteration stay as they are (memref.collapse_shape
  // cannot always merge a unit dimension with an arbitrary stride).
  while (first > 0 && sizes[first - 1] != 1 && holds(first - 1))
    --first;
  if (!op->getParentOfType<scf::ParallelOp>()) {
    // Leave the threads at least kLeadingIterations in front.
    int64_t leading = 1;
    unsigned kept = 0;
    while (kept < loops - 1 && leading < kLeadingIterations)
      leading *= sizes[kept++];
    first = std::max(first, kept);
  }
  if (first + 1 >= loops)
    return std::nullopt;
  return first;
}

/// Replaces `op` by the same op over loops `0..first` (the last one the
/// merged run): operands indexed by the run are collapsed over their
/// trailing dimensions, the others are read as before.
void collapse(linalg::LinalgOp op, unsigned first, IRRewriter &rewriter) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  unsigned loops = op.getNumLoops(), merged = loops - first;
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    Value value = operand.get();
    bool indexed = false;
    for (unsigned d = first; d < loops; ++d)
      indexed |= map.isFunctionOfDim(d);
    unsigned kept =
        indexed ? map.getNumResults() - merged : map.getNumResults();
    SmallVector<AffineExpr> results;
    SmallVector<ReassociationIndices> groups;
    for (unsigned i = 0; i < kept; ++i) {
      results.push_back(map.getResult(i));
      groups.push_back({static_cast<int64_t>(i)});
    }
    if (indexed) {
      ReassociationIndices tail;
      for (unsigned i = kept; i < map.getNumResults(); ++i)
        tail.push_back(i);
      groups.push_back(tail);
      results.push_back(getAffineDimExpr(first, ctx));
      value = rewriter.create<memref::CollapseShapeOp>(loc, value, groups);
    }
    operands.push_back(value);
    maps.push_back(AffineMap::get(first + 1, 0, results, ctx));
  }
  unsigned inputs = op.getNumDpsInputs();
  ValueRange ins = ValueRange(operands).take_front(inputs);
  ValueRange outs = ValueRange(operands).drop_front(inputs);
  if (isa<linalg::CopyOp>(op.getOperation())) {
    rewriter.create<linalg::CopyOp>(loc, ins[0], outs[0]);
  } else {
    auto generic = cast<linalg::GenericOp>(op.getOperation());
    auto collapsed = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{}, ins, outs, maps,
        SmallVector<utils::IteratorType>(first + 1,
                                         utils::IteratorType::parallel));
    rewriter.inlineRegionBefore(generic.getRegion(), collapsed.getRegion(),
                                collapsed.getRegion().end());
  }
  rewriter.eraseOp(op);
}

struct TfcCollapseDimsPass
    : public tfc::impl::TfcCollapseDimsBase<TfcCollapseDimsPass> {
  void runOnOperation() override {
    // A contraction's epilogue keeps C's loops: the contraction kernel
    // applies it to its accumulators.
    llvm::DenseSet<Operation *> epilogues;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (linalg::GenericOp epilogue = findEpilogue(op))
        epilogues.insert(epilogue);
    });
    SmallVector<std::pair<linalg::LinalgOp, unsigned>> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (epilogues.contains(op))
        return;
      if (std::optional<unsigned> first = firstMergedLoop(op))
        candidates.push_back({op, *first});
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, first] : candidates) {
      collapse(op, first, rewriter);
      ++collapsedOps;
    }
  }
};

} // namespace
