//===- OutlineKernels.cpp - The tfc-outline-kernels pass ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCOUTLINEKERNELS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcOutlineKernelsPass
    : public tfc::impl::TfcOutlineKernelsBase<TfcOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    unsigned counter = 0;
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      SmallVector<Operation *> loops;
      for (Operation &op : func.getBody().getOps())
        if (isa<LoopLikeOpInterface>(op) && op.getNumResults() == 0)
          loops.push_back(&op);
      for (Operation *loop : loops)
        outline(loop, func, symbols, counter);
    }
  }

  /// Moves `loop` into a new function and calls it. Constants it uses are
  /// cloned into the kernel; every other value from outside is an argument.
  void outline(Operation *loop, func::FuncOp parent, SymbolTable &symbols,
               unsigned &counter) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(loop->getRegions(), captured);
    for (Value operand : loop->getOperands())
      captured.insert(operand);
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    for (Value value : captured) {
      Operation *def = value.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else
        arguments.push_back(value);
    }
    OpBuilder builder(parent);
    Location loc = loop->getLoc();
    std::string name =
        (parent.getSymName() + "_kernel_" + Twine(counter++)).str();
    auto kernel = builder.create<func::FuncOp>(
        loc, name,
        builder.getFunctionType(ValueRange(arguments).getTypes(), {}));
    kernel.setPrivate();
    kernel->setAttr("passthrough",
                    builder.getArrayAttr({builder.getStringAttr("noinline")}));
    Block *body = kernel.addEntryBlock();
    IRMapping mapping;
    for (auto [value, arg] : llvm::zip(arguments, body->getArguments()))
      mapping.map(value, arg);
    builder.setInsertionPointToStart(body);
    for (Operation *constant : constants)
      builder.clone(*constant, mapping);
    builder.clone(*loop, mapping);
    builder.create<func::ReturnOp>(loc);
    symbols.insert(kernel);

    builder.setInsertionPoint(loop);
    builder.create<func::CallOp>(loc, kernel, arguments);
    loop->erase();
  }
};
} // namespace
