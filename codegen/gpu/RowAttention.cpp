//===- RowAttention.cpp - The tfc-row-attention pass ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Lowers `tfc.attention` and `tfc.attention_grad` of the `#tfc.softmax`
/// kind to loops over rows, one iteration per (batch, head, row), each
/// running over the keys (or queries) it meets with its running values in
/// registers: no score matrix or block of one exists anywhere. On a GPU,
/// every iteration is a thread, and the threads of a warp are consecutive
/// rows of one head, which read the same key at the same time.
///
/// Forward, for query row i (an online softmax over single keys):
///
///   m = -inf, l = 0, acc = 0                        // acc: Dh values
///   for each key j that i may attend
///     s = scale * q_i . k_j,  m' = max(m, s)
///     c = exp(m - m'),  p = exp(s - m')
///     l = c * l + p,  acc = c * acc + p * v_j,  m = m'
///   O_i = acc / l   (0 when i attends no key)
///
/// Gradient, in two loops over rows. Per query row i: the softmax's
/// log-sum-exp `lse_i` and `D_i = dO_i . O_i = sum_j p_ij (dO_i . v_j)`
/// (both by the same online rescaling), then
/// `dQ_i = scale * sum_j p_ij (dO_i . v_j - D_i) k_j`. Per key row j, over
/// the queries i that attend it (from the last down when causal: the
/// threads of a warp, keys j..j+31, then start together at the same query
/// and read the same rows until each stops at its own j):
///
///   p = exp(scale * q_i . k_j - lse_i),  dV_j += p dO_i
///   dK_j += scale * p (dO_i . v_j - D_i) q_i
///
/// When the gradient's forward (the same operands) comes before it in its
/// block, as in a training step, the forward's loop also writes each row's
/// `lse_i`, and the gradient's loop over query rows reads it and computes
/// `D_i = dO_i . O_i` from the forward's output: one pass over the keys
/// instead of two.
///
/// All loops are `scf.forall` over tensors, whose rows are written with
/// `tensor.parallel_insert_slice`.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"
#include "passes/AttentionBuilders.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCROWATTENTION
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Builds the row loops of one softmax attention: `query [B, Sq, D]`,
/// `key` and `value [B, Sk, D]`, `heads` heads of `Dh = D / heads`
/// channels, an optional key mask `[B, Sk]`.
class RowAttentionBuilder {
public:
  /// The loops compute in `element`, by default the query's: operands of
  /// another type (bf16 roundings) are widened to it as rows are read.
  RowAttentionBuilder(OpBuilder &builder, Location loc, SoftmaxAttr kind,
                      int64_t heads, Value query, Value key, Value value,
                      Value mask, Type computeType = {})
      : b(builder), loc(loc), causal(kind.getCausal()), heads(heads),
        query(query), key(key), value(value), mask(mask),
        element(computeType ? computeType : elementOf(query)) {
    ArrayRef<int64_t> qShape = shapeOf(query);
    batch = qShape[0];
    queries = qShape[1];
    headDim = qShape[2] / heads;
    keys = shapeOf(key)[1];
    scale = 1.0 / std::sqrt(static_cast<double>(headDim));
    rowType = VectorType::get({headDim}, element);
  }

  /// The attention's output `[B, Sq, D]` and, with `withLse`, each row's
  /// log-sum-exp `[B, H, Sq]` (0 for a row that attends no key), for a
  /// gradient of the same attention to read instead of recomputing it.
  std::pair<Value, Value> forward(bool withLse) {
    SmallVector<Value> outs = {emptyTensor(b, loc, shapeOf(query), element)};
    if (withLse)
      outs.push_back(emptyTensor(b, loc, {batch, heads, queries}, element));
    auto loop = rowLoop(queries, outs, [&](Value bi, Value i, Value h) {
      Value q = readRow(query, bi, i, h);
      auto keysLoop =
          carryLoop(constantIndex(0), keyEnd(i),
                    {constant(-std::numeric_limits<double>::infinity()),
                     constant(0.0), zeroRow()},
                    [&](Value j, ValueRange run) {
                      Value k = readRow(key, bi, j, h);
                      auto [next, c, p] =
                          onlineStep(bi, j, run[0], score(q, k));
                      Value v = readRow(value, bi, j, h);
                      return SmallVector<Value>{next, add(mul(run[1], c), p),
                                                fma(p, v, mulRow(run[2], c))};
                    });
      // A row that attends no key gives zeros, as the dense lowering does.
      Value l = keysLoop.getResult(1);
      Value inverse = ifAny(l, b.create<arith::DivFOp>(loc, constant(1.0), l));
      SmallVector<Value> row = {mulRow(keysLoop.getResult(2), inverse)};
      if (withLse)
        row.push_back(logSumExp(keysLoop.getResult(0), l));
      return row;
    });
    return {loop.getResult(0), withLse ? loop.getResult(1) : Value()};
  }

  /// The gradients of query, key and value for the output gradient `grad`.
  /// With the forward's output `out` and log-sum-exp `forwardLse` (forward
  /// with `withLse`), each query row reads its log-sum-exp and computes
  /// `D = dO . O` instead of a first pass over its keys.
  SmallVector<Value> gradient(Value grad, Value out = {},
                              Value forwardLse = {}) {
    // Per query row: the log-sum-exp, D and dQ.
    Value dq = emptyTensor(b, loc, shapeOf(query), element);
    SmallVector<int64_t> statsShape = {batch, heads, queries};
    Value lseInit = emptyTensor(b, loc, statsShape, element);
    Value deltaInit = emptyTensor(b, loc, statsShape, element);
    auto queryLoop = rowLoop(
        queries, {dq, lseInit, deltaInit}, [&](Value bi, Value i, Value h) {
          Value q = readRow(query, bi, i, h);
          Value dout = readRow(grad, bi, i, h);
          Value lse, delta;
          if (forwardLse) {
            // A row that attends no key has O = 0, so D = 0 as below.
            lse = b.create<tensor::ExtractOp>(loc, forwardLse,
                                              ValueRange{bi, h, i});
            delta = dot(dout, readRow(out, bi, i, h));
          } else {
            // The softmax's normaliser and D, rescaled like it.
            auto statsLoop = carryLoop(
                constantIndex(0), keyEnd(i),
                {constant(-std::numeric_limits<double>::infinity()),
                 constant(0.0), constant(0.0)},
                [&](Value j, ValueRange run) {
                  Value k = readRow(key, bi, j, h);
                  auto [next, c, p] = onlineStep(bi, j, run[0], score(q, k));
                  Value dp = dot(dout, readRow(value, bi, j, h));
                  return SmallVector<Value>{next, add(mul(run[1], c), p),
                                            add(mul(run[2], c), mul(p, dp))};
                });
            Value l = statsLoop.getResult(1);
            lse = logSumExp(statsLoop.getResult(0), l);
            delta = ifAny(
                l, b.create<arith::DivFOp>(loc, statsLoop.getResult(2), l));
          }
          // dQ_i = scale * sum_j p_ij (dO_i . v_j - D_i) k_j.
          auto gradLoop = carryLoop(
              constantIndex(0), keyEnd(i), {zeroRow()},
              [&](Value j, ValueRange run) {
                Value k = readRow(key, bi, j, h);
                Value p = visible(
                    bi, j, b.create<math::ExpOp>(loc, sub(score(q, k), lse)));
                Value dp = dot(dout, readRow(value, bi, j, h));
                return SmallVector<Value>{
                    fma(mul(p, sub(dp, delta)), k, run[0])};
              });
          return SmallVector<Value>{
              mulRow(gradLoop.getResult(0), constant(scale)), lse, delta};
        });
    Value lse = queryLoop.getResult(1);
    Value delta = queryLoop.getResult(2);

    // Per key row: dK and dV over the queries that attend it.
    Value dk = emptyTensor(b, loc, shapeOf(key), element);
    Value dv = emptyTensor(b, loc, shapeOf(value), element);
    auto keyLoop = rowLoop(keys, {dk, dv}, [&](Value bi, Value j, Value h) {
      Value k = readRow(key, bi, j, h);
      Value v = readRow(value, bi, j, h);
      // The queries that attend key j: i >= j when causal, visited from the
      // last one down, so that the threads of a warp (consecutive keys)
      // read the same query row at the same time; every query otherwise.
      Value last = constantIndex(queries - 1);
      Value count = constantIndex(queries);
      if (causal)
        count = b.create<arith::SubIOp>(loc, count, j);
      // A padding key is attended by no query.
      if (mask)
        count = b.create<arith::SelectOp>(loc, realKey(bi, j), count,
                                          constantIndex(0));
      auto loop = carryLoop(
          constantIndex(0), count, {zeroRow(), zeroRow()},
          [&](Value step, ValueRange run) {
            Value i = causal ? b.create<arith::SubIOp>(loc, last, step) : step;
            Value q = readRow(query, bi, i, h);
            Value dout = readRow(grad, bi, i, h);
            SmallVector<Value> at = {bi, h, i};
            Value rowLse = b.create<tensor::ExtractOp>(loc, lse, at);
            Value rowDelta = b.create<tensor::ExtractOp>(loc, delta, at);
            Value p = b.create<math::ExpOp>(loc, sub(score(q, k), rowLse));
            Value ds = mul(p, sub(dot(dout, v), rowDelta));
            return SmallVector<Value>{fma(ds, q, run[0]), fma(p, dout, run[1])};
          });
      return SmallVector<Value>{mulRow(loop.getResult(0), constant(scale)),
                                loop.getResult(1)};
    });
    return {queryLoop.getResult(0), keyLoop.getResult(0), keyLoop.getResult(1)};
  }

private:
  using RowBody =
      function_ref<SmallVector<Value>(Value batchIndex, Value row, Value head)>;

  /// An `scf.forall` over (batch, head, row) for `rows` rows, with `outs`
  /// as its shared outputs. `body` returns, for each output, the row's
  /// value: a `[Dh]` vector written at `[b, row, h * Dh]` of a `[B, S, D]`
  /// output, or a scalar written at `[b, h, row]` of a `[B, H, S]` one.
  scf::ForallOp rowLoop(int64_t rows, ValueRange outs, RowBody body) {
    // Rows innermost: consecutive threads take consecutive rows of one
    // head, which read the same key or query rows.
    SmallVector<OpFoldResult> bounds = {
        b.getIndexAttr(batch), b.getIndexAttr(heads), b.getIndexAttr(rows)};
    auto loop =
        b.create<scf::ForallOp>(loc, bounds, outs, /*mapping=*/std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs = loop.getInductionVars();
    Value bi = ivs[0], h = ivs[1], row = ivs[2];
    SmallVector<Value> results = body(bi, row, h);
    SmallVector<Value> tiles;
    SmallVector<bool> isRow;
    for (Value result : results) {
      // Each value goes through a tensor.empty of its own, which
      // empty-tensor elimination replaces by the output's slice.
      isRow.push_back(isa<VectorType>(result.getType()));
      Value zero = constantIndex(0);
      if (!isRow.back()) {
        Value tile = emptyTensor(b, loc, {1}, element);
        tiles.push_back(b.create<tensor::InsertOp>(loc, result, tile, zero));
        continue;
      }
      Value tile = emptyTensor(b, loc, {headDim}, element);
      tiles.push_back(b.create<vector::TransferWriteOp>(loc, result, tile,
                                                        ValueRange{zero},
                                                        ArrayRef<bool>{true})
                          .getResult());
    }
    Value column = b.create<arith::MulIOp>(loc, h, constantIndex(headDim));
    b.setInsertionPointToStart(loop.getTerminator().getBody());
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    for (auto [tile, out, whole] :
         llvm::zip(tiles, loop.getRegionIterArgs(), isRow)) {
      SmallVector<OpFoldResult> offsets = {bi, h, row};
      SmallVector<OpFoldResult> sizes(3, b.getIndexAttr(1));
      if (whole) {
        offsets = {bi, row, column};
        sizes[2] = b.getIndexAttr(headDim);
      }
      b.create<tensor::ParallelInsertSliceOp>(loc, tile, out, offsets, sizes,
                                              strides);
    }
    return loop;
  }

  using CarryBody =
      function_ref<SmallVector<Value>(Value index, ValueRange carried)>;

  /// An `scf.for` from `lower` to `upper` carrying `inits` in registers;
  /// `body` returns the values of the next iteration.
  scf::ForOp carryLoop(Value lower, Value upper, ValueRange inits,
                       CarryBody body) {
    auto loop =
        b.create<scf::ForOp>(loc, lower, upper, constantIndex(1), inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    b.create<scf::YieldOp>(
        loc, body(loop.getInductionVar(), loop.getRegionIterArgs()));
    return loop;
  }

  /// `value` when the normaliser `l` is positive (the row attends a key),
  /// else 0.
  Value ifAny(Value l, Value value) {
    Value any = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, l,
                                        constant(0.0));
    return b.create<arith::SelectOp>(loc, any, value, constant(0.0));
  }

  /// The log-sum-exp `m + log l` of a row's running maximum and
  /// normaliser, or 0 when the row attends no key.
  Value logSumExp(Value m, Value l) {
    return ifAny(l, add(m, b.create<math::LogOp>(loc, l)));
  }

  /// The scaled score `scale * q . k` of two `[Dh]` rows.
  Value score(Value q, Value k) { return mul(constant(scale), dot(q, k)); }

  /// One online-softmax step from running maximum `m` with score `s` of key
  /// `j`: the new maximum, the factor `c` of the running sums and the
  /// weight `p` of the key (1 and 0 for a padding key, which leaves every
  /// running value as it was).
  std::tuple<Value, Value, Value> onlineStep(Value bi, Value j, Value m,
                                             Value s) {
    Value next = b.create<arith::MaximumFOp>(loc, m, s);
    Value c = b.create<math::ExpOp>(loc, sub(m, next));
    Value p = b.create<math::ExpOp>(loc, sub(s, next));
    if (!mask)
      return {next, c, p};
    Value real = realKey(bi, j);
    return {b.create<arith::SelectOp>(loc, real, next, m),
            b.create<arith::SelectOp>(loc, real, c, constant(1.0)),
            b.create<arith::SelectOp>(loc, real, p, constant(0.0))};
  }

  /// `p`, or 0 when key `j` is padding.
  Value visible(Value bi, Value j, Value p) {
    if (!mask)
      return p;
    return b.create<arith::SelectOp>(loc, realKey(bi, j), p, constant(0.0));
  }

  /// Whether key `j` of batch row `bi` is a real token (mask not 0).
  Value realKey(Value bi, Value j) {
    Value flag = b.create<tensor::ExtractOp>(loc, mask, ValueRange{bi, j});
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, flag,
                                   constant(0.0));
  }

  /// One past the last key that query `i` may attend.
  Value keyEnd(Value i) {
    if (!causal)
      return constantIndex(keys);
    return b.create<arith::AddIOp>(loc, i, constantIndex(1));
  }

  /// Head `h` of row `row` of `x [B, S, D]`, as a `[Dh]` vector of the
  /// loops' element type (widened from a narrower `x`).
  Value readRow(Value x, Value bi, Value row, Value h) {
    Value column = b.create<arith::MulIOp>(loc, h, constantIndex(headDim));
    Type stored = elementOf(x);
    if (stored == element)
      return b.create<vector::TransferReadOp>(
          loc, rowType, x, ValueRange{bi, row, column}, constant(0.0),
          ArrayRef<bool>{true});
    Value narrow = b.create<vector::TransferReadOp>(
        loc, VectorType::get({headDim}, stored), x, ValueRange{bi, row, column},
        floatConstant(b, loc, stored, 0.0), ArrayRef<bool>{true});
    return b.create<arith::ExtFOp>(loc, rowType, narrow);
  }

  Value dot(Value x, Value y) {
    return b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD,
                                         b.create<arith::MulFOp>(loc, x, y));
  }
  Value broadcast(Value x) {
    return b.create<vector::BroadcastOp>(loc, rowType, x);
  }
  /// `x * row + acc` for a scalar `x` and `[Dh]` rows.
  Value fma(Value x, Value row, Value acc) {
    return b.create<vector::FMAOp>(loc, broadcast(x), row, acc);
  }
  Value mulRow(Value row, Value x) {
    return b.create<arith::MulFOp>(loc, row, broadcast(x));
  }
  Value zeroRow() {
    return b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(rowType, b.getFloatAttr(element, 0.0)));
  }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value constant(double v) { return floatConstant(b, loc, element, v); }
  Value constantIndex(int64_t v) { return indexConstant(b, loc, v); }

  OpBuilder &b;
  Location loc;
  bool causal;
  int64_t heads, batch = 0, queries = 0, keys = 0, headDim = 0;
  double scale = 1.0;
  Value query, key, value, mask;
  Type element;
  VectorType rowType;
};

/// Whether the pass lowers an attention of `kind` over these operands:
/// softmax, static shapes, causal only over equal lengths.
bool handles(Attribute kind, Value query, Value key) {
  auto softmax = dyn_cast<SoftmaxAttr>(kind);
  if (!softmax)
    return false;
  auto qType = dyn_cast<RankedTensorType>(query.getType());
  auto kType = dyn_cast<RankedTensorType>(key.getType());
  if (!qType || !kType || !qType.hasStaticShape() || !kType.hasStaticShape())
    return false;
  return !softmax.getCausal() || qType.getDimSize(1) == kType.getDimSize(1);
}

/// Whether `grad` is the gradient of `attention`: the same kind, heads,
/// query, key, value and mask.
bool sameAttention(AttentionOp attention, AttentionGradOp grad) {
  return attention.getKind() == grad.getKind() &&
         attention.getHeads() == grad.getHeads() &&
         attention.getQuery() == grad.getQuery() &&
         attention.getKey() == grad.getKey() &&
         attention.getValue() == grad.getValue() &&
         attention.getMask() == grad.getMask();
}

/// The global token positions of a Longformer attention of `kind`; none
/// for another kind.
SmallVector<int64_t> globalPositions(Attribute kind) {
  auto longformer = dyn_cast<LongformerAttr>(kind);
  return longformer ? longformer.getGlobalPositions() : SmallVector<int64_t>();
}

/// `into [B, T, D]` with its rows `to[i]` replaced by the rows `from[i]`
/// of `x [B, S, D]`.
Value copyRows(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> from,
               Value into, ArrayRef<int64_t> to) {
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(shape[0]), b.getIndexAttr(1), b.getIndexAttr(shape[2])};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto at = [&](int64_t row) {
    return SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(row),
                                     b.getIndexAttr(0)};
  };
  for (auto [source, target] : llvm::zip_equal(from, to))
    into = b.create<tensor::InsertSliceOp>(
        loc,
        b.create<tensor::ExtractSliceOp>(loc, x, at(source), sizes, strides),
        into, at(target), sizes, strides);
  return into;
}

/// The rows `positions` of `x [B, S, D]`, as `[B, G, D]`.
Value gatherRows(OpBuilder &b, Location loc, Value x,
                 ArrayRef<int64_t> positions) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t count = positions.size();
  Value rows = emptyTensor(b, loc, {shape[0], count, shape[2]}, elementOf(x));
  return copyRows(b, loc, x, positions, rows,
                  llvm::to_vector(llvm::seq<int64_t>(0, count)));
}

/// `into [B, S, D]` with its rows `positions` replaced by those of
/// `rows [B, G, D]`, in order.
Value scatterRows(OpBuilder &b, Location loc, Value rows, Value into,
                  ArrayRef<int64_t> positions) {
  return copyRows(b, loc, rows,
                  llvm::to_vector(llvm::seq<int64_t>(0, positions.size())),
                  into, positions);
}

/// The row loops of the global rows of a non-causal Longformer attention
/// like `op`: a softmax attention of the global query's rows at the global
/// positions over every key of the global key and value, in `element`.
template <typename AttentionLikeOp>
RowAttentionBuilder globalRowLoops(OpBuilder &b, Location loc,
                                   AttentionLikeOp op, Type element = {}) {
  auto kind = cast<LongformerAttr>(op.getKind());
  return RowAttentionBuilder(
      b, loc, SoftmaxAttr::get(b.getContext(), /*causal=*/false), op.getHeads(),
      gatherRows(b, loc, op.getGlobalQuery(), kind.getGlobalPositions()),
      op.getGlobalKey(), op.getGlobalValue(), op.getMask(), element);
}

/// The output of a Longformer attention with global tokens from its local
/// rows' output `local [B, S, D]` (a FlashAttention kernel's): each global
/// row replaced by its one-row attention through the global projections.
/// Non-causal, the global rows are row loops (one thread per global row
/// and head, over every key); causal, each is a one-row attention up to
/// itself, as tfc-lower-to-linalg builds it.
Value withGlobalRows(OpBuilder &b, Location loc, AttentionOp op, Value local) {
  auto kind = cast<LongformerAttr>(op.getKind());
  int64_t heads = op.getHeads();
  if (!kind.getCausal())
    return scatterRows(b, loc, globalRowLoops(b, loc, op).forward(false).first,
                       local, kind.getGlobalPositions());
  Value rows = attention::longformerGlobalRows(
      b, loc, attention::splitHeads(b, loc, local, heads), op.getGlobalQuery(),
      op.getGlobalKey(), op.getGlobalValue(), op.getMask(), heads,
      kind.getGlobalPositions(), /*causal=*/true);
  return attention::mergeHeads(b, loc, rows);
}

/// The gradients of the global query, key and value of a Longformer
/// attention gradient `grad` with global tokens: those of the global rows
/// of withGlobalRows, for the output gradient's global rows.
SmallVector<Value> globalRowGrads(OpBuilder &b, Location loc,
                                  AttentionGradOp grad) {
  auto kind = cast<LongformerAttr>(grad.getKind());
  SmallVector<int64_t> globals = kind.getGlobalPositions();
  if (kind.getCausal())
    return attention::longformerGlobalRowGrads(
        b, loc, grad.getGlobalQuery(), grad.getGlobalKey(),
        grad.getGlobalValue(), grad.getMask(),
        attention::splitHeads(b, loc, grad.getGrad(), grad.getHeads()),
        grad.getHeads(), globals, /*causal=*/true);
  SmallVector<Value> grads =
      globalRowLoops(b, loc, grad, elementOf(grad.getGrad()))
          .gradient(gatherRows(b, loc, grad.getGrad(), globals));
  Value query = grad.getGlobalQuery();
  grads[0] = scatterRows(
      b, loc, grads[0],
      filledTensor(b, loc, shapeOf(query), elementOf(query), 0.0), globals);
  return grads;
}

/// `grad [B, S, D]` with zeros at the rows `globals`, whose output the
/// forward replaced: the output gradient of the local rows.
Value withoutGlobalRows(OpBuilder &b, Location loc, Value grad,
                        ArrayRef<int64_t> globals) {
  ArrayRef<int64_t> shape = shapeOf(grad);
  Type element = elementOf(grad);
  return elementwise(
      b, loc, shape, element,
      ValueRange{grad, attention::positionFlags(b, loc, globals, shape[1])},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::SelectOp>(
            nloc, args[1], floatConstant(nb, nloc, element, 0.0), args[0]);
      },
      {b.getMultiDimIdentityMap(3), attention::loopDims(b, 3, {1})});
}

struct TfcRowAttentionPass
    : public tfc::impl::TfcRowAttentionBase<TfcRowAttentionPass> {
  using TfcRowAttentionBase::TfcRowAttentionBase;

  void runOnOperation() override {
    // Softmax attentions, and with flash-forward the Longformer ones that
    // the FlashAttention kernels take (with their gradients, when paired
    // below); the other Longformer ones are left to tfc-blocked-attention.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (auto attention = dyn_cast<AttentionOp>(op)) {
        if (handles(attention.getKind(), attention.getQuery(),
                    attention.getKey()) ||
            (flashForward && isa<LongformerAttr>(attention.getKind()) &&
             flashAttentionTakes(attention.getKind(), attention.getHeads(),
                                 attention.getQuery(), attention.getKey(),
                                 attention.getMask())))
          ops.push_back(op);
      } else if (auto grad = dyn_cast<AttentionGradOp>(op)) {
        if (handles(grad.getKind(), grad.getQuery(), grad.getKey()) ||
            (flashForward && isa<LongformerAttr>(grad.getKind())))
          ops.push_back(op);
      }
    });
    // A gradient whose forward (the same operands) comes before it in its
    // block reads the forward's output and log-sum-exp.
    DenseMap<Operation *, AttentionOp> forwardOf;
    DenseSet<Operation *> paired;
    for (Operation *op : ops) {
      auto grad = dyn_cast<AttentionGradOp>(op);
      if (!grad)
        continue;
      for (Operation *other : ops) {
        auto attention = dyn_cast<AttentionOp>(other);
        if (attention && sameAttention(attention, grad) &&
            attention->getBlock() == grad->getBlock() &&
            attention->isBeforeInBlock(grad)) {
          forwardOf[grad] = attention;
          paired.insert(attention);
          break;
        }
      }
    }
    // A Longformer gradient runs as FlashAttention kernels after its
    // forward's, or is left alone.
    llvm::erase_if(ops, [&](Operation *op) {
      auto grad = dyn_cast<AttentionGradOp>(op);
      return grad && isa<LongformerAttr>(grad.getKind()) &&
             (!forwardOf.count(op) ||
              !flashAttentionGradientTakes(grad.getHeads(), grad.getQuery()));
    });
    // The forwards come first in `ops` (walk order, and each before its
    // gradient in their block): their results are known when a gradient
    // is lowered.
    DenseMap<Operation *, FlashAttentionForward> lowered;
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto attention = dyn_cast<AttentionOp>(op)) {
        Attribute kind = attention.getKind();
        FlashAttentionForward forward;
        Value result;
        if (flashForward &&
            flashAttentionTakes(kind, attention.getHeads(),
                                attention.getQuery(), attention.getKey(),
                                attention.getMask())) {
          forward = buildFlashAttentionForward(
              b, op->getLoc(), kind, attention.getHeads(), attention.getQuery(),
              attention.getKey(), attention.getValue(), attention.getMask());
          // With global tokens the kernel's output is the local rows',
          // which the gradient reads (D) with its log-sum-exp.
          result =
              globalPositions(kind).empty()
                  ? forward.out
                  : withGlobalRows(b, op->getLoc(), attention, forward.out);
        } else {
          RowAttentionBuilder rows(b, op->getLoc(), cast<SoftmaxAttr>(kind),
                                   attention.getHeads(), attention.getQuery(),
                                   attention.getKey(), attention.getValue(),
                                   attention.getMask());
          std::tie(forward.out, forward.lse) =
              rows.forward(paired.contains(op));
          result = forward.out;
        }
        attention.getResult().replaceAllUsesWith(result);
        lowered[op] = forward;
      } else {
        auto grad = cast<AttentionGradOp>(op);
        FlashAttentionForward forward = lowered.lookup(forwardOf.lookup(op));
        SmallVector<Value> grads;
        SmallVector<int64_t> globals = globalPositions(grad.getKind());
        if (forward.query &&
            flashAttentionGradientTakes(grad.getHeads(), grad.getQuery())) {
          Value localGrad = grad.getGrad();
          if (!globals.empty())
            localGrad = withoutGlobalRows(b, op->getLoc(), localGrad, globals);
          grads =
              buildFlashAttentionGradient(b, op->getLoc(), grad.getKind(),
                                          grad.getHeads(), forward, localGrad);
          if (!globals.empty())
            for (auto [old, computed] :
                 llvm::zip_equal(grad.getGlobalGrads(),
                                 globalRowGrads(b, op->getLoc(), grad)))
              old.replaceAllUsesWith(computed);
        } else {
          // After a FlashAttention forward, the row loops read the same
          // bf16 operands as it did, so that their probabilities are those
          // of the forward's log-sum-exp, and the float32 ones need not be
          // kept.
          Value query = grad.getQuery(), key = grad.getKey(),
                value = grad.getValue();
          if (forward.query) {
            query = forward.query;
            key = forward.key;
            value = forward.value;
          }
          RowAttentionBuilder rows(b, op->getLoc(),
                                   cast<SoftmaxAttr>(grad.getKind()),
                                   grad.getHeads(), query, key, value,
                                   grad.getMask(), elementOf(grad.getGrad()));
          grads = rows.gradient(grad.getGrad(), forward.out, forward.lse);
        }
        grad.getQueryGrad().replaceAllUsesWith(grads[0]);
        grad.getKeyGrad().replaceAllUsesWith(grads[1]);
        grad.getValueGrad().replaceAllUsesWith(grads[2]);
      }
      op->erase();
    }
  }
};

} // namespace
