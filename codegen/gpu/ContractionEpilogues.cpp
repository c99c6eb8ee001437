//===- ContractionEpilogues.cpp - Element-wise ops a contraction stores ---===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Which element-wise ops after a contraction its tensor-core kernel applies
/// to the values it stores (see ContractionEpilogues.h), and which buffers
/// it then need not write.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/ContractionEpilogues.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlir::tfc {

/// The op that rounds the output of `op` to bf16 when the kernel can store
/// it rounded instead: `op` writes a buffer of its own (an allocation that
/// `zeroFill` fills with zeros first, read by nothing else and at most
/// deallocated), and the next op is an element-wise `arith.truncf` of that
/// buffer into a bf16 buffer of the same shape with the identity layout.
linalg::GenericOp downCastOf(linalg::LinalgOp op, linalg::FillOp zeroFill) {
  Value output = op.getDpsInits()[0];
  auto trunc = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode());
  if (!zeroFill || !output.getDefiningOp<memref::AllocOp>() || !trunc ||
      trunc.getNumDpsInputs() != 1 || trunc.getNumDpsInits() != 1 ||
      trunc.getDpsInputs()[0] != output ||
      trunc.getNumParallelLoops() != trunc.getNumLoops() ||
      !llvm::all_of(trunc.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  auto type = dyn_cast<MemRefType>(trunc.getDpsInits()[0].getType());
  if (!type || !type.getElementType().isBF16() ||
      !type.getLayout().isIdentity() ||
      type.getShape() != cast<MemRefType>(output.getType()).getShape())
    return {};
  Block &body = trunc.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto cast = yield.getOperand(0).getDefiningOp<arith::TruncFOp>();
  if (!cast || cast.getIn() != body.getArgument(0) ||
      body.getOperations().size() != 2)
    return {};
  for (Operation *user : output.getUsers())
    if (user != op && user != zeroFill && user != trunc &&
        !isa<memref::DeallocOp>(user))
      return {};
  return trunc;
}

/// Whether `generic` can be a contraction's epilogue over its `[m, n]`
/// output `output` (`rows` x `cols`): element-wise over exactly that
/// shape, `output` read with the identity map (as an input, or as the init
/// it then writes in place), every init a static buffer of float32 or bf16
/// with the identity layout and map whose value the body reads only when
/// it is `output`, projected-permutation maps, and a body of plain
/// operations (no regions, no `linalg.index`).
static bool isEpilogue(linalg::GenericOp generic, Value output, int64_t rows,
                       int64_t cols) {
  if (generic.getNumLoops() != 2 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      generic.getStaticLoopRanges() != SmallVector<int64_t>{rows, cols})
    return false;
  Block &body = generic.getRegion().front();
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation() ||
        (operand.get() == output && !map.isIdentity()))
      return false;
    if (!generic.isDpsInit(&operand))
      continue;
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !map.isIdentity() ||
        !(type.getElementType().isF32() || type.getElementType().isBF16()))
      return false;
    if (operand.get() != output &&
        !generic.getMatchingBlockArgument(&operand).use_empty())
      return false;
  }
  return llvm::all_of(body.without_terminator(), [](Operation &inner) {
    return inner.getNumRegions() == 0 && !isa<linalg::IndexOp>(inner);
  });
}

/// The element-wise op that the kernel of `op` (a contraction without
/// batch dimensions into `[rows, cols]`) can apply to its accumulators: the
/// first op after it in its block that uses its output, if isEpilogue says
/// so, when the ops in between (at most 64) neither use the output's
/// buffer nor write what the epilogue reads, nor touch what it writes.
linalg::GenericOp epilogueOf(linalg::LinalgOp op, int64_t rows, int64_t cols) {
  Value output = op.getDpsInits()[0];
  Value root = rootBuffer(output);
  SmallVector<Value> reads, writes;
  Operation *next = op->getNextNode();
  for (int64_t count = 0; next && count < 64;
       next = next->getNextNode(), ++count) {
    if (llvm::is_contained(next->getOperands(), output))
      break;
    if (!bufferEffects(next, reads, writes) ||
        llvm::is_contained(reads, root) || llvm::is_contained(writes, root))
      return {};
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || !isEpilogue(generic, output, rows, cols) ||
      !llvm::all_of(generic->getOperands(),
                    [&](Value v) { return availableAt(v, op); }))
    return {};
  // What the epilogue reads besides the output is read in the kernel while
  // other threads store: none of it may be in the output's buffer.
  for (Value input : generic.getDpsInputs())
    if (input != output && (rootBuffer(input) == root ||
                            llvm::is_contained(writes, rootBuffer(input))))
      return {};
  for (Value init : generic.getDpsInits())
    if (init != output && (rootBuffer(init) == root ||
                           llvm::is_contained(reads, rootBuffer(init)) ||
                           llvm::is_contained(writes, rootBuffer(init))))
      return {};
  return generic;
}

/// Whether nothing but `kernelOps` (and deallocations) uses `buffer`, an
/// allocation, directly or through views: the buffer is then unread once
/// the kernel that replaces those ops has run.
static bool usedOnlyBy(Value buffer,
                       const llvm::SmallPtrSetImpl<Operation *> &kernelOps) {
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    if (kernelOps.contains(user) || isa<memref::DeallocOp>(user))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    return view && view.getViewSource() == buffer &&
           llvm::all_of(user->getResults(), [&](Value result) {
             return usedOnlyBy(result, kernelOps);
           });
  });
}

/// Erases the users of `value` (views and deallocations), theirs first.
static void eraseUsers(Value value) {
  for (Operation *user : llvm::make_early_inc_range(value.getUsers())) {
    for (Value result : user->getResults())
      eraseUsers(result);
    user->erase();
  }
}

/// Erases `buffer`, an allocation, with its views and deallocations.
void eraseBuffer(Value buffer) {
  eraseUsers(buffer);
  buffer.getDefiningOp()->erase();
}

/// The element-wise ops after the contraction `op` (into `[rows, cols]`)
/// and its `epilogue` that its kernel can apply as it stores (a bf16 build's
/// activation and its copies, an activation's gradient): each reads a
/// buffer that the kernel writes (the output, an init of the epilogue or
/// of an earlier such op; all of it, through a view of its elements in
/// order, with the identity map), over loops whose innermost extent is
/// `cols` (so that a row of the output is a row of its loops); writes
/// buffers with the identity layout and map that nothing before it reads or
/// writes (after `op`), nor the kernel reads; and reads nothing else that
/// the ops in between write. At most 4 of them, among the next 64 ops; the
/// search stops at an op that writes what the kernel writes.
SmallVector<linalg::GenericOp> consumersOf(linalg::LinalgOp op,
                                           linalg::GenericOp epilogue,
                                           int64_t rows, int64_t cols) {
  int64_t elements = rows * cols;
  Value output = op.getDpsInits()[0];
  if (!isWholeView(rootBuffer(output), elements))
    return {};
  llvm::SmallDenseSet<Value> known = {rootBuffer(output)}, kernelReads;
  for (Value input : op.getDpsInputs())
    kernelReads.insert(rootBuffer(input));
  if (epilogue) {
    for (Value input : epilogue.getDpsInputs())
      kernelReads.insert(rootBuffer(input));
    for (Value init : epilogue.getDpsInits())
      if (isWholeView(rootBuffer(init), elements))
        known.insert(rootBuffer(init));
  }
  SmallVector<Value> reads, writes;
  auto consumes = [&](linalg::GenericOp generic) {
    SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
    if (generic.getNumParallelLoops() != generic.getNumLoops() ||
        ranges.size() < 2 || ranges.back() != cols ||
        ShapedType::getNumElements(ranges) != elements ||
        llvm::any_of(ranges, ShapedType::isDynamic) ||
        !llvm::all_of(generic.getRegion().front().without_terminator(),
                      [](Operation &inner) {
                        return inner.getNumRegions() == 0 &&
                               !isa<linalg::IndexOp>(inner);
                      }))
      return false;
    bool readsKernel = false;
    for (OpOperand *operand : generic.getDpsInputOperands()) {
      Value input = operand->get();
      AffineMap map = generic.getMatchingIndexingMap(operand);
      if (!isa<MemRefType>(input.getType()) || !map.isProjectedPermutation())
        return false;
      if (known.contains(rootBuffer(input))) {
        if (!map.isIdentity() || !isWholeView(input, elements))
          return false;
        readsKernel = true;
      } else if (llvm::is_contained(writes, rootBuffer(input)) ||
                 !availableAt(input, op)) {
        return false;
      }
    }
    for (OpOperand &operand : generic.getDpsInitsMutable()) {
      Value init = operand.get(), root = rootBuffer(init);
      auto type = dyn_cast<MemRefType>(init.getType());
      if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getShape() != ArrayRef<int64_t>(ranges) ||
          !generic.getMatchingIndexingMap(&operand).isIdentity() ||
          !generic.getMatchingBlockArgument(&operand).use_empty() ||
          !(type.getElementType().isF32() || type.getElementType().isBF16()) ||
          known.contains(root) || kernelReads.contains(root) ||
          llvm::is_contained(reads, root) || llvm::is_contained(writes, root) ||
          !availableAt(init, op))
        return false;
      for (OpOperand *input : generic.getDpsInputOperands())
        if (rootBuffer(input->get()) == root)
          return false;
    }
    return readsKernel;
  };
  SmallVector<linalg::GenericOp> chain;
  Operation *next = op->getNextNode();
  for (int64_t count = 0; next && count < 64 && chain.size() < 4;
       next = next->getNextNode(), ++count) {
    if (next == epilogue)
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(next);
    if (generic && consumes(generic)) {
      chain.push_back(generic);
      for (Value input : generic.getDpsInputs())
        kernelReads.insert(rootBuffer(input));
      for (Value init : generic.getDpsInits())
        known.insert(rootBuffer(init));
      continue;
    }
    if (!bufferEffects(next, reads, writes) ||
        llvm::any_of(writes, [&](Value w) { return known.contains(w); }))
      break;
  }
  return chain;
}

/// The buffers (by root) that the kernel of `op` need not write:
/// allocations that only the contraction, its `zeroFill`, its `epilogue`
/// and its `consumers` use; the output only when a fill of zeros comes
/// before it (the accumulators then start from zero).
llvm::SmallDenseSet<Value> deadRootsOf(linalg::LinalgOp op,
                                       linalg::FillOp zeroFill,
                                       linalg::GenericOp epilogue,
                                       ArrayRef<linalg::GenericOp> consumers) {
  llvm::SmallPtrSet<Operation *, 8> kernelOps = {op};
  if (zeroFill)
    kernelOps.insert(zeroFill);
  if (epilogue)
    kernelOps.insert(epilogue);
  for (linalg::GenericOp consumer : consumers)
    kernelOps.insert(consumer);
  llvm::SmallDenseSet<Value> dead;
  auto consider = [&](Value init) {
    Value root = rootBuffer(init);
    if (root.getDefiningOp<memref::AllocOp>() && usedOnlyBy(root, kernelOps))
      dead.insert(root);
  };
  Value output = op.getDpsInits()[0];
  if (zeroFill && output.getDefiningOp<memref::AllocOp>())
    consider(output);
  if (epilogue)
    for (Value init : epilogue.getDpsInits())
      if (init != output)
        consider(init);
  for (linalg::GenericOp consumer : consumers)
    for (Value init : consumer.getDpsInits())
      consider(init);
  return dead;
}

} // namespace mlir::tfc
