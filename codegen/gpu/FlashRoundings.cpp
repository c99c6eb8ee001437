//===- FlashRoundings.cpp - The tfc-gpu-flash-roundings pass --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A FlashAttention kernel stores its float32 outputs (the gradient's dQ,
/// dK and dV) two channels of a row at a time. A bf16 build then rounds
/// each to bf16 in an element-wise op of its own for the contractions
/// that read it: one more kernel, which reads the whole output back. This
/// pass has the kernel store the rounded pair as well, right after each
/// float32 store, and drops the rounding.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"
#include "passes/Utils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUFLASHROUNDINGS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// A marked store of a FlashAttention kernel: the pair it stores and its
/// byte offset from the buffer's aligned pointer.
struct RowStore {
  LLVM::StoreOp store;
  Value offset;
};

/// The buffer and the store of `store` when it is a marked store to a
/// buffer's aligned pointer plus a byte offset, as storeAtByteOffset
/// makes it.
std::optional<std::pair<Value, RowStore>> rowStoreOf(LLVM::StoreOp store) {
  if (!store->hasAttr(kFlashRowStoreAttr))
    return std::nullopt;
  auto pointer = store.getAddr().getDefiningOp<LLVM::IntToPtrOp>();
  auto address =
      pointer ? pointer.getArg().getDefiningOp<arith::IndexCastOp>() : nullptr;
  auto sum = address ? address.getIn().getDefiningOp<arith::AddIOp>() : nullptr;
  auto base =
      sum ? sum.getLhs().getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>()
          : nullptr;
  if (!base)
    return std::nullopt;
  return std::make_pair(base.getSource(), RowStore{store, sum.getRhs()});
}

struct FlashRoundings
    : public mlir::tfc::impl::TfcGpuFlashRoundingsBase<FlashRoundings> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> kernels;
    getOperation().walk([&](gpu::LaunchOp launch) {
      if (launch->hasAttr(kFlashAttentionTileAttr))
        kernels.push_back(launch);
    });
    for (gpu::LaunchOp kernel : kernels)
      roundIn(kernel);
  }

  /// Applies the roundings among the next 16 ops after `kernel` of the
  /// buffers it stores by marked stores and nothing between writes.
  void roundIn(gpu::LaunchOp kernel) {
    llvm::SmallMapVector<Value, SmallVector<RowStore>, 4> stored;
    kernel.walk([&](LLVM::StoreOp store) {
      if (auto row = rowStoreOf(store))
        stored[row->first].push_back(row->second);
    });
    if (stored.empty())
      return;
    SmallVector<Value> kernelReads, kernelWrites, reads, writes;
    if (!bufferEffects(kernel, kernelReads, kernelWrites))
      return;
    Operation *next = kernel->getNextNode();
    for (int64_t count = 0; next && count < 16; ++count) {
      Operation *op = next;
      next = next->getNextNode();
      auto rounding = dyn_cast<linalg::GenericOp>(op);
      if (rounding && isBF16Rounding(rounding)) {
        Value source = rounding.getDpsInputs()[0];
        Value target = rounding.getDpsInits()[0];
        auto it = stored.find(source);
        if (it != stored.end() && applies(kernel, source, target, kernelReads,
                                          kernelWrites, reads, writes)) {
          storeRounded(kernel, it->second, target);
          rounding->erase();
          stored.erase(source);
          if (stored.empty())
            return;
          continue;
        }
      }
      if (!bufferEffects(op, reads, writes))
        return;
      // A buffer written again is not the kernel's any more.
      for (Value written : writes)
        stored.erase(written);
      if (stored.empty())
        return;
    }
  }

  /// Whether the rounding of `source` into `target` can move into
  /// `kernel`: `target` a whole buffer of `source`'s shape, available
  /// before the kernel, that neither the kernel nor the ops between it and
  /// the rounding (`reads`, `writes`) use.
  static bool applies(gpu::LaunchOp kernel, Value source, Value target,
                      ArrayRef<Value> kernelReads, ArrayRef<Value> kernelWrites,
                      ArrayRef<Value> reads, ArrayRef<Value> writes) {
    auto sourceType = dyn_cast<MemRefType>(source.getType());
    auto targetType = dyn_cast<MemRefType>(target.getType());
    if (!sourceType || !targetType || rootBuffer(source) != source ||
        rootBuffer(target) != target ||
        sourceType.getShape() != targetType.getShape() ||
        !sourceType.getElementType().isF32() ||
        !sourceType.getLayout().isIdentity() ||
        !targetType.getLayout().isIdentity() || !availableAt(target, kernel))
      return false;
    for (ArrayRef<Value> used : {kernelReads, kernelWrites, reads, writes})
      if (llvm::is_contained(used, target))
        return false;
    return true;
  }

  /// After each of `stores` (of `kernel`), the pair it stores rounded to
  /// bf16, stored at half its byte offset in `target`.
  static void storeRounded(gpu::LaunchOp kernel, ArrayRef<RowStore> stores,
                           Value target) {
    moveDefinitionBefore(target, kernel);
    for (RowStore row : stores) {
      LLVM::StoreOp store = row.store;
      OpBuilder b(store->getNextNode());
      Location loc = store.getLoc();
      auto type = cast<VectorType>(store.getValue().getType());
      Value rounded = b.create<arith::TruncFOp>(
          loc, VectorType::get(type.getShape(), b.getBF16Type()),
          store.getValue());
      Value offset = b.create<arith::DivUIOp>(
          loc, row.offset, b.create<arith::ConstantIndexOp>(loc, 2));
      storeAtByteOffset(b, loc, rounded, target, offset,
                        store.getAlignment().value_or(8) / 2);
    }
  }
};

} // namespace
