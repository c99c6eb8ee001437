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
/// A thread per channel still adds every position's terms one after
/// another (a 256-channel table's gradient over 32,768 positions took
/// 12.5 ms on an H200). When the table has few rows (a character
/// vocabulary), the nest becomes `scf.parallel (%r, %c) { scf.for %t {
/// ... scf.if (%row == %r) {...} } }` instead: a thread per element, which
/// adds only the terms of its own row, again in the order of the
/// positions.
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

/// The table that the inner loop `inner` of a scatter nest adds into, as
/// its body names it (the carried accumulator, or the table itself when
/// it stores in place).
Value innerTable(scf::ForOp inner) {
  if (inner.getNumRegionIterArgs() == 1)
    return inner.getRegionIterArgs()[0];
  for (Operation &op : inner.getBody()->without_terminator())
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return store.getMemRef();
  return {};
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
  Value table = innerTable(inner);
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

/// The row of the table that every access of it in the inner body of a
/// scatter nest indexes, `[row, channel]` with one `row` defined outside
/// that body, when the table is a static `[rows, channels]` buffer of at
/// most `maxRows` rows; null otherwise.
Value sharedRow(scf::ForOp inner, int64_t maxRows) {
  Value table = innerTable(inner);
  auto type = dyn_cast_or_null<MemRefType>(table ? table.getType() : Type());
  if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
      type.getDimSize(0) > maxRows)
    return {};
  Value row;
  for (Operation &op : inner.getBody()->without_terminator()) {
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && load.getMemRef() == table)
      indices = load.getIndices();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      indices = store.getIndices();
    else
      continue;
    if (row && indices[0] != row)
      return {};
    row = indices[0];
  }
  if (!row || row.getParentBlock() == inner.getBody())
    return {};
  return row;
}

/// Rewrites the scatter nest `outer` with inner loop `inner` as a parallel
/// loop around the outer loop: over the table's (row, channel) pairs when
/// `row` (sharedRow) is given, each thread then running only the inner
/// bodies of the positions whose row is its own, else over the channels.
void parallelize(scf::ForOp outer, scf::ForOp inner, Value row) {
  OpBuilder b(outer);
  Location loc = outer.getLoc();
  bool threaded = outer.getNumRegionIterArgs() == 1;
  Value table = threaded ? outer.getInitArgs()[0] : Value();
  SmallVector<Value> lower = {inner.getLowerBound()};
  SmallVector<Value> upper = {inner.getUpperBound()};
  SmallVector<Value> steps = {inner.getStep()};
  if (row) {
    int64_t rows = cast<MemRefType>(innerTable(inner).getType()).getDimSize(0);
    lower.insert(lower.begin(), b.create<arith::ConstantIndexOp>(loc, 0));
    upper.insert(upper.begin(), b.create<arith::ConstantIndexOp>(loc, rows));
    steps.insert(steps.begin(), b.create<arith::ConstantIndexOp>(loc, 1));
  }
  b.create<scf::ParallelOp>(
      loc, lower, upper, steps,
      [&](OpBuilder &pb, Location pl, ValueRange ids) {
        pb.create<scf::ForOp>(
            pl, outer.getLowerBound(), outer.getUpperBound(), outer.getStep(),
            std::nullopt,
            [&](OpBuilder &fb, Location fl, Value position, ValueRange) {
              IRMapping mapping;
              mapping.map(outer.getInductionVar(), position);
              mapping.map(inner.getInductionVar(), ids.back());
              if (threaded) {
                mapping.map(outer.getRegionIterArgs()[0], table);
                mapping.map(inner.getRegionIterArgs()[0], table);
              }
              for (Operation &op : outer.getBody()->without_terminator())
                if (&op != inner.getOperation())
                  fb.clone(op, mapping);
              auto cloneInnerBody = [&](OpBuilder &ib) {
                for (Operation &op : inner.getBody()->without_terminator())
                  ib.clone(op, mapping);
              };
              if (row) {
                Value own = fb.create<arith::CmpIOp>(
                    fl, arith::CmpIPredicate::eq, mapping.lookupOrDefault(row),
                    ids.front());
                fb.create<scf::IfOp>(fl, own, [&](OpBuilder &ib, Location il) {
                  cloneInnerBody(ib);
                  ib.create<scf::YieldOp>(il);
                });
              } else {
                cloneInnerBody(fb);
              }
              fb.create<scf::YieldOp>(fl);
            });
      });
  if (threaded)
    outer.getResult(0).replaceAllUsesWith(table);
  outer->erase();
}

struct ParallelScatter
    : public mlir::tfc::impl::TfcGpuParallelScatterBase<ParallelScatter> {
  using TfcGpuParallelScatterBase::TfcGpuParallelScatterBase;

  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, scf::ForOp>> nests;
    getOperation().walk([&](scf::ForOp outer) {
      if (scf::ForOp inner = scatterInnerLoop(outer))
        nests.push_back({outer, inner});
    });
    for (auto [outer, inner] : nests)
      parallelize(outer, inner, sharedRow(inner, maxTableRows));
  }
};

} // namespace
