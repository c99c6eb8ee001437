//===- ContractionEpilogues.h - Element-wise ops a contraction stores -----===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The element-wise ops after a contraction that tfc-gpu-tensor-core-
/// contractions folds into the kernel's stores: a rounding to bf16, the
/// epilogue (a bias, a residual) applied to the accumulators, and the
/// consumers that read what the kernel stores element for element (a bf16
/// copy, an activation, an activation's gradient); and the buffers that
/// nothing else then reads.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPU_CONTRACTIONEPILOGUES_H
#define TFC_CODEGEN_GPU_CONTRACTIONEPILOGUES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tfc {

/// The op that rounds the output of `op` to bf16 when the kernel can store
/// it rounded instead: `op` writes a buffer of its own (an allocation that
/// `zeroFill` fills with zeros first, read by nothing else and at most
/// deallocated), and the next op is an element-wise `arith.truncf` of that
/// buffer into a bf16 buffer of the same shape with the identity layout.
linalg::GenericOp downCastOf(linalg::LinalgOp op, linalg::FillOp zeroFill);

/// The element-wise op that the kernel of `op` (a contraction without
/// batch dimensions into `[rows, cols]`) can apply to its accumulators: the
/// first op after it in its block that uses its output, over the same
/// `[rows, cols]`, when the ops in between (at most 64) neither use the
/// output's buffer nor write what it reads, nor touch what it writes.
linalg::GenericOp epilogueOf(linalg::LinalgOp op, int64_t rows, int64_t cols);

/// The element-wise ops after the contraction `op` (into `[rows, cols]`)
/// and its `epilogue` that its kernel can apply as it stores: each reads,
/// whole and with the identity map, a buffer that the kernel writes (the
/// output, an init of the epilogue or of an earlier such op) through a
/// view of its elements in order, over loops whose innermost extent is
/// `cols`; writes buffers with the identity layout and map that nothing
/// between reads or writes and the kernel does not read; reads nothing
/// else that the ops in between write. At most 4, among the next 64 ops.
SmallVector<linalg::GenericOp> consumersOf(linalg::LinalgOp op,
                                           linalg::GenericOp epilogue,
                                           int64_t rows, int64_t cols);

/// The buffers (by root) that the kernel of `op` need not write:
/// allocations that only the contraction, its `zeroFill`, its `epilogue`
/// and its `consumers` use; the output only when a fill of zeros comes
/// before it (the accumulators then start from zero).
llvm::SmallDenseSet<Value> deadRootsOf(linalg::LinalgOp op,
                                       linalg::FillOp zeroFill,
                                       linalg::GenericOp epilogue,
                                       ArrayRef<linalg::GenericOp> consumers);

/// Erases `buffer`, an allocation, with its views and deallocations.
void eraseBuffer(Value buffer);

} // namespace mlir::tfc

#endif // TFC_CODEGEN_GPU_CONTRACTIONEPILOGUES_H
