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
/// `memref.subview` of `%out`. The flat gradient buffer that
/// tfc-flatten-params packs is such a chain, one link per parameter. One-Shot
/// Bufferize checks every link of a chain against every other write to the
/// same tensor and walks the chain back for each pair, which grows with the
/// cube of its length (tens of minutes for a model of 30 layers); the
/// per-slice form leaves it nothing to analyse and needs no temporary flat
/// tensor. The values written are the same.
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

/// A chain of inserts into a filled fresh tensor, materialized in a buffer.
struct InsertChain {
  bufferization::MaterializeInDestinationOp sink;
  /// The fill of the `tensor.empty` that the first insert writes into.
  linalg::FillOp base;
  /// The inserts in program order (the first one writes into `base`).
  SmallVector<tensor::InsertSliceOp> inserts;
};
} // namespace

/// The chain that `sink` materializes, if it is one this pass rewrites: the
/// destination is a buffer that nothing else uses, and every link is in the
/// block of `sink` and used only by the next one.
static std::optional<InsertChain>
matchChain(bufferization::MaterializeInDestinationOp sink) {
  Value dest = sink.getDest();
  if (!isa<MemRefType>(dest.getType()) || !sink.getRestrict() ||
      !dest.hasOneUse())
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
  if (chain.inserts.empty() || !value.hasOneUse())
    return std::nullopt;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill || fill.getNumDpsInits() != 1 ||
      !fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return std::nullopt;
  chain.base = fill;
  std::reverse(chain.inserts.begin(), chain.inserts.end());
  return chain;
}

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

static void setInsertionPointAfter(OpBuilder &b, Block *block, Operation *point) {
  if (point)
    b.setInsertionPointAfter(point);
  else
    b.setInsertionPointToStart(block);
}

/// Replaces `chain` by a fill of the buffer and one write per slice. When
/// the slices are disjoint, each is written right after its source is
/// computed, so that the source's buffer can be reused early; otherwise all
/// are written in the chain's order where the chain was materialized.
static void rewrite(InsertChain &chain) {
  bufferization::MaterializeInDestinationOp sink = chain.sink;
  Block *block = sink->getBlock();
  Value dest = sink.getDest();
  auto destType = cast<MemRefType>(dest.getType());
  OpBuilder b(sink);

  Value scalar = chain.base.getDpsInputs()[0];
  Operation *fillPoint = laterOf(laterOf(nullptr, dest, block), scalar, block);
  setInsertionPointAfter(b, block, fillPoint);
  Operation *fill = b.create<linalg::FillOp>(chain.base.getLoc(),
                                             ValueRange{scalar},
                                             ValueRange{dest});

  bool anyOrder = disjoint(chain);
  // The last write placed after each point, to keep slices that become
  // ready at the same point in the chain's order.
  llvm::DenseMap<Operation *, Operation *> lastWriteAfter;
  for (tensor::InsertSliceOp insert : chain.inserts) {
    Operation *point = nullptr;
    if (anyOrder) {
      point = laterOf(fill, insert.getSource(), block);
      for (Value operand : insert->getOperands().drop_front(2))
        point = laterOf(point, operand, block);
      auto it = lastWriteAfter.find(point);
      setInsertionPointAfter(b, block,
                             it == lastWriteAfter.end() ? point : it->second);
    } else {
      b.setInsertionPoint(sink);
    }
    auto viewType = cast<MemRefType>(
        memref::SubViewOp::inferRankReducedResultType(
            insert.getSourceType().getShape(), destType,
            insert.getMixedOffsets(), insert.getMixedSizes(),
            insert.getMixedStrides()));
    Value view = b.create<memref::SubViewOp>(
        insert.getLoc(), viewType, dest, insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
    Operation *write = b.create<bufferization::MaterializeInDestinationOp>(
        insert.getLoc(), TypeRange{}, insert.getSource(), view,
        /*restrict=*/false, /*writable=*/true);
    if (anyOrder)
      lastWriteAfter[point] = write;
  }

  sink.erase();
  for (tensor::InsertSliceOp insert : llvm::reverse(chain.inserts))
    insert.erase();
  Operation *empty = chain.base.getDpsInits()[0].getDefiningOp();
  chain.base.erase();
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
