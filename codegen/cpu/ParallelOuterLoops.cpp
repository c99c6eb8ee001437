//===- ParallelOuterLoops.cpp - The tfc-parallel-outer-loops pass ---------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
//
// Decides which `scf.parallel` loops run on threads: the leading dimensions
// of the outermost loop of each nest (enough of them for the threads to
// share), when the nest holds enough work to pay for waking the threads.
// Every other parallel dimension becomes an `scf.for`, so that each kernel
// forks at most once and its inner loops stay plain, vectorisable loops.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCPARALLELOUTERLOOPS
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
/// Trip count of a loop dimension with constant bounds, else 1.
int64_t tripCount(Value lower, Value upper, Value step) {
  return constantTripCount(lower, upper, step).value_or(1);
}

/// Scalar iterations of the innermost statements of `op`'s loop nest, as far
/// as loop bounds are constants. Vector code counts as parallel work.
int64_t staticWork(Operation *op) {
  // One walk finds the loops and, for each, whether a loop is nested in it
  // (the nearest enclosing loop of every loop has one).
  SmallVector<Operation *> loops;
  llvm::DenseSet<Operation *> outer;
  bool vector = false;
  op->walk([&](Operation *inner) {
    if (isa<vector::VectorDialect>(inner->getDialect()))
      vector = true;
    if (!isa<scf::ForOp, scf::ParallelOp>(inner))
      return;
    loops.push_back(inner);
    if (inner == op)
      return;
    for (Operation *parent = inner->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (isa<scf::ForOp, scf::ParallelOp>(parent)) {
        outer.insert(parent);
        break;
      }
      if (parent == op)
        break;
    }
  });
  if (vector)
    return std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  for (Operation *inner : loops) {
    if (outer.contains(inner))
      continue;
    int64_t work = 1;
    for (Operation *loop = inner; loop; loop = loop->getParentOp()) {
      if (auto forOp = dyn_cast<scf::ForOp>(loop))
        work *= tripCount(forOp.getLowerBound(), forOp.getUpperBound(),
                          forOp.getStep());
      if (auto parallel = dyn_cast<scf::ParallelOp>(loop))
        for (auto [lo, hi, st] :
             llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                       parallel.getStep()))
          work *= tripCount(lo, hi, st);
      if (loop == op)
        break;
    }
    total += work;
  }
  return total;
}

/// Keeps the first `keep` dimensions of `loop` (without reductions)
/// parallel and runs the others as nested `scf.for` loops, innermost last,
/// so that the innermost loop stays a plain loop that LLVM vectorises.
void serialize(scf::ParallelOp loop, unsigned keep) {
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> ivs = loop.getInductionVars();
  SmallVector<Value> lower = loop.getLowerBound();
  SmallVector<Value> upper = loop.getUpperBound();
  SmallVector<Value> steps = loop.getStep();
  IRMapping mapping;
  // A parallel body is an allocation scope; a sequential one is not. Its
  // stack buffers (constant sizes, private to an iteration) serve every
  // iteration from before the loops instead of growing the stack at each.
  if (keep == 0) {
    for (auto alloca : loop.getBody()->getOps<memref::AllocaOp>())
      if (alloca->getNumOperands() == 0)
        mapping.map(alloca.getResult(), builder.clone(*alloca)->getResult(0));
  } else {
    auto outer = builder.create<scf::ParallelOp>(
        loc, ArrayRef(lower).take_front(keep), ArrayRef(upper).take_front(keep),
        ArrayRef(steps).take_front(keep));
    for (unsigned i = 0; i < keep; ++i)
      mapping.map(ivs[i], outer.getInductionVars()[i]);
    builder.setInsertionPointToStart(outer.getBody());
  }
  for (unsigned i = keep, e = ivs.size(); i < e; ++i) {
    auto forOp = builder.create<scf::ForOp>(loc, lower[i], upper[i], steps[i]);
    mapping.map(ivs[i], forOp.getInductionVar());
    builder.setInsertionPointToStart(forOp.getBody());
  }
  for (Operation &op : loop.getBody()->without_terminator())
    if (!isa<memref::AllocaOp>(op) || !mapping.contains(op.getResult(0)))
      builder.clone(op, mapping);
  loop.erase();
}

/// The number of leading dimensions of `loop` that give the threads enough
/// iterations to share (at least `kThreadIterations`, or all of them).
unsigned parallelPrefix(scf::ParallelOp loop) {
  constexpr int64_t kThreadIterations = 16;
  int64_t iterations = 1;
  unsigned dims = 0;
  for (auto [lo, hi, st] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    if (iterations >= kThreadIterations)
      break;
    iterations *= tripCount(lo, hi, st);
    ++dims;
  }
  return dims;
}

struct TfcParallelOuterLoopsPass
    : public tfc::impl::TfcParallelOuterLoopsBase<TfcParallelOuterLoopsPass> {
  using TfcParallelOuterLoopsBase::TfcParallelOuterLoopsBase;

  void runOnOperation() override {
    SmallVector<std::pair<scf::ParallelOp, unsigned>> rewrites;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      if (loop.getNumResults() != 0)
        return;
      bool nested = loop->getParentOfType<scf::ParallelOp>() != nullptr;
      unsigned keep = 0;
      if (!nested && staticWork(loop) >= minWork)
        keep = parallelPrefix(loop);
      if (keep < loop.getNumLoops())
        rewrites.push_back({loop, keep});
    });
    // Innermost first, so that every loop is rewritten before its parent
    // is cloned.
    for (auto [loop, keep] : llvm::reverse(rewrites))
      serialize(loop, keep);
  }
};
} // namespace
