//===- RecomputeElementwise.cpp - The tfc-recompute-elementwise pass ------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
//
// A training step keeps every forward result that its backward reads. Some
// of them are cheap element-wise functions of tensors that the backward
// keeps anyway: a GELU's output (read again by the weight gradient of the
// projection after it) is a function of the GELU's input (read again by the
// GELU's own gradient); a LayerNorm's output is a function of the centred
// rows and the inverse deviations that the LayerNorm's gradient reads. This
// pass computes such a result a second time right before the first backward
// op that reads it, so that the forward's copy dies after its last forward
// use and only one layer's copy exists at a time in the backward.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCRECOMPUTEELEMENTWISE
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Ops that give another view of their source tensor; after bufferization
/// they alias its buffer, so they keep it alive.
bool isView(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp, tensor::CastOp>(op);
}

/// The tensor a chain of views starts from.
Value viewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isView(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// Whether `generic` computes each element of its one result from the
/// elements of its inputs with a short body of arithmetic: no reduction, no
/// read of its output, nothing but `arith` and `math` ops.
bool isCheapElementwise(linalg::GenericOp generic, int64_t maxBodyOps) {
  if (!generic.hasPureTensorSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  if (generic.payloadUsesValueFromOperand(init) ||
      !generic.getMatchingIndexingMap(init).isPermutation())
    return false;
  auto type = dyn_cast<RankedTensorType>(generic->getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return false;
  int64_t count = 0;
  for (Operation &op : generic.getBody()->without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return false;
    if (++count > maxBodyOps)
      return false;
  }
  return true;
}

struct TfcRecomputeElementwisePass
    : public tfc::impl::TfcRecomputeElementwiseBase<
          TfcRecomputeElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    auto step = getOperation().lookupSymbol<func::FuncOp>("train_step");
    if (!step || !step.getBody().hasOneBlock())
      return;
    Block &body = step.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret || ret.getNumOperands() == 0)
      return;

    // Block order of the top-level ops; the backward starts after the op
    // that computes the loss, the step's first result.
    DenseMap<Operation *, int64_t> position;
    int64_t next = 0;
    for (Operation &op : body)
      position[&op] = next++;
    Operation *lossOp = ret.getOperand(0).getDefiningOp();
    if (!lossOp)
      return;
    lossOp = body.findAncestorOpInBlock(*lossOp);
    int64_t backwardStart = position.lookup(lossOp) + 1;

    auto positionOf = [&](Operation *user) -> int64_t {
      Operation *top = body.findAncestorOpInBlock(*user);
      return top ? position.lookup(top) : -1;
    };
    // The position of the last op that reads `value` or a view of it.
    std::function<int64_t(Value)> lastRead = [&](Value value) -> int64_t {
      int64_t last = -1;
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (isView(user) && user->getBlock() == &body)
          last = std::max(last, lastRead(user->getResult(0)));
        else
          last = std::max(last, positionOf(user));
      }
      return last;
    };

    SmallVector<linalg::GenericOp> candidates;
    for (Operation &op : body) {
      auto generic = dyn_cast<linalg::GenericOp>(&op);
      if (!generic || position.lookup(&op) >= backwardStart ||
          !isCheapElementwise(generic, maxBodyOps))
        continue;
      auto type = cast<RankedTensorType>(generic->getResult(0).getType());
      int64_t bytes =
          type.getNumElements() * type.getElementTypeBitWidth() / 8;
      if (bytes >= minBytes)
        candidates.push_back(generic);
    }

    for (linalg::GenericOp generic : candidates) {
      Value result = generic->getResult(0);
      // The reads of the result in the backward, directly or through views.
      SmallVector<OpOperand *> backwardReads;
      bool forwardRead = false;
      SmallVector<Value> worklist = {result};
      while (!worklist.empty()) {
        Value value = worklist.pop_back_val();
        for (OpOperand &use : value.getUses()) {
          Operation *user = use.getOwner();
          if (isView(user) && user->getBlock() == &body) {
            worklist.push_back(user->getResult(0));
            continue;
          }
          if (positionOf(user) >= backwardStart)
            backwardReads.push_back(&use);
          else
            forwardRead = true;
        }
      }
      if (backwardReads.empty() || !forwardRead)
        continue;
      Operation *firstReader = body.findAncestorOpInBlock(
          *backwardReads.front()->getOwner());
      for (OpOperand *use : backwardReads) {
        Operation *top = body.findAncestorOpInBlock(*use->getOwner());
        if (position.lookup(top) < position.lookup(firstReader))
          firstReader = top;
      }
      int64_t recomputeAt = position.lookup(firstReader);

      // Every input must be kept until there anyway: a function argument
      // (a parameter, the batch), a constant, or a tensor that the
      // backward reads at or after that point.
      bool inputsKept = llvm::all_of(generic.getDpsInputs(), [&](Value input) {
        Value root = viewRoot(input);
        if (isa<BlockArgument>(root))
          return true;
        Operation *def = root.getDefiningOp();
        if (def->hasTrait<OpTrait::ConstantLike>())
          return true;
        return def->getBlock() == &body && lastRead(root) >= recomputeAt;
      });
      if (!inputsKept)
        continue;

      // The recomputation, and each view of the result rebuilt on it. The
      // unit attribute keeps CSE from merging it back into the forward's.
      OpBuilder builder(firstReader);
      auto empty = builder.create<tensor::EmptyOp>(
          generic.getLoc(), result.getType(), ValueRange{});
      IRMapping mapping;
      mapping.map(generic.getDpsInitOperand(0)->get(), empty.getResult());
      Operation *again = builder.clone(*generic, mapping);
      again->setAttr("tfc.recomputed", builder.getUnitAttr());
      DenseMap<Value, Value> rebuilt;
      rebuilt[result] = again->getResult(0);
      std::function<Value(Value)> rebuild = [&](Value value) -> Value {
        if (Value done = rebuilt.lookup(value))
          return done;
        Operation *view = value.getDefiningOp();
        IRMapping viewMapping;
        viewMapping.map(view->getOperand(0), rebuild(view->getOperand(0)));
        Value copy = builder.clone(*view, viewMapping)->getResult(0);
        rebuilt[value] = copy;
        return copy;
      };
      for (OpOperand *use : backwardReads)
        use->set(rebuild(use->get()));
      for (Operation *op = empty; op != firstReader; op = op->getNextNode())
        position[op] = recomputeAt;
      ++numRecomputed;
    }
  }
};
} // namespace
