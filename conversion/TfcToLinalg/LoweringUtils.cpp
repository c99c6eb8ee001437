//===- LoweringUtils.cpp - Builders shared by the tfc lowerings -----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "conversion/TfcToLinalg/LoweringUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

/// The reassociation group `[0, 1, ..., count - 1]`.
static ReassociationIndices leadingDims64(unsigned count) {
  ReassociationIndices dims;
  for (unsigned i = 0; i < count; ++i)
    dims.push_back(i);
  return dims;
}

bool lowering::hasStaticShapes(Operation *op) {
  auto isStatic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return !shaped || shaped.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

SmallVector<unsigned> lowering::leadingDims(unsigned count) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i < count; ++i)
    dims.push_back(i);
  return dims;
}

Value lowering::expand(OpBuilder &b, Location loc, Value value,
                       ArrayRef<ReassociationIndices> groups,
                       ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, elementOf(value));
  return b.create<tensor::ExpandShapeOp>(loc, type, value, groups);
}

Value lowering::collapse(OpBuilder &b, Location loc, Value value,
                         ArrayRef<ReassociationIndices> groups) {
  return b.create<tensor::CollapseShapeOp>(loc, value, groups);
}

Value lowering::toRows(OpBuilder &b, Location loc, Value value) {
  unsigned rank = shapeOf(value).size();
  if (rank == 2)
    return value;
  return collapse(b, loc, value, {leadingDims64(rank - 1), {rank - 1}});
}

Value lowering::fromRows(OpBuilder &b, Location loc, Value rows,
                         ArrayRef<int64_t> leading) {
  if (leading.size() == 1)
    return rows;
  SmallVector<int64_t> shape(leading);
  shape.push_back(shapeOf(rows)[1]);
  return expand(
      b, loc, rows,
      {leadingDims64(leading.size()), {static_cast<int64_t>(leading.size())}},
      shape);
}

Value lowering::add(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return elementwise(
      b, loc, shapeOf(lhs), elementOf(lhs), {lhs, rhs},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return nb.create<arith::AddFOp>(nloc, args[0], args[1]).getResult();
      });
}

Value lowering::broadcastLastDim(OpBuilder &b, Location loc, Value vector,
                                 ArrayRef<int64_t> shape) {
  unsigned rank = shape.size();
  AffineMap map = loopDims(b, rank, {rank - 1});
  return elementwise(
      b, loc, shape, elementOf(vector), {vector},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; }, {map});
}

Value lowering::linear(OpBuilder &b, Location loc, Value x, Value weight,
                       Value bias) {
  Value y = matmulTransposeB(b, loc, toRows(b, loc, x), weight);
  if (bias) {
    Value biasRows = broadcastLastDim(b, loc, bias, shapeOf(y));
    y = add(b, loc, y, biasRows);
  }
  return fromRows(b, loc, y, shapeOf(x).drop_back());
}

Value lowering::scale(OpBuilder &b, Location loc, Value value, double factor) {
  Type element = elementOf(value);
  return elementwise(
      b, loc, shapeOf(value), element, {value},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value c = floatConstant(nb, nloc, element, factor);
        return nb.create<arith::MulFOp>(nloc, args[0], c).getResult();
      });
}

Value lowering::contract(OpBuilder &b, Location loc, Value init, Value lhs,
                         AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                         unsigned numReductions) {
  unsigned outRank = shapeOf(init).size();
  unsigned numLoops = outRank + numReductions;
  AffineMap outMap = loopDims(b, numLoops, leadingDims(outRank));
  SmallVector<utils::IteratorType> iterators = parallelIterators(numLoops);
  for (unsigned i = outRank; i < numLoops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{init.getType()}, ValueRange{lhs, rhs}, ValueRange{init},
      ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = nb.create<arith::MulFOp>(nloc, args[0], args[1]);
        Value sum = nb.create<arith::AddFOp>(nloc, args[2], product);
        nb.create<linalg::YieldOp>(nloc, sum);
      });
  return generic.getResult(0);
}

Value lowering::contractNew(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                            Value lhs, AffineMap lhsMap, Value rhs,
                            AffineMap rhsMap, unsigned numReductions) {
  Value zeros = filledTensor(b, loc, shape, elementOf(lhs), 0.0);
  return contract(b, loc, zeros, lhs, lhsMap, rhs, rhsMap, numReductions);
}

Value lowering::scaledSoftmax(OpBuilder &b, Location loc, Value scores,
                              double factor) {
  ArrayRef<int64_t> shape = shapeOf(scores);
  unsigned rank = shape.size();
  Type element = elementOf(scores);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = loopDims(b, rank, leadingDims(rank - 1));

  Value rowMax = rowMaxima(b, loc, scores);
  // exp(factor * (x - max)) is exp(factor * x) / exp(factor * max).
  Value exps =
      elementwise(b, loc, shape, element, {scores, rowMax},
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    Value shifted =
                        nb.create<arith::SubFOp>(nloc, args[0], args[1]);
                    Value c = floatConstant(nb, nloc, element, factor);
                    Value scaled = nb.create<arith::MulFOp>(nloc, shifted, c);
                    return nb.create<math::ExpOp>(nloc, scaled).getResult();
                  },
                  {identity, rowMap});
  Value rowSum = reduceLastDim(
      b, loc, exps, 0.0, [](OpBuilder &nb, Location nloc, Value acc, Value x) {
        return nb.create<arith::AddFOp>(nloc, acc, x).getResult();
      });
  return elementwise(
      b, loc, shape, element, {exps, rowSum},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return nb.create<arith::DivFOp>(nloc, args[0], args[1]).getResult();
      },
      {identity, rowMap});
}

Value lowering::repeatPositions(OpBuilder &b, Location loc, Value x,
                                int64_t factor) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t batch = shape[0], groups = shape[1], width = shape[2];
  Value repeated = elementwise(
      b, loc, {batch, groups, factor, width}, elementOf(x), {x},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; },
      {loopDims(b, 4, {0, 1, 3})});
  return collapse(b, loc, repeated, {{0}, {1, 2}, {3}});
}

Value lowering::clampedIndex(OpBuilder &b, Location loc, Value id,
                             int64_t limit) {
  Value index = b.create<arith::IndexCastOp>(loc, b.getIndexType(), id);
  Value zero = indexConstant(b, loc, 0);
  Value bound = indexConstant(b, loc, limit);
  Value below =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, index, zero);
  Value above =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, index, bound);
  Value outside = b.create<arith::OrIOp>(loc, below, above);
  return b.create<arith::SelectOp>(loc, outside, zero, index);
}

LayerNormStatistics lowering::layerNormStatistics(OpBuilder &b, Location loc,
                                                  Value x, double eps) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  int64_t rows = shape[0], width = shape[1];
  LayerNormStatistics stats;
  stats.inverseWidth =
      floatConstant(b, loc, element, 1.0 / static_cast<double>(width));
  Value inverseWidth = stats.inverseWidth;
  Value sum = sumLastDim(b, loc, x);
  Value mean =
      elementwise(b, loc, {rows}, element, ValueRange{sum},
                  [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                    return b.create<arith::MulFOp>(l, args[0], inverseWidth);
                  });
  stats.centred =
      elementwise(b, loc, {rows, width}, element, ValueRange{x, mean},
                  [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                    return b.create<arith::SubFOp>(l, args[0], args[1]);
                  },
                  {b.getMultiDimIdentityMap(2), loopDims(b, 2, {0})});
  Value squares =
      reduceLastDim(b, loc, stats.centred, 0.0,
                    [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                      return b.create<arith::AddFOp>(
                          l, acc, b.create<arith::MulFOp>(l, v, v));
                    });
  Value epsilon = floatConstant(b, loc, element, eps);
  stats.inverseStd = elementwise(
      b, loc, {rows}, element, ValueRange{squares},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value variance = b.create<arith::MulFOp>(l, args[0], inverseWidth);
        Value std = b.create<math::SqrtOp>(
            l, b.create<arith::AddFOp>(l, variance, epsilon));
        return b.create<arith::DivFOp>(l, floatConstant(b, l, element, 1.0),
                                       std);
      });
  return stats;
}

ResamplingAttention lowering::shorteningAttention(OpBuilder &b, Location loc,
                                                  Value x, Value pooled,
                                                  int64_t factor, int64_t heads,
                                                  ValueRange weights) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t batch = shape[0], groups = shape[1] / factor, width = shape[2];
  int64_t headDim = width / heads;
  ResamplingAttention a;
  // [batch, groups, heads, head_dim]
  a.query = splitHeads(b, loc, linear(b, loc, pooled, weights[0]), heads);
  // [batch, groups, factor, heads, head_dim]
  auto splitGroups = [&](Value v) {
    return expand(b, loc, v, {{0}, {1, 2}, {3, 4}},
                  {batch, groups, factor, heads, headDim});
  };
  a.key = splitGroups(linear(b, loc, x, weights[1]));
  a.value = splitGroups(linear(b, loc, x, weights[2]));
  // scores[b, n, h, j] = sum_e q[b, n, h, e] k[b, n, j, h, e]; loops
  // (b, n, h, j, e).
  Value scores = contractNew(b, loc, {batch, groups, heads, factor}, a.query,
                             loopDims(b, 5, {0, 1, 2, 4}), a.key,
                             loopDims(b, 5, {0, 1, 3, 2, 4}), 1);
  a.probs = scaledSoftmax(b, loc, scores,
                          1.0 / std::sqrt(static_cast<double>(headDim)));
  // out[b, n, h, e] = sum_j p[b, n, h, j] v[b, n, j, h, e]; loops
  // (b, n, h, e, j).
  a.attended =
      mergeHeads(b, loc,
                 contractNew(b, loc, {batch, groups, heads, headDim}, a.probs,
                             loopDims(b, 5, {0, 1, 2, 4}), a.value,
                             loopDims(b, 5, {0, 1, 4, 2, 3}), 1));
  return a;
}

ResamplingAttention lowering::upsamplingAttention(OpBuilder &b, Location loc,
                                                  Value shortened,
                                                  Value residual,
                                                  int64_t factor, int64_t heads,
                                                  ValueRange weights) {
  ArrayRef<int64_t> shape = shapeOf(residual);
  int64_t batch = shape[0], seq = shape[1], width = shape[2];
  int64_t groups = seq / factor, headDim = width / heads;
  Type element = elementOf(residual);
  ResamplingAttention a;
  a.query = splitHeads(b, loc, linear(b, loc, residual, weights[0]), heads);
  a.key = splitHeads(b, loc, linear(b, loc, shortened, weights[1]), heads);
  a.value = splitHeads(b, loc, linear(b, loc, shortened, weights[2]), heads);
  // scores[b, p, h, i] = sum_e q[b, p, h, e] k[b, i, h, e]; loops
  // (b, p, h, i, e).
  Value scores = contractNew(b, loc, {batch, seq, heads, groups}, a.query,
                             loopDims(b, 5, {0, 1, 2, 4}), a.key,
                             loopDims(b, 5, {0, 3, 2, 4}), 1);
  // Position p sees the shortened positions i with i * factor <= p.
  Value masked = elementwise(
      b, loc, {batch, seq, heads, groups}, element, {scores},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value position = nb.create<linalg::IndexOp>(nloc, 1);
        Value group = nb.create<linalg::IndexOp>(nloc, 3);
        Value start = nb.create<arith::MulIOp>(
            nloc, group, nb.create<arith::ConstantIndexOp>(nloc, factor));
        Value visible = nb.create<arith::CmpIOp>(
            nloc, arith::CmpIPredicate::sle, start, position);
        Value minusInf = floatConstant(
            nb, nloc, element, -std::numeric_limits<double>::infinity());
        return nb.create<arith::SelectOp>(nloc, visible, args[0], minusInf)
            .getResult();
      });
  a.probs = scaledSoftmax(b, loc, masked,
                          1.0 / std::sqrt(static_cast<double>(headDim)));
  // out[b, p, h, e] = sum_i p[b, p, h, i] v[b, i, h, e]; loops
  // (b, p, h, e, i).
  a.attended =
      mergeHeads(b, loc,
                 contractNew(b, loc, {batch, seq, heads, headDim}, a.probs,
                             loopDims(b, 5, {0, 1, 2, 4}), a.value,
                             loopDims(b, 5, {0, 4, 2, 3}), 1));
  return a;
}

Value lowering::shiftPositions(OpBuilder &b, Location loc, Value x,
                               int64_t amount) {
  if (amount == 0)
    return x;
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t right = std::max<int64_t>(amount, 0);
  int64_t left = std::max<int64_t>(-amount, 0);
  auto index = [&](ArrayRef<int64_t> values) {
    return llvm::map_to_vector(values, [&](int64_t value) -> OpFoldResult {
      return b.getIndexAttr(value);
    });
  };
  Value kept = b.create<tensor::ExtractSliceOp>(
      loc, x, index({0, left, 0}),
      index({shape[0], shape[1] - right - left, shape[2]}), index({1, 1, 1}));
  Value zero = floatConstant(b, loc, elementOf(x), 0.0);
  return b.create<tensor::PadOp>(loc, x.getType(), kept, index({0, right, 0}),
                                 index({0, left, 0}), zero);
}

Value lowering::meanOfRows(OpBuilder &b, Location loc, Value values) {
  Type element = elementOf(values);
  int64_t rows = shapeOf(values)[0];
  Value total = sumLastDim(b, loc, values);
  Value inverseRows = floatConstant(b, loc, element, 1.0 / rows);
  return elementwise(b, loc, {}, element, ValueRange{total},
                     [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                       return nb.create<arith::MulFOp>(l, args[0], inverseRows);
                     });
}
