//===- TensorCorePlan.h - How a contraction runs on tensor cores -*- C++
//-*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The plan of tfc-gpu-tensor-core-contractions' kernel for one
/// contraction (TensorCoreContractions.cpp builds it): which loop
/// dimensions are m, n and k, the block's tile, its k step and stages of
/// shared memory, and the element-wise ops its stores take over; and the
/// split of a contraction with too few output tiles along k.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPU_TENSORCOREPLAN_H
#define TFC_CODEGEN_GPU_TENSORCOREPLAN_H

#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace mlir::tfc::tensorcore {

/// The threads of a block: 4 warps, 2 along the rows and 2 along the
/// columns.
constexpr int64_t kWarp = 32, kWarpsAcross = 2,
                  kBlockThreads = kWarp * kWarpsAcross * kWarpsAcross;
/// The k step of the block's loop, and of one mma.
constexpr int64_t kDepth = 32, kMmaDepth = 16;
/// The mma tile: 16 rows x 8 columns.
constexpr int64_t kMmaRows = 16, kMmaCols = 8;
/// Elements of one 16-byte copy.
constexpr int64_t kCopyElements = kBf16PerChunk;
/// The static shared memory of a block.
constexpr int64_t kSharedBytes = 48 * 1024;
/// The k step of the warpgroup kernel's loop (a 128-byte swizzled row of
/// bf16), of one wgmma, and the most shared memory of its stages: two
/// blocks fit in a multiprocessor of an H100 or H200 (228 KiB, 1 KiB of it
/// reserved per block; 1 KiB more for the stages' alignment), so that one
/// block's stores overlap the other's k loop.
constexpr int64_t kWarpgroupDepth = 64, kWarpgroupMmaDepth = 16,
                  kWarpgroupSharedBytes = 111 * 1024;
/// The rows of one wgmma (a warpgroup's 4 warps, 16 each).
constexpr int64_t kWarpgroupRows = 64;
/// The shortest k of one part of a split contraction, and the most parts.
constexpr int64_t kMinSplitDepth = 256, kMaxSplits = 64;

/// How a contraction runs on tensor cores.
struct TensorCorePlan {
  unsigned m, n, k;
  SmallVector<unsigned> batch; ///< the other parallel dims, outer first
  SmallVector<int64_t> extents;
  unsigned rowInput, colInput;
  /// Whether the row (column) operand's innermost dimension is k.
  bool rowKInner, colKInner;
  int64_t blockRows, blockCols;
  /// Whether the kernel runs on Hopper's warpgroup mma (wgmma) rather than
  /// `mma.sync`, and its k step.
  bool warpgroup = false;
  int64_t depth = kDepth;
  /// The stages of shared memory.
  int64_t stages;
  /// The fill of zeros the accumulators replace, if any.
  linalg::FillOp zeroFill;
  /// The rounding to bf16 that the kernel's stores do instead, if any.
  linalg::GenericOp downCast;
  /// The element-wise op after the contraction that the kernel applies to
  /// its accumulators before storing them, if any (see epilogueOf).
  linalg::GenericOp epilogue;
  /// The element-wise ops after those that read what the kernel stores,
  /// element for element (see consumersOf), which it applies after its
  /// stores, in order; and the buffers (by root) that the epilogue and
  /// they write and nothing else reads, which the kernel leaves unwritten.
  SmallVector<linalg::GenericOp> consumers;
  llvm::SmallDenseSet<Value> deadRoots;

  int64_t batchCount() const {
    int64_t count = 1;
    for (unsigned d : batch)
      count *= extents[d];
    return count;
  }
  /// The row tiles (the last cut short when they run past m) and the k
  /// steps (likewise past k).
  int64_t rowBlocks() const {
    return llvm::divideCeilSigned(extents[m], blockRows);
  }
  int64_t kSteps() const { return llvm::divideCeilSigned(extents[k], depth); }
  int64_t blocks() const {
    return rowBlocks() * (extents[n] / blockCols) * batchCount();
  }
  /// Whether the last row tile runs past m (its rows there are neither
  /// read nor stored), and the last k step past k (zeros there).
  bool raggedRows() const { return extents[m] % blockRows != 0; }
  bool raggedDepth() const { return extents[k] % depth != 0; }
  /// The bytes of one stage of shared memory.
  int64_t stageBytes() const { return (blockRows + blockCols) * depth * 2; }
};

/// The plan of `op`, or nullopt when it is no contraction this pass maps:
/// a linalg op on static bf16 inputs (two) and a float32 output, all with
/// the identity layout, one reduction dimension k, projected-permutation
/// maps, an output whose innermost dimension is n, a column input that
/// reads n and k, one of them innermost, a row input likewise with m and
/// k and not n, where m is the output's second innermost dimension, or,
/// when the column input reads that one, the one other dimension of the
/// output that it does not read (such as a Performer chunk's positions,
/// with a head between them and n); the rest are batch dimensions; a body
/// `acc + a * b`; n a multiple of 64 or 32, m and k of 8 (one 16-byte
/// copy: a row tile past m, or a k step past k, is cut short). At most
/// `maxStages` stages of shared memory, as many as fit; the largest tile
/// that gives `enoughBlocks` blocks. On the warpgroup mma when `warpgroup`, k
/// is a multiple of 64 and the column tile is 64 wide or k-innermost.
std::optional<TensorCorePlan> planFor(linalg::LinalgOp op, int64_t maxStages,
                                      int64_t enoughBlocks, bool warpgroup);

/// The parts to split `plan`'s contraction into along k: none (1) when it
/// has `enoughBlocks` blocks, batch dimensions or too short a k; else the
/// fewest (a power of two) that give enough blocks, each at least 256 long
/// and a multiple of 32; for a k that 32 does not divide (8 x 2,049
/// tokens), the fewest of any number up to 64 that give enough blocks,
/// each at least 256 long and a multiple of 8, else the most that do not.
int64_t splitsFor(const TensorCorePlan &plan, int64_t enoughBlocks);

/// Splits `op` (with `plan`) along k into `splits` contractions into a
/// buffer of partial outputs [splits, m, n], filled with zeros first, and
/// an element-wise sum of them into the output (which a fill of zeros just
/// before `op` need not clear); returns the contraction of the parts.
linalg::LinalgOp splitAlongK(linalg::LinalgOp op, const TensorCorePlan &plan,
                             int64_t splits);

} // namespace mlir::tfc::tensorcore

#endif // TFC_CODEGEN_GPU_TENSORCOREPLAN_H
