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
/// their accumulators before storing them (see passes/Utils.h for the form
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
///     not read, and its body is scalar arith on integers, floats and
///     indices, reading positions through `linalg.index` (a causal or
///     banded attention mask) but no math dialect (an epilogue with tanh
///     or erf, GELU and its gradient, ran slower on the accumulators than
///     as a loop of its own).
/// Before that, the consumer grows: an element-wise op reached through
/// `tensor.collapse_shape`/`expand_shape` (the bias add works on `[B*S, N]`,
/// the activation and the residual add on `[B, S, N]`) is rewritten to
/// iterate over C's shape and fused into the consumer, as long as each
/// result in the chain has one use.
/// Everything else is left as it is.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

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

/// True when `body` may be an epilogue: scalar arith that the contraction
/// kernels can repeat on vectors, without math-dialect ops (GELU's tanh or
/// erf and their gradients ran slower on the accumulators than in a loop
/// of their own).
bool isEpilogueBody(Block &body) {
  if (!isVectorizableEpilogueBody(body))
    return false;
  return llvm::none_of(body.without_terminator(), [](Operation &op) {
    return isa<math::MathDialect>(op.getDialect());
  });
}

/// The all-parallel `linalg.generic` that is the only user of `value`,
/// directly or through a chain of `tensor.collapse_shape` and
/// `tensor.expand_shape` ops that each have one use, in the block that
/// defines `value`, reading it through the identity map; or null. A user
/// behind reshapes whose shape collapses to `value`'s is rewritten to
/// iterate over `value`'s shape and read `value` itself (the chain is a
/// view of the same elements in the same order); its results are expanded
/// back for their users. Only a user whose body may be an epilogue is
/// returned, and collapsed only when every indexing map keeps the merged
/// loops together and the body reads no position (`linalg.index` of a
/// merged loop would become a division).
linalg::GenericOp elementwiseUser(Value value, RewriterBase &rewriter) {
  Operation *def = value.getDefiningOp();
  if (!def || !value.hasOneUse())
    return nullptr;
  SmallVector<Operation *> chain;
  Value end = value;
  Operation *user = *value.getUsers().begin();
  while (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user)) {
    chain.push_back(user);
    end = user->getResult(0);
    if (!end.hasOneUse())
      return nullptr;
    user = *end.getUsers().begin();
  }
  auto generic = dyn_cast<linalg::GenericOp>(user);
  if (!generic || generic->getBlock() != def->getBlock() ||
      !generic.hasPureTensorSemantics() || !isAllParallel(generic) ||
      generic->getNumResults() != 1 || generic.getNumDpsInits() != 1)
    return nullptr;
  OpOperand *use = &*end.getUses().begin();
  if (!generic.isDpsInput(use) ||
      !generic.getMatchingIndexingMap(use).isIdentity() ||
      !isEpilogueBody(*generic.getBlock()))
    return nullptr;
  if (chain.empty())
    return generic;
  if (!generic.getBlock()->getOps<linalg::IndexOp>().empty())
    return nullptr;

  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  auto endShape = cast<RankedTensorType>(end.getType()).getShape();
  std::optional<SmallVector<ReassociationIndices>> merged =
      getReassociationIndicesForCollapse(endShape, shape);
  if (!merged || !linalg::areDimSequencesPreserved(
                     generic.getIndexingMapsArray(), *merged))
    return nullptr;
  unsigned operand = use->getOperandNumber();
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(generic, *merged, rewriter);
  if (failed(collapsed))
    return nullptr;
  rewriter.replaceOp(generic, collapsed->results);
  auto result = cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
  // It read the chain's end collapsed to `value`'s shape: `value` itself.
  Operation *view = result->getOperand(operand).getDefiningOp();
  result->setOperand(operand, value);
  if (view && view->use_empty())
    rewriter.eraseOp(view);
  for (Operation *op : llvm::reverse(chain))
    if (op->use_empty())
      rewriter.eraseOp(op);
  return result;
}

/// The element-wise consumer of `contraction`'s result, grown by fusing
/// the element-wise ops that follow it while each result has one use
/// (through reshapes: a bias add, the activation after a reshape, the
/// residual add), or null.
linalg::GenericOp growEpilogue(linalg::LinalgOp contraction,
                               RewriterBase &rewriter) {
  linalg::GenericOp consumer =
      elementwiseUser(contraction->getResult(0), rewriter);
  while (consumer) {
    linalg::GenericOp next = elementwiseUser(consumer->getResult(0), rewriter);
    if (!next)
      break;
    OpOperand *operand = &*consumer->getResult(0).getUses().begin();
    if (!linalg::areElementwiseOpsFusable(operand))
      break;
    rewriter.setInsertionPoint(next);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, operand);
    if (failed(fused))
      break;
    for (auto [original, replacement] : fused->replacements)
      rewriter.replaceAllUsesWith(original, replacement);
    rewriter.eraseOp(next);
    rewriter.eraseOp(consumer);
    consumer = cast<linalg::GenericOp>(fused->fusedOp);
  }
  return consumer;
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
  if (!isEpilogueBody(*consumer.getBlock()))
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
    SmallVector<linalg::LinalgOp> contractions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isContraction(op))
        contractions.push_back(op);
    });
    // Consumers are never contractions, so each rewrite leaves the other
    // contractions in place.
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp contraction : contractions) {
      if (!growEpilogue(contraction, rewriter))
        continue;
      if (linalg::GenericOp consumer = epilogueOf(contraction))
        fuse(contraction, consumer);
    }
  }
};

} // namespace
