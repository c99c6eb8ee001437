//===- Precision.cpp - The tfc-precision pass -----------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--precision=bf16`: the operands of every float32 contraction (the
/// projections, their gradients, attention's scores and products) are
/// rounded to bf16 (round to nearest even) by an element-wise op, once per
/// value, right after it is computed; the contractions read them widened
/// back to float32 and sum in float32. A tensor that a loop reads block by
/// block is rounded once, outside the loop. The backward reads the
/// activations it keeps from the forward as their bf16 copies too.
/// Everything else stays float32: the master weights, the gradients as
/// they accumulate, the Adam moments, normalisation and softmax
/// statistics, the logits and the loss. A target that has bf16
/// contractions (tensor cores) runs these on them; one that has not
/// widens them.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/Utils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCPRECISION
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

/// Whether `value` is block argument `arg` of `body`, possibly widened by
/// arith.extf.
static bool isBlockArgument(Value value, Block &body, unsigned arg) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    value = ext.getIn();
  return value == body.getArgument(arg);
}

bool mlir::tfc::isMultiplyAddContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op->getNumRegions() != 1)
    return false;
  Block &body = op->getRegion(0).front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  return (isBlockArgument(mul.getLhs(), body, 0) &&
          isBlockArgument(mul.getRhs(), body, 1)) ||
         (isBlockArgument(mul.getLhs(), body, 1) &&
          isBlockArgument(mul.getRhs(), body, 0));
}

FailureOr<linalg::GenericOp> mlir::tfc::asGenericOp(RewriterBase &rewriter,
                                                    linalg::LinalgOp op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return generic;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  return linalg::generalizeNamedOp(rewriter, op);
}

namespace {

/// Whether `op` is a float32 contraction on tensors whose operands this
/// pass rounds.
bool isFloat32Contraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || !isMultiplyAddContraction(op))
    return false;
  return llvm::all_of(op->getOperands(), [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getElementType().isF32();
  });
}

/// Whether `op` gives a view of its source tensor, its first operand: a
/// slice or a reshape, which take any element type.
bool isView(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp>(op);
}

/// The bf16 tensor that `value` widens, when an element-wise op of
/// identity maps computes `value` as `arith.extf` of it (a FlashAttention
/// kernel's output, which it stores in bf16): rounding `value` gives that
/// tensor back exactly.
static Value widenedFrom(Value value) {
  auto op = value.getDefiningOp<linalg::GenericOp>();
  auto ext =
      op ? dyn_cast_or_null<arith::ExtFOp>(elementwiseConversion(op)) : nullptr;
  if (!ext || !ext.getIn().getType().isBF16() || !ext.getType().isF32())
    return Value();
  return op.getDpsInputOperand(0)->get();
}

/// The roundings of one module: each float32 value rounded once, and the
/// views of a rounded value taken again of its bf16 copy.
class Rounding {
public:
  explicit Rounding(IRRewriter &rewriter) : rewriter(rewriter) {}

  /// `value`'s bf16 copy: the bf16 tensor it widens (widenedFrom), or one
  /// made by one element-wise op right after the op that defines `value`
  /// (after the copies of the earlier arguments at the start of the block,
  /// for a block argument) when there is none yet:
  /// every reader shares it (the weights' copy serves the forward and the
  /// backward pass, an activation's its projection and the weight
  /// gradient), in whatever order they ask for it.
  Value roundOnce(Value value) {
    Value &rounded = roundedValues[value];
    if (rounded)
      return rounded;
    if (Value narrow = widenedFrom(value))
      return rounded = narrow;
    OpBuilder::InsertionGuard guard(rewriter);
    if (Operation *def = value.getDefiningOp()) {
      rewriter.setInsertionPointAfter(def);
    } else {
      Block *block = value.getParentBlock();
      Operation *&last = lastAtStart[block];
      if (last)
        rewriter.setInsertionPointAfter(last);
      else
        rewriter.setInsertionPointToStart(block);
    }
    rounded = roundToBF16(rewriter, value.getLoc(), value);
    if (!value.getDefiningOp())
      lastAtStart[value.getParentBlock()] = rounded.getDefiningOp();
    return rounded;
  }

  /// `value` in bf16. A reshape, or a slice in a loop of a tensor from
  /// outside it (a block of blocked attention, a Performer head), is taken
  /// again of its source's bf16 copy, right after the view it copies: so a
  /// tensor that a loop reads block by block is rounded once, outside the loop,
  /// not by each iteration, and the forward and the backward share that one
  /// copy.
  Value roundOperand(Value value) {
    Operation *view = value.getDefiningOp();
    if (!view || !isRoundedAtSource(view))
      return roundOnce(value);
    if (Value rounded = roundedViews.lookup(value))
      return rounded;
    Value source = roundOperand(view->getOperand(0));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfter(view);
    IRMapping mapping;
    mapping.map(view->getOperand(0), source);
    Operation *copy = rewriter.clone(*view, mapping);
    auto type = cast<RankedTensorType>(value.getType());
    copy->getResult(0).setType(type.clone(rewriter.getBF16Type()));
    roundedViews[value] = copy->getResult(0);
    return copy->getResult(0);
  }

  /// Whether a view is rounded at its source: a reshape (the same
  /// elements), or a slice in a loop of a tensor from outside the loop's
  /// body (directly or through views); not a slice at the top of a
  /// function (a weight of the flat parameters), nor one of a tensor that
  /// each iteration computes or carries (which would be rounded whole at
  /// each iteration).
  static bool isRoundedAtSource(Operation *view) {
    if (!isView(view))
      return false;
    if (!isa<tensor::ExtractSliceOp>(view))
      return true;
    if (isa<FunctionOpInterface>(view->getParentOp()))
      return false;
    Value source = view->getOperand(0);
    while (source.getParentRegion() == view->getParentRegion()) {
      Operation *def = source.getDefiningOp();
      if (!def || !isView(def))
        return false;
      source = def->getOperand(0);
    }
    return true;
  }

  /// The source that `value` is a view of through views that
  /// isRoundedAtSource, `value` itself when it is no such view.
  static Value sourceOf(Value value) {
    while (Operation *view = value.getDefiningOp()) {
      if (!isRoundedAtSource(view))
        break;
      value = view->getOperand(0);
    }
    return value;
  }

private:
  IRRewriter &rewriter;
  llvm::DenseMap<Value, Value> roundedValues, roundedViews;
  /// The last copy of a block argument made at the start of each block.
  llvm::DenseMap<Block *, Operation *> lastAtStart;
};

/// Has `reader` read its input `operand` in bf16 (`rounded`), widened
/// back to float32 at the start of its body.
void readWidened(RewriterBase &rewriter, linalg::GenericOp reader,
                 OpOperand &operand, Value rounded) {
  BlockArgument arg = reader.getMatchingBlockArgument(&operand);
  operand.set(rounded);
  arg.setType(rewriter.getBF16Type());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(arg.getOwner());
  Value widened =
      rewriter.create<arith::ExtFOp>(arg.getLoc(), rewriter.getF32Type(), arg);
  rewriter.replaceAllUsesExcept(arg, widened, widened.getDefiningOp());
}

/// The reads of `value` and of the views of it that isRoundedAtSource
/// (transitively), the views themselves left out.
void collectReads(Value value, SmallVectorImpl<OpOperand *> &reads) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (Rounding::isRoundedAtSource(user) && use.getOperandNumber() == 0)
      collectReads(user->getResult(0), reads);
    else
      reads.push_back(&use);
  }
}

/// The values that the loss is computed from without a contraction in
/// between (the logits and the cross-entropy's terms): the rule keeps them
/// float32.
llvm::DenseSet<Value> lossInputs(Operation *lossOp) {
  llvm::DenseSet<Value> inputs;
  SmallVector<Operation *> work{lossOp};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value operand : op->getOperands()) {
      Value source = Rounding::sourceOf(operand);
      Operation *def = source.getDefiningOp();
      if (!inputs.insert(source).second || !def)
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
      if (!linalgOp || !isMultiplyAddContraction(linalgOp))
        work.push_back(def);
    }
  }
  return inputs;
}

/// In `@train_step`: each float32 result of an element-wise op of the
/// forward (the ops before the one that computes the loss, the step's
/// first result) that the backward reads, in element-wise ops or
/// reductions (a GELU's or a LayerNorm's gradient), is read there as its
/// bf16 copy, made right after it. The float32 tensor then lives only
/// as long as the forward reads it. The number of tensors so kept.
int64_t keepSavedActivationsInBF16(func::FuncOp step, IRRewriter &rewriter,
                                   Rounding &rounding) {
  if (!step || !step.getBody().hasOneBlock())
    return 0;
  Block &body = step.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  Operation *lossOp = ret && ret.getNumOperands() != 0
                          ? ret.getOperand(0).getDefiningOp()
                          : nullptr;
  if (!lossOp || !(lossOp = body.findAncestorOpInBlock(*lossOp)))
    return 0;
  llvm::DenseSet<Value> keptFloat32 = lossInputs(lossOp);
  int64_t kept = 0;
  SmallVector<linalg::GenericOp> forward;
  for (Operation &op : body) {
    if (&op == lossOp)
      break;
    auto generic = dyn_cast<linalg::GenericOp>(&op);
    if (generic && generic.hasPureTensorSemantics() && isAllParallel(generic))
      forward.push_back(generic);
  }
  for (linalg::GenericOp generic : forward) {
    for (OpResult result : generic->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.getElementType().isF32() || keptFloat32.count(result))
        continue;
      SmallVector<OpOperand *> reads;
      collectReads(result, reads);
      bool rounded = false;
      for (OpOperand *read : reads) {
        auto reader = dyn_cast<linalg::GenericOp>(read->getOwner());
        Operation *top = body.findAncestorOpInBlock(*read->getOwner());
        if (!reader || !top || top->isBeforeInBlock(lossOp) || top == lossOp ||
            !reader.isDpsInput(read))
          continue;
        readWidened(rewriter, reader, *read,
                    rounding.roundOperand(read->get()));
        rounded = true;
      }
      kept += rounded;
    }
  }
  return kept;
}

/// Folds a rounding into the element-wise op that computes its float32
/// input when nothing else reads that value: that op then writes bf16
/// itself, and the float32 tensor, with its write and its second read, is
/// gone.
///   - An element-wise op (a LayerNorm's output that only a projection
///     reads, an activation that only the next contraction reads and the
///     backward keeps as its bf16 copy) is fused with the rounding.
///   - A contraction's epilogue (the op that updates the marked
///     contraction's result in place: a projection's bias add that only
///     attention reads) becomes a rounded one: it reads the contraction's
///     result as its last input and writes the bf16 copy, and the
///     contraction's kernel stores the rounded values of its accumulators
///     there (findEpilogue's rounded form).
struct FoldRoundingIntoProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp rounding,
                                PatternRewriter &rewriter) const override {
    if (!rounding.hasPureTensorSemantics() || !isBF16Rounding(rounding))
      return failure();
    OpOperand *input = rounding.getDpsInputOperand(0);
    auto producer = input->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || !producer.hasPureTensorSemantics() ||
        !isAllParallel(producer) || producer->getNumResults() != 1 ||
        !input->get().hasOneUse())
      return failure();
    Value init = producer.getDpsInitOperand(0)->get();
    Operation *contraction = init.getDefiningOp();
    if (contraction && contraction->hasAttr(kEpilogueAttr))
      return foldIntoEpilogue(rounding, producer, contraction, rewriter);
    if (!linalg::areElementwiseOpsFusable(input))
      return failure();
    return fuseProducerIntoConsumer(rewriter, input);
  }

  /// The rounded form of `epilogue`, replacing it and `rounding`.
  LogicalResult foldIntoEpilogue(linalg::GenericOp rounding,
                                 linalg::GenericOp epilogue,
                                 Operation *contraction,
                                 PatternRewriter &rewriter) const {
    if (!epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0))
             .isIdentity())
      return failure();
    Value c = epilogue.getDpsInitOperand(0)->get();
    SmallVector<Value> inputs(epilogue.getDpsInputs());
    inputs.push_back(c);
    SmallVector<AffineMap> maps;
    for (OpOperand *input : epilogue.getDpsInputOperands())
      maps.push_back(epilogue.getMatchingIndexingMap(input));
    AffineMap identity =
        rewriter.getMultiDimIdentityMap(epilogue.getNumLoops());
    maps.append({identity, identity});
    // The output's buffer before the contraction, so that nothing with
    // memory effects comes between the contraction and its epilogue.
    rewriter.setInsertionPoint(contraction);
    auto type = cast<RankedTensorType>(rounding.getResult(0).getType());
    Value empty = rewriter.create<tensor::EmptyOp>(
        epilogue.getLoc(), type.getShape(), type.getElementType());
    rewriter.setInsertionPoint(epilogue);
    Block &body = epilogue.getRegion().front();
    auto rounded = rewriter.create<linalg::GenericOp>(
        epilogue.getLoc(), type, inputs, ValueRange{empty}, maps,
        epilogue.getIteratorTypesArray(),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          // The epilogue's body, reading C's element from the last input
          // where it read its output's.
          IRMapping mapping;
          for (unsigned i = 0, e = inputs.size(); i < e; ++i)
            mapping.map(body.getArgument(i), args[i]);
          for (Operation &inner : body.without_terminator())
            nb.clone(inner, mapping);
          Value value =
              mapping.lookupOrDefault(body.getTerminator()->getOperand(0));
          nb.create<linalg::YieldOp>(
              nloc,
              nb.create<arith::TruncFOp>(nloc, type.getElementType(), value)
                  .getResult());
        });
    rewriter.replaceOp(rounding, rounded->getResults());
    rewriter.eraseOp(epilogue);
    return success();
  }
};

/// Erases the slices and reshapes that nothing reads (the forward's views
/// of a value that the backward now reads as its bf16 copy).
void eraseUnusedViews(Operation *root) {
  bool erased = true;
  while (erased) {
    erased = false;
    root->walk([&](Operation *op) {
      if (isView(op) && op->use_empty()) {
        op->erase();
        erased = true;
      }
    });
  }
}

struct Precision : public mlir::tfc::impl::TfcPrecisionBase<Precision> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isFloat32Contraction(op))
        work.push_back(op);
    });
    // The manifest's `precision` record (tfc-export-abi).
    getOperation()->setAttr("tfc.precision",
                            StringAttr::get(&getContext(), "bf16"));
    IRRewriter rewriter(&getContext());
    Rounding rounding(rewriter);
    for (linalg::LinalgOp op : work) {
      Location loc = op.getLoc();
      // Named contractions (linalg.matmul, ...) as generic ops, whose
      // operand types can change; the marks of the fusion passes, and any
      // other discardable attribute, stay with the contraction.
      SmallVector<NamedAttribute> marks(op->getDiscardableAttrs());
      FailureOr<linalg::GenericOp> asGeneric = asGenericOp(rewriter, op);
      if (failed(asGeneric))
        continue;
      linalg::GenericOp generic = *asGeneric;
      rewriter.setInsertionPoint(generic);
      SmallVector<Value> inputs;
      for (Value input : generic.getDpsInputs())
        inputs.push_back(rounding.roundOperand(input));
      auto rounded = rewriter.create<linalg::GenericOp>(
          loc, generic.getResultTypes(), inputs, generic.getDpsInits(),
          generic.getIndexingMapsArray(), generic.getIteratorTypesArray(),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            // The old body on the inputs widened back to float32.
            Block &body = generic.getRegion().front();
            IRMapping mapping;
            for (unsigned i = 0; i < 2; ++i)
              mapping.map(
                  body.getArgument(i),
                  nb.create<arith::ExtFOp>(nloc, nb.getF32Type(), args[i]));
            mapping.map(body.getArgument(2), args[2]);
            for (Operation &inner : body)
              nb.clone(inner, mapping);
          });
      for (NamedAttribute attr : marks)
        if (!attr.getName().strref().starts_with("linalg."))
          rounded->setAttr(attr.getName(), attr.getValue());
      rewriter.replaceOp(generic, rounded->getResults());
      ++roundedOps;
    }
    savedInBF16 += keepSavedActivationsInBF16(
        getOperation().lookupSymbol<func::FuncOp>("train_step"), rewriter,
        rounding);
    eraseUnusedViews(getOperation());
    auto countRoundings = [&] {
      int64_t count = 0;
      getOperation().walk(
          [&](linalg::GenericOp op) { count += isBF16Rounding(op); });
      return count;
    };
    int64_t roundings = countRoundings();
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldRoundingIntoProducer>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    foldedRoundings += roundings - countRoundings();
  }
};

} // namespace
