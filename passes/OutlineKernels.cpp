//===- OutlineKernels.cpp - The tfc-outline-kernels pass ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Moves each top-level loop nest of a function into a kernel function of its
/// own (or, with `linalg-ops`, each top-level linalg op on buffers, so that
/// the passes that lower linalg ops to loops work on each distinct kernel
/// once instead of on every layer's copy). Kernels with the same body (the same
/// layer type at the same shapes, repeated through a deep model) are generated
/// once and called from every place, so LLVM compiles each distinct kernel
/// once. A contraction that tfc-fuse-epilogues marked and its epilogue are
/// outlined together, and so are a fill and the reduction right after it that
/// accumulates into the filled buffer, so that tfc-vectorize-contractions finds
/// them in one kernel (and starts a zero-filled contraction's accumulators from
/// zero).
///
/// A buffer whose layout holds a static offset (a slice of the flat
/// parameter or gradient buffer, at another offset in every layer) would
/// make every layer's kernel signature different. Such a buffer is passed
/// at offset 0 (`memref.reinterpret_cast`, the same pointer) with its offset
/// as an `index` argument, and the kernel rebuilds the view with a dynamic
/// offset; the views the kernel takes of it get dynamic offsets too.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ManifestText.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
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
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// The type of the view that `view` (a subview, expand_shape or
/// collapse_shape) makes of a source of type `source`, or null.
static MemRefType viewTypeFrom(Operation *view, MemRefType source) {
  if (auto subview = dyn_cast<memref::SubViewOp>(view))
    return cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
        subview.getType().getShape(), source, subview.getMixedOffsets(),
        subview.getMixedSizes(), subview.getMixedStrides()));
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(view)) {
    FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
        source, expand.getType().getShape(), expand.getReassociationIndices());
    return succeeded(type) ? *type : MemRefType();
  }
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(view)) {
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
            source, collapse.getReassociationIndices()))
      return MemRefType();
    return memref::CollapseShapeOp::computeCollapsedType(
        source, collapse.getReassociationIndices());
  }
  return MemRefType();
}

/// Whether every use of `value` by the ops of `nest` and inside them still
/// verifies when the value's type becomes `type`: loads and stores, and
/// views whose result types can be recomputed from `type` (checked in turn).
static bool canRetype(Value value, MemRefType type,
                      ArrayRef<Operation *> nest) {
  for (Operation *user : value.getUsers()) {
    bool inside = llvm::any_of(
        nest, [&](Operation *op) { return op->isProperAncestor(user); });
    if (!inside) {
      // A linalg op on buffers takes operands of any layout.
      if (llvm::is_contained(nest, user) && !isa<linalg::LinalgOp>(user))
        return false;
      continue;
    }
    if (isa<memref::LoadOp, memref::StoreOp, vector::LoadOp, vector::StoreOp,
            vector::MaskedLoadOp, vector::MaskedStoreOp>(user))
      continue;
    MemRefType viewType = viewTypeFrom(user, type);
    if (!viewType || !canRetype(user->getResult(0), viewType, nest))
      return false;
  }
  return true;
}

/// Gives the views made of `value` (whose type has changed) the types
/// that follow from it, transitively.
static void retypeViews(Value value) {
  for (Operation *user : value.getUsers()) {
    if (!isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(
            user))
      continue;
    Value view = user->getResult(0);
    view.setType(viewTypeFrom(user, cast<MemRefType>(value.getType())));
    retypeViews(view);
  }
}

/// The static strides of `type` and its static offset, if its layout is
/// strided with every stride and the offset known and the offset not 0.
static std::optional<std::pair<SmallVector<int64_t>, int64_t>>
staticOffsetLayout(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(memref, strides, offset)) || offset == 0 ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  return std::make_pair(strides, offset);
}

/// `type` with its layout offset replaced by `offset` (dynamic or static);
/// the identity layout where that is the same.
static MemRefType withOffset(MemRefType type, ArrayRef<int64_t> strides,
                             int64_t offset) {
  SmallVector<int64_t> rowMajor(strides.size(), 1);
  for (int64_t i = static_cast<int64_t>(strides.size()) - 2; i >= 0; --i)
    rowMajor[i] = rowMajor[i + 1] * type.getDimSize(i + 1);
  MemRefLayoutAttrInterface layout;
  if (offset != 0 || ArrayRef<int64_t>(rowMajor) != strides)
    layout = StridedLayoutAttr::get(type.getContext(), offset, strides);
  return MemRefType::get(type.getShape(), type.getElementType(), layout,
                         type.getMemorySpace());
}

namespace {
/// The linalg op with reduction loops that accumulates into what `fill`
/// writes, when it is the next op with memory effects after `fill` and its
/// only output is that same buffer; null otherwise.
static linalg::LinalgOp filledReduction(linalg::FillOp fill) {
  Value filled = fill.getOutputs()[0];
  auto reduction =
      dyn_cast_or_null<linalg::LinalgOp>(nextWithMemoryEffects(fill));
  if (!reduction || !reduction.hasPureBufferSemantics() ||
      reduction.getNumReductionLoops() == 0 ||
      reduction.getNumDpsInits() != 1 ||
      reduction.getDpsInitOperand(0)->get() != filled ||
      llvm::is_contained(reduction.getDpsInputs(), filled))
    return nullptr;
  return reduction;
}

struct TfcOutlineKernelsPass
    : public tfc::impl::TfcOutlineKernelsBase<TfcOutlineKernelsPass> {
  using TfcOutlineKernelsBase::TfcOutlineKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    kernels.clear();
    MLIRContext *context = &getContext();
    auto kernelMark = StringAttr::get(context, kKernelAttr);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    unsigned counter = 0;
    for (func::FuncOp func : funcs) {
      // Kernels (of linalg ops, outlined earlier) stay whole.
      if (func.isExternal() || func->hasAttr(kernelMark))
        continue;
      SmallVector<SmallVector<Operation *, 3>> nests;
      llvm::DenseSet<Operation *> taken;
      for (Operation &op : func.getBody().getOps()) {
        if (linalgOps) {
          auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
          if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
              taken.contains(&op))
            continue;
          nests.push_back({&op});
          // The fill of a reduction's accumulator goes into the reduction's
          // kernel, where tfc-vectorize-contractions folds a zero fill into
          // the contraction's first K panel.
          if (auto fill = dyn_cast<linalg::FillOp>(op)) {
            linalg::LinalgOp reduction = filledReduction(fill);
            if (!reduction)
              continue;
            nests.back().push_back(reduction);
            taken.insert(reduction);
            linalgOp = reduction;
          }
          // A contraction and its epilogue (tfc-fuse-epilogues) go into one
          // kernel, for tfc-vectorize-contractions to fuse.
          if (linalg::GenericOp epilogue = findEpilogue(linalgOp)) {
            nests.back().push_back(epilogue);
            taken.insert(epilogue);
          }
        } else if (isa<LoopLikeOpInterface>(op) && op.getNumResults() == 0) {
          nests.push_back({&op});
        }
      }
      for (SmallVector<Operation *, 3> &nest : nests) {
        // Only operations without memory effects can be between the ops of
        // a nest (views of the later ops' operands): the earlier ops move
        // past them, next to the last one.
        for (size_t i = nest.size() - 1; i > 0; --i)
          nest[i - 1]->moveBefore(nest[i]);
        outline(nest, func, symbols, counter);
      }
    }
    // The loop nests are final after the run without `linalg-ops`, the last.
    if (!linalgOps)
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

  /// The attribute that marks the kernels made of linalg ops.
  static constexpr llvm::StringLiteral kKernelAttr = "tfc.kernel";

  /// The kernels made so far, by kernelHash.
  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> kernels;

  /// Moves `nest` (one loop nest or linalg op, or a contraction and its
  /// epilogue, consecutive) into a new function and calls it. Constants it
  /// uses are cloned into the kernel; every other value from outside is an
  /// argument (two for a buffer with a static layout offset: the buffer at
  /// offset 0 and the offset).
  /// When an earlier kernel has the same signature and body, that one is
  /// called instead.
  void outline(ArrayRef<Operation *> nest, func::FuncOp parent,
               SymbolTable &symbols, unsigned &counter) {
    llvm::SetVector<Value> captured;
    for (Operation *op : nest) {
      getUsedValuesDefinedAbove(op->getRegions(), captured);
      for (Value operand : op->getOperands())
        captured.insert(operand);
    }
    SmallVector<Operation *> constants;
    for (Value value : captured)
      if (Operation *def = value.getDefiningOp())
        if (def->hasTrait<OpTrait::ConstantLike>())
          constants.push_back(def);

    // The call's arguments: each capture, or for one whose layout has a
    // static offset, the same buffer at offset 0 followed by that offset.
    Operation *loop = nest.front();
    OpBuilder builder(loop);
    Location loc = loop->getLoc();
    struct Capture {
      Value value;
      /// Its first argument.
      unsigned argument;
      /// The type of its view with a dynamic offset, if it is rebased.
      MemRefType dynamicType;
      SmallVector<OpFoldResult> sizes, strides;
    };
    SmallVector<Capture> captures;
    SmallVector<Value> arguments;
    for (Value value : captured) {
      Operation *def = value.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        continue;
      Capture capture{
          value, static_cast<unsigned>(arguments.size()), {}, {}, {}};
      auto type = dyn_cast<MemRefType>(value.getType());
      auto layout = staticOffsetLayout(value.getType());
      if (layout) {
        capture.dynamicType =
            withOffset(type, layout->first, ShapedType::kDynamic);
        if (!canRetype(value, capture.dynamicType, nest))
          capture.dynamicType = MemRefType();
      }
      if (!capture.dynamicType) {
        arguments.push_back(value);
        captures.push_back(capture);
        continue;
      }
      for (int64_t size : type.getShape())
        capture.sizes.push_back(builder.getIndexAttr(size));
      for (int64_t stride : layout->first)
        capture.strides.push_back(builder.getIndexAttr(stride));
      arguments.push_back(builder.create<memref::ReinterpretCastOp>(
          loc, withOffset(type, layout->first, 0), value,
          builder.getIndexAttr(0), capture.sizes, capture.strides));
      arguments.push_back(
          builder.create<arith::ConstantIndexOp>(loc, layout->second));
      captures.push_back(capture);
    }

    builder.setInsertionPoint(parent);
    std::string name = (parent.getSymName() +
                        (linalgOps ? "_linalg_" : "_kernel_") + Twine(counter))
                           .str();
    auto kernel = builder.create<func::FuncOp>(
        loc, name,
        builder.getFunctionType(ValueRange(arguments).getTypes(), {}));
    kernel.setPrivate();
    kernel->setAttr("passthrough",
                    builder.getArrayAttr({builder.getStringAttr("noinline")}));
    if (linalgOps)
      kernel->setAttr(kKernelAttr, builder.getUnitAttr());
    Block *body = kernel.addEntryBlock();
    builder.setInsertionPointToStart(body);
    IRMapping mapping;
    SmallVector<Value> rebasedViews;
    for (Capture &capture : captures) {
      BlockArgument argument = body->getArgument(capture.argument);
      if (!capture.dynamicType) {
        mapping.map(capture.value, argument);
        continue;
      }
      // The capture's view again, at the offset passed in.
      Value view = builder.create<memref::ReinterpretCastOp>(
          loc, capture.dynamicType, argument,
          OpFoldResult(body->getArgument(capture.argument + 1)), capture.sizes,
          capture.strides);
      mapping.map(capture.value, view);
      rebasedViews.push_back(view);
    }
    for (Operation *constant : constants)
      builder.clone(*constant, mapping);
    for (Operation *op : nest)
      builder.clone(*op, mapping);
    for (Value view : rebasedViews)
      retypeViews(view);
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
    for (Operation *op : llvm::reverse(nest))
      op->erase();
  }
};
} // namespace
