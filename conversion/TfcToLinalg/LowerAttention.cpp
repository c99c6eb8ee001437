//===- LowerAttention.cpp - Lowering of tfc.attention ---------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pattern of tfc-lower-to-linalg for `tfc.attention`, one builder per
/// attention kind:
///
/// - `#tfc.softmax`: exact scaled dot-product attention, optionally causal.
/// - `#tfc.longformer`: sliding-window attention (window, dilation, causal)
///   plus global tokens with their own projections, written as dense
///   attention over a structured mask.
/// - `#tfc.performer`: FAVOR+ positive random features, every exponential
///   stabilised by a constant that cancels in the output (for causal keys a
///   running max, so that no constant depends on a later position); the
///   non-causal form contracts keys and values once, the causal form works
///   by chunks: masked dense sums within a chunk, an exclusive scan of
///   per-chunk key/value states across chunks, rescaled as the running max
///   grows.
///
/// Queries, keys and values are `[B, S, D]` with `D = H * Dh`; channel
/// `c = h * Dh + e` belongs to head `h`. Every builder works on the
/// head-split view `[B, S, H, Dh]` (a `tensor.expand_shape`, no data
/// movement) and merges heads back at the end. All shapes are static.
///
/// The building blocks come from passes/AttentionBuilders.h, which the
/// gradient lowering (LowerAttentionGrad.cpp) and tfc-blocked-attention use
/// too, so that every path computes the same numbers.
///
//===----------------------------------------------------------------------===//

#include "conversion/TfcToLinalg/LoweringUtils.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/AttentionBuilders.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::attention;

//===----------------------------------------------------------------------===//
// One builder per attention kind
//===----------------------------------------------------------------------===//

/// Exact attention: every key, or every key up to the query when causal.
static Value lowerSoftmax(OpBuilder &b, Location loc, AttentionOp op,
                          SoftmaxAttr kind) {
  bool causal = kind.getCausal();
  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value out = maskedSoftmaxAttention(b, loc, q, k, v, op.getMask(),
                                     /*globalColumns=*/Value(),
                                     /*rowOffset=*/0, CausalPairs{causal});
  return mergeHeads(b, loc, out);
}

/// Longformer attention, as dense attention over a structured mask.
///
/// Local rows (queries not in `global`) use `query`, `key`, `value` and see
/// the sliding-window band of slidingWindow plus every global column (only
/// up to themselves when causal). Each global row `g` uses
/// `global_query[g]`, `global_key` and `global_value` and sees every key
/// (up to `g` when causal); it is computed as a one-row attention and
/// inserted over the local result. The padding mask applies to all rows.
///
/// For S = 8, window 4, dilation 1, global [0], non-causal (x: allowed):
///
///        j: 0 1 2 3 4 5 6 7
///   i = 0   x x x x x x x x    global row (global projections)
///   i = 1   x x x x
///   i = 2   x x x x x
///   i = 3   x x x x x x        band |j - i| <= 2 ...
///   i = 4   x   x x x x x
///   i = 5   x     x x x x x    ... plus global column 0
///   i = 6   x       x x x x
///   i = 7   x         x x x
///
/// The local part is evaluated densely, O(S^2) like softmax attention; a
/// banded kernel would compute only the `2 * (w / 2) + 1` (causal: `w`)
/// dilated diagonals of the band plus the global columns.
static Value lowerLongformer(OpBuilder &b, Location loc, AttentionOp op,
                             LongformerAttr kind) {
  int64_t heads = op.getHeads();
  int64_t length = shapeOf(op.getKey())[1];
  bool causal = kind.getCausal();
  SmallVector<int64_t> globals = kind.getGlobalPositions();

  // Which key positions are global tokens, as a constant [S] i1 vector.
  Value globalColumns;
  if (!globals.empty())
    globalColumns = positionFlags(b, loc, globals, length);

  // Local rows: window band, plus the global columns.
  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value result = maskedSoftmaxAttention(
      b, loc, q, k, v, op.getMask(), globalColumns, /*rowOffset=*/0,
      [&](OpBuilder &nb, Location nloc, Value i, Value j, Value globalColumn) {
        return longformerLocalFilter(nb, nloc, kind, i, j, globalColumn);
      });
  if (!globals.empty())
    result = longformerGlobalRows(b, loc, result, op.getGlobalQuery(),
                                  op.getGlobalKey(), op.getGlobalValue(),
                                  op.getMask(), heads, globals, causal);
  return mergeHeads(b, loc, result);
}

/// FAVOR+ linear attention.
///
/// Non-causal: the key/value state is summed over all keys once and read by
/// every query. Causal: by chunks (see AttentionBuilders.h), the masked dense
/// form within a chunk plus the exclusive prefix state of earlier chunks;
/// later keys never reach row `i`, neither through the sums nor through
/// the keys' stabilisers (running maxima).
static Value lowerPerformer(OpBuilder &b, Location loc, AttentionOp op,
                            PerformerAttr kind) {
  int64_t heads = op.getHeads();
  bool causal = kind.getCausal();
  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value mask = op.getMask();
  int64_t length = shapeOf(v)[1];
  int64_t chunked = causal ? padCausalPerformer(b, loc, q, k, v, mask) : length;
  Value scaled = scaledFeatures(b, loc, op.getFeatures());
  Value queryFeatures =
      randomFeatures(b, loc, q, scaled, Stabiliser::Row, Value()).phi;
  FeatureMap keyMap =
      randomFeatures(b, loc, k, scaled,
                     causal ? Stabiliser::Prefix : Stabiliser::Sequence, mask);

  ArrayRef<int64_t> vShape = shapeOf(v);
  int64_t batch = vShape[0], headDim = vShape[3];
  int64_t count = shapeOf(scaled)[0];
  Type element = elementOf(v);

  if (!causal) {
    Value kv =
        filledTensor(b, loc, {batch, heads, count, headDim}, element, 0.0);
    Value z = filledTensor(b, loc, {batch, heads, count}, element, 0.0);
    std::tie(kv, z) = accumulateKeyValues(b, loc, keyMap.phi, v, kv, z);
    Value num = performerNumerator(b, loc, queryFeatures, kv);
    Value den = performerDenominator(b, loc, queryFeatures, z);
    return mergeHeads(b, loc, performerQuotient(b, loc, num, den));
  }

  CausalChunks c = buildCausalChunks(b, loc, queryFeatures, keyMap.phi,
                                     keyMap.stabiliser, v, chunked);
  auto [num, den] = chunkNumeratorDenominator(
      b, loc, c.query, c.queryScale, c.value, c.scores, c.prefixKv, c.prefixZ);
  Value out = performerQuotient(b, loc, num, den);
  return mergeHeads(b, loc, fromChunks(b, loc, out, length));
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// `tfc.attention` by the builder of its kind.
static FailureOr<Value> lowerAttention(AttentionOp op,
                                       PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Attribute kind = op.getKind();
  if (auto softmax = dyn_cast<SoftmaxAttr>(kind))
    return lowerSoftmax(rewriter, loc, op, softmax);
  if (auto longformer = dyn_cast<LongformerAttr>(kind))
    return lowerLongformer(rewriter, loc, op, longformer);
  if (auto performer = dyn_cast<PerformerAttr>(kind))
    return lowerPerformer(rewriter, loc, op, performer);
  return rewriter.notifyMatchFailure(op, "unknown attention kind");
}

void mlir::tfc::populateAttentionLoweringPatterns(RewritePatternSet &patterns) {
  lowering::addStaticLowerings(patterns, lowerAttention);
}
