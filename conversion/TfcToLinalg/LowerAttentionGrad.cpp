//===- LowerAttentionGrad.cpp - Lowering of tfc.attention_grad ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pattern of tfc-lower-to-linalg for `tfc.attention_grad`: the
/// gradients of `tfc.attention` of every kind with respect to its queries,
/// keys and values (and, for a Longformer with global tokens, its global
/// projections), given the gradient `dO` of the attention output. Each
/// builder recomputes the forward quantities it needs with the building
/// blocks of LowerAttention.cpp (AttentionBuilders.h), so that it
/// differentiates exactly the numbers the forward lowering produces.
///
/// - `#tfc.softmax`: with `P = softmax(S)`, `S = scale * Q K^T` masked,
///
///     dV = P^T dO,   dP = dO V^T,   dS = P o (dP - rowsum(dP o P)),
///     dQ = scale * dS K,   dK = scale * dS^T Q.
///
///   Masked pairs have `P = 0` and so contribute nothing; a fully masked
///   row (all-zero output) gets zero gradients.
/// - `#tfc.longformer`: the same over the band/global mask of the local
///   rows, whose output gradient is zeroed on the global rows (the forward
///   overwrites them); each global row is then differentiated as a one-row
///   attention through the global projections, whose gradients go to
///   `global_query` (that row only), `global_key` and `global_value`.
/// - `#tfc.performer`: through `out = num / den`, the key/value state (sums
///   over all keys; when causal, by chunks: masked dense scores within a
///   chunk and exclusive prefix states across chunks, whose adjoints are
///   reverse exclusive scans) and the FAVOR+ feature map, holding the
///   stabilisers constant (the output does not depend on them). The
///   `features` buffer and the mask get no gradient.
///
//===----------------------------------------------------------------------===//

#include "conversion/TfcToLinalg/LoweringUtils.h"
#include "conversion/TfcToLinalg/TfcToLinalg.h"
#include "passes/AttentionBuilders.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::attention;

//===----------------------------------------------------------------------===//
// #tfc.softmax
//===----------------------------------------------------------------------===//

/// Gradients of exact attention: every key, or every key up to the query
/// when causal.
static SmallVector<Value> lowerSoftmaxGrad(OpBuilder &b, Location loc,
                                           AttentionGradOp op,
                                           SoftmaxAttr kind) {
  int64_t heads = op.getHeads();
  bool causal = kind.getCausal();
  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value gradOut = splitHeads(b, loc, op.getGrad(), heads);
  AttentionGrads grads = maskedSoftmaxAttentionGrad(
      b, loc, q, k, v, op.getMask(), /*globalColumns=*/Value(),
      /*rowOffset=*/0, CausalPairs{causal}, gradOut);
  return {mergeHeads(b, loc, grads.query), mergeHeads(b, loc, grads.key),
          mergeHeads(b, loc, grads.value)};
}

//===----------------------------------------------------------------------===//
// #tfc.longformer
//===----------------------------------------------------------------------===//

/// Gradients of Longformer attention (see lowerLongformer in
/// LowerAttention.cpp).
///
/// The local rows are dense attention over the band/global mask of
/// longformerLocalFilter; since the forward replaces the global rows of
/// that result, their output gradient is zeroed before differentiating it
/// (so the local `query` gets no gradient on global rows). Each global row
/// `g` is a one-row attention of `global_query[g]` over `global_key` and
/// `global_value` (up to `g` when causal): its query gradient is row `g` of
/// the `global_query` gradient (the other rows are 0), and its key and
/// value gradients accumulate over the global rows.
static SmallVector<Value> lowerLongformerGrad(OpBuilder &b, Location loc,
                                              AttentionGradOp op,
                                              LongformerAttr kind) {
  int64_t heads = op.getHeads();
  int64_t queryLength = shapeOf(op.getQuery())[1];
  int64_t keyLength = shapeOf(op.getKey())[1];
  bool causal = kind.getCausal();
  SmallVector<int64_t> globals = kind.getGlobalPositions();

  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value gradOut = splitHeads(b, loc, op.getGrad(), heads);
  Type element = elementOf(q);

  // Local rows: the global rows' output gradient belongs to the global
  // projections.
  Value globalColumns, localGradOut = gradOut;
  if (!globals.empty()) {
    globalColumns = positionFlags(b, loc, globals, keyLength);
    Value globalRows = positionFlags(b, loc, globals, queryLength);
    localGradOut = elementwise(
        b, loc, shapeOf(gradOut), element, ValueRange{gradOut, globalRows},
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return nb.create<arith::SelectOp>(
              nloc, args[1], floatConstant(nb, nloc, element, 0.0), args[0]);
        },
        {b.getMultiDimIdentityMap(4), loopDims(b, 4, {1})});
  }
  AttentionGrads local = maskedSoftmaxAttentionGrad(
      b, loc, q, k, v, op.getMask(), globalColumns, /*rowOffset=*/0,
      [&](OpBuilder &nb, Location nloc, Value i, Value j, Value globalColumn) {
        return longformerLocalFilter(nb, nloc, kind, i, j, globalColumn);
      },
      localGradOut);
  SmallVector<Value> results = {mergeHeads(b, loc, local.query),
                                mergeHeads(b, loc, local.key),
                                mergeHeads(b, loc, local.value)};
  if (globals.empty())
    return results;

  SmallVector<Value> globalGrads = longformerGlobalRowGrads(
      b, loc, op.getGlobalQuery(), op.getGlobalKey(), op.getGlobalValue(),
      op.getMask(), gradOut, heads, globals, causal);
  results.append(globalGrads.begin(), globalGrads.end());
  return results;
}

//===----------------------------------------------------------------------===//
// #tfc.performer
//===----------------------------------------------------------------------===//

/// Gradients of `out = num / den` (performerQuotient) for `num [..., Dh]`,
/// `den [...]` (any rank) and the output gradient `gradOut` (shaped as
/// `num`):
///
///   dNum[..., e] = dO[..., e] / den[...]
///   dDen[...]    = -sum_e dO[..., e] * num[..., e] / den / den
///
/// where `den > kPerformerMinDenominator`; both are 0 elsewhere (the output
/// is 0 there).
static std::pair<Value, Value>
quotientGrads(OpBuilder &b, Location loc, Value gradOut, Value num, Value den) {
  ArrayRef<int64_t> shape = shapeOf(gradOut);
  unsigned rank = shape.size();
  Type element = elementOf(gradOut);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = identity.getMajorSubMap(rank - 1);
  auto positive = [&](OpBuilder &nb, Location nloc, Value value) -> Value {
    return nb.create<arith::CmpFOp>(
        nloc, arith::CmpFPredicate::OGT, value,
        floatConstant(nb, nloc, element, kPerformerMinDenominator));
  };
  Value numGrad =
      elementwise(b, loc, shape, element, ValueRange{gradOut, den},
                  [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                    Value quotient =
                        nb.create<arith::DivFOp>(nloc, args[0], args[1]);
                    return nb.create<arith::SelectOp>(
                        nloc, positive(nb, nloc, args[1]), quotient,
                        floatConstant(nb, nloc, element, 0.0));
                  },
                  {identity, rowMap});
  // The last loop (e) is reduced.
  Value denGrad = buildGeneric(
      b, loc, ValueRange{gradOut, num, den},
      filledTensor(b, loc, shape.drop_back(), element, 0.0),
      {identity, identity, rowMap}, rowMap,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        // dO * num / den / den: den^2 would underflow in float32 for the
        // smallest denominators that are kept.
        Value product = nb.create<arith::MulFOp>(nloc, args[0], args[1]);
        Value term = nb.create<arith::DivFOp>(nloc, product, args[2]);
        term = nb.create<arith::DivFOp>(nloc, term, args[2]);
        Value sum = nb.create<arith::SubFOp>(nloc, args[3], term);
        return nb.create<arith::SelectOp>(nloc, positive(nb, nloc, args[2]),
                                          sum, args[3]);
      });
  return {numGrad, denGrad};
}

/// The gradient of the query features `[B, I, H, M]` read against the state
/// `kv [B, H, M, Dh]`, `z [B, H, M]`:
///
///   dPhiQ[b, i, h, m] = sum_e dNum[b, i, h, e] * kv[b, h, m, e]
///                       + dDen[b, i, h] * z[b, h, m].
static Value queryFeatureGrads(OpBuilder &b, Location loc, Value numGrad,
                               Value denGrad, Value kv, Value z) {
  ArrayRef<int64_t> gShape = shapeOf(numGrad);
  int64_t count = shapeOf(z)[2];
  Type element = elementOf(z);
  SmallVector<int64_t> shape = {gShape[0], gShape[1], gShape[2], count};
  Value init =
      elementwise(b, loc, shape, element, ValueRange{denGrad, z},
                  [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                    return nb.create<arith::MulFOp>(nloc, args[0], args[1]);
                  },
                  {loopDims(b, 4, {0, 1, 2}), loopDims(b, 4, {0, 2, 3})});
  // Loops (b, i, h, m, e); e is reduced.
  return accumulateProducts(
      b, loc, ValueRange{numGrad, kv}, init,
      {loopDims(b, 5, {0, 1, 2, 4}), loopDims(b, 5, {0, 2, 3, 4})},
      loopDims(b, 5, {0, 1, 2, 3}));
}

/// Adds the queries' contributions to the gradient of the key/value state:
///
///   dKv[b, h, m, e] += sum_i phiQ[b, i, h, m] * dNum[b, i, h, e]
///   dZ[b, h, m]     += sum_i phiQ[b, i, h, m] * dDen[b, i, h]
///
/// for `queryFeatures [B, I, H, M]`; the updated pair is returned.
static std::pair<Value, Value>
accumulateStateGrads(OpBuilder &b, Location loc, Value queryFeatures,
                     Value numGrad, Value denGrad, Value kvGrad, Value zGrad) {
  // Loops (b, h, m, e, i); i is reduced.
  Value newKvGrad = accumulateProducts(
      b, loc, ValueRange{queryFeatures, numGrad}, kvGrad,
      {loopDims(b, 5, {0, 4, 1, 2}), loopDims(b, 5, {0, 4, 1, 3})},
      loopDims(b, 5, {0, 1, 2, 3}));
  // Loops (b, h, m, i); i is reduced.
  Value newZGrad = accumulateProducts(
      b, loc, ValueRange{queryFeatures, denGrad}, zGrad,
      {loopDims(b, 4, {0, 3, 1, 2}), loopDims(b, 4, {0, 3, 1})},
      loopDims(b, 4, {0, 1, 2}));
  return {newKvGrad, newZGrad};
}

/// The gradients of the key features `keyFeatures [B, J, H, M]` and of the
/// values `v [B, J, H, Dh]` from the state gradient `dKv [B, H, M, Dh]`,
/// `dZ [B, H, M]`:
///
///   dPhiK[b, j, h, m] = sum_e v[b, j, h, e] * dKv[b, h, m, e] + dZ[b, h, m]
///   dV[b, j, h, e]    = sum_m phiK[b, j, h, m] * dKv[b, h, m, e].
static std::pair<Value, Value> keyValueGrads(OpBuilder &b, Location loc,
                                             Value keyFeatures, Value v,
                                             Value kvGrad, Value zGrad) {
  ArrayRef<int64_t> fShape = shapeOf(keyFeatures);
  Type element = elementOf(v);
  Value init = elementwise(
      b, loc, fShape, element, ValueRange{zGrad},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; },
      {loopDims(b, 4, {0, 2, 3})});
  // Loops (b, j, h, m, e); e is reduced.
  Value featureGrad = accumulateProducts(
      b, loc, ValueRange{v, kvGrad}, init,
      {loopDims(b, 5, {0, 1, 2, 4}), loopDims(b, 5, {0, 2, 3, 4})},
      loopDims(b, 5, {0, 1, 2, 3}));
  // Loops (b, j, h, e, m); m is reduced.
  Value valueGrad = accumulateProducts(
      b, loc, ValueRange{keyFeatures, kvGrad},
      filledTensor(b, loc, shapeOf(v), element, 0.0),
      {loopDims(b, 5, {0, 1, 2, 4}), loopDims(b, 5, {0, 2, 4, 3})},
      loopDims(b, 5, {0, 1, 2, 3}));
  return {featureGrad, valueGrad};
}

/// The gradient of head-split `x [B, S, H, Dh]` through the random feature
/// map `phi = exp(W x' - offset) / sqrt(M) * mask` (see randomFeatures),
/// given `featureGrad = dPhi`, the features `phi` of `x` and `scaled =
/// W * s`, `s = Dh^(-1/4)`. The stabilisers are constants here: the output
/// does not depend on them (AttentionBuilders.h), so their gradient is zero.
/// With `dE = dPhi * phi`, the gradient of the exponent:
///
/// - keys (offset `|x'|^2 / 2 + c`):
///     dx = sum_m dE[m] * s W[m] - s^2 * x * sum_m dE[m];
/// - queries (offset `max_m W_m . x'`, the `|x'|^2 / 2` of the exponent
///   cancelling with the stabiliser): dx = sum_m dE[m] * s W[m].
static Value featureInputGrad(OpBuilder &b, Location loc, Value featureGrad,
                              Value phi, bool query, Value x, Value scaled) {
  ArrayRef<int64_t> shape = shapeOf(phi);
  Type element = elementOf(phi);
  AffineMap identity = b.getMultiDimIdentityMap(4);
  AffineMap rowMap = loopDims(b, 4, {0, 1, 2});
  Value exponentGrad =
      elementwise(b, loc, shape, element, ValueRange{featureGrad, phi},
                  [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                    return nb.create<arith::MulFOp>(nloc, args[0], args[1]);
                  });
  Value init;
  if (query) {
    init = filledTensor(b, loc, shapeOf(x), element, 0.0);
  } else {
    double squaredScale = 1.0 / std::sqrt(static_cast<double>(shapeOf(x)[3]));
    Value rowSum = sumLastDim(b, loc, exponentGrad);
    // The |x'|^2 / 2 term: -s^2 * x * sum_m dE[m].
    init = elementwise(
        b, loc, shapeOf(x), element, ValueRange{x, rowSum},
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value product = nb.create<arith::MulFOp>(nloc, args[0], args[1]);
          return nb.create<arith::MulFOp>(
              nloc, product, floatConstant(nb, nloc, element, -squaredScale));
        },
        {identity, rowMap});
  }
  // The projection term; loops (b, s, h, e, m), m is reduced.
  return buildGeneric(
      b, loc, ValueRange{exponentGrad, scaled}, init,
      {loopDims(b, 5, {0, 1, 2, 4}), loopDims(b, 5, {4, 3})},
      loopDims(b, 5, {0, 1, 2, 3}),
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return multiplyAdd(nb, nloc, args[2], args[0], args[1]);
      });
}

/// Gradients of causal FAVOR+ in chunks (see buildCausalChunks and
/// chunkNumeratorDenominator) given the chunked output gradient. With
/// `dNum`, `dDen` the gradients of the quotient, `w[i, j] = exp(c_j - c_i)`,
/// `g`, `a` the query and key scales (`phiQ' = g phiQ`, `phiK' = a phiK`)
/// and `A` the masked scores:
///
///   dS[b, n, h, i, j]  = [j <= i] w[i, j] (dNum[i] . v[j] + dDen[i])
///   dPhiQ[i]           = sum_j dS[i, j] phiK[j]
///                        + (g dNum)[i] kv^T + (g dDen)[i] z
///   dKv[n]             = sum_{i in chunk n} phiQ[i]^T (g dNum)[i]
///   dZ[n]              = sum_{i in chunk n} phiQ[i] (g dDen)[i]
///   dS[n], dZs[n]      = the reverse scan of dKv, dZ with the forward's
///                        decay: the state gradients of the chunks after n
///   dPhiK[j]           = sum_i dS[i, j] phiQ[i] + a[j] dZs + (a v)[j] dS^T
///   dV[j]              = sum_i A[i, j] dNum[i] + a[j] (phiK[j] dS)
///
/// (chunk indices and heads left out where they follow the row). As in the
/// forward, the scales multiply the Dh-wide (or scalar) operands, never the
/// M-wide features. Returns the chunked gradients of the query features,
/// key features and values.
static std::tuple<Value, Value, Value>
chunkGrads(OpBuilder &b, Location loc, const CausalChunks &c, Value gradOut) {
  Value v = c.value;
  Type element = elementOf(v);
  auto multiply = [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
    return nb.create<arith::MulFOp>(nloc, args[0], args[1]);
  };
  AffineMap out5 = loopDims(b, 6, {0, 1, 2, 3, 4});
  auto [num, den] = chunkNumeratorDenominator(b, loc, c.query, c.queryScale, v,
                                              c.scores, c.prefixKv, c.prefixZ);
  auto [numGrad, denGrad] = quotientGrads(b, loc, gradOut, num, den);

  // dA = dNum . v + dDen; loops (b, n, h, i, j, e), e is reduced. Then
  // dS = dA o w, masked.
  Value scoreGrad = accumulateProducts(
      b, loc, ValueRange{numGrad, v},
      filledTensor(b, loc, shapeOf(c.scores), element, 0.0),
      {loopDims(b, 6, {0, 1, 3, 2, 5}), loopDims(b, 6, {0, 1, 4, 2, 5})}, out5);
  scoreGrad = elementwise(
      b, loc, shapeOf(c.scores), element, ValueRange{scoreGrad, denGrad},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::AddFOp>(nloc, args[0], args[1]);
      },
      {b.getMultiDimIdentityMap(5), loopDims(b, 5, {0, 1, 3, 2})});
  scoreGrad = causalChunkMask(b, loc, scoreGrad, c.stabiliser);

  // The gradients that reach the prefix states, g dNum and g dDen.
  Value prefixNumGrad = scaleChunkRows(b, loc, numGrad, c.queryScale);
  Value prefixDenGrad =
      elementwise(b, loc, shapeOf(denGrad), element,
                  ValueRange{denGrad, c.queryScale}, multiply);

  // dPhiQ: (g dDen) z + (g dNum) kv^T (loops (b, n, i, h, m, e), e
  // reduced), then dS phiK (loops (b, n, i, h, m, j), j reduced).
  Value queryGrad = elementwise(
      b, loc, shapeOf(c.query), element, ValueRange{prefixDenGrad, c.prefixZ},
      multiply, {loopDims(b, 5, {0, 1, 2, 3}), loopDims(b, 5, {0, 1, 3, 4})});
  queryGrad = accumulateProducts(
      b, loc, ValueRange{prefixNumGrad, c.prefixKv}, queryGrad,
      {loopDims(b, 6, {0, 1, 2, 3, 5}), loopDims(b, 6, {0, 1, 3, 4, 5})}, out5);
  queryGrad = accumulateProducts(
      b, loc, ValueRange{scoreGrad, c.key}, queryGrad,
      {loopDims(b, 6, {0, 1, 3, 2, 5}), loopDims(b, 6, {0, 1, 5, 3, 4})}, out5);

  // The state gradients of each chunk's queries; dKv loops
  // (b, n, h, m, e, i), dZ loops (b, n, h, i, m), i reduced.
  Value kvGrad = accumulateProducts(
      b, loc, ValueRange{c.query, prefixNumGrad},
      filledTensor(b, loc, shapeOf(c.prefixKv), element, 0.0),
      {loopDims(b, 6, {0, 1, 5, 2, 3}), loopDims(b, 6, {0, 1, 5, 2, 4})}, out5);
  Value zGrad = accumulateProducts(
      b, loc, ValueRange{c.query, prefixDenGrad},
      filledTensor(b, loc, shapeOf(c.prefixZ), element, 0.0),
      {loopDims(b, 5, {0, 1, 3, 2, 4}), loopDims(b, 5, {0, 1, 3, 2})},
      loopDims(b, 5, {0, 1, 2, 4}));
  // Chunk n's prefix state holds the keys of chunks n' < n, so the keys of
  // chunk n' get the state gradients of the chunks after it, through the
  // transpose of the forward scan: the same recurrence run backwards.
  Value suffixKvGrad =
      exclusiveChunkScan(b, loc, kvGrad, /*reverse=*/true, c.decay);
  Value suffixZGrad =
      exclusiveChunkScan(b, loc, zGrad, /*reverse=*/true, c.decay);

  // dPhiK: a dZs (loops (b, n, j, h, m)), then (a v) dS^T (loops
  // (b, n, j, h, m, e), e reduced), then dS^T phiQ (loops
  // (b, n, j, h, m, i), i reduced).
  Value keyGrad = elementwise(
      b, loc, shapeOf(c.key), element, ValueRange{c.keyScale, suffixZGrad},
      multiply, {loopDims(b, 5, {0, 1, 2, 3}), loopDims(b, 5, {0, 1, 3, 4})});
  keyGrad = accumulateProducts(
      b, loc, ValueRange{c.scaledValue, suffixKvGrad}, keyGrad,
      {loopDims(b, 6, {0, 1, 2, 3, 5}), loopDims(b, 6, {0, 1, 3, 4, 5})}, out5);
  keyGrad = accumulateProducts(
      b, loc, ValueRange{scoreGrad, c.query}, keyGrad,
      {loopDims(b, 6, {0, 1, 3, 5, 2}), loopDims(b, 6, {0, 1, 5, 3, 4})}, out5);

  // dV: a (phiK dS) (loops (b, n, j, h, e, m), m reduced), then A^T dNum
  // (loops (b, n, j, h, e, i), i reduced).
  Value valueGrad = accumulateProducts(
      b, loc, ValueRange{c.key, suffixKvGrad},
      filledTensor(b, loc, shapeOf(v), element, 0.0),
      {loopDims(b, 6, {0, 1, 2, 3, 5}), loopDims(b, 6, {0, 1, 3, 5, 4})}, out5);
  valueGrad = scaleChunkRows(b, loc, valueGrad, c.keyScale);
  valueGrad = accumulateProducts(
      b, loc, ValueRange{c.scores, numGrad}, valueGrad,
      {loopDims(b, 6, {0, 1, 3, 5, 2}), loopDims(b, 6, {0, 1, 5, 3, 4})}, out5);
  return {queryGrad, keyGrad, valueGrad};
}

/// Gradients of FAVOR+ linear attention (see lowerPerformer in
/// LowerAttention.cpp).
///
/// Non-causal: the state `kv`, `z` (sums over all keys) is recomputed once;
/// the state gradient sums over all queries and is read by every key.
///
/// Causal: by chunks, as the forward (chunkGrads); the per-chunk state
/// gradients run backwards through the reverse of the forward's scan.
///
/// The stabilisers (query row maxima, key maxima or running maxima) are
/// recomputed as the forward computes them and held constant.
///
/// With `recompute`, the feature projections read the transposed feature
/// matrix (see tfc-lower-to-linalg's `recompute-attention`).
static SmallVector<Value> lowerPerformerGrad(OpBuilder &b, Location loc,
                                             AttentionGradOp op,
                                             PerformerAttr kind,
                                             bool recompute) {
  int64_t heads = op.getHeads();
  bool causal = kind.getCausal();
  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value gradOut = splitHeads(b, loc, op.getGrad(), heads);
  Value mask = op.getMask();
  int64_t length = shapeOf(v)[1];
  if (causal)
    padCausalPerformer(b, loc, q, k, v, mask, &gradOut);
  Value scaled = scaledFeatures(b, loc, op.getFeatures());

  // The forward's features: built as the forward builds them, so that CSE
  // shares them with the forward, or, with `recompute`, projected through
  // the transposed feature matrix, the same sums as a computation of their
  // own that CSE keeps apart (everything derived from them too).
  Value projection = scaled;
  if (recompute) {
    ArrayRef<int64_t> shape = shapeOf(scaled);
    projection =
        b.create<linalg::TransposeOp>(
             loc, scaled,
             emptyTensor(b, loc, {shape[1], shape[0]}, elementOf(scaled)),
             ArrayRef<int64_t>{1, 0})
            ->getResult(0);
  }
  FeatureMap queryMap = randomFeatures(b, loc, q, projection, Stabiliser::Row,
                                       Value(), /*transposed=*/recompute);
  FeatureMap keyMap = randomFeatures(
      b, loc, k, projection, causal ? Stabiliser::Prefix : Stabiliser::Sequence,
      mask, /*transposed=*/recompute);
  Value queryFeatures = queryMap.phi, keyFeatures = keyMap.phi;

  ArrayRef<int64_t> vShape = shapeOf(v);
  int64_t batch = vShape[0], chunked = vShape[1], headDim = vShape[3];
  int64_t count = shapeOf(scaled)[0];
  Type element = elementOf(v);

  Value queryFeatureGrad, keyFeatureGrad, valueGrad;
  if (!causal) {
    SmallVector<int64_t> stateShape = {batch, heads, count, headDim};
    SmallVector<int64_t> normShape = {batch, heads, count};
    Value kv = filledTensor(b, loc, stateShape, element, 0.0);
    Value z = filledTensor(b, loc, normShape, element, 0.0);
    Value kvGrad = filledTensor(b, loc, stateShape, element, 0.0);
    Value zGrad = filledTensor(b, loc, normShape, element, 0.0);
    std::tie(kv, z) = accumulateKeyValues(b, loc, keyFeatures, v, kv, z);
    Value num = performerNumerator(b, loc, queryFeatures, kv);
    Value den = performerDenominator(b, loc, queryFeatures, z);
    auto [numGrad, denGrad] = quotientGrads(b, loc, gradOut, num, den);
    queryFeatureGrad = queryFeatureGrads(b, loc, numGrad, denGrad, kv, z);
    std::tie(kvGrad, zGrad) = accumulateStateGrads(
        b, loc, queryFeatures, numGrad, denGrad, kvGrad, zGrad);
    std::tie(keyFeatureGrad, valueGrad) =
        keyValueGrads(b, loc, keyFeatures, v, kvGrad, zGrad);
  } else {
    CausalChunks c = buildCausalChunks(b, loc, queryFeatures, keyFeatures,
                                       keyMap.stabiliser, v, chunked);
    auto [queryGrad, keyGrad, chunkValueGrad] =
        chunkGrads(b, loc, c, toChunks(b, loc, gradOut, c.chunking));
    queryFeatureGrad = fromChunks(b, loc, queryGrad, chunked);
    keyFeatureGrad = fromChunks(b, loc, keyGrad, chunked);
    valueGrad = fromChunks(b, loc, chunkValueGrad, chunked);
  }

  Value queryGrad = featureInputGrad(b, loc, queryFeatureGrad, queryFeatures,
                                     /*query=*/true, q, scaled);
  Value keyGrad = featureInputGrad(b, loc, keyFeatureGrad, keyFeatures,
                                   /*query=*/false, k, scaled);
  // The padding rows' gradients (of the chunks' padding) are dropped.
  SmallVector<Value> grads;
  for (Value grad : {queryGrad, keyGrad, valueGrad})
    grads.push_back(mergeHeads(
        b, loc,
        chunked == length ? grad : leadingPositions(b, loc, grad, length)));
  return grads;
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// `tfc.attention_grad` by the gradient builder of its kind. With
/// `recompute`, Performer gradients recompute the forward independently.
static FailureOr<SmallVector<Value>>
lowerAttentionGrad(AttentionGradOp op, PatternRewriter &rewriter,
                   bool recompute) {
  Location loc = op.getLoc();
  Attribute kind = op.getKind();
  auto longformer = dyn_cast<LongformerAttr>(kind);
  bool hasGlobals = longformer && !longformer.getGlobalTokens().empty();
  if (hasGlobals != static_cast<bool>(op.getGlobalQuery()))
    return rewriter.notifyMatchFailure(
        op, "global projections must be given exactly for global tokens");
  if (isa<PerformerAttr>(kind) != static_cast<bool>(op.getFeatures()))
    return rewriter.notifyMatchFailure(
        op, "features must be given exactly for the performer");
  if (auto softmax = dyn_cast<SoftmaxAttr>(kind))
    return lowerSoftmaxGrad(rewriter, loc, op, softmax);
  if (longformer)
    return lowerLongformerGrad(rewriter, loc, op, longformer);
  if (auto performer = dyn_cast<PerformerAttr>(kind))
    return lowerPerformerGrad(rewriter, loc, op, performer, recompute);
  return rewriter.notifyMatchFailure(op, "unknown attention kind");
}

void mlir::tfc::populateAttentionGradLoweringPatterns(
    RewritePatternSet &patterns, bool recompute) {
  lowering::addStaticLowering<AttentionGradOp>(
      patterns, [recompute](AttentionGradOp op, PatternRewriter &rewriter) {
        return lowerAttentionGrad(op, rewriter, recompute);
      });
}
