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
#include "mlir/IR/Matchers.h"

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

/// The uses of `value` and of the views of it in `body` (transitively),
/// the views themselves left out: the ops that read its elements.
void collectReads(Value value, Block &body,
                  SmallVectorImpl<OpOperand *> &reads) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isView(user) && user->getBlock() == &body)
      collectReads(user->getResult(0), body, reads);
    else
      reads.push_back(&use);
  }
}

/// The constant-filled `tensor.empty` that a reduction starts from, or null.
linalg::FillOp constantFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics() ||
      !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() ||
      !matchPattern(fill.getInputs()[0], m_Constant()))
    return nullptr;
  return fill;
}

/// Whether `generic` can be computed again from its inputs alone, cheaply:
/// one static-shaped result written without reading the old value
/// (element-wise ops) or accumulated from a constant fill (row sums,
/// maxima), no more iterations than the largest operand has elements, and a
/// body of at most `maxBodyOps` `arith` and `math` ops.
bool isRecomputable(linalg::GenericOp generic, int64_t maxBodyOps) {
  if (!generic.hasPureTensorSemantics() || generic.getNumDpsInits() != 1)
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  if (generic.payloadUsesValueFromOperand(init) && !constantFill(init->get()))
    return false;
  auto type = dyn_cast<RankedTensorType>(generic->getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return false;
  // Each iteration reads an element of some operand that no other iteration
  // reads: a pass over memory, not a contraction, whose iterations reuse
  // every operand.
  int64_t iterations = 1, largest = 0;
  for (int64_t range : generic.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return false;
    iterations *= range;
  }
  for (Value operand : generic->getOperands())
    if (auto shaped = dyn_cast<RankedTensorType>(operand.getType()))
      largest = std::max(largest, shaped.getNumElements());
  if (iterations > largest)
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

/// The recomputation of forward results in the body of `@train_step`: the
/// block order of its top-level ops, where the backward starts, and the
/// ops recomputed so far.
class StepRecomputation {
public:
  StepRecomputation(Block &body, int64_t maxBodyOps, int64_t maxDepth)
      : body(body), maxBodyOps(maxBodyOps), maxDepth(maxDepth) {}

  /// Numbers the top-level ops; the backward starts after the op that
  /// computes the loss, `ret`'s first operand. False when no op does.
  bool orderOps(func::ReturnOp ret) {
    int64_t next = 0;
    for (Operation &op : body)
      position[&op] = next++;
    Operation *lossOp = ret.getOperand(0).getDefiningOp();
    if (!lossOp)
      return false;
    lossOp = body.findAncestorOpInBlock(*lossOp);
    backwardStart = position.lookup(lossOp) + 1;
    return true;
  }

  /// The forward's element-wise ops that may be recomputed, of results of
  /// at least `minBytes` bytes.
  SmallVector<linalg::GenericOp> candidates(int64_t minBytes) {
    SmallVector<linalg::GenericOp> result;
    for (Operation &op : body) {
      auto generic = dyn_cast<linalg::GenericOp>(&op);
      if (!generic || position.lookup(&op) >= backwardStart ||
          generic.getNumReductionLoops() != 0 ||
          !isRecomputable(generic, maxBodyOps))
        continue;
      auto type = cast<RankedTensorType>(generic->getResult(0).getType());
      int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
      if (bytes >= minBytes)
        result.push_back(generic);
    }
    return result;
  }

  /// Recomputes `generic`'s result before the first backward op that reads
  /// it, when the forward reads it too and its inputs allow; the number of
  /// ops recomputed (0 when it is left alone).
  size_t recompute(linalg::GenericOp generic) {
    // The reads of the result in the backward, directly or through views.
    SmallVector<OpOperand *> reads, backwardReads;
    collectReads(generic->getResult(0), body, reads);
    bool forwardRead = false;
    for (OpOperand *read : reads) {
      if (positionOf(read->getOwner()) >= backwardStart)
        backwardReads.push_back(read);
      else
        forwardRead = true;
    }
    if (backwardReads.empty() || !forwardRead)
      return 0;
    Operation *firstReader = nullptr;
    for (OpOperand *read : backwardReads) {
      Operation *top = body.findAncestorOpInBlock(*read->getOwner());
      if (!firstReader || position.lookup(top) < position.lookup(firstReader))
        firstReader = top;
    }
    SetVector<Operation *> recomputed;
    if (!collect(generic, 0, position.lookup(firstReader), recomputed))
      return 0;
    emit(recomputed, firstReader, backwardReads);
    return recomputed.size();
  }

private:
  /// The position of the top-level op that holds `user`, -1 if none.
  int64_t positionOf(Operation *user) {
    Operation *top = body.findAncestorOpInBlock(*user);
    return top ? position.lookup(top) : -1;
  }

  /// The position of the last op that reads `value` or a view of it.
  int64_t lastRead(Value value) {
    SmallVector<OpOperand *> reads;
    collectReads(value, body, reads);
    int64_t last = -1;
    for (OpOperand *read : reads)
      last = std::max(last, positionOf(read->getOwner()));
    return last;
  }

  /// Whether `root` is kept until position `at` anyway: a function
  /// argument, a constant, or a tensor that is read at or after `at`.
  bool kept(Value root, int64_t at) {
    if (isa<BlockArgument>(root))
      return true;
    Operation *def = root.getDefiningOp();
    if (def->hasTrait<OpTrait::ConstantLike>())
      return true;
    return def->getBlock() == &body && lastRead(root) >= at;
  }

  /// Adds `op` to `recomputed` after the producers of its inputs that are
  /// not kept until position `at` (row sums and the element-wise ops that
  /// read them, when only their input is kept), producers first; false
  /// when an input is neither kept nor so recomputed within `maxDepth`
  /// producers of `depth`.
  bool collect(linalg::GenericOp op, int64_t depth, int64_t at,
               SetVector<Operation *> &recomputed) {
    if (recomputed.contains(op))
      return true;
    if (!isRecomputable(op, maxBodyOps))
      return false;
    for (Value input : op.getDpsInputs()) {
      Value root = viewRoot(input);
      if (kept(root, at))
        continue;
      auto producer = root.getDefiningOp<linalg::GenericOp>();
      if (!producer || depth >= maxDepth || producer->getBlock() != &body ||
          position.lookup(producer) >= backwardStart ||
          !collect(producer, depth + 1, at, recomputed))
        return false;
    }
    recomputed.insert(op);
    return true;
  }

  /// Clones `recomputed` (producers first) before `firstReader`, each view
  /// rebuilt on the recomputed tensors it reads, and has `backwardReads`
  /// read the clones. The unit attribute keeps CSE from merging the ops
  /// back into the forward's.
  void emit(const SetVector<Operation *> &recomputed, Operation *firstReader,
            ArrayRef<OpOperand *> backwardReads) {
    OpBuilder builder(firstReader);
    IRMapping rebuilt;
    std::function<Value(Value)> rebuild = [&](Value value) -> Value {
      if (Value done = rebuilt.lookupOrNull(value))
        return done;
      Operation *view = value.getDefiningOp();
      if (!view || !isView(view))
        return value;
      Value source = rebuild(view->getOperand(0));
      if (source == view->getOperand(0))
        return value;
      IRMapping viewMapping;
      viewMapping.map(view->getOperand(0), source);
      Value copy = builder.clone(*view, viewMapping)->getResult(0);
      rebuilt.map(value, copy);
      return copy;
    };
    Operation *firstNew = nullptr;
    for (Operation *op : recomputed) {
      auto original = cast<linalg::GenericOp>(op);
      IRMapping mapping;
      for (Value input : original.getDpsInputs())
        mapping.map(input, rebuild(input));
      Value init = original.getDpsInitOperand(0)->get();
      auto empty = builder.create<tensor::EmptyOp>(
          original.getLoc(), init.getType(), ValueRange{});
      firstNew = firstNew ? firstNew : empty.getOperation();
      Value newInit = empty.getResult();
      if (linalg::FillOp fill = constantFill(init)) {
        IRMapping fillMapping;
        fillMapping.map(fill.getOutputs()[0], newInit);
        newInit = builder.clone(*fill, fillMapping)->getResult(0);
      }
      mapping.map(init, newInit);
      Operation *again = builder.clone(*original, mapping);
      again->setAttr("tfc.recomputed", builder.getUnitAttr());
      rebuilt.map(original->getResult(0), again->getResult(0));
    }
    for (OpOperand *use : backwardReads)
      use->set(rebuild(use->get()));
    int64_t recomputeAt = position.lookup(firstReader);
    for (Operation *op = firstNew; op != firstReader; op = op->getNextNode())
      position[op] = recomputeAt;
  }

  Block &body;
  int64_t maxBodyOps, maxDepth;
  /// The block order of the top-level ops, the recomputed ones at the
  /// position of the op they precede.
  DenseMap<Operation *, int64_t> position;
  /// The position of the first op of the backward.
  int64_t backwardStart = 0;
};

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
    StepRecomputation recomputation(body, maxBodyOps, maxDepth);
    if (!recomputation.orderOps(ret))
      return;
    for (linalg::GenericOp generic : recomputation.candidates(minBytes))
      numRecomputed += recomputation.recompute(generic);
  }
};
} // namespace
