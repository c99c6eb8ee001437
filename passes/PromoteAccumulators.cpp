//===- PromoteAccumulators.cpp - The tfc-promote-accumulators pass --------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Keeps the accumulator of a reduction loop in a register. A linalg
/// reduction lowered to loops (a row sum, a row maximum, the row-wise dot
/// products of attention's gradient) loads and stores its output element
/// at every iteration of the reduction loop:
///
///   scf.for %k = ... {
///     %acc = memref.load %out[%i]
///     %x = memref.load %in[%i, %k]
///     memref.store (%acc + %x), %out[%i]
///   }
///
/// Every buffer lives in the same arena, so LLVM cannot prove that the
/// input does not alias the output, keeps the load and store in the loop
/// and leaves the reduction a scalar chain. Here the element is loaded
/// once before the loop, carried through `iter_args` and stored once after
/// it; LLVM then vectorises the reduction.
///
/// A loop qualifies when its body has no nested regions and every store in
/// it writes a buffer at indices defined outside the loop, a buffer that
/// the body loads once, at the same indices, before the store, and does not
/// touch otherwise (a linalg op with several outputs reduces into several
/// elements). The loops come from linalg ops, whose inputs do not overlap
/// their outputs, so no other load in the body reads these elements.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCPROMOTEACCUMULATORS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The accumulators of a reduction loop: for each element, its load and
/// its store.
using Accumulators = SmallVector<std::pair<memref::LoadOp, memref::StoreOp>>;

/// The accumulators of `loop`, if every store in its body is one.
std::optional<Accumulators> findAccumulators(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return std::nullopt;
  SmallVector<memref::StoreOp> stores;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt;
    if (auto store = dyn_cast<memref::StoreOp>(op))
      stores.push_back(store);
    else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op))
      return std::nullopt;
  }
  if (stores.empty())
    return std::nullopt;
  Accumulators accumulators;
  for (memref::StoreOp store : stores) {
    if (!loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
        llvm::any_of(store.getIndices(), [&](Value index) {
          return !loop.isDefinedOutsideOfLoop(index);
        }))
      return std::nullopt;
    // Each accumulator has its own buffer, loaded once, before its store.
    memref::LoadOp load;
    for (Operation &op : loop.getBody()->without_terminator()) {
      Value memref;
      if (auto candidate = dyn_cast<memref::LoadOp>(op))
        memref = candidate.getMemRef();
      else if (auto other = dyn_cast<memref::StoreOp>(op))
        memref = other.getMemRef();
      if (memref != store.getMemRef() || &op == store.getOperation())
        continue;
      auto candidate = dyn_cast<memref::LoadOp>(op);
      if (!candidate || load || candidate.getIndices() != store.getIndices() ||
          !candidate->isBeforeInBlock(store))
        return std::nullopt;
      load = candidate;
    }
    if (!load)
      return std::nullopt;
    accumulators.push_back({load, store});
  }
  return accumulators;
}

/// Carries the accumulators of `loop` through `iter_args`.
void promote(scf::ForOp loop, const Accumulators &accumulators) {
  OpBuilder builder(loop);
  SmallVector<Value> initial;
  for (auto [load, store] : accumulators)
    initial.push_back(builder.create<memref::LoadOp>(
        load.getLoc(), load.getMemRef(), load.getIndices()));
  llvm::SmallPtrSet<Operation *, 8> moved;
  for (auto [load, store] : accumulators) {
    moved.insert(load);
    moved.insert(store);
  }
  auto promoted = builder.create<scf::ForOp>(
      loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      initial,
      [&](OpBuilder &body, Location loc, Value iv, ValueRange carried) {
        IRMapping mapping;
        mapping.map(loop.getInductionVar(), iv);
        for (auto [i, accumulator] : llvm::enumerate(accumulators))
          mapping.map(accumulator.first->getResult(0), carried[i]);
        for (Operation &op : loop.getBody()->without_terminator())
          if (!moved.contains(&op))
            body.clone(op, mapping);
        SmallVector<Value> results;
        for (auto [load, store] : accumulators)
          results.push_back(mapping.lookupOrDefault(store.getValueToStore()));
        body.create<scf::YieldOp>(loc, results);
      });
  builder.setInsertionPointAfter(promoted);
  for (auto [i, accumulator] : llvm::enumerate(accumulators)) {
    memref::StoreOp store = accumulator.second;
    builder.create<memref::StoreOp>(store.getLoc(), promoted.getResult(i),
                                    store.getMemRef(), store.getIndices());
  }
  loop->erase();
}

struct TfcPromoteAccumulatorsPass
    : public tfc::impl::TfcPromoteAccumulatorsBase<TfcPromoteAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      if (auto accumulators = findAccumulators(loop)) {
        promote(loop, *accumulators);
        ++promotedLoops;
      }
    }
  }
};

} // namespace
