//===- Autodiff.cpp - The tfc-autodiff pass -------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reverse-mode differentiation over the tfc dialect. The backward graph is
/// assembled from the VJPOpInterface of each operation, so any spec's model
/// gets its gradients without model-specific code.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCAUTODIFF
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Accumulates gradients per value.
class GradientMap {
public:
  Value lookup(Value value) const { return grads.lookup(value); }

  /// Adds `grad` to the gradient of `value`.
  void accumulate(OpBuilder &b, Location loc, Value value, Value grad) {
    Value &slot = grads[value];
    if (!slot)
      slot = grad;
    else
      slot = b.create<AddOp>(loc, slot.getType(), slot, grad);
  }

private:
  DenseMap<Value, Value> grads;
};

struct TfcAutodiffPass : public tfc::impl::TfcAutodiffBase<TfcAutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      module.emitError() << "tfc-autodiff: no @forward function";
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError() << "tfc-autodiff: @train_step already exists";
      return signalPassFailure();
    }
    if (!forward.getBody().hasOneBlock()) {
      forward.emitOpError() << "must have a single block to be differentiated";
      return signalPassFailure();
    }

    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(forward);
    auto step = cast<func::FuncOp>(builder.clone(*forward));
    step.setSymName("train_step");
    Block &body = step.getBody().front();
    auto seedType = RankedTensorType::get({}, builder.getI64Type());
    step.insertArgument(step.getNumArguments(), seedType, {}, step.getLoc());
    step.setArgAttr(step.getNumArguments() - 1, "tfc.arg",
                    builder.getStringAttr("seed"));
    Value seed = body.getArguments().back();

    // Dropout in training: the step's seed, one stream per op.
    int64_t stream = 0;
    step.walk([&](DropoutOp dropout) {
      dropout.getSeedMutable().assign(seed);
      dropout.setStream(stream++);
    });

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss = ret.getOperand(0);
    builder.setInsertionPoint(ret);
    Location loc = ret.getLoc();
    GradientMap grads;
    auto lossType = cast<RankedTensorType>(loss.getType());
    Value one = builder.create<arith::ConstantOp>(
        loc,
        DenseElementsAttr::get(
            lossType, builder.getFloatAttr(lossType.getElementType(), 1.0)));
    grads.accumulate(builder, loc, loss, one);

    // Reverse sweep over the forward ops (those before the return).
    SmallVector<Operation *> forwardOps;
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);
    for (Operation *op : llvm::reverse(forwardOps)) {
      if (isa<ParamOp>(op) || op->getNumResults() == 0)
        continue;
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value result : op->getResults()) {
        resultGrads.push_back(grads.lookup(result));
        any |= resultGrads.back() != nullptr;
      }
      if (!any)
        continue;
      auto vjp = dyn_cast<VJPOpInterface>(op);
      if (!vjp) {
        op->emitOpError() << "has no VJP; tfc-autodiff cannot differentiate it";
        return signalPassFailure();
      }
      SmallVector<Value> operandGrads;
      if (failed(vjp.buildVJP(builder, resultGrads, operandGrads)))
        return signalPassFailure();
      if (operandGrads.size() != op->getNumOperands()) {
        op->emitOpError() << "VJP returned " << operandGrads.size()
                          << " gradients for " << op->getNumOperands()
                          << " operands";
        return signalPassFailure();
      }
      for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
        if (!grad)
          continue;
        if (grad.getType() != operand.getType()) {
          op->emitOpError()
              << "VJP gradient type " << grad.getType()
              << " differs from the operand's " << operand.getType();
          return signalPassFailure();
        }
        grads.accumulate(builder, op->getLoc(), operand, grad);
      }
    }

    // Results: the loss, then one gradient per trained parameter.
    SmallVector<Value> results = {loss};
    SmallVector<Attribute> names;
    for (Operation *op : forwardOps) {
      auto param = dyn_cast<ParamOp>(op);
      if (!param || param.getKind() != ParamKind::param)
        continue;
      Value grad = grads.lookup(param.getResult());
      if (!grad)
        continue;
      results.push_back(grad);
      names.push_back(param.getTensorNameAttr());
    }
    builder.create<func::ReturnOp>(loc, results);
    ret.erase();
    step.setFunctionType(builder.getFunctionType(
        body.getArgumentTypes(), ValueRange(results).getTypes()));
    step->setAttr("tfc.param_grads", builder.getArrayAttr(names));
  }
};
} // namespace
