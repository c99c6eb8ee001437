//===- MaterializeInsertChains.cpp - tfc-materialize-insert-chains --------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes a chain of `tensor.insert_slice` ops that only ends up in an output
/// buffer straight into that buffer:
///
///   %z = linalg.fill ins(%c) outs(tensor.empty())
///   %1 = tensor.insert_slice %a into %z[...]
///   ...
///   %n = tensor.insert_slice %x into %n-1[...]
///   bufferization.materialize_in_destination %n in restrict writable %out
///
/// becomes a `linalg.fill` of `%out` and one
/// `bufferization.materialize_in_destination` per slice into a
/// `memref.subview` of `%out`; a 1-d chain into another tensor at disjoint
/// constant offsets (the optimizer's update of the trained prefix of the
/// parameters, into a buffer that may be the old parameters' memory, so
/// not `restrict`) becomes the same writes plus copies of that tensor's
/// elements around the slices. The views are made up front, so that
/// `eliminate-empty-tensors` can compute each source of a `restrict` chain
/// in its slice of `%out` instead of in a temporary. The flat gradient
/// buffer that tfc-flatten-params packs is such a chain, one link per
/// parameter. One-Shot Bufferize checks every link of a chain against every
/// other write to the same tensor and walks the chain back for each pair,
/// which grows with the cube of its length (tens of minutes for a model of
/// 30 layers); the per-slice form leaves it nothing to analyse and needs no
/// temporary flat tensor. The values written are the same.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCMATERIALIZEINSERTCHAINS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// A chain of inserts into a filled fresh tensor, or into any 1-d tensor
/// at constant disjoint offsets, materialized in a buffer.
struct InsertChain {
  bufferization::MaterializeInDestinationOp sink;
  /// The fill of the `tensor.empty` that the first insert writes into, if
  /// it writes into one.
  linalg::FillOp fill;
  /// The tensor that the first insert writes into: the fill's result, or a
  /// 1-d tensor whose elements outside the slices are copied.
  Value base;
  /// The inserts in program order (the first one writes into `base`).
  SmallVector<tensor::InsertSliceOp> inserts;
};
} // namespace

/// The static box `[offset, offset + size)` per dimension that `insert`
/// writes, if its offsets and sizes are constants and its strides 1.
static std::optional<SmallVector<std::pair<int64_t, int64_t>>>
staticBox(tensor::InsertSliceOp insert) {
  if (!insert.hasUnitStride() || !insert.getOffsets().empty() ||
      !insert.getSizes().empty())
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> box;
  for (auto [offset, size] :
       llvm::zip(insert.getStaticOffsets(), insert.getStaticSizes()))
    box.push_back({offset, offset + size});
  return box;
}

/// Whether no two inserts of `chain` write the same element, so that their
/// writes may happen in any order.
static bool disjoint(const InsertChain &chain) {
  SmallVector<SmallVector<std::pair<int64_t, int64_t>>> boxes;
  for (tensor::InsertSliceOp insert : chain.inserts) {
    std::optional<SmallVector<std::pair<int64_t, int64_t>>> box =
        staticBox(insert);
    if (!box)
      return false;
    boxes.push_back(std::move(*box));
  }
  auto overlap = [](ArrayRef<std::pair<int64_t, int64_t>> a,
                    ArrayRef<std::pair<int64_t, int64_t>> b) {
    for (auto [x, y] : llvm::zip(a, b))
      if (x.second <= y.first || y.second <= x.first)
        return false;
    return true;
  };
  for (size_t i = 0; i < boxes.size(); ++i)
    for (size_t j = i + 1; j < boxes.size(); ++j)
      if (overlap(boxes[i], boxes[j]))
        return false;
  return true;
}

/// The chain that `sink` materializes, if it is one this pass rewrites: the
/// destination is a buffer that nothing else uses, and every link is in the
/// block of `sink` and used only by the next one.
static std::optional<InsertChain>
matchChain(bufferization::MaterializeInDestinationOp sink) {
  Value dest = sink.getDest();
  if (!isa<MemRefType>(dest.getType()) || !dest.hasOneUse())
    return std::nullopt;
  Block *block = sink->getBlock();
  InsertChain chain;
  chain.sink = sink;
  Value value = sink.getSource();
  while (auto insert = value.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!value.hasOneUse() || insert->getBlock() != block)
      return std::nullopt;
    chain.inserts.push_back(insert);
    value = insert.getDest();
  }
  if (chain.inserts.empty())
    return std::nullopt;
  std::reverse(chain.inserts.begin(), chain.inserts.end());
  chain.base = value;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (fill && sink.getRestrict() && value.hasOneUse() &&
      fill.getNumDpsInits() == 1 &&
      fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>()) {
    chain.fill = fill;
    return chain;
  }
  // Any other base: 1-d, the slices at constant offsets and disjoint, so
  // that the elements between them are copied once and each slice is
  // written once.
  if (cast<RankedTensorType>(value.getType()).getRank() != 1 ||
      !disjoint(chain))
    return std::nullopt;
  return chain;
}

/// The later of `point` (an operation of `block`, null for its start) and
/// the operation of `block` that defines `value` or holds its definition.
static Operation *laterOf(Operation *point, Value value, Block *block) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return point;
  def = block->findAncestorOpInBlock(*def);
  if (!def)
    return point;
  return !point || point->isBeforeInBlock(def) ? def : point;
}

static void setInsertionPointAfter(OpBuilder &b, Block *block,
                                   Operation *point) {
  if (point)
    b.setInsertionPointAfter(point);
  else
    b.setInsertionPointToStart(block);
}

/// `dest[offsets][sizes]` as a view of the rank of `sourceShape`.
static Value subviewOf(OpBuilder &b, Location loc, Value dest,
                       ArrayRef<int64_t> sourceShape,
                       ArrayRef<OpFoldResult> offsets,
                       ArrayRef<OpFoldResult> sizes,
                       ArrayRef<OpFoldResult> strides) {
  auto viewType =
      cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
          sourceShape, cast<MemRefType>(dest.getType()), offsets, sizes,
          strides));
  return b.create<memref::SubViewOp>(loc, viewType, dest, offsets, sizes,
                                     strides);
}

/// Replaces `chain` by a fill of the buffer (or copies of the base's
/// elements between the slices) and one write per slice. When the slices
/// are disjoint and the buffer `restrict`, each is written right after its
/// source is computed, so that the source's buffer can be reused early;
/// otherwise all are written in the chain's order where the chain was
/// materialized. The views of the slices are made up front, next to the
/// fill, so that they dominate the sources' computations:
/// `eliminate-empty-tensors` can then compute each source in its slice of
/// the buffer instead of in a temporary.
static void rewrite(InsertChain &chain) {
  bufferization::MaterializeInDestinationOp sink = chain.sink;
  Block *block = sink->getBlock();
  Value dest = sink.getDest();
  OpBuilder b(sink);

  // Slices are written as soon as they are ready when they are disjoint
  // and the buffer is not the memory of any other value (`restrict`);
  // otherwise where the chain was materialized, in its order.
  bool early = sink.getRestrict() && disjoint(chain);
  Operation *start = laterOf(nullptr, dest, block);
  if (chain.fill) {
    Value scalar = chain.fill.getDpsInputs()[0];
    start = laterOf(start, scalar, block);
    setInsertionPointAfter(b, block, start);
    start = b.create<linalg::FillOp>(chain.fill.getLoc(), ValueRange{scalar},
                                     ValueRange{dest});
  } else {
    // The base's elements between the slices, copied where the base is
    // ready (or at the sink).
    SmallVector<std::pair<int64_t, int64_t>> covered;
    for (tensor::InsertSliceOp insert : chain.inserts)
      covered.push_back((*staticBox(insert))[0]);
    llvm::sort(covered);
    SmallVector<std::pair<int64_t, int64_t>> gaps;
    int64_t next = 0;
    for (auto [begin, end] : covered) {
      if (begin > next)
        gaps.push_back({next, begin});
      next = end;
    }
    int64_t length = cast<MemRefType>(dest.getType()).getDimSize(0);
    if (next < length)
      gaps.push_back({next, length});
    OpBuilder::InsertionGuard guard(b);
    if (early)
      setInsertionPointAfter(b, block, laterOf(start, chain.base, block));
    else
      b.setInsertionPoint(sink);
    Location loc = sink.getLoc();
    for (auto [begin, end] : gaps) {
      SmallVector<OpFoldResult> offsets = {b.getIndexAttr(begin)},
                                sizes = {b.getIndexAttr(end - begin)},
                                strides = {b.getIndexAttr(1)};
      Value part = b.create<tensor::ExtractSliceOp>(loc, chain.base, offsets,
                                                    sizes, strides);
      Value view =
          subviewOf(b, loc, dest, {end - begin}, offsets, sizes, strides);
      b.create<bufferization::MaterializeInDestinationOp>(
          loc, TypeRange{}, part, view, /*restrict=*/early, /*writable=*/true);
    }
  }

  // The views, in the chain's order, each where its offsets are ready.
  SmallVector<Value> views;
  Operation *lastView = start;
  for (tensor::InsertSliceOp insert : chain.inserts) {
    OpBuilder::InsertionGuard guard(b);
    Operation *viewPoint = lastView;
    for (Value operand : insert->getOperands().drop_front(2))
      viewPoint = laterOf(viewPoint, operand, block);
    setInsertionPointAfter(b, block, viewPoint);
    views.push_back(subviewOf(b, insert.getLoc(), dest,
                              insert.getSourceType().getShape(),
                              insert.getMixedOffsets(), insert.getMixedSizes(),
                              insert.getMixedStrides()));
    lastView = views.back().getDefiningOp();
  }

  // The last write placed after each point, to keep slices that become
  // ready at the same point in the chain's order.
  llvm::DenseMap<Operation *, Operation *> lastWriteAfter;
  for (auto [insert, view] : llvm::zip(chain.inserts, views)) {
    Operation *point = nullptr;
    if (early) {
      point = laterOf(lastView, insert.getSource(), block);
      auto it = lastWriteAfter.find(point);
      setInsertionPointAfter(b, block,
                             it == lastWriteAfter.end() ? point : it->second);
    } else {
      b.setInsertionPoint(sink);
    }
    // Disjoint slices of a `restrict` buffer are distinct buffers:
    // `restrict` says so, and lets eliminate-empty-tensors compute the
    // source in its slice.
    Operation *write = b.create<bufferization::MaterializeInDestinationOp>(
        insert.getLoc(), TypeRange{}, insert.getSource(), view,
        /*restrict=*/early, /*writable=*/true);
    if (early)
      lastWriteAfter[point] = write;
  }

  sink.erase();
  for (tensor::InsertSliceOp insert : llvm::reverse(chain.inserts))
    insert.erase();
  if (!chain.fill)
    return;
  Operation *empty = chain.fill.getDpsInits()[0].getDefiningOp();
  chain.fill.erase();
  if (empty->use_empty())
    empty->erase();
}

namespace {
struct TfcMaterializeInsertChainsPass
    : public tfc::impl::TfcMaterializeInsertChainsBase<
          TfcMaterializeInsertChainsPass> {
  void runOnOperation() override {
    SmallVector<InsertChain> chains;
    getOperation().walk([&](bufferization::MaterializeInDestinationOp sink) {
      if (std::optional<InsertChain> chain = matchChain(sink))
        chains.push_back(std::move(*chain));
    });
    for (InsertChain &chain : chains)
      rewrite(chain);
  }
};
} // namespace
