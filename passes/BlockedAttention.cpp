//===- BlockedAttention.cpp - The tfc-blocked-attention pass --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Lowers `tfc.attention` and `tfc.attention_grad` of the `#tfc.softmax` and
/// `#tfc.longformer` kinds to attention by blocks, in the way of
/// FlashAttention, so that no `[B, H, S, S]` score matrix exists:
///
///   for each query block qb (T rows)              // scf.for
///     m = -inf, l = 0, acc = 0                    // [B, H, T], [B, T, H, Dh]
///     for each key block kb that meets qb's rows  // scf.for, dynamic bounds
///       s    = mask(scale * Q[qb] K[kb]^T)        // [B, H, T, T]
///       m'   = max(m, rowmax(s))
///       p    = exp(s - m'),  c = exp(m - m')
///       l    = c * l + rowsum(p)
///       acc  = c * acc + p V[kb]
///       m    = m'
///     O[qb]   = acc / l
///     lse[qb] = m + log(l)                        // one number per row
///
/// Causal softmax attention visits key blocks 0..qb only. A Longformer's
/// local rows visit only the key blocks that meet the band of its sliding
/// window (dilation included), a constant number per query block, plus one
/// block of its global columns; the global rows are one-row attentions over
/// every key (through the global projections), as in the dense lowering.
/// Time and memory grow linearly in the sequence length.
///
/// The gradient recomputes `O` and `lse` by blocks, then walks key blocks
/// (outer) and the query blocks that see them (inner), recomputing each
/// probability block from `lse`:
///
///   p  = exp(s - lse),  dP = dO[qb] V[kb]^T,  dS = scale * p (dP - D[qb])
///   dV[kb] += p^T dO[qb],  dK[kb] += dS^T Q[qb],  dQ[qb] += dS K[kb]
///
/// with `D = rowsum(dO o O)` (BlockedAttentionGrad.cpp; BlockedAttention.h
/// holds what the two files share). Every block is a linalg op on static
/// shapes with dynamic offsets, so the contraction kernels and threads of
/// the CPU pipeline apply unchanged.
///
/// A length that no block divides (or only a narrow one) is padded to one
/// that a block does (paddedLength): zero rows of queries, keys and values,
/// hidden from the real queries by the key mask, and dropped from the
/// results. Operations the pass does not handle (other kinds, query and key
/// lengths that differ) are left for the dense lowering of
/// tfc-lower-to-linalg.
///
//===----------------------------------------------------------------------===//

#include "passes/BlockedAttention.h"
#include "passes/AttentionBuilders.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <limits>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCBLOCKEDATTENTION
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::attention;
using namespace mlir::tfc::blocked;

namespace mlir::tfc::blocked {

/// The rows `positions` (dimension 1) of `x`, gathered into one tensor.
static Value gatherRows(OpBuilder &b, Location loc, Value x,
                        ArrayRef<int64_t> positions) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape[1] = positions.size();
  Value result = emptyTensor(b, loc, shape, elementOf(x));
  for (auto [n, position] : llvm::enumerate(positions)) {
    Value row = sliceDim(b, loc, x, 1, b.getIndexAttr(position), 1);
    result = insertDim(b, loc, row, result, 1, b.getIndexAttr(n));
  }
  return result;
}

/// `x * c`, with `c` a constant of the type of `x`.
Value mulConst(OpBuilder &b, Location loc, Value x, double c) {
  return b.create<arith::MulFOp>(loc, x, floatConstant(b, loc, x.getType(), c));
}

/// Whether `x` is `-inf`.
static Value isNegInf(OpBuilder &b, Location loc, Value x) {
  return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, x,
                                 negativeInfinity(b, loc, x.getType()));
}

//===----------------------------------------------------------------------===//
// The block structure of one attention
//===----------------------------------------------------------------------===//

/// `[max(0, center - below), min(blocks, center + above + 1))`, where a
/// negative `below` or `above` means no bound on that side.
static std::pair<Value, Value> blockRange(OpBuilder &b, Location loc,
                                          int64_t blocks, Value center,
                                          int64_t below, int64_t above) {
  Value lo = indexConstant(b, loc, 0);
  Value hi = indexConstant(b, loc, blocks);
  if (below >= 0)
    lo = b.create<arith::MaxSIOp>(
        loc, lo,
        b.create<arith::SubIOp>(loc, center, indexConstant(b, loc, below)));
  if (above >= 0)
    hi = b.create<arith::MinSIOp>(
        loc, hi,
        b.create<arith::AddIOp>(loc, center, indexConstant(b, loc, above + 1)));
  return {lo, hi};
}

/// `[lo, hi)` of the key blocks that query block `qb` visits.
std::pair<Value, Value> keyBlockRange(OpBuilder &b, Location loc,
                                      const BlockPlan &plan, Value qb) {
  return blockRange(b, loc, plan.blocks, qb, plan.before, plan.after);
}

/// `[lo, hi)` of the query blocks that visit key block `kb`.
std::pair<Value, Value> queryBlockRange(OpBuilder &b, Location loc,
                                        const BlockPlan &plan, Value kb) {
  return blockRange(b, loc, plan.blocks, kb, plan.after, plan.before);
}

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
                  Value colOffset) {
  Value scores = dotScores(b, loc, q, k);
  Type element = elementOf(scores);
  SmallVector<Value> inputs = {scores};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(4)};
  int maskArg = -1, excludeArg = -1, columnArg = -1;
  if (mask) {
    maskArg = inputs.size();
    inputs.push_back(mask);
    maps.push_back(loopDims(b, 4, {0, 3}));
  }
  if (exclude) {
    excludeArg = inputs.size();
    inputs.push_back(exclude);
    maps.push_back(loopDims(b, 4, {3}));
  }
  if (columns) {
    columnArg = inputs.size();
    inputs.push_back(columns);
    maps.push_back(loopDims(b, 4, {3}));
  }
  return elementwise(
      b, loc, shapeOf(scores), element, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value scaled = mulConst(nb, nloc, args[0], plan.scale);
        Value allowed;
        if (filter) {
          // Positions as i32 (lengths are below 2^31): the vectorised mask
          // compares 16 positions per instruction, not 8.
          Type i32 = nb.getI32Type();
          auto position = [&](Value loopIndex, Value offset) -> Value {
            return nb.create<arith::AddIOp>(
                nloc, nb.create<arith::IndexCastOp>(nloc, i32, loopIndex),
                nb.create<arith::IndexCastOp>(nloc, i32, offset));
          };
          Value i = position(nb.create<linalg::IndexOp>(nloc, 2), rowOffset);
          // The global columns' positions are i64 constants.
          Value j =
              columnArg >= 0
                  ? nb.create<arith::TruncIOp>(nloc, i32, args[columnArg])
                        .getResult()
                  : position(nb.create<linalg::IndexOp>(nloc, 3), colOffset);
          allowed = filter(nb, nloc, i, j);
        }
        if (maskArg >= 0)
          allowed = keepRealKeys(nb, nloc, allowed, args[maskArg]);
        if (excludeArg >= 0) {
          Value local = nb.create<arith::CmpFOp>(
              nloc, arith::CmpFPredicate::OEQ, args[excludeArg],
              nb.create<arith::ConstantOp>(nloc, nb.getF32FloatAttr(0.0f)));
          allowed = conjunction(nb, nloc, allowed, local);
        }
        return maskedScore(nb, nloc, allowed, scaled);
      },
      maps);
}

} // namespace mlir::tfc::blocked

namespace {

/// The running state of one query block's online softmax.
struct OnlineState {
  Value max, sum, acc; // [B, H, T], [B, H, T], [B, T, H, Dh]
};

/// Folds the masked scores `s [B, H, T, Tk]` and values `v [B, Tk, H, Dh]`
/// of one key block into `state`, in place.
OnlineState onlineSoftmaxStep(OpBuilder &b, Location loc, Value s, Value v,
                              OnlineState state) {
  Type element = elementOf(s);
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  AffineMap rowMap = loopDims(b, 4, {0, 1, 2});
  Value blockMax = rowMaxima(b, loc, s);
  // c = exp(m - max(m, blockMax)), 1 while the row has seen no key.
  Value correction = elementwise(
      b, loc, shapeOf(blockMax), element, ValueRange{state.max, blockMax},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value next = stabilizerMax(nb, nloc, args[0], args[1]);
        Value c = nb.create<math::ExpOp>(
            nloc, nb.create<arith::SubFOp>(nloc, args[0], next));
        return nb.create<arith::SelectOp>(nloc, isNegInf(nb, nloc, next),
                                          floatConstant(nb, nloc, element, 1.0),
                                          c);
      },
      {id3, id3});
  OnlineState next;
  next.max =
      buildGeneric(b, loc, ValueRange{blockMax}, state.max, {id3}, id3,
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return stabilizerMax(nb, nloc, args[1], args[0]);
                   });
  Value probs =
      elementwise(b, loc, shapeOf(s), element, ValueRange{s, next.max},
                  [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                    Value p = nb.create<math::ExpOp>(
                        nloc, nb.create<arith::SubFOp>(nloc, args[0], args[1]));
                    return nb.create<arith::SelectOp>(
                        nloc, isNegInf(nb, nloc, args[1]),
                        floatConstant(nb, nloc, element, 0.0), p);
                  },
                  {b.getMultiDimIdentityMap(4), rowMap});
  Value blockSum = sumLastDim(b, loc, probs);
  next.sum = buildGeneric(
      b, loc, ValueRange{correction, blockSum}, state.sum, {id3, id3}, id3,
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value scaled = nb.create<arith::MulFOp>(nloc, args[2], args[0]);
        return nb.create<arith::AddFOp>(nloc, scaled, args[1]);
      });
  Value scaledAcc =
      buildGeneric(b, loc, ValueRange{correction}, state.acc,
                   {loopDims(b, 4, {0, 2, 1})}, b.getMultiDimIdentityMap(4),
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return nb.create<arith::MulFOp>(nloc, args[1], args[0]);
                   });
  next.acc = weightValues(b, loc, probs, v, scaledAcc);
  return next;
}

} // namespace

KeySide blocked::buildKeySide(OpBuilder &b, Location loc, const BlockPlan &plan,
                              Value k, Value v, Value mask) {
  KeySide side{k, v, mask, {}, {}, {}};
  if (plan.globals.empty())
    return side;
  side.globalK = gatherRows(b, loc, k, plan.globals);
  side.globalV = gatherRows(b, loc, v, plan.globals);
  if (mask)
    side.globalMask = gatherRows(b, loc, mask, plan.globals);
  return side;
}

KeyBlock blocked::sliceKeyBlock(OpBuilder &b, Location loc,
                                const BlockPlan &plan, const KeySide &keys,
                                Value colOffset) {
  int64_t T = plan.block;
  KeyBlock block;
  block.k = sliceDim(b, loc, keys.k, 1, colOffset, T);
  block.v = sliceDim(b, loc, keys.v, 1, colOffset, T);
  if (keys.mask)
    block.mask = sliceDim(b, loc, keys.mask, 1, colOffset, T);
  if (plan.globalFlags)
    block.exclude = sliceDim(b, loc, plan.globalFlags, 0, colOffset, T);
  return block;
}

namespace {

/// Blocked attention of head-split `q, k, v [B, S, H, Dh]`: the output
/// `[B, S, H, Dh]` and the log-sum-exp of every row, `[B, H, S]` (`+inf`
/// for a row that sees no key, whose output is 0).
std::pair<Value, Value> blockedForwardOf(OpBuilder &b, Location loc,
                                         const BlockPlan &plan, Value q,
                                         Value k, Value v, Value mask) {
  Type element = elementOf(q);
  int64_t T = plan.block;
  KeySide keys = buildKeySide(b, loc, plan, k, v, mask);
  Value out0 = emptyTensor(b, loc, shapeOf(q), element);
  Value lse0 =
      emptyTensor(b, loc, {plan.batch, plan.heads, plan.length}, element);
  Value blockSize = indexConstant(b, loc, T);
  auto outer = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, plan.blocks),
      indexConstant(b, loc, 1), ValueRange{out0, lse0},
      [&](OpBuilder &nb, Location nloc, Value qb, ValueRange carried) {
        Value rowOffset = nb.create<arith::MulIOp>(nloc, qb, blockSize);
        Value qBlock = sliceDim(nb, nloc, q, 1, rowOffset, T);
        OnlineState state;
        state.max = filledTensor(nb, nloc, {plan.batch, plan.heads, T}, element,
                                 -std::numeric_limits<double>::infinity());
        state.sum =
            filledTensor(nb, nloc, {plan.batch, plan.heads, T}, element, 0.0);
        state.acc = filledTensor(
            nb, nloc, {plan.batch, T, plan.heads, plan.headDim}, element, 0.0);
        auto [lo, hi] = keyBlockRange(nb, nloc, plan, qb);
        auto inner = nb.create<scf::ForOp>(
            nloc, lo, hi, indexConstant(nb, nloc, 1),
            ValueRange{state.max, state.sum, state.acc},
            [&](OpBuilder &ib, Location iloc, Value kb, ValueRange st) {
              Value colOffset = ib.create<arith::MulIOp>(iloc, kb, blockSize);
              KeyBlock key = sliceKeyBlock(ib, iloc, plan, keys, colOffset);
              Value s = blockScores(ib, iloc, plan, plan.filter, qBlock, key.k,
                                    key.mask, key.exclude, Value(), rowOffset,
                                    colOffset);
              OnlineState next = onlineSoftmaxStep(
                  ib, iloc, s, key.v, OnlineState{st[0], st[1], st[2]});
              ib.create<scf::YieldOp>(iloc,
                                      ValueRange{next.max, next.sum, next.acc});
            });
        state = {inner.getResult(0), inner.getResult(1), inner.getResult(2)};
        if (keys.globalK) {
          Value s = blockScores(nb, nloc, plan, plan.globalFilter, qBlock,
                                keys.globalK, keys.globalMask, Value(),
                                plan.globalIndex, rowOffset, Value());
          state = onlineSoftmaxStep(nb, nloc, s, keys.globalV, state);
        }
        AffineMap id3 = nb.getMultiDimIdentityMap(3);
        Value outBlock = elementwise(
            nb, nloc, shapeOf(state.acc), element,
            ValueRange{state.acc, state.sum},
            [&](OpBuilder &eb, Location eloc, ValueRange args) -> Value {
              return ratioOrZero(eb, eloc, args[0], args[1]);
            },
            {nb.getMultiDimIdentityMap(4), loopDims(nb, 4, {0, 2, 1})});
        Value lseBlock = elementwise(
            nb, nloc, shapeOf(state.max), element,
            ValueRange{state.max, state.sum},
            [&](OpBuilder &eb, Location eloc, ValueRange args) -> Value {
              Value zero = floatConstant(eb, eloc, element, 0.0);
              Value positive = eb.create<arith::CmpFOp>(
                  eloc, arith::CmpFPredicate::OGT, args[1], zero);
              Value lse = eb.create<arith::AddFOp>(
                  eloc, args[0], eb.create<math::LogOp>(eloc, args[1]));
              return eb.create<arith::SelectOp>(
                  eloc, positive, lse,
                  floatConstant(eb, eloc, element,
                                std::numeric_limits<double>::infinity()));
            },
            {id3, id3});
        Value out = insertDim(nb, nloc, outBlock, carried[0], 1, rowOffset);
        Value lse = insertDim(nb, nloc, lseBlock, carried[1], 2, rowOffset);
        nb.create<scf::YieldOp>(nloc, ValueRange{out, lse});
      });
  return {outer.getResult(0), outer.getResult(1)};
}

//===----------------------------------------------------------------------===//
// One (batch, head) pair per parallel iteration
//===----------------------------------------------------------------------===//

/// A tensor whose dimension 0 is the batch and `headDim` the head (-1: no
/// head dimension, as in the padding mask `[B, S]`).
struct HeadTensor {
  Value value;
  int headDim;
};

/// The offsets, sizes and strides of the (`batch`, `head`) pair of `x`.
struct HeadSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

HeadSlice headSlice(OpBuilder &b, HeadTensor x, Value batch, Value head) {
  HeadSlice slice;
  for (auto [d, extent] : llvm::enumerate(shapeOf(x.value))) {
    bool isBatch = d == 0, isHead = static_cast<int>(d) == x.headDim;
    slice.offsets.push_back(isBatch  ? OpFoldResult(batch)
                            : isHead ? OpFoldResult(head)
                                     : OpFoldResult(b.getIndexAttr(0)));
    slice.sizes.push_back(b.getIndexAttr(isBatch || isHead ? 1 : extent));
    slice.strides.push_back(b.getIndexAttr(1));
  }
  return slice;
}

using HeadBody = function_ref<SmallVector<Value>(
    OpBuilder &, Location, const BlockPlan &, ArrayRef<Value>)>;

/// Runs `body` for every (batch, head) pair as the iterations of one
/// `scf.forall` over `B * H`: the body gets `inputs` sliced to the pair
/// (null inputs stay null) and a plan of one batch and one head, and
/// returns one result per `outputs` entry, which is written at the pair's
/// place in it. The iterations are independent, so the threads share them
/// and each keeps its blocks in its own cache.
SmallVector<Value> forEachHead(OpBuilder &b, Location loc,
                               const BlockPlan &plan,
                               ArrayRef<HeadTensor> inputs,
                               ArrayRef<HeadTensor> outputs, HeadBody body) {
  SmallVector<Value> inits;
  for (HeadTensor output : outputs)
    inits.push_back(output.value);
  OpBuilder::InsertionGuard guard(b);
  auto [loop, batch, head] =
      buildPairLoop(b, loc, plan.batch, plan.heads, inits);
  SmallVector<Value> sliced;
  for (HeadTensor input : inputs) {
    if (!input.value) {
      sliced.push_back(Value());
      continue;
    }
    HeadSlice slice = headSlice(b, input, batch, head);
    sliced.push_back(b.create<tensor::ExtractSliceOp>(
        loc, input.value, slice.offsets, slice.sizes, slice.strides));
  }
  BlockPlan pairPlan = plan;
  pairPlan.batch = 1;
  pairPlan.heads = 1;
  SmallVector<Value> results = body(b, loc, pairPlan, sliced);
  b.setInsertionPointToEnd(loop.getTerminator().getBody());
  for (auto [result, output, shared] :
       llvm::zip_equal(results, outputs, loop.getRegionIterArgs())) {
    HeadSlice slice =
        headSlice(b, HeadTensor{shared, output.headDim}, batch, head);
    b.create<tensor::ParallelInsertSliceOp>(loc, result, shared, slice.offsets,
                                            slice.sizes, slice.strides);
  }
  return loop.getResults();
}

/// blockedForwardOf, one (batch, head) pair per parallel iteration when
/// `plan.parallelHeads`.
std::pair<Value, Value> blockedForward(OpBuilder &b, Location loc,
                                       const BlockPlan &plan, Value q, Value k,
                                       Value v, Value mask) {
  if (!plan.parallelHeads)
    return blockedForwardOf(b, loc, plan, q, k, v, mask);
  Type element = elementOf(q);
  Value out = emptyTensor(b, loc, shapeOf(q), element);
  Value lse =
      emptyTensor(b, loc, {plan.batch, plan.heads, plan.length}, element);
  SmallVector<Value> results = forEachHead(
      b, loc, plan, {{q, 2}, {k, 2}, {v, 2}, {mask, -1}}, {{out, 2}, {lse, 1}},
      [](OpBuilder &nb, Location nloc, const BlockPlan &pairPlan,
         ArrayRef<Value> in) -> SmallVector<Value> {
        auto [pairOut, pairLse] =
            blockedForwardOf(nb, nloc, pairPlan, in[0], in[1], in[2], in[3]);
        return {pairOut, pairLse};
      });
  return {results[0], results[1]};
}

/// blockedBackwardOf, one (batch, head) pair per parallel iteration when
/// `plan.parallelHeads`.
BlockedGrads blockedBackward(OpBuilder &b, Location loc, const BlockPlan &plan,
                             Value q, Value k, Value v, Value mask, Value out,
                             Value lse, Value gradOut) {
  if (!plan.parallelHeads)
    return blockedBackwardOf(b, loc, plan, q, k, v, mask, out, lse, gradOut);
  Type element = elementOf(q);
  SmallVector<HeadTensor> grads;
  for (int i = 0; i < 3; ++i)
    grads.push_back({emptyTensor(b, loc, shapeOf(q), element), 2});
  SmallVector<Value> results = forEachHead(
      b, loc, plan,
      {{q, 2}, {k, 2}, {v, 2}, {mask, -1}, {out, 2}, {lse, 1}, {gradOut, 2}},
      grads,
      [](OpBuilder &nb, Location nloc, const BlockPlan &pairPlan,
         ArrayRef<Value> in) -> SmallVector<Value> {
        BlockedGrads pair =
            blockedBackwardOf(nb, nloc, pairPlan, in[0], in[1], in[2], in[3],
                              in[4], in[5], in[6]);
        return {pair.query, pair.key, pair.value};
      });
  return {results[0], results[1], results[2]};
}

//===----------------------------------------------------------------------===//
// Plans of the attention kinds
//===----------------------------------------------------------------------===//

/// The block size for `length`: `preferred` when it divides the length
/// (or the whole length when shorter), else the largest power of two below
/// `preferred`, and at least 16, that does; 0 when there is none.
int64_t chooseBlock(int64_t length, int64_t preferred) {
  if (length <= preferred)
    return length;
  if (length % preferred == 0)
    return preferred;
  int64_t block = 1;
  while (block * 2 < preferred)
    block *= 2;
  for (; block >= 16; block /= 2)
    if (length % block == 0)
      return block;
  return 0;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The block rows of softmax attention, and the widest block of a band,
/// when the pass's `block-size` is 0.
constexpr int64_t kDefaultBlock = 128;

/// The length that the blocks of an attention over `tokens` positions
/// cover. With a `blockSize` option, `tokens` when at most the option,
/// else `tokens` rounded up to a multiple of it (the blocks are then the
/// option's size). With the block chosen per attention (`blockSize` 0),
/// `tokens` when at most 128 or a multiple of 128, else `tokens` rounded up to
/// a multiple of the widest power of two from 128 down to 16 that adds at most
/// 1/8 of padding: 4,096 stays, 4,095 and 4,000 become 4,096, 1,000 becomes
/// 1,024, 200 becomes 224 (blocks of 32), 136 becomes 144 (blocks of 16).
int64_t paddedLength(int64_t tokens, int64_t blockSize) {
  if (blockSize != 0)
    return tokens <= blockSize ? tokens
                               : ceilDiv(tokens, blockSize) * blockSize;
  if (tokens <= kDefaultBlock)
    return tokens;
  for (int64_t block = kDefaultBlock;; block /= 2) {
    int64_t length = ceilDiv(tokens, block) * block;
    if (8 * (length - tokens) <= tokens || block == 16)
      return length;
  }
}

/// The block size of a band attention whose rows reach `reachBack` keys
/// before and `reachAhead` keys after themselves: of the blocks
/// `chooseBlock` allows with `preferred` and each power of two below it
/// (at least 16), the one that minimises the key columns a row visits
/// (`T` per key block that meets its query block's band), weighted by
/// `(T + 16) / T` for the fixed cost of a block (the rescaling of the
/// accumulators, the loop and slice bookkeeping). A wide block wastes
/// columns outside the band, a narrow one pays the overhead more often.
/// The model is coarse, so a narrower block must cost at least 10% less
/// than the best wider one to be taken: a window of 128 goes from 384
/// columns per row at 128 rows to 192 at 64 (cost 432 to 240, 8-25%
/// faster training at config A), while a causal window of 256 at 64 rows
/// (400 against 432) trained no faster than at 128.
int64_t chooseBandBlock(int64_t length, int64_t preferred, int64_t reachBack,
                        int64_t reachAhead) {
  constexpr int64_t kBlockOverhead = 16;
  int64_t best = 0;
  double bestCost = 0;
  for (int64_t limit = preferred;; limit /= 2) {
    int64_t block = chooseBlock(length, limit);
    if (block == 0)
      break;
    int64_t keyBlocks =
        std::min(ceilDiv(reachBack, block) + 1 + ceilDiv(reachAhead, block),
                 length / block);
    double cost = static_cast<double>(keyBlocks * (block + kBlockOverhead));
    if (best == 0 || cost < 0.9 * bestCost) {
      best = block;
      bestCost = cost;
    }
    if (limit <= 16)
      break;
  }
  return best;
}

/// The plan of `op` (a tfc.attention or tfc.attention_grad), or nothing
/// when the pass leaves it to the dense lowering. `blockSize` is the
/// pass's option: 0 chooses the block per attention.
template <typename OpT>
std::optional<BlockPlan> planFor(OpT op, int64_t blockSize,
                                 bool parallelHeads) {
  auto q = dyn_cast<RankedTensorType>(op.getQuery().getType());
  auto k = dyn_cast<RankedTensorType>(op.getKey().getType());
  if (!q || !k || !q.hasStaticShape() || !k.hasStaticShape() ||
      q.getShape() != k.getShape())
    return std::nullopt;
  BlockPlan plan;
  plan.batch = q.getDimSize(0);
  plan.tokens = q.getDimSize(1);
  plan.length = paddedLength(plan.tokens, blockSize);
  plan.heads = op.getHeads();
  plan.headDim = q.getDimSize(2) / plan.heads;
  plan.scale = 1.0 / std::sqrt(static_cast<double>(plan.headDim));
  plan.parallelHeads = parallelHeads;
  Attribute kind = op.getKind();
  if (auto softmax = dyn_cast<SoftmaxAttr>(kind)) {
    plan.block =
        chooseBlock(plan.length, blockSize ? blockSize : kDefaultBlock);
    plan.blocks = plan.length / plan.block;
    plan.causal = softmax.getCausal();
    if (plan.causal) {
      plan.after = 0;
      plan.filter = [](OpBuilder &b, Location loc, Value i, Value j) {
        return causalFilter(b, loc, true, i, j);
      };
    }
    return plan;
  }
  auto longformer = dyn_cast<LongformerAttr>(kind);
  if (!longformer)
    return std::nullopt;
  plan.causal = longformer.getCausal();
  int64_t reachBack = longformer.getStepsBack() * longformer.getDilation();
  int64_t reachAhead = longformer.getStepsAhead() * longformer.getDilation();
  plan.block = blockSize ? chooseBlock(plan.length, blockSize)
                         : chooseBandBlock(plan.length, kDefaultBlock,
                                           reachBack, reachAhead);
  plan.blocks = plan.length / plan.block;
  plan.before = ceilDiv(reachBack, plan.block);
  plan.after = ceilDiv(reachAhead, plan.block);
  plan.filter = [longformer](OpBuilder &b, Location loc, Value i, Value j) {
    return slidingWindow(b, loc, longformer, i, j);
  };
  plan.globals = longformer.getGlobalPositions();
  if (plan.causal)
    plan.globalFilter = [](OpBuilder &b, Location loc, Value i, Value j) {
      return causalFilter(b, loc, true, i, j);
    };
  return plan;
}

/// Materialises the constants of `plan` at the builder's position.
void buildPlanConstants(OpBuilder &b, Location loc, BlockPlan &plan) {
  if (plan.globals.empty())
    return;
  // As floats (1 at the global positions): the masking loops read them
  // with vector loads, where i1 elements would be gathered into a mask bit
  // by bit.
  SmallVector<float> flags(plan.length, 0.0f);
  for (int64_t position : plan.globals)
    flags[position] = 1.0f;
  auto flagType = RankedTensorType::get({plan.length}, b.getF32Type());
  plan.globalFlags = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(flagType, ArrayRef<float>(flags)));
  auto type = RankedTensorType::get({static_cast<int64_t>(plan.globals.size())},
                                    b.getI64Type());
  plan.globalIndex = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(type, ArrayRef<int64_t>(plan.globals)));
}

//===----------------------------------------------------------------------===//
// Rewrites
//===----------------------------------------------------------------------===//

/// The output gradient with the rows at `positions` zeroed (they belong to
/// the global projections).
Value zeroRows(OpBuilder &b, Location loc, Value x,
               ArrayRef<int64_t> positions) {
  Value rows = positionFlags(b, loc, positions, shapeOf(x)[1]);
  Type element = elementOf(x);
  return elementwise(
      b, loc, shapeOf(x), element, ValueRange{x, rows},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::SelectOp>(
            nloc, args[1], floatConstant(nb, nloc, element, 0.0), args[0]);
      },
      {b.getMultiDimIdentityMap(4), loopDims(b, 4, {1})});
}

/// The head-split output (`plan.tokens` rows) and log-sum-exp
/// (`plan.length` rows) of a rewritten forward attention, for the gradient
/// of the same attention to reuse. The gradient pads the output again
/// rather than keep a padded copy beside the one the next layer reads.
struct ForwardResults {
  Value out, lse;
};

/// The rows of `x [B, plan.length, ...]` before `plan.tokens`, copied (`x`
/// itself when the blocks cover `plan.tokens`): a view would keep the
/// padded tensor alive as long as the rows are (the next layer's gradient
/// reads them), and they would be copied anyway where a row-major
/// `[B * S, D]` view of them is taken.
Value unpadPositions(OpBuilder &b, Location loc, const BlockPlan &plan,
                     Value x) {
  if (plan.length == plan.tokens)
    return x;
  Value rows = leadingPositions(b, loc, x, plan.tokens);
  return b
      .create<linalg::CopyOp>(loc, rows,
                              emptyTensor(b, loc, shapeOf(rows), elementOf(x)))
      .getResult(0);
}

/// The head-split `q`, `k`, `v` (and the output gradient when given) with
/// zero rows up to `plan.length`, and `mask` with zeros there (ones before
/// them when the attention has no mask): no real query sees a padding key,
/// padding queries see no later real key than the last one, and their
/// output and its (zero) gradient are dropped. A padding query that sees
/// no key at all (outside a Longformer's band) has output 0, as a row whose
/// keys are all masked. Does nothing when the blocks cover `plan.tokens`.
void padToBlocks(OpBuilder &b, Location loc, const BlockPlan &plan,
                 SmallVector<Value *> rows, Value &mask) {
  if (plan.length == plan.tokens)
    return;
  for (Value *x : rows)
    *x = padPositions(b, loc, *x, plan.length);
  Type element = elementOf(*rows.front());
  Value real =
      mask ? mask
           : filledTensor(b, loc, {plan.batch, plan.tokens}, element, 1.0);
  mask = padPositions(b, loc, real, plan.length);
}

ForwardResults rewriteAttention(AttentionOp op, BlockPlan plan) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  buildPlanConstants(b, loc, plan);
  int64_t heads = plan.heads;
  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value mask = op.getMask();
  padToBlocks(b, loc, plan, {&q, &k, &v}, mask);
  auto [out, lse] = blockedForward(b, loc, plan, q, k, v, mask);
  out = unpadPositions(b, loc, plan, out);
  Value result = out;
  if (!plan.globals.empty())
    result = longformerGlobalRows(
        b, loc, out, op.getGlobalQuery(), op.getGlobalKey(),
        op.getGlobalValue(), op.getMask(), heads, plan.globals, plan.causal);
  op.getResult().replaceAllUsesWith(mergeHeads(b, loc, result));
  op.erase();
  return {out, lse};
}

/// Rewrites the gradient; `forward` holds the output and log-sum-exp of the
/// same attention when its forward was rewritten in the same block (else
/// they are recomputed by blocks).
void rewriteAttentionGrad(AttentionGradOp op, BlockPlan plan,
                          std::optional<ForwardResults> forward) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  buildPlanConstants(b, loc, plan);
  int64_t heads = plan.heads;
  HeadSplitQkv qkv = splitQkvHeads(b, loc, op);
  Value q = qkv.q, k = qkv.k, v = qkv.v;
  Value gradOut = splitHeads(b, loc, op.getGrad(), heads);
  // The global rows' output gradient belongs to the global projections;
  // with it zeroed, those rows' local outputs (overwritten in the forward)
  // do not matter.
  Value localGradOut =
      plan.globals.empty() ? gradOut : zeroRows(b, loc, gradOut, plan.globals);
  Value mask = op.getMask();
  Value out, lse;
  SmallVector<Value *> rows = {&q, &k, &v, &localGradOut};
  if (forward) {
    // The forward's output is padded with zeros too: the padding rows'
    // output meets only their zero gradient.
    out = forward->out;
    lse = forward->lse;
    rows.push_back(&out);
  }
  padToBlocks(b, loc, plan, rows, mask);
  if (!forward)
    std::tie(out, lse) = blockedForward(b, loc, plan, q, k, v, mask);
  BlockedGrads grads =
      blockedBackward(b, loc, plan, q, k, v, mask, out, lse, localGradOut);
  SmallVector<Value> results;
  for (Value grad : {grads.query, grads.key, grads.value})
    results.push_back(mergeHeads(b, loc, unpadPositions(b, loc, plan, grad)));
  if (!plan.globals.empty()) {
    SmallVector<Value> globalGrads = longformerGlobalRowGrads(
        b, loc, op.getGlobalQuery(), op.getGlobalKey(), op.getGlobalValue(),
        op.getMask(), gradOut, heads, plan.globals, plan.causal);
    results.append(globalGrads.begin(), globalGrads.end());
  }
  op->replaceAllUsesWith(results);
  op.erase();
}

/// The forward attention that `grad` differentiates, when it is in the same
/// block before it: same kind, heads and operands.
AttentionOp findForward(AttentionGradOp grad) {
  for (Operation *op = grad->getPrevNode(); op; op = op->getPrevNode()) {
    auto forward = dyn_cast<AttentionOp>(op);
    if (!forward || forward.getKind() != grad.getKind() ||
        forward.getHeads() != grad.getHeads() ||
        forward->getNumOperands() + 1 != grad->getNumOperands())
      continue;
    if (llvm::equal(forward->getOperands(), grad->getOperands().drop_back()))
      return forward;
  }
  return nullptr;
}

struct TfcBlockedAttentionPass
    : public tfc::impl::TfcBlockedAttentionBase<TfcBlockedAttentionPass> {
  using TfcBlockedAttentionBase::TfcBlockedAttentionBase;

  void runOnOperation() override {
    if (blockSize < 0) {
      getOperation().emitError("tfc-blocked-attention: block-size must be "
                               "0 (chosen per attention) or positive, got ")
          << blockSize;
      return signalPassFailure();
    }
    // The loops over (batch, head) pairs are the foralls that the rewrites
    // add.
    llvm::DenseSet<Operation *> earlierLoops;
    getOperation().walk([&](scf::ForallOp loop) { earlierLoops.insert(loop); });
    // Gradients first find their forward, so that the forward's rewrite
    // keeps its output and log-sum-exp for them.
    SmallVector<AttentionOp> forwards;
    SmallVector<AttentionGradOp> grads;
    getOperation().walk([&](Operation *op) {
      if (auto forward = dyn_cast<AttentionOp>(op))
        forwards.push_back(forward);
      else if (auto grad = dyn_cast<AttentionGradOp>(op))
        grads.push_back(grad);
    });
    DenseMap<Operation *, SmallVector<AttentionGradOp>> gradsOf;
    SmallVector<AttentionGradOp> unpaired;
    for (AttentionGradOp grad : grads) {
      if (AttentionOp forward = findForward(grad))
        gradsOf[forward].push_back(grad);
      else
        unpaired.push_back(grad);
    }
    for (AttentionOp forward : forwards) {
      std::optional<BlockPlan> plan =
          planFor(forward, blockSize, parallelHeads);
      SmallVector<AttentionGradOp> paired = gradsOf.lookup(forward);
      if (!plan) {
        unpaired.append(paired);
        continue;
      }
      ForwardResults results = rewriteAttention(forward, *plan);
      for (AttentionGradOp grad : paired)
        rewriteAttentionGrad(grad, *plan, results);
    }
    for (AttentionGradOp grad : unpaired)
      if (std::optional<BlockPlan> plan =
              planFor(grad, blockSize, parallelHeads))
        rewriteAttentionGrad(grad, *plan, std::nullopt);
    if (!parallelHeads)
      return;
    // Inside the per-pair loops, the batch and head dimensions have one
    // element: the ops drop them, so that each works on `[T, T]` and
    // `[T, Dh]` blocks (whose rows tfc-fuse-rows can then fuse).
    SmallVector<scf::ForallOp> loops;
    getOperation().walk([&](scf::ForallOp loop) {
      if (!earlierLoops.contains(loop))
        loops.push_back(loop);
    });
    if (failed(dropPairDims(loops)))
      signalPassFailure();
  }
};

} // namespace
