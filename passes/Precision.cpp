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
/// value, before the first contraction that reads it; the contractions
/// read them widened back to float32 and sum in float32. Everything else stays
/// float32: the master weights, the gradients as they accumulate, the Adam
/// moments, normalisation and softmax statistics, the loss. A target that has
/// bf16 contractions (tensor cores) runs these on them; one that has not widens
/// them.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

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

/// `value` (a float32 tensor) rounded to bf16 by an element-wise op at `b`.
Value roundToBF16(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Value empty = b.create<tensor::EmptyOp>(loc, type.getShape(), b.getBF16Type(),
                                          ValueRange{});
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  auto round = b.create<linalg::GenericOp>(
      loc, empty.getType(), ValueRange{value}, ValueRange{empty},
      SmallVector<AffineMap>{identity, identity},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value rounded =
            nb.create<arith::TruncFOp>(nloc, nb.getBF16Type(), args[0]);
        nb.create<linalg::YieldOp>(nloc, rounded);
      });
  return round.getResult(0);
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
    // Each float32 value is rounded once, and every contraction that
    // reads it reads that one bf16 copy: a weight read by the forward and
    // the backward pass, an activation by a projection and its weight
    // gradient. The rounding goes right before the first contraction that
    // reads the value (walk order), or before the op of the value's block
    // that holds it, so that it comes before every later reader.
    llvm::DenseMap<Value, Value> roundedValues;
    auto roundOnce = [&](Value value, Operation *reader) {
      Value &rounded = roundedValues[value];
      if (rounded)
        return rounded;
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(
          value.getParentBlock()->findAncestorOpInBlock(*reader));
      rounded = roundToBF16(rewriter, value.getLoc(), value);
      return rounded;
    };
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
        inputs.push_back(roundOnce(input, generic));
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
  }
};

} // namespace
