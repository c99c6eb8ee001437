//===- ParallelScatter.cpp - The tfc-gpu-parallel-scatter pass ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The embedding gradient is a scatter-add: for every position t, the row
/// of its token gets the position's gradient added, channel by channel.
///
///   %r = scf.for %t = 0 to N iter_args(%acc = %table) {
///     %row = ... (memref.load %ids[%t], clamped)
///     %s = scf.for %c = 0 to D iter_args(%acc2 = %acc) {
///       %old = memref.load %acc2[%row, %c]
///       %g = memref.load %grad[%t, %c]
///       memref.store (%old + %g), %acc2[%row, %c]
///       scf.yield %acc2
///     }
///     scf.yield %s
///   }
///
/// (When the table was written before the nest, bufferization leaves the
/// same nest storing into the table in place, with no iter_args.)
///
/// No loop of it is parallel, so tfc-gpu-map-kernels runs it as a kernel
/// of one thread: N x D dependent loads and stores. Every element it
/// writes is indexed by the channel %c last, so the channels never touch
/// each other's elements: the nest becomes `scf.parallel %c { scf.for %t
/// {...} }`, one thread per channel, each adding its column's terms in the
/// order of the positions, as before, so the sums are the same.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUPARALLELSCATTER
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Whether every access of `buffer` in `body` is a load or a store whose
/// last index is `channel`, with at least one store.
bool channelIndexed(Block *body, Value buffer, Value channel) {
  bool stored = false;
  for (Operation &op : body->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (load.getMemRef() == buffer &&
          (load.getIndices().empty() || load.getIndices().back() != channel))
        return false;
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (store.getMemRef() != buffer || store.getIndices().empty() ||
          store.getIndices().back() != channel)
        return false;
      stored = true;
    } else if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op)) {
      return false;
    }
  }
  return stored;
}

/// Whether the bounds of the loop `inner` are defined outside `outer`.
bool boundsDefinedOutside(scf::ForOp inner, scf::ForOp outer) {
  return llvm::all_of(
      ValueRange{inner.getLowerBound(), inner.getUpperBound(), inner.getStep()},
      [&](Value bound) { return outer.isDefinedOutsideOfLoop(bound); });
}

/// Whether the loads in `block` (not nested) read `table` only as `table`
/// itself, never through another view of its buffer.
bool readsTableByNameOnly(Block *block, Value table) {
  for (Operation &op : block->without_terminator())
    if (auto load = dyn_cast<memref::LoadOp>(op))
      if (load.getMemRef() != table && rootBuffer(load.getMemRef()) == table)
        return false;
  return true;
}

/// The inner loop of the scatter nest `outer` that carries its table
/// through both loops (`iter_args`), when `outer` is one (see the file
/// comment): it accumulates into a buffer of its own (a memref.alloc that
/// nothing before the nest views or casts) carried unchanged through both
/// loops, the outer body reads no buffer it writes and only computes the
/// inner loop's indices, and the inner loop's bounds are defined outside
/// the nest. Null otherwise.
scf::ForOp threadedScatterInnerLoop(scf::ForOp outer) {
  if (outer.getNumRegionIterArgs() != 1)
    return {};
  // The table is a buffer of its own, which nothing before the nest gives
  // another name (a view or a cast); it may be written there (its fill).
  Value table = outer.getInitArgs()[0];
  if (!table.getDefiningOp<memref::AllocOp>())
    return {};
  for (Operation *user : table.getUsers()) {
    Operation *ancestor = outer->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor)
      return {};
    if (ancestor->isBeforeInBlock(outer) &&
        llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
      return {};
  }
  Block *body = outer.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  auto inner = yield.getOperand(0).getDefiningOp<scf::ForOp>();
  if (!inner || inner->getBlock() != body ||
      inner->getNextNode() != yield.getOperation() ||
      inner.getNumRegionIterArgs() != 1 ||
      inner.getInitArgs()[0] != outer.getRegionIterArgs()[0])
    return {};
  if (!boundsDefinedOutside(inner, outer))
    return {};
  for (Operation &op : body->without_terminator()) {
    if (&op == inner.getOperation())
      continue;
    auto load = dyn_cast<memref::LoadOp>(op);
    if (load ? load.getMemRef() == outer.getRegionIterArgs()[0] ||
                   load.getMemRef() == table
             : (op.getNumRegions() != 0 || !isMemoryEffectFree(&op)))
      return {};
  }
  Block *innerBody = inner.getBody();
  Value accumulator = inner.getRegionIterArgs()[0];
  auto innerYield = cast<scf::YieldOp>(innerBody->getTerminator());
  if (innerYield.getOperand(0) != accumulator ||
      !channelIndexed(innerBody, accumulator, inner.getInductionVar()))
    return {};
  // Nothing in the inner body reads or writes the table under another name.
  for (Operation &op : innerBody->without_terminator())
    for (Value operand : op.getOperands())
      if (operand == table || operand == outer.getRegionIterArgs()[0])
        return {};
  return inner;
}

/// The inner loop of the scatter nest `outer` that stores into its table
/// in place (no `iter_args`, as bufferization leaves it when the table is
/// written before the nest), when `outer` is one: its table is a
/// memref.alloc, which the inner body stores into and reads at the
/// channel last and reads through no other view of its buffer; the outer
/// body reads no view of the table and only computes the inner loop's
/// indices; the inner loop's bounds are defined outside the nest. Null
/// otherwise.
scf::ForOp inPlaceScatterInnerLoop(scf::ForOp outer) {
  if (outer.getNumRegionIterArgs() != 0)
    return {};
  Block *body = outer.getBody();
  auto inner =
      dyn_cast_or_null<scf::ForOp>(body->getTerminator()->getPrevNode());
  if (!inner || inner.getNumRegionIterArgs() != 0)
    return {};
  if (!boundsDefinedOutside(inner, outer))
    return {};
  Block *innerBody = inner.getBody();
  Value table;
  for (Operation &op : innerBody->without_terminator())
    if (auto store = dyn_cast<memref::StoreOp>(op))
      table = store.getMemRef();
  if (!table || !table.getDefiningOp<memref::AllocOp>() ||
      !channelIndexed(innerBody, table, inner.getInductionVar()) ||
      !readsTableByNameOnly(innerBody, table))
    return {};
  for (Operation &op : body->without_terminator()) {
    if (&op == inner.getOperation())
      continue;
    auto load = dyn_cast<memref::LoadOp>(op);
    if (load ? rootBuffer(load.getMemRef()) == table
             : (op.getNumRegions() != 0 || !isMemoryEffectFree(&op)))
      return {};
  }
  return inner;
}

/// The inner loop of the scatter nest `outer` in either form; null when
/// `outer` is none.
scf::ForOp scatterInnerLoop(scf::ForOp outer) {
  if (!isa<func::FuncOp>(outer->getParentOp()))
    return {};
  if (scf::ForOp inner = threadedScatterInnerLoop(outer))
    return inner;
  return inPlaceScatterInnerLoop(outer);
}

/// Rewrites the scatter nest `outer` with inner loop `inner` as a parallel
/// loop over the inner dimension around the outer loop.
void parallelize(scf::ForOp outer, scf::ForOp inner) {
  OpBuilder b(outer);
  Location loc = outer.getLoc();
  bool threaded = outer.getNumRegionIterArgs() == 1;
  Value table = threaded ? outer.getInitArgs()[0] : Value();
  b.create<scf::ParallelOp>(
      loc, ValueRange{inner.getLowerBound()}, ValueRange{inner.getUpperBound()},
      ValueRange{inner.getStep()},
      [&](OpBuilder &pb, Location pl, ValueRange channel) {
        pb.create<scf::ForOp>(
            pl, outer.getLowerBound(), outer.getUpperBound(), outer.getStep(),
            std::nullopt,
            [&](OpBuilder &fb, Location fl, Value position, ValueRange) {
              IRMapping mapping;
              mapping.map(outer.getInductionVar(), position);
              mapping.map(inner.getInductionVar(), channel[0]);
              if (threaded) {
                mapping.map(outer.getRegionIterArgs()[0], table);
                mapping.map(inner.getRegionIterArgs()[0], table);
              }
              for (Operation &op : outer.getBody()->without_terminator())
                if (&op != inner.getOperation())
                  fb.clone(op, mapping);
              for (Operation &op : inner.getBody()->without_terminator())
                fb.clone(op, mapping);
              fb.create<scf::YieldOp>(fl);
            });
      });
  if (threaded)
    outer.getResult(0).replaceAllUsesWith(table);
  outer->erase();
}

struct ParallelScatter
    : public mlir::tfc::impl::TfcGpuParallelScatterBase<ParallelScatter> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, scf::ForOp>> nests;
    getOperation().walk([&](scf::ForOp outer) {
      if (scf::ForOp inner = scatterInnerLoop(outer))
        nests.push_back({outer, inner});
    });
    for (auto [outer, inner] : nests)
      parallelize(outer, inner);
  }
};

} // namespace
