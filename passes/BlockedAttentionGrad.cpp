//===- BlockedAttentionGrad.cpp - Gradients of tfc-blocked-attention ------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The gradient of attention by blocks (see BlockedAttention.cpp): walks key
/// blocks (outer) and the query blocks that see them (inner), recomputing
/// each probability block from the forward's log-sum-exp, then the global
/// columns of a Longformer as one more key block.
///
//===----------------------------------------------------------------------===//

#include "passes/BlockedAttention.h"
#include "passes/Utils.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::attention;
using namespace mlir::tfc::blocked;

namespace {

/// Query block `qb` (at `rowOffset`) of the gradient: its queries, output
/// gradient, log-sum-exp and `D = rowsum(dO o O)`.
struct QueryBlock {
  Value q, gradOut, lse, delta;
};

/// The rows of query block `qb` at `rowOffset`.
QueryBlock sliceQueryBlock(OpBuilder &b, Location loc, const BlockPlan &plan,
                           Value q, Value gradOut, Value lse, Value delta,
                           Value rowOffset) {
  int64_t T = plan.block;
  return {sliceDim(b, loc, q, 1, rowOffset, T),
          sliceDim(b, loc, gradOut, 1, rowOffset, T),
          sliceDim(b, loc, lse, 2, rowOffset, T),
          sliceDim(b, loc, delta, 2, rowOffset, T)};
}

/// One query block's contribution to the gradients of one key block: the
/// probabilities recomputed from `lse`, then dV, dK (returned) and dQ (the
/// rows of `queryGrad` at `rowOffset`, updated).
struct PairGrads {
  Value queryGrad, keyGrad, valueGrad;
};

/// Updates `acc` by the pair of query block `query` and the key block
/// `kBlock`, `vBlock` whose masked scores are `s`.
PairGrads blockPairGrads(OpBuilder &b, Location loc, const BlockPlan &plan,
                         Value s, const QueryBlock &query, Value kBlock,
                         Value vBlock, Value rowOffset, PairGrads acc) {
  Type element = elementOf(s);
  AffineMap id4 = b.getMultiDimIdentityMap(4);
  AffineMap rowMap = loopDims(b, 4, {0, 1, 2});
  Value probs =
      elementwise(b, loc, shapeOf(s), element, ValueRange{s, query.lse},
                  [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                    return nb.create<math::ExpOp>(
                        nloc, nb.create<arith::SubFOp>(nloc, args[0], args[1]));
                  },
                  {id4, rowMap});
  PairGrads next;
  next.valueGrad = weightQueries(b, loc, probs, query.gradOut, acc.valueGrad);
  Value probGrads = dotScores(b, loc, query.gradOut, vBlock);
  double scale = plan.scale;
  Value scoreGrads = elementwise(
      b, loc, shapeOf(s), element, ValueRange{probs, probGrads, query.delta},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value centred = nb.create<arith::SubFOp>(nloc, args[1], args[2]);
        Value product = nb.create<arith::MulFOp>(nloc, args[0], centred);
        return mulConst(nb, nloc, product, scale);
      },
      {id4, id4, rowMap});
  next.keyGrad = weightQueries(b, loc, scoreGrads, query.q, acc.keyGrad);
  Value queryRows = sliceDim(b, loc, acc.queryGrad, 1, rowOffset, plan.block);
  queryRows = weightValues(b, loc, scoreGrads, kBlock, queryRows);
  next.queryGrad = insertDim(b, loc, queryRows, acc.queryGrad, 1, rowOffset);
  return next;
}

/// Adds the rows of `rows [B, G, ...]` into `dest` at `positions`.
Value scatterAddRows(OpBuilder &b, Location loc, Value rows, Value dest,
                     ArrayRef<int64_t> positions) {
  for (auto [n, position] : llvm::enumerate(positions)) {
    Value row = sliceDim(b, loc, rows, 1, b.getIndexAttr(n), 1);
    Value target = sliceDim(b, loc, dest, 1, b.getIndexAttr(position), 1);
    unsigned rank = shapeOf(row).size();
    AffineMap id = b.getMultiDimIdentityMap(rank);
    Value sum = buildGeneric(
        b, loc, ValueRange{row}, target, {id}, id,
        [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return nb.create<arith::AddFOp>(nloc, args[1], args[0]);
        });
    dest = insertDim(b, loc, sum, dest, 1, b.getIndexAttr(position));
  }
  return dest;
}

} // namespace

BlockedGrads blocked::blockedBackwardOf(OpBuilder &b, Location loc,
                                        const BlockPlan &plan, Value q, Value k,
                                        Value v, Value mask, Value out,
                                        Value lse, Value gradOut) {
  Type element = elementOf(q);
  int64_t T = plan.block;
  KeySide keys = buildKeySide(b, loc, plan, k, v, mask);
  ArrayRef<int64_t> shape = shapeOf(q);
  // D[b, h, i] = sum_e dO[b, i, h, e] * O[b, i, h, e].
  Value delta = accumulateProducts(
      b, loc, ValueRange{gradOut, out},
      filledTensor(b, loc, {plan.batch, plan.heads, plan.length}, element, 0.0),
      {b.getMultiDimIdentityMap(4), b.getMultiDimIdentityMap(4)},
      loopDims(b, 4, {0, 2, 1}));
  Value queryGrad0 = filledTensor(b, loc, shape, element, 0.0);
  Value keyGrad0 = emptyTensor(b, loc, shape, element);
  Value valueGrad0 = emptyTensor(b, loc, shape, element);
  Value blockSize = indexConstant(b, loc, T);
  SmallVector<int64_t> blockShape = {plan.batch, T, plan.heads, plan.headDim};

  auto outer = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, plan.blocks),
      indexConstant(b, loc, 1), ValueRange{queryGrad0, keyGrad0, valueGrad0},
      [&](OpBuilder &nb, Location nloc, Value kb, ValueRange carried) {
        Value colOffset = nb.create<arith::MulIOp>(nloc, kb, blockSize);
        KeyBlock key = sliceKeyBlock(nb, nloc, plan, keys, colOffset);
        Value keyGrad = filledTensor(nb, nloc, blockShape, element, 0.0);
        Value valueGrad = filledTensor(nb, nloc, blockShape, element, 0.0);
        auto [lo, hi] = queryBlockRange(nb, nloc, plan, kb);
        auto inner = nb.create<scf::ForOp>(
            nloc, lo, hi, indexConstant(nb, nloc, 1),
            ValueRange{carried[0], keyGrad, valueGrad},
            [&](OpBuilder &ib, Location iloc, Value qb, ValueRange acc) {
              Value rowOffset = ib.create<arith::MulIOp>(iloc, qb, blockSize);
              QueryBlock query = sliceQueryBlock(ib, iloc, plan, q, gradOut,
                                                 lse, delta, rowOffset);
              Value s = blockScores(ib, iloc, plan, plan.filter, query.q, key.k,
                                    key.mask, key.exclude, Value(), rowOffset,
                                    colOffset);
              PairGrads next =
                  blockPairGrads(ib, iloc, plan, s, query, key.k, key.v,
                                 rowOffset, PairGrads{acc[0], acc[1], acc[2]});
              ib.create<scf::YieldOp>(
                  iloc,
                  ValueRange{next.queryGrad, next.keyGrad, next.valueGrad});
            });
        Value keyGrads =
            insertDim(nb, nloc, inner.getResult(1), carried[1], 1, colOffset);
        Value valueGrads =
            insertDim(nb, nloc, inner.getResult(2), carried[2], 1, colOffset);
        nb.create<scf::YieldOp>(
            nloc, ValueRange{inner.getResult(0), keyGrads, valueGrads});
      });
  BlockedGrads grads{outer.getResult(0), outer.getResult(1),
                     outer.getResult(2)};
  if (!keys.globalK)
    return grads;

  // The global columns, one key block seen by every query block.
  SmallVector<int64_t> globalShape = {plan.batch,
                                      static_cast<int64_t>(plan.globals.size()),
                                      plan.heads, plan.headDim};
  Value globalKeyGrad0 = filledTensor(b, loc, globalShape, element, 0.0);
  Value globalValueGrad0 = filledTensor(b, loc, globalShape, element, 0.0);
  auto loop = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, plan.blocks),
      indexConstant(b, loc, 1),
      ValueRange{grads.query, globalKeyGrad0, globalValueGrad0},
      [&](OpBuilder &ib, Location iloc, Value qb, ValueRange acc) {
        Value rowOffset = ib.create<arith::MulIOp>(iloc, qb, blockSize);
        QueryBlock query =
            sliceQueryBlock(ib, iloc, plan, q, gradOut, lse, delta, rowOffset);
        Value s = blockScores(ib, iloc, plan, plan.globalFilter, query.q,
                              keys.globalK, keys.globalMask, Value(),
                              plan.globalIndex, rowOffset, Value());
        PairGrads next =
            blockPairGrads(ib, iloc, plan, s, query, keys.globalK, keys.globalV,
                           rowOffset, PairGrads{acc[0], acc[1], acc[2]});
        ib.create<scf::YieldOp>(
            iloc, ValueRange{next.queryGrad, next.keyGrad, next.valueGrad});
      });
  grads.query = loop.getResult(0);
  grads.key =
      scatterAddRows(b, loc, loop.getResult(1), grads.key, plan.globals);
  grads.value =
      scatterAddRows(b, loc, loop.getResult(2), grads.value, plan.globals);
  return grads;
}
