//===- OutlineKernels.cpp - The tfc-outline-kernels pass ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Moves each top-level loop nest of a function into a kernel function of its
/// own. Kernels with the same body (the same layer type at the same shapes,
/// repeated through a deep model) are generated once and called from every
/// place, so LLVM compiles each distinct kernel once.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ManifestText.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCOUTLINEKERNELS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

/// A hash of `kernel`'s signature and body that is equal for kernels that
/// OperationEquivalence finds equivalent: operation names, attributes,
/// properties and types, not the values they use.
static llvm::hash_code kernelHash(func::FuncOp kernel) {
  llvm::hash_code hash = hash_value(kernel.getFunctionType());
  kernel.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

namespace {
struct TfcOutlineKernelsPass
    : public tfc::impl::TfcOutlineKernelsBase<TfcOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    kernels.clear();
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
    recordKernelCount(module);
  }

  /// Records the loop nests that one training step runs, each a kernel call
  /// or a loop left in place, as the manifest's `kernels_per_step`.
  void recordKernelCount(ModuleOp module) {
    auto train = module.lookupSymbol<func::FuncOp>("tfc_train_step");
    if (!train)
      return;
    int64_t count = 0;
    for (StringRef name : {"tfc_train_step", "tfc_optimizer_step"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        for (Operation &op : func.getBody().getOps())
          count += isa<func::CallOp, LoopLikeOpInterface>(op);
    setManifestRecord(module, "kernels_per_step", std::to_string(count));
  }

  /// The kernels made so far, by kernelHash.
  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> kernels;

  /// Moves `loop` into a new function and calls it. Constants it uses are
  /// cloned into the kernel; every other value from outside is an argument.
  /// When an earlier kernel has the same signature and body, that one is
  /// called instead.
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
        (parent.getSymName() + "_kernel_" + Twine(counter)).str();
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

    SmallVector<func::FuncOp, 1> &sameHash = kernels[kernelHash(kernel)];
    func::FuncOp existing;
    for (func::FuncOp candidate : sameHash)
      if (candidate.getFunctionType() == kernel.getFunctionType() &&
          OperationEquivalence::isRegionEquivalentTo(
              &candidate.getBody(), &kernel.getBody(),
              OperationEquivalence::IgnoreLocations)) {
        existing = candidate;
        break;
      }
    if (existing) {
      kernel.erase();
      kernel = existing;
    } else {
      ++counter;
      symbols.insert(kernel);
      sameHash.push_back(kernel);
    }

    builder.setInsertionPoint(loop);
    builder.create<func::CallOp>(loc, kernel, arguments);
    loop->erase();
  }
};
} // namespace
