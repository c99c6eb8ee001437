//===- ElideCopies.cpp - The tfc-gpu-elide-copies pass --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A `linalg.copy` of a buffer into a fresh one, where the op that writes
/// the source last writes all of it and nothing reads the source after the
/// copy before it is written whole again: that op writes the destination
/// instead, and the copy goes. The FlashAttention forward's bf16 operands
/// are such copies (FlashAttentionTensors.cpp): a buffer of their own,
/// which the gradient kernels read, filled from the buffer that the
/// projection's rounding wrote and that the next layer's rounding reuses.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUELIDECOPIES
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// `buffer` and every view of it, views of views included.
SetVector<Value> viewsOf(Value buffer) {
  SetVector<Value> views;
  views.insert(buffer);
  for (unsigned i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers())
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == views[i])
          views.insert(view->getResult(0));
  return views;
}

/// The ops of `block` that read or write the memory of `views` (holding
/// an op that does), in their order; ops that only view it are left out.
/// None when an op of the block takes an address of it (a pointer that
/// later ops could read through, out of sight) or the block does not hold
/// every access.
std::optional<SmallVector<Operation *>>
accessesOf(Block &block, const SetVector<Value> &views) {
  SetVector<Operation *> accesses;
  for (Value view : views)
    for (Operation *user : view.getUsers()) {
      auto viewOp = dyn_cast<ViewLikeOpInterface>(user);
      if (viewOp && viewOp.getViewSource() == view)
        continue;
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor ||
          (ancestor == user && isa<memref::ExtractAlignedPointerAsIndexOp,
                                   memref::ExtractStridedMetadataOp>(user)))
        return std::nullopt;
      accesses.insert(ancestor);
    }
  SmallVector<Operation *> ordered = accesses.takeVector();
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// The init of `op`, when `op` writes all of it and reads none of it nor
/// anything else of `views`: a linalg op on buffers, its one init one of
/// `views` holding all of `buffer`, all loops parallel, the init's map the
/// identity, and its body not reading the init's value.
OpOperand *wholeWriteOf(Operation *op, const SetVector<Value> &views,
                        MemRefType buffer) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return nullptr;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  if (!views.contains(init->get()) ||
      !isWholeView(init->get(), buffer.getNumElements()) ||
      !linalgOp.getMatchingIndexingMap(init).isIdentity() ||
      linalgOp.payloadUsesValueFromOperand(init))
    return nullptr;
  bool readsViews = false;
  op->walk([&](Operation *nested) {
    for (OpOperand &operand : nested->getOpOperands())
      if (&operand != init && views.contains(operand.get()))
        readsViews = true;
  });
  return readsViews ? nullptr : init;
}

/// A view of `buffer` (identity layout) with the shape of `type`, by one
/// reshape; null when no reshape gives it.
Value reshapedTo(OpBuilder &b, Location loc, Value buffer, MemRefType type) {
  auto from = cast<MemRefType>(buffer.getType());
  if (from.getShape() == type.getShape())
    return buffer;
  if (from.getRank() > type.getRank()) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(from, type);
    if (!groups)
      return {};
    return b.create<memref::CollapseShapeOp>(loc, buffer, *groups);
  }
  if (from.getRank() < type.getRank()) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(type, from);
    if (!groups)
      return {};
    return b.create<memref::ExpandShapeOp>(loc, type.getShape(), buffer,
                                           *groups);
  }
  return {};
}

/// Elides `copy` when it may (see the file comment); returns whether it did.
bool elideCopy(linalg::CopyOp copy) {
  Block &block = *copy->getBlock();
  auto destAlloc = copy.getOutputs()[0].getDefiningOp<memref::AllocOp>();
  Value source = copy.getInputs()[0];
  // The source: a whole view of a buffer that the function allocates.
  Value root = rootBuffer(source);
  auto sourceAlloc = root.getDefiningOp<memref::AllocOp>();
  if (!destAlloc || !sourceAlloc || destAlloc->getBlock() != &block ||
      !destAlloc.getType().hasStaticShape() ||
      !destAlloc.getType().getLayout().isIdentity() ||
      !destAlloc.getDynamicSizes().empty() ||
      !destAlloc.getSymbolOperands().empty() ||
      !sourceAlloc.getType().getLayout().isIdentity() ||
      sourceAlloc.getType().getElementType() !=
          destAlloc.getType().getElementType() ||
      !isWholeView(source, sourceAlloc.getType().getNumElements()))
    return false;
  MemRefType buffer = sourceAlloc.getType();
  SetVector<Value> views = viewsOf(root);
  SetVector<Value> destViews = viewsOf(destAlloc);

  // Nothing touches the destination before the copy.
  std::optional<SmallVector<Operation *>> destAccesses =
      accessesOf(block, destViews);
  std::optional<SmallVector<Operation *>> accesses = accessesOf(block, views);
  if (!destAccesses || !accesses || destAccesses->front() != copy)
    return false;

  // The source's last writer writes all of it, and touches nothing of the
  // destination.
  auto at = llvm::find(*accesses, copy.getOperation());
  if (at == accesses->end() || at == accesses->begin())
    return false;
  Operation *writer = *std::prev(at);
  OpOperand *init = wholeWriteOf(writer, views, buffer);
  if (!init || llvm::is_contained(*destAccesses, writer))
    return false;

  // After the copy, the source is freed, written whole, or left alone.
  if (std::next(at) != accesses->end()) {
    Operation *next = *std::next(at);
    if (!isa<memref::DeallocOp>(next) && !wholeWriteOf(next, views, buffer))
      return false;
  }

  OpBuilder b(writer);
  if (!destAlloc->isBeforeInBlock(writer))
    destAlloc->moveBefore(writer);
  Value into = reshapedTo(b, writer->getLoc(), destAlloc,
                          cast<MemRefType>(init->get().getType()));
  if (!into)
    return false;
  init->set(into);
  copy.erase();
  return true;
}

struct ElideCopies
    : public mlir::tfc::impl::TfcGpuElideCopiesBase<ElideCopies> {
  void runOnOperation() override {
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) {
      if (copy.hasPureBufferSemantics())
        copies.push_back(copy);
    });
    for (linalg::CopyOp copy : copies)
      elideCopy(copy);
  }
};

} // namespace
