//===- AttentionBuilders.h - Building blocks of attention -------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pieces that the lowerings of `tfc.attention` (LowerAttention.cpp) and
/// of `tfc.attention_grad` (LowerAttentionGrad.cpp) share, so that the
/// backward recomputes exactly the forward's numbers: head splitting, row
/// slicing, masked softmax attention and the FAVOR+ random features and
/// key/value state, and the gradients that tfc-blocked-attention shares
/// with the gradient lowering. They are defined in AttentionBuilders.cpp.
///
/// Queries, keys and values are `[B, S, D]` with `D = H * Dh`; channel
/// `c = h * Dh + e` belongs to head `h`. The builders work on the head-split
/// view `[B, S, H, Dh]`; scores and attention weights are `[B, H, Sq, Sk]`.
/// All shapes are static.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_ATTENTIONBUILDERS_H
#define TFC_PASSES_ATTENTIONBUILDERS_H

#include "dialect/TfcDialect.h"
#include "passes/Utils.h"

namespace mlir::tfc::attention {

//===----------------------------------------------------------------------===//
// Generic builders
//===----------------------------------------------------------------------===//

/// The affine map over `numDims` loops whose results are the loop dims
/// `dims`, in order.
AffineMap loopDims(OpBuilder &b, unsigned numDims, ArrayRef<unsigned> dims);

/// A `linalg.generic` reading `inputs` through `inputMaps` and updating
/// `init` through `outputMap`. Loops that `outputMap` does not use are
/// reductions. `body` receives the input elements followed by the current
/// output element and returns the new output element.
Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                   ArrayRef<AffineMap> inputMaps, AffineMap outputMap,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// buildGeneric accumulating the product of its two `inputs` into `init`
/// (`init += a * b`): a contraction over the loops `outputMap` leaves out.
Value accumulateProducts(OpBuilder &b, Location loc, ValueRange inputs,
                         Value init, ArrayRef<AffineMap> inputMaps,
                         AffineMap outputMap);

/// `acc + x * y`.
Value multiplyAdd(OpBuilder &b, Location loc, Value acc, Value x, Value y);

/// The float constant `-inf` of type `element`.
Value negativeInfinity(OpBuilder &b, Location loc, Type element);

/// `lhs && rhs`, where either may be null (meaning true).
Value conjunction(OpBuilder &b, Location loc, Value lhs, Value rhs);

/// `num / den` where `den > 0`, else 0: a softmax row's normalisation, with
/// a row that sees no key (sum 0) left at 0.
Value ratioOrZero(OpBuilder &b, Location loc, Value num, Value den);

/// `allowed && keyMask != 0`: drops the padding keys, whose float mask entry
/// `keyMask` is 0. `allowed` may be null (every pair).
Value keepRealKeys(OpBuilder &b, Location loc, Value allowed, Value keyMask);

/// The score `scaled` where `allowed`, else `-inf`; `scaled` itself when
/// `allowed` is null.
Value maskedScore(OpBuilder &b, Location loc, Value allowed, Value scaled);

//===----------------------------------------------------------------------===//
// Heads and rows
//===----------------------------------------------------------------------===//

/// `[B, S, H * Dh] -> [B, S, H, Dh]`.
Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads);

/// `[B, S, H, Dh] -> [B, S, H * Dh]`.
Value mergeHeads(OpBuilder &b, Location loc, Value x);

/// `x[..., offset : offset + size, ...]` along dimension `dim`.
Value sliceDim(OpBuilder &b, Location loc, Value x, unsigned dim,
               OpFoldResult offset, int64_t size);

/// `dest` with `block` written at `offset` along dimension `dim`.
Value insertDim(OpBuilder &b, Location loc, Value block, Value dest,
                unsigned dim, OpFoldResult offset);

/// Row `position` of `x [B, S, ...]` as `[B, 1, ...]`.
Value extractRow(OpBuilder &b, Location loc, Value x, OpFoldResult position);

/// `dest [B, S, ...]` with row `position` replaced by `row [B, 1, ...]`.
Value insertRow(OpBuilder &b, Location loc, Value row, Value dest,
                OpFoldResult position);

/// `x [B, S, ...]` with rows of `padding` appended along dimension 1 up
/// to `length`.
Value padPositions(OpBuilder &b, Location loc, Value x, int64_t length,
                   double padding = 0.0);

/// The first `length` rows of `x [B, S, ...]` along dimension 1 (a view).
Value leadingPositions(OpBuilder &b, Location loc, Value x, int64_t length);

//===----------------------------------------------------------------------===//
// Softmax attention over a structured mask
//===----------------------------------------------------------------------===//

/// Builds, inside a `linalg.generic` body, whether query position `i` may
/// attend key position `j` (both `index`). `globalColumn` is the `i1` "key
/// `j` is a global token" when the caller supplied global columns, else
/// null. Returns an `i1`, or null when every pair is allowed.
using PairFilter = function_ref<Value(OpBuilder &, Location, Value i, Value j,
                                      Value globalColumn)>;

/// `scores[b, h, i, j] = sum_e q[b, i, h, e] * k[b, j, h, e]` for head-split
/// `q [B, Sq, H, Dh]` and `k [B, Sk, H, Dh]`.
Value dotScores(OpBuilder &b, Location loc, Value q, Value k);

/// Scales `scores [B, H, Sq, Sk]` by `scale` and replaces the pairs that
/// may not attend by `-inf`: those rejected by `filter` (with the query
/// position offset by `rowOffset`) and, when `mask [B, Sk]` is given, the
/// keys whose mask is 0. `globalColumns`, when given, is a `[Sk]` `i1`
/// tensor handed to `filter`.
Value maskScores(OpBuilder &b, Location loc, Value scores, double scale,
                 Value mask, Value globalColumns, int64_t rowOffset,
                 PairFilter filter);

/// Softmax over the last dimension of `scores [B, H, Sq, Sk]`, where `-inf`
/// marks a pair that may not attend. A row with no allowed pair gives all
/// zeros (not NaN): its max is replaced by 0 before the exponential, and a
/// zero sum gives zero weights instead of 0 / 0.
Value softmaxRows(OpBuilder &b, Location loc, Value scores);

/// `out[b, i, h, e] = init[b, i, h, e] + sum_j probs[b, h, i, j] *
/// v[b, j, h, e]` for `probs [B, H, Sq, Sk]` and head-split
/// `v [B, Sk, H, Dh]`; `init` (`[B, Sq, H, Dh]`) is zero when null.
Value weightValues(OpBuilder &b, Location loc, Value probs, Value v,
                   Value init = Value());

/// `out[b, j, h, e] = init[b, j, h, e] + sum_i weights[b, h, i, j] *
/// x[b, i, h, e]` for `weights [B, H, Sq, Sk]` and head-split
/// `x [B, Sq, H, Dh]`: the transposed counterpart of weightValues. `init`
/// (`[B, Sk, H, Dh]`) is zero when null.
Value weightQueries(OpBuilder &b, Location loc, Value weights, Value x,
                    Value init = Value());

/// The scale `1 / sqrt(Dh)` of the scores of head-split `q [B, S, H, Dh]`.
double scoreScale(Value q);

/// Dense softmax attention of head-split `q [B, Sq, H, Dh]` over
/// `k, v [B, Sk, H, Dh]` with scale `1/sqrt(Dh)`, restricted to the pairs
/// that `filter` and `mask` allow (see maskScores). Returns
/// `[B, Sq, H, Dh]`.
Value maskedSoftmaxAttention(OpBuilder &b, Location loc, Value q, Value k,
                             Value v, Value mask, Value globalColumns,
                             int64_t rowOffset, PairFilter filter);

/// The causal filter `j <= i`, or null (all pairs) when not causal.
Value causalFilter(OpBuilder &b, Location loc, bool causal, Value i, Value j);

/// causalFilter as a PairFilter: `maskedSoftmaxAttention(..., CausalPairs{c})`.
struct CausalPairs {
  bool causal;
  Value operator()(OpBuilder &b, Location loc, Value i, Value j,
                   Value /*globalColumn*/) const {
    return causalFilter(b, loc, causal, i, j);
  }
};

/// The query, key and value of an attention or attention gradient op, each
/// split into its heads (`[B, S, H, Dh]`).
struct HeadSplitQkv {
  Value q, k, v;
};

/// splitHeads of `op`'s query, key and value, built in that order.
template <typename AttentionLikeOp>
HeadSplitQkv splitQkvHeads(OpBuilder &b, Location loc, AttentionLikeOp op) {
  int64_t heads = op.getHeads();
  Value q = splitHeads(b, loc, op.getQuery(), heads);
  Value k = splitHeads(b, loc, op.getKey(), heads);
  Value v = splitHeads(b, loc, op.getValue(), heads);
  return {q, k, v};
}

//===----------------------------------------------------------------------===//
// #tfc.longformer
//===----------------------------------------------------------------------===//

/// Whether local query `i` may attend key `j` through the sliding window of
/// `kind` (window w, dilation r):
///
///   non-causal: (j - i) % r == 0 and |j - i| <= (w / 2) * r
///               (w / 2 dilated keys on each side, plus i itself);
///   causal:     0 <= i - j < w * r and (i - j) % r == 0
///               (the w dilated keys ending at i).
///
/// In the `[Sq, Sk]` score matrix this is a band of diagonals; the dense
/// formulation evaluates it for every pair.
Value slidingWindow(OpBuilder &b, Location loc, LongformerAttr kind, Value i,
                    Value j);

/// A constant `[length]` `i1` vector, true at `positions`.
Value positionFlags(OpBuilder &b, Location loc, ArrayRef<int64_t> positions,
                    int64_t length);

/// The filter of a Longformer's local rows: the sliding window of `kind`,
/// plus the global columns (only up to the query when causal) when
/// `globalColumn` is given.
Value longformerLocalFilter(OpBuilder &b, Location loc, LongformerAttr kind,
                            Value i, Value j, Value globalColumn);

/// Replaces the global rows `globals` of the head-split local result
/// `result [B, S, H, Dh]` by one-row softmax attentions of `globalQuery`'s
/// rows over every key of `globalKey` and `globalValue` (`[B, S, H * Dh]`;
/// up to the row when causal), masked by `mask`.
Value longformerGlobalRows(OpBuilder &b, Location loc, Value result,
                           Value globalQuery, Value globalKey,
                           Value globalValue, Value mask, int64_t heads,
                           ArrayRef<int64_t> globals, bool causal);

/// Gradients of a head-split attention's queries, keys and values, each
/// `[B, S, H, Dh]`.
struct AttentionGrads {
  Value query, key, value;
};

/// Gradients of maskedSoftmaxAttention (same `q`, `k`, `v`, `mask`,
/// `globalColumns`, `rowOffset` and `filter`) given the output gradient
/// `gradOut [B, Sq, H, Dh]`. The key and value gradients are added to
/// `keyInit` and `valueInit` (`[B, Sk, H, Dh]`) when given.
AttentionGrads
maskedSoftmaxAttentionGrad(OpBuilder &b, Location loc, Value q, Value k,
                           Value v, Value mask, Value globalColumns,
                           int64_t rowOffset, PairFilter filter, Value gradOut,
                           Value keyInit = Value(), Value valueInit = Value());

/// The gradients of longformerGlobalRows with respect to `globalQuery`,
/// `globalKey` and `globalValue` (`[B, S, H * Dh]` each), given the
/// attention's head-split output gradient `gradOut [B, S, H, Dh]` (only its
/// global rows are read).
SmallVector<Value> longformerGlobalRowGrads(OpBuilder &b, Location loc,
                                            Value globalQuery, Value globalKey,
                                            Value globalValue, Value mask,
                                            Value gradOut, int64_t heads,
                                            ArrayRef<int64_t> globals,
                                            bool causal);

//===----------------------------------------------------------------------===//
// #tfc.performer
//===----------------------------------------------------------------------===//
//
// FAVOR+ features are `phi(x)_m = exp(W_m . x' - |x'|^2 / 2) / sqrt(M)`
// with `x' = x / Dh^(1/4)`. Every exponential is taken after subtracting a
// stabiliser, a constant that cancels between the numerator and the
// denominator of the output:
//
// - queries: the max over m of the row's own exponent (row i only);
// - keys, non-causal: the max of the exponent over all unmasked keys and
//   features of the sequence;
// - keys, causal: the running max `c_j` over the unmasked keys `j' <= j`
//   and all features, so that no constant depends on a later position. The
//   chunked sums rescale by `exp(c_j - c_i) <= 1` wherever a key stabilised
//   by `c_j` meets a query or a state stabilised by a larger `c_i`, as
//   online softmax rescales its accumulator.
//
// The stabilised features are at most `1 / sqrt(M)`, so nothing
// overflows, and the largest key feature is exactly `1 / sqrt(M)`, so the
// sums never all underflow however large the keys are. There is no
// additive epsilon in the denominator: an epsilon would not cancel with
// the stabilisers (its weight would change with the largest key). Instead
// a row whose stabilised denominator is at most kPerformerMinDenominator
// (every query-key product underflowed: a query that attends nowhere) gives
// a zero output and zero gradients, as a fully masked softmax row does.
// Everywhere else the output is exactly `num / den`, invariant to the
// stabilisers, whose gradient is therefore zero: the gradient lowering
// treats them as constants.

/// A row whose stabilised FAVOR+ denominator is at most this gives zero.
/// The stabilised denominator of a query that matches a key is of order
/// `1 / M` or more (both features up to `1 / sqrt(M)`); this bound is far
/// below it, and large enough that the gradients, which scale with
/// `1 / den` (`dO / den`, `dO * out / den`), stay far from the largest
/// float32.
inline constexpr double kPerformerMinDenominator = 1e-20;

/// The most negative finite value of the float type `element`, the
/// stabiliser of a sequence with no unmasked key yet.
double lowestFinite(Type element);

/// `features [M, Dh]` times the input scale `Dh^(-1/4)`, so that the
/// projections below are plain multiply-add contractions.
Value scaledFeatures(OpBuilder &b, Location loc, Value features);

/// The random projections of head-split `x [B, S, H, Dh]` by `scaled =
/// features * Dh^(-1/4)` (scaledFeatures): with `x' = x / Dh^(1/4)`,
///
///   projection[b, s, h, m] = W_m . x'.
///
/// With `transposed`, `scaled` is `[Dh, M]` (the transpose of
/// scaledFeatures). Outside a parallel loop (batch-wide ops) it is one
/// matrix product of the rows `[B S H, Dh]`, which the GPU's tensor cores
/// take; inside one (a (batch, head) pair's thread) a contraction over the
/// head-split shape.
Value featureProjection(OpBuilder &b, Location loc, Value x, Value scaled,
                        bool transposed = false);

/// `|x'|^2 / 2` of head-split `x [B, S, H, Dh]`, `[B, S, H]`.
Value halfSquaredNorm(OpBuilder &b, Location loc, Value x);

/// The max over the last dimension of `projection [B, S, H, M]`,
/// `[B, S, H]`.
Value rowMaximum(OpBuilder &b, Location loc, Value projection);

/// `phi = exp(projection - offset) / sqrt(M) * mask` for `projection
/// [B, S, H, M]`, where `offset [B, S, H]` and `mask [B, S]` (1 when null)
/// broadcast; exactly 0 where the mask is 0 (whatever the exponential).
Value exponentialFeatures(OpBuilder &b, Location loc, Value projection,
                          Value offset, Value mask);

/// The running max over positions of `x [B, S, H]`: `out[b, i, h] =
/// max_{j <= i} x[b, j, h]`, computed by the chunks of performerChunking
/// (a masked max within each chunk, an exclusive max scan across chunks).
Value causalRunningMaximum(OpBuilder &b, Location loc, Value x);

/// Which constant randomFeatures subtracts before the exponential.
enum class Stabiliser {
  /// Queries: the max over m of the row's own exponent.
  Row,
  /// Non-causal keys: the max over all unmasked keys and features.
  Sequence,
  /// Causal keys: the running max over the unmasked keys up to the row.
  Prefix,
};

/// The FAVOR+ feature map of one input with the quantities it is built
/// from; the causal form and its gradient rescale by the stabilisers.
struct FeatureMap {
  /// `W_m . x'`, `[B, S, H, M]`.
  Value projection;
  /// The per-row constant subtracted from the projection before the
  /// exponential, `[B, S, H]`.
  Value offset;
  /// The stabiliser `c` of each row, `[B, S, H]` (the running max `c_j` of
  /// causal keys, which the chunked sums rescale).
  Value stabiliser;
  /// The features, `[B, S, H, M]`.
  Value phi;
};

/// FAVOR+ positive random features of head-split `x [B, S, H, Dh]` with
/// `scaled = features * Dh^(-1/4)` (scaledFeatures): with `x' = x / Dh^(1/4)`
/// and the exponent `E[s, m] = W_m . x' - |x'|^2 / 2`,
///
///   phi[b, s, h, m] = exp(E[s, m] - c[s]) / sqrt(M)
///
/// where `c` is chosen by `kind` (see Stabiliser). For queries (`Row`),
/// `|x'|^2 / 2 + c` is the max over m of the projection, which is the
/// offset; for keys the offset is `|x'|^2 / 2 + c`. `mask [B, S]`, when
/// given, multiplies the features (padding keys vanish) and keeps masked
/// rows out of the keys' stabilisers.
FeatureMap randomFeatures(OpBuilder &b, Location loc, Value x, Value scaled,
                          Stabiliser kind, Value mask, bool transposed = false);

/// Adds the key/value summaries of `keyFeatures [B, J, H, M]` and
/// `v [B, J, H, Dh]` to the running state:
///
///   kv[b, h, m, e] += sum_j keyFeatures[b, j, h, m] * v[b, j, h, e]
///   z[b, h, m]     += sum_j keyFeatures[b, j, h, m]
///
/// `kv` is `[B, H, M, Dh]` and `z` `[B, H, M]`; the updated pair is
/// returned.
std::pair<Value, Value> accumulateKeyValues(OpBuilder &b, Location loc,
                                            Value keyFeatures, Value v,
                                            Value kv, Value z);

/// `num[b, i, h, e] = sum_m phi_q[b, i, h, m] * kv[b, h, m, e]` for
/// `queryFeatures [B, I, H, M]` and `kv [B, H, M, Dh]`.
Value performerNumerator(OpBuilder &b, Location loc, Value queryFeatures,
                         Value kv);

/// `den[b, i, h] = sum_m phi_q[b, i, h, m] * z[b, h, m]` for
/// `queryFeatures [B, I, H, M]` and `z [B, H, M]`.
Value performerDenominator(OpBuilder &b, Location loc, Value queryFeatures,
                           Value z);

/// `out[..., e] = num[..., e] / den[...]` where `den >
/// kPerformerMinDenominator`, else 0, for `num [..., Dh]` and `den [...]`
/// of any rank.
Value performerQuotient(OpBuilder &b, Location loc, Value num, Value den);

//===----------------------------------------------------------------------===//
// Causal FAVOR+ by chunks
//===----------------------------------------------------------------------===//
//
// The causal form splits the sequence into NC chunks of C positions (the
// last zero-padded when C does not divide S) and works on chunked views
// `[B, NC, C, H, D]`. Within a chunk, the pairs `j <= i` are summed densely
// through masked scores `A` (`[B, NC, H, C, C]`); across chunks, each chunk
// reads the prefix state of the keys of all earlier chunks
// (`[B, NC, H, M, Dh]` and `[B, NC, H, M]`), an exclusive scan of
// per-chunk states. Every sum is a contraction over a whole chunk or
// feature dimension, which tfc-vectorize-contractions turns into FMA
// kernels; only the scans run over chunks in an `scf.for`.
//
// The keys' features are stabilised by their running max `c_j`; the
// constants (all `[B, NC, H]` or `[B, NC, C, H]`) that bring every sum to
// the stabiliser of the row that reads it are, with `E_n` the stabiliser
// at the end of chunk n and `F_n = E_{n-1}` the one before it (the lowest
// float for n = 0):
//
//   within chunk n:   A[i, j] = [j <= i] (phiQ[i] . phiK[j]) exp(c_j - c_i)
//   chunk states:     keys scaled by exp(c_j - E_n)
//   scan:             R_{n+1} = R_n exp(F_n - E_n) + state_n, prefix_n = R_n
//   reading prefix_n: queries scaled by exp(F_n - c_i).
//
// Each exponent is `<= 0` for real positions (the running max never
// decreases); it is clamped at 0 so that padding positions (stabiliser
// the lowest float) cannot make an infinity that meets a zero feature.

/// Chunk count and size of a causal sequence.
struct Chunking {
  int64_t count, size;
  /// The padded length `count * size`.
  int64_t padded() const { return count * size; }
};

/// The chunking of a causal sequence of `length` positions: chunks of at
/// most 64 positions, at least two chunks when the sequence has two
/// positions, as few padded positions as possible.
Chunking performerChunking(int64_t length);

/// `x [B, S, ...] -> [B, NC, C, ...]`, padded at the end with `padding`.
Value toChunks(OpBuilder &b, Location loc, Value x, Chunking chunks,
               double padding = 0.0);

/// `x [B, NC, C, ...] -> [B, S, ...]`, dropping the padding.
Value fromChunks(OpBuilder &b, Location loc, Value x, int64_t length);

/// The exclusive scan of `x [B, NC, ...]` over chunks: a running state `R`
/// (zero at first) visits the chunks in order (or backwards when
/// `reverse`); chunk n's output is `R`, then `R = R * decay[:, n] + x[:, n]`,
/// where `decay [B, NC, H]` (1 when null) broadcasts over the trailing
/// dimensions. Without decay, `out[:, n] = sum_{n' < n} x[:, n']` (or
/// `n' > n`).
Value exclusiveChunkScan(OpBuilder &b, Location loc, Value x, bool reverse,
                         Value decay = Value());

/// The exclusive max scan of `x [B, NC, ...]` over chunks:
/// `out[:, n] = max_{n' < n} x[:, n']`, the lowest float for n = 0.
Value exclusiveChunkMaximum(OpBuilder &b, Location loc, Value x);

/// Per-chunk key/value states of chunked `keyFeatures [B, NC, C, H, M]`
/// rescaled by `keyScale` `a [B, NC, C, H]`, given the rescaled values
/// `scaledValues = a v [B, NC, C, H, Dh]`:
///
///   kv[b, n, h, m, e] = sum_c keyFeatures[b, n, c, h, m]
///                             * scaledValues[b, n, c, h, e]
///   z[b, n, h, m]     = sum_c keyFeatures[b, n, c, h, m] * a[b, n, c, h]
///
/// (the scale multiplies the Dh-wide values, not the M-wide features).
std::pair<Value, Value> chunkStates(OpBuilder &b, Location loc,
                                    Value keyFeatures, Value keyScale,
                                    Value scaledValues);

/// `x [B, NC, C, H, D] * scale [B, NC, C, H]`, broadcast over D.
Value scaleChunkRows(OpBuilder &b, Location loc, Value x, Value scale);

/// The causal scores within each chunk, `[B, NC, H, C, C]`:
///
///   A[b, n, h, i, j] = [j <= i] exp(c_j - c_i)
///                      sum_m phiQ[b, n, i, h, m] phiK[b, n, j, h, m]
///
/// for the chunked key stabilisers `c [B, NC, C, H]`.
Value chunkScores(OpBuilder &b, Location loc, Value queryFeatures,
                  Value keyFeatures, Value stabiliser);

/// What causal FAVOR+ in chunks and its gradient both start from.
struct CausalChunks {
  Chunking chunking;
  /// Chunked query features, key features and values.
  Value query, key, value;
  /// The keys' stabilisers `c`, `[B, NC, C, H]`.
  Value stabiliser;
  /// `exp(F_n - c_i)` and `exp(c_j - E_n)`, `[B, NC, C, H]`: the factors
  /// `g` and `a` of the rescaled features `phiQ' = g phiQ` (read against the
  /// prefix states) and `phiK' = a phiK` (summed into the chunk's state).
  /// Neither product is formed: every use applies the factor to the
  /// Dh-wide operand or result instead of the M-wide features.
  Value queryScale, keyScale;
  /// `value * keyScale`, what the chunk states sum (chunkStates).
  Value scaledValue;
  /// `exp(F_n - E_n)`, `[B, NC, H]`: the scan's decay.
  Value decay;
  /// The exclusive prefix states, relative to `F_n`.
  Value prefixKv, prefixZ;
  /// The masked scores within each chunk (chunkScores).
  Value scores;
};

/// Pads the head-split `q`, `k`, `v [B, S, H, Dh]` (and `gradOut` when
/// given) with zero rows, and `mask [B, S]` when not null with zeros, up
/// to the chunks of performerChunking(S), and returns that length (S when
/// the chunks fit). The features are then computed at the padded length
/// directly: padding the `[B, S, H, M]` features themselves would copy
/// them, and the copy and the original would both be kept for the
/// gradient. The padding keys come after every real query, so causality
/// hides them (their features, scores, and the stabiliser at the end of
/// the last chunk reach only padding rows and the last chunk's state, which
/// nothing reads); the padding rows are dropped, with a zero gradient.
int64_t padCausalPerformer(OpBuilder &b, Location loc, Value &q, Value &k,
                           Value &v, Value &mask, Value *gradOut = nullptr);

/// Chunks `queryFeatures`, `keyFeatures [B, S, H, M]`, the keys'
/// stabilisers `keyStabiliser [B, S, H]` (the running max of
/// randomFeatures with Stabiliser::Prefix) and `v [B, S, H, Dh]` of a
/// sequence of `length` positions and builds their rescaling constants,
/// states and scores.
CausalChunks buildCausalChunks(OpBuilder &b, Location loc, Value queryFeatures,
                               Value keyFeatures, Value keyStabiliser, Value v,
                               int64_t length);

/// `x [B, NC, H, C, C]` times `exp(c_j - c_i)` for the chunked stabilisers
/// `c [B, NC, C, H]`, with the pairs `j > i` set to zero.
Value causalChunkMask(OpBuilder &b, Location loc, Value x, Value stabiliser);

/// The numerator `[B, NC, C, H, Dh]` and denominator `[B, NC, C, H]` of
/// causal FAVOR+ in chunks, from the chunked query features
/// `queryFeatures`, their scale `g = queryScale` (CausalChunks), values, the
/// masked scores and the exclusive prefix states `kv [B, NC, H, M, Dh]`,
/// `z [B, NC, H, M]`:
///
///   num[b, n, i, h, e] = sum_j A[b, n, h, i, j] v[b, n, j, h, e]
///                        + g[b, n, i, h] sum_m phiQ[b, n, i, h, m]
///                                              kv[b, n, h, m, e]
///   den[b, n, i, h]    = sum_j A[b, n, h, i, j]
///                        + g[b, n, i, h] sum_m phiQ[b, n, i, h, m]
///                                              z[b, n, h, m].
std::pair<Value, Value> chunkNumeratorDenominator(OpBuilder &b, Location loc,
                                                  Value queryFeatures,
                                                  Value queryScale, Value v,
                                                  Value scores, Value kv,
                                                  Value z);

} // namespace mlir::tfc::attention

#endif // TFC_PASSES_ATTENTIONBUILDERS_H
