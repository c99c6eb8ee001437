//===- FuseEpilogues.cpp - The tfc-fuse-epilogues pass --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Pairs a contraction on tensors (a linalg op whose body is `out + a * b`)
/// with the element-wise `linalg.generic` that is the only user of its
/// result (bias add, activation, residual add, scaling: one op after
/// tfc-fuse-elementwise), so that the contraction kernels apply that op to
/// their accumulators before storing them (see EpilogueUtils.h for the form
/// of the pair). The consumer is rewritten to update C in place (C becomes
/// its output, the body reads the output element where it read C), the
/// contraction moves right before it and is marked `tfc.epilogue`.
///
/// A pair is formed only when
///   - the contraction has two inputs, one output, f32 or f64 elements and
///     projected permutations as indexing maps, and its result has one use;
///   - that use is an input of an all-parallel `linalg.generic` in the same
///     block with one result of C's type, read through the identity map
///     (the consumer's iteration space is C's: no broadcast of C);
///   - the consumer's other inputs are read through projected permutations
///     (a bias `[n]`, a residual `[m, n]`), its output's initial value is
///     not read, and its body is scalar arith and math on integers and
///     floats (no `linalg.index`).
/// Everything else is left as it is.
///
//===----------------------------------------------------------------------===//

#include "passes/EpilogueUtils.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFUSEEPILOGUES
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// True when `op` is a contraction on tensors that the contraction kernels
/// may handle.
bool isContraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumReductionLoops() == 0 || !isMulAddBody(op))
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.getRank() > 0 && type.hasStaticShape() &&
         (type.getElementType().isF32() || type.getElementType().isF64());
}

/// The element-wise consumer that may become the epilogue of
/// `contraction`, or null.
linalg::GenericOp epilogueOf(linalg::LinalgOp contraction) {
  Value c = contraction->getResult(0);
  if (!c.hasOneUse())
    return nullptr;
  OpOperand &use = *c.getUses().begin();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || consumer->getBlock() != contraction->getBlock() ||
      !consumer.hasPureTensorSemantics() || !isAllParallel(consumer) ||
      consumer->getNumResults() != 1 || consumer.getNumDpsInits() != 1 ||
      !consumer.isDpsInput(&use) ||
      consumer->getResult(0).getType() != c.getType() ||
      !consumer.getMatchingIndexingMap(&use).isIdentity())
    return nullptr;
  if (consumer.payloadUsesValueFromOperand(consumer.getDpsInitOperand(0)))
    return nullptr;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input != &use &&
        (!isa<RankedTensorType>(input->get().getType()) ||
         !consumer.getMatchingIndexingMap(input).isProjectedPermutation()))
      return nullptr;
  if (!isVectorizableEpilogueBody(*consumer.getBlock()))
    return nullptr;
  return consumer;
}

/// Rewrites `consumer` to update the result of `contraction` in place and
/// marks the pair.
void fuse(linalg::LinalgOp contraction, linalg::GenericOp consumer) {
  OpOperand &use = *contraction->getResult(0).getUses().begin();
  unsigned cInput = use.getOperandNumber();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input == &use)
      continue;
    inputs.push_back(input->get());
    maps.push_back(consumer.getMatchingIndexingMap(input));
  }
  maps.push_back(consumer.getMatchingIndexingMap(&use));

  contraction->moveBefore(consumer);
  contraction->setAttr(kEpilogueAttr, UnitAttr::get(contraction->getContext()));
  OpBuilder builder(consumer);
  Value c = contraction->getResult(0);
  auto fused = builder.create<linalg::GenericOp>(
      consumer.getLoc(), TypeRange{c.getType()}, inputs, ValueRange{c}, maps,
      consumer.getIteratorTypesArray());
  // The body again, with the output element in place of C's.
  Block &old = *consumer.getBlock();
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (BlockArgument arg : old.getArguments())
    if (arg.getArgNumber() != cInput &&
        arg.getArgNumber() != old.getNumArguments() - 1) {
      argTypes.push_back(arg.getType());
      argLocs.push_back(arg.getLoc());
    }
  argTypes.push_back(old.getArgument(cInput).getType());
  argLocs.push_back(old.getArgument(cInput).getLoc());
  Block *body = builder.createBlock(&fused.getRegion(), {}, argTypes, argLocs);
  IRMapping mapping;
  unsigned next = 0;
  for (BlockArgument arg : old.getArguments())
    if (arg.getArgNumber() != cInput &&
        arg.getArgNumber() != old.getNumArguments() - 1)
      mapping.map(arg, body->getArgument(next++));
  mapping.map(old.getArgument(cInput), body->getArguments().back());
  builder.setInsertionPointToStart(body);
  for (Operation &op : old)
    builder.clone(op, mapping);
  Value init = consumer.getDpsInitOperand(0)->get();
  consumer->replaceAllUsesWith(fused);
  consumer->erase();
  if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
    if (empty->use_empty())
      empty->erase();
}

struct TfcFuseEpiloguesPass
    : public tfc::impl::TfcFuseEpiloguesBase<TfcFuseEpiloguesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, linalg::GenericOp>> pairs;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isContraction(op))
        return;
      if (linalg::GenericOp consumer = epilogueOf(op))
        pairs.push_back({op, consumer});
    });
    // A consumer is never a contraction, so the pairs are disjoint.
    for (auto [contraction, consumer] : pairs)
      fuse(contraction, consumer);
  }
};

} // namespace
