//===- BlockedAttention.h - Blocks of tfc-blocked-attention -----*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the forward (BlockedAttention.cpp) and the gradient
/// (BlockedAttentionGrad.cpp) of tfc-blocked-attention share: the plan of
/// one attention's blocks, the key side of a query block's visits and the
/// masked scores of one block. Private to the pass.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_BLOCKEDATTENTION_H
#define TFC_PASSES_BLOCKEDATTENTION_H

#include "passes/AttentionBuilders.h"

#include <functional>

namespace mlir::tfc::blocked {

/// A filter of (query, key) pairs on absolute positions.
using PositionFilter =
    std::function<Value(OpBuilder &, Location, Value, Value)>;

/// Which pairs of one attention are visited, and how, by blocks of `block`
/// rows and columns.
struct BlockPlan {
  /// `tokens` is the attention's sequence length, `length` the multiple of
  /// the block that the blocks cover: when the block divides no length
  /// near `tokens`, the queries, keys and values get zero rows up to
  /// `length`, which a key mask hides (see padToBlocks).
  int64_t batch = 0, tokens = 0, length = 0, heads = 0, headDim = 0;
  int64_t block = 0, blocks = 0;
  double scale = 1.0;
  /// Key blocks before / after query block qb that can hold an allowed
  /// pair: kb in [qb - before, qb + after]; -1 means all.
  int64_t before = -1, after = -1;
  /// The pair filter of the band blocks (null: every pair).
  PositionFilter filter;
  /// The pair filter of the global columns' block (causal only).
  PositionFilter globalFilter;
  /// Longformer: the sorted global positions (their columns are visited
  /// as a block of their own, and skipped in the band blocks).
  SmallVector<int64_t> globals;
  bool causal = false;
  /// Whether each (batch, head) pair runs as one iteration of an
  /// `scf.forall` (tfc-blocked-attention's `parallel-heads`).
  bool parallelHeads = false;
  /// The `[S]` f32 flags of the global columns (1 at a global position),
  /// when there are globals.
  Value globalFlags;
  /// The global positions as an `[G]` i64 constant.
  Value globalIndex;
};

/// The key-side inputs of a query block's visits: the band blocks of
/// `k`, `v`, `mask` and, for a Longformer with globals, the global columns
/// gathered once.
struct KeySide {
  Value k, v, mask;                   // [B, S, H, Dh], [B, S]
  Value globalK, globalV, globalMask; // [B, G, H, Dh], [B, G]
};

/// Key block `kb` (at `colOffset`) of the band: its keys, values, padding
/// mask and, for a Longformer with globals, the flags of its global columns.
struct KeyBlock {
  Value k, v, mask, exclude;
};

/// The gradients of blockedForward with respect to `q`, `k` and `v`, given
/// the output `out`, its log-sum-exp `lse` and the output gradient
/// `gradOut [B, S, H, Dh]`.
struct BlockedGrads {
  Value query, key, value;
};

/// `x * c`, with `c` a constant of the type of `x`.
Value mulConst(OpBuilder &b, Location loc, Value x, double c);

/// `[lo, hi)` of the key blocks that query block `qb` visits.
std::pair<Value, Value> keyBlockRange(OpBuilder &b, Location loc,
                                      const BlockPlan &plan, Value qb);

/// `[lo, hi)` of the query blocks that visit key block `kb`.
std::pair<Value, Value> queryBlockRange(OpBuilder &b, Location loc,
                                        const BlockPlan &plan, Value kb);

/// The scaled scores of query block `q [B, T, H, Dh]` (rows from
/// `rowOffset`) against keys `k [B, Tk, H, Dh]`, `-inf` where the pair is
/// not allowed: by `plan.filter` on absolute positions, by the padding
/// `mask [B, Tk]` (keys whose mask is 0), and, for band blocks of a
/// Longformer with globals, on the global columns (`exclude [Tk]`, visited
/// in their own block). Column `jj` is at `colOffset + jj`, or at
/// `columns[jj]` (`[Tk]` index) when given. Returns `[B, H, T, Tk]`.
Value blockScores(OpBuilder &b, Location loc, const BlockPlan &plan,
                  const PositionFilter &filter, Value q, Value k, Value mask,
                  Value exclude, Value columns, Value rowOffset,
                  Value colOffset);

/// The key side of `k`, `v` and `mask` under `plan`: the band as it is and,
/// for a Longformer with globals, the global columns gathered once.
KeySide buildKeySide(OpBuilder &b, Location loc, const BlockPlan &plan, Value k,
                     Value v, Value mask);

/// The band's key block at `colOffset`.
KeyBlock sliceKeyBlock(OpBuilder &b, Location loc, const BlockPlan &plan,
                       const KeySide &keys, Value colOffset);

/// The gradients of blocked attention of head-split `q, k, v [B, S, H, Dh]`
/// with the padding `mask`, given its output `out`, log-sum-exp `lse` and
/// output gradient `gradOut`, by key blocks (outer) and the query blocks
/// that see them (inner).
BlockedGrads blockedBackwardOf(OpBuilder &b, Location loc,
                               const BlockPlan &plan, Value q, Value k, Value v,
                               Value mask, Value out, Value lse, Value gradOut);

} // namespace mlir::tfc::blocked

#endif // TFC_PASSES_BLOCKEDATTENTION_H
