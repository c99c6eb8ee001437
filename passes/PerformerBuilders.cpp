//===- PerformerBuilders.cpp - Building blocks of FAVOR+ attention --------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The FAVOR+ building blocks declared in AttentionBuilders.h: positive
/// random features, their stabilisers, the key/value state, and the causal
/// form by chunks.
///
//===----------------------------------------------------------------------===//

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
// #tfc.performer
//===----------------------------------------------------------------------===//

double attention::lowestFinite(Type element) {
  return APFloat::getLargest(cast<FloatType>(element).getFloatSemantics(),
                             /*Negative=*/true)
      .convertToDouble();
}

/// Inside a `linalg.generic` body: whether the chunk column of loop
/// `columnDim` is at or before the chunk row of loop `rowDim` (`j <= i`).
static Value withinChunkCausal(OpBuilder &b, Location loc, unsigned rowDim,
                               unsigned columnDim) {
  Value i = b.create<linalg::IndexOp>(loc, rowDim);
  Value j = b.create<linalg::IndexOp>(loc, columnDim);
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, j, i);
}

Value attention::scaledFeatures(OpBuilder &b, Location loc, Value features) {
  Type element = elementOf(features);
  double inputScale =
      std::pow(static_cast<double>(shapeOf(features)[1]), -0.25);
  return elementwise(
      b, loc, shapeOf(features), element, ValueRange{features},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::MulFOp>(
            nloc, args[0], floatConstant(nb, nloc, element, inputScale));
      });
}

/// Whether ops built at `b`'s point run inside a parallel loop's iteration
/// (tfc-performer-heads' loop over (batch, head) pairs), on its thread;
/// elsewhere they are batch-wide (the GPU's kernels).
static bool insideParallelLoop(OpBuilder &b) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  return isa<scf::ForallOp>(parent) || parent->getParentOfType<scf::ForallOp>();
}

Value attention::featureProjection(OpBuilder &b, Location loc, Value x,
                                   Value scaled, bool transposed) {
  ArrayRef<int64_t> xShape = shapeOf(x);
  int64_t count = shapeOf(scaled)[transposed ? 1 : 0];
  SmallVector<int64_t> shape = {xShape[0], xShape[1], xShape[2], count};
  Type element = elementOf(x);
  if (!insideParallelLoop(b)) {
    // Batch-wide, one matrix product `[B S H, Dh] x [Dh, M]`, a shape the
    // GPU's tensor cores take (with the rows a multiple of 8); loops
    // (r, m, e), e reduced.
    SmallVector<ReassociationIndices> rows = {{0, 1, 2}, {3}};
    Value flat = b.create<tensor::CollapseShapeOp>(loc, x, rows);
    Value product = accumulateProducts(
        b, loc, ValueRange{flat, scaled},
        filledTensor(b, loc, {shape[0] * shape[1] * shape[2], count}, element,
                     0.0),
        {loopDims(b, 3, {0, 2}),
         transposed ? loopDims(b, 3, {2, 1}) : loopDims(b, 3, {1, 2})},
        loopDims(b, 3, {0, 1}));
    return b.create<tensor::ExpandShapeOp>(
        loc, RankedTensorType::get(shape, element), product, rows);
  }
  // Loops (b, s, h, m, e); e is reduced.
  return accumulateProducts(
      b, loc, ValueRange{x, scaled}, filledTensor(b, loc, shape, element, 0.0),
      {loopDims(b, 5, {0, 1, 2, 4}),
       transposed ? loopDims(b, 5, {4, 3}) : loopDims(b, 5, {3, 4})},
      loopDims(b, 5, {0, 1, 2, 3}));
}

Value attention::halfSquaredNorm(OpBuilder &b, Location loc, Value x) {
  Type element = elementOf(x);
  // |x'|^2 / 2 = |x|^2 / (2 sqrt(Dh)).
  double scale = 0.5 / std::sqrt(static_cast<double>(shapeOf(x)[3]));
  return reduceLastDim(
      b, loc, x, 0.0,
      [&](OpBuilder &nb, Location nloc, Value acc, Value value) -> Value {
        Value square = nb.create<arith::MulFOp>(nloc, value, value);
        Value term = nb.create<arith::MulFOp>(
            nloc, square, floatConstant(nb, nloc, element, scale));
        return nb.create<arith::AddFOp>(nloc, acc, term);
      });
}

Value attention::rowMaximum(OpBuilder &b, Location loc, Value projection) {
  return reduceLastDim(
      b, loc, projection, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nb, Location nloc, Value acc, Value value) -> Value {
        return stabilizerMax(nb, nloc, acc, value);
      });
}

/// `value == 0` for a float `value`.
static Value isZero(OpBuilder &b, Location loc, Value value) {
  return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, value,
                                 floatConstant(b, loc, value.getType(), 0.0));
}

Value attention::exponentialFeatures(OpBuilder &b, Location loc,
                                     Value projection, Value offset,
                                     Value mask) {
  ArrayRef<int64_t> shape = shapeOf(projection);
  Type element = elementOf(projection);
  SmallVector<Value> inputs = {projection, offset};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(4),
                                 loopDims(b, 4, {0, 1, 2})};
  if (mask) {
    inputs.push_back(mask);
    maps.push_back(loopDims(b, 4, {0, 1}));
  }
  double outputScale = 1.0 / std::sqrt(static_cast<double>(shape[3]));
  return elementwise(
      b, loc, shape, element, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value value = nb.create<arith::SubFOp>(nloc, args[0], args[1]);
        value = nb.create<math::ExpOp>(nloc, value);
        value = nb.create<arith::MulFOp>(
            nloc, value, floatConstant(nb, nloc, element, outputScale));
        if (!mask)
          return value;
        // A masked key is left out of the stabiliser, so its exponential
        // may overflow; select rather than multiply by 0.
        value = nb.create<arith::MulFOp>(nloc, value, args[2]);
        return nb.create<arith::SelectOp>(nloc, isZero(nb, nloc, args[2]),
                                          floatConstant(nb, nloc, element, 0.0),
                                          value);
      },
      maps);
}

/// The max over m of the keys' exponent `projection - halfNorm`, `[B, S,
/// H]`, the lowest float where `mask [B, S]` (when given) is 0.
static Value keyRowMaximum(OpBuilder &b, Location loc, Value projection,
                           Value halfNorm, Value mask) {
  Value rowMax = rowMaximum(b, loc, projection);
  Type element = elementOf(projection);
  SmallVector<Value> inputs = {rowMax, halfNorm};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(3),
                                 b.getMultiDimIdentityMap(3)};
  if (mask) {
    inputs.push_back(mask);
    maps.push_back(loopDims(b, 3, {0, 1}));
  }
  double lowest = lowestFinite(element);
  return elementwise(
      b, loc, shapeOf(rowMax), element, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value value = nb.create<arith::SubFOp>(nloc, args[0], args[1]);
        if (!mask)
          return value;
        return nb.create<arith::SelectOp>(
            nloc, isZero(nb, nloc, args[2]),
            floatConstant(nb, nloc, element, lowest), value);
      },
      maps);
}

/// The max over positions of `x [B, S, H]`, broadcast back to `[B, S, H]`.
static Value sequenceMaximum(OpBuilder &b, Location loc, Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  // Loops (b, h, s); s is reduced.
  Value total =
      buildGeneric(b, loc, ValueRange{x},
                   filledTensor(b, loc, {shape[0], shape[2]}, element,
                                lowestFinite(element)),
                   {loopDims(b, 3, {0, 2, 1})}, loopDims(b, 3, {0, 1}),
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return stabilizerMax(nb, nloc, args[1], args[0]);
                   });
  return elementwise(
      b, loc, shape, element, ValueRange{total},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; },
      {loopDims(b, 3, {0, 2})});
}

Value attention::causalRunningMaximum(OpBuilder &b, Location loc, Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  double lowest = lowestFinite(element);
  Chunking chunking = performerChunking(shape[1]);
  Value chunks = toChunks(b, loc, x, chunking, lowest);
  SmallVector<int64_t> chunkShape(shapeOf(chunks));
  auto maximum = [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
    return stabilizerMax(nb, nloc, args[1], args[0]);
  };
  // Within each chunk; loops (b, n, i, h, j), j is reduced.
  Value within = buildGeneric(
      b, loc, ValueRange{chunks},
      filledTensor(b, loc, chunkShape, element, lowest),
      {loopDims(b, 5, {0, 1, 4, 3})}, loopDims(b, 5, {0, 1, 2, 3}),
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value allowed = withinChunkCausal(nb, nloc, 2, 4);
        Value value = nb.create<arith::SelectOp>(
            nloc, allowed, args[0], floatConstant(nb, nloc, element, lowest));
        return stabilizerMax(nb, nloc, args[1], value);
      });
  // The max of each chunk; loops (b, n, h, i), i is reduced.
  Value chunkMax = buildGeneric(
      b, loc, ValueRange{chunks},
      filledTensor(b, loc, {chunkShape[0], chunkShape[1], chunkShape[3]},
                   element, lowest),
      {loopDims(b, 4, {0, 1, 3, 2})}, loopDims(b, 4, {0, 1, 2}), maximum);
  Value before = exclusiveChunkMaximum(b, loc, chunkMax);
  Value running =
      elementwise(b, loc, chunkShape, element, ValueRange{within, before},
                  [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                    return stabilizerMax(nb, nloc, args[0], args[1]);
                  },
                  {b.getMultiDimIdentityMap(4), loopDims(b, 4, {0, 1, 3})});
  return fromChunks(b, loc, running, shape[1]);
}

FeatureMap attention::randomFeatures(OpBuilder &b, Location loc, Value x,
                                     Value scaled, Stabiliser kind, Value mask,
                                     bool transposed) {
  FeatureMap map;
  map.projection = featureProjection(b, loc, x, scaled, transposed);
  if (kind == Stabiliser::Row) {
    // The max over m of W_m . x' - |x'|^2 / 2 is the max of the projection
    // less |x'|^2 / 2, which cancels.
    map.offset = rowMaximum(b, loc, map.projection);
    map.stabiliser = map.offset;
  } else {
    Value halfNorm = halfSquaredNorm(b, loc, x);
    Value rowMax = keyRowMaximum(b, loc, map.projection, halfNorm, mask);
    map.stabiliser = kind == Stabiliser::Prefix
                         ? causalRunningMaximum(b, loc, rowMax)
                         : sequenceMaximum(b, loc, rowMax);
    map.offset =
        elementwise(b, loc, shapeOf(halfNorm), elementOf(halfNorm),
                    ValueRange{halfNorm, map.stabiliser},
                    [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                      return nb.create<arith::AddFOp>(nloc, args[0], args[1]);
                    });
  }
  map.phi = exponentialFeatures(b, loc, map.projection, map.offset, mask);
  return map;
}

std::pair<Value, Value>
attention::accumulateKeyValues(OpBuilder &b, Location loc, Value keyFeatures,
                               Value v, Value kv, Value z) {
  // Loops (b, h, m, e, j); j is reduced.
  Value newKv = accumulateProducts(
      b, loc, ValueRange{keyFeatures, v}, kv,
      {loopDims(b, 5, {0, 4, 1, 2}), loopDims(b, 5, {0, 4, 1, 3})},
      loopDims(b, 5, {0, 1, 2, 3}));
  // Loops (b, h, j, m); j is reduced, m innermost (unit stride).
  Value newZ =
      buildGeneric(b, loc, ValueRange{keyFeatures}, z,
                   {loopDims(b, 4, {0, 2, 1, 3})}, loopDims(b, 4, {0, 1, 3}),
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return nb.create<arith::AddFOp>(nloc, args[1], args[0]);
                   });
  return {newKv, newZ};
}

Value attention::performerNumerator(OpBuilder &b, Location loc,
                                    Value queryFeatures, Value kv) {
  ArrayRef<int64_t> qShape = shapeOf(queryFeatures);
  Type element = elementOf(kv);
  SmallVector<int64_t> outShape = {qShape[0], qShape[1], qShape[2],
                                   shapeOf(kv)[3]};
  // Loops (b, i, h, e, m); m is reduced.
  return accumulateProducts(
      b, loc, ValueRange{queryFeatures, kv},
      filledTensor(b, loc, outShape, element, 0.0),
      {loopDims(b, 5, {0, 1, 2, 4}), loopDims(b, 5, {0, 2, 4, 3})},
      loopDims(b, 5, {0, 1, 2, 3}));
}

Value attention::performerDenominator(OpBuilder &b, Location loc,
                                      Value queryFeatures, Value z) {
  ArrayRef<int64_t> qShape = shapeOf(queryFeatures);
  Type element = elementOf(z);
  // Loops (b, i, h, m); m is reduced.
  return accumulateProducts(
      b, loc, ValueRange{queryFeatures, z},
      filledTensor(b, loc, {qShape[0], qShape[1], qShape[2]}, element, 0.0),
      {b.getMultiDimIdentityMap(4), loopDims(b, 4, {0, 2, 3})},
      loopDims(b, 4, {0, 1, 2}));
}

Value attention::performerQuotient(OpBuilder &b, Location loc, Value num,
                                   Value den) {
  ArrayRef<int64_t> shape = shapeOf(num);
  unsigned rank = shape.size();
  Type element = elementOf(num);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  return elementwise(
      b, loc, shape, element, ValueRange{num, den},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value positive = nb.create<arith::CmpFOp>(
            nloc, arith::CmpFPredicate::OGT, args[1],
            floatConstant(nb, nloc, element, kPerformerMinDenominator));
        Value quotient = nb.create<arith::DivFOp>(nloc, args[0], args[1]);
        return nb.create<arith::SelectOp>(
            nloc, positive, quotient, floatConstant(nb, nloc, element, 0.0));
      },
      {identity, identity.getMajorSubMap(rank - 1)});
}

//===----------------------------------------------------------------------===//
// Causal FAVOR+ by chunks
//===----------------------------------------------------------------------===//

Chunking attention::performerChunking(int64_t length) {
  constexpr int64_t kMaxChunk = 64;
  int64_t count = std::max<int64_t>((length + kMaxChunk - 1) / kMaxChunk,
                                    length >= 2 ? 2 : 1);
  return {count, (length + count - 1) / count};
}

Value attention::toChunks(OpBuilder &b, Location loc, Value x, Chunking chunks,
                          double padding) {
  ArrayRef<int64_t> shape = shapeOf(x);
  unsigned rank = shape.size();
  Type element = elementOf(x);
  if (chunks.padded() != shape[1])
    x = padPositions(b, loc, x, chunks.padded(), padding);
  SmallVector<int64_t> chunkShape = {shape[0], chunks.count, chunks.size};
  llvm::append_range(chunkShape, shape.drop_front(2));
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
  for (unsigned d = 3; d <= rank; ++d)
    groups.push_back({static_cast<int64_t>(d)});
  return b.create<tensor::ExpandShapeOp>(
      loc, RankedTensorType::get(chunkShape, element), x, groups);
}

Value attention::fromChunks(OpBuilder &b, Location loc, Value x,
                            int64_t length) {
  ArrayRef<int64_t> shape = shapeOf(x);
  unsigned rank = shape.size();
  int64_t padded = shape[1] * shape[2];
  SmallVector<int64_t> flatShape = {shape[0], padded};
  llvm::append_range(flatShape, shape.drop_front(3));
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
  for (unsigned d = 3; d < rank; ++d)
    groups.push_back({static_cast<int64_t>(d)});
  Value flat = b.create<tensor::CollapseShapeOp>(
      loc, RankedTensorType::get(flatShape, elementOf(x)), x, groups);
  return padded == length ? flat : leadingPositions(b, loc, flat, length);
}

/// How a scan combines its running state with a chunk's value and the
/// chunk's decay (null when it has none).
using ScanCombine =
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)>;

/// scanChunks where it is not inside a parallel loop: one `scf.forall`
/// iteration per element of a chunk, `[B, ...]`, each carrying its own
/// state through the chunks in a loop of scalars and writing its `NC`
/// outputs (a strided column of the result) as one slice. The chunks are
/// visited in one kernel, not one kernel each; every element's state is
/// combined in the same order as chunk by chunk, so the results are the
/// same.
static Value scanChunksByElements(OpBuilder &b, Location loc, Value x,
                                  bool reverse, double init, Value decay,
                                  ScanCombine combine) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  int64_t count = shape[1];
  SmallVector<OpFoldResult> bounds = {b.getIndexAttr(shape[0])};
  for (int64_t extent : shape.drop_front(2))
    bounds.push_back(b.getIndexAttr(extent));
  auto loop = b.create<scf::ForallOp>(
      loc, bounds, ValueRange{emptyTensor(b, loc, shape, element)},
      /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> ivs = loop.getInductionVars();
  // The element's indices in chunk `n`.
  auto inChunk = [&](Value n) {
    SmallVector<Value> indices = {ivs[0], n};
    llvm::append_range(indices, ArrayRef<Value>(ivs).drop_front());
    return indices;
  };
  Value last = indexConstant(b, loc, count - 1);
  auto chunks = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, count),
      indexConstant(b, loc, 1),
      ValueRange{floatConstant(b, loc, element, init),
                 emptyTensor(b, loc, {count}, element)},
      [&](OpBuilder &nb, Location nloc, Value t, ValueRange state) {
        Value n = reverse ? nb.create<arith::SubIOp>(nloc, last, t) : t;
        Value written =
            nb.create<tensor::InsertOp>(nloc, state[0], state[1], n);
        Value chunk = nb.create<tensor::ExtractOp>(nloc, x, inChunk(n));
        Value factor;
        if (decay)
          factor = nb.create<tensor::ExtractOp>(nloc, decay,
                                                ValueRange{ivs[0], n, ivs[1]});
        Value next = combine(nb, nloc, state[0], chunk, factor);
        nb.create<scf::YieldOp>(nloc, ValueRange{next, written});
      });
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  SmallVector<OpFoldResult> offsets = {ivs[0], b.getIndexAttr(0)};
  for (Value iv : ArrayRef<Value>(ivs).drop_front())
    offsets.push_back(iv);
  SmallVector<OpFoldResult> sizes(shape.size(), b.getIndexAttr(1));
  sizes[1] = b.getIndexAttr(count);
  SmallVector<OpFoldResult> strides(shape.size(), b.getIndexAttr(1));
  b.create<tensor::ParallelInsertSliceOp>(loc, chunks.getResult(1),
                                          loop.getRegionIterArgs()[0], offsets,
                                          sizes, strides);
  return loop.getResult(0);
}

/// An exclusive scan of `x [B, NC, ...]` over chunks, visiting them in
/// order (or backwards when `reverse`) with a running state that starts at
/// `init`: chunk n's output is the state, then the state becomes
/// `combine(state, x[:, n], decay[:, n])`, where `decay [B, NC, H]` (null
/// when not needed) broadcasts over the trailing dimensions.
///
/// Inside a parallel loop (tfc-performer-heads' loop over (batch, head)
/// pairs), its thread visits the chunks one after another, each an
/// element-wise op over the chunk's values; elsewhere, where the ops are
/// batch-wide (the GPU's kernels), scanChunksByElements runs every element
/// as a thread of its own, through all the chunks.
static Value scanChunks(OpBuilder &b, Location loc, Value x, bool reverse,
                        double init, Value decay, ScanCombine combine) {
  if (!insideParallelLoop(b))
    return scanChunksByElements(b, loc, x, reverse, init, decay, combine);
  ArrayRef<int64_t> shape = shapeOf(x);
  Type element = elementOf(x);
  int64_t count = shape[1];
  SmallVector<int64_t> rowShape(shape);
  rowShape[1] = 1;
  // The running state is carried as its own tensor and copied into chunk n
  // before chunk n is combined with it, so that no iteration reads the
  // result it writes.
  Value running = filledTensor(b, loc, rowShape, element, init);
  Value result = emptyTensor(b, loc, shape, element);
  Value last = indexConstant(b, loc, count - 1);
  auto loop = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, count),
      indexConstant(b, loc, 1), ValueRange{running, result},
      [&](OpBuilder &nb, Location nloc, Value t, ValueRange state) {
        Value n = reverse ? nb.create<arith::SubIOp>(nloc, last, t) : t;
        Value written = insertRow(nb, nloc, state[0], state[1], n);
        unsigned rank = rowShape.size();
        AffineMap identity = nb.getMultiDimIdentityMap(rank);
        SmallVector<Value> inputs = {extractRow(nb, nloc, x, n)};
        SmallVector<AffineMap> maps = {identity};
        if (decay) {
          inputs.push_back(extractRow(nb, nloc, decay, n));
          maps.push_back(loopDims(nb, rank, {0, 1, 2}));
        }
        maps.push_back(identity);
        auto update = nb.create<linalg::GenericOp>(
            nloc, TypeRange{state[0].getType()}, inputs, ValueRange{state[0]},
            maps, parallelIterators(rank),
            [&](OpBuilder &bb, Location bloc, ValueRange args) {
              Value next = combine(bb, bloc, args.back(), args[0],
                                   decay ? args[1] : Value());
              bb.create<linalg::YieldOp>(bloc, ValueRange{next});
            });
        nb.create<scf::YieldOp>(nloc, ValueRange{update.getResult(0), written});
      });
  return loop.getResult(1);
}

Value attention::exclusiveChunkScan(OpBuilder &b, Location loc, Value x,
                                    bool reverse, Value decay) {
  return scanChunks(b, loc, x, reverse, 0.0, decay,
                    [](OpBuilder &nb, Location nloc, Value state, Value chunk,
                       Value factor) -> Value {
                      if (factor)
                        state = nb.create<arith::MulFOp>(nloc, state, factor);
                      return nb.create<arith::AddFOp>(nloc, state, chunk);
                    });
}

Value attention::exclusiveChunkMaximum(OpBuilder &b, Location loc, Value x) {
  return scanChunks(
      b, loc, x, /*reverse=*/false, lowestFinite(elementOf(x)), Value(),
      [](OpBuilder &nb, Location nloc, Value state, Value chunk,
         Value) -> Value { return stabilizerMax(nb, nloc, state, chunk); });
}

std::pair<Value, Value> attention::chunkStates(OpBuilder &b, Location loc,
                                               Value keyFeatures,
                                               Value keyScale,
                                               Value scaledValues) {
  ArrayRef<int64_t> fShape = shapeOf(keyFeatures),
                    vShape = shapeOf(scaledValues);
  Type element = elementOf(scaledValues);
  int64_t batch = fShape[0], count = fShape[1], heads = fShape[3],
          features = fShape[4], headDim = vShape[4];
  // Loops (b, n, h, m, e, c); c is reduced.
  Value kv = accumulateProducts(
      b, loc, ValueRange{keyFeatures, scaledValues},
      filledTensor(b, loc, {batch, count, heads, features, headDim}, element,
                   0.0),
      {loopDims(b, 6, {0, 1, 5, 2, 3}), loopDims(b, 6, {0, 1, 5, 2, 4})},
      loopDims(b, 6, {0, 1, 2, 3, 4}));
  // Loops (b, n, h, c, m); c is reduced, m innermost (unit stride).
  Value z = accumulateProducts(
      b, loc, ValueRange{keyFeatures, keyScale},
      filledTensor(b, loc, {batch, count, heads, features}, element, 0.0),
      {loopDims(b, 5, {0, 1, 3, 2, 4}), loopDims(b, 5, {0, 1, 3, 2})},
      loopDims(b, 5, {0, 1, 2, 4}));
  return {kv, z};
}

/// `exp(min(a - b, 0))`: a rescaling factor whose exponent is `<= 0` for
/// real positions (see AttentionBuilders.h).
static Value rescaling(OpBuilder &b, Location loc, Value a, Value bValue) {
  Value difference = b.create<arith::SubFOp>(loc, a, bValue);
  difference = b.create<arith::MinimumFOp>(
      loc, difference, floatConstant(b, loc, a.getType(), 0.0));
  return b.create<math::ExpOp>(loc, difference);
}

Value attention::scaleChunkRows(OpBuilder &b, Location loc, Value x,
                                Value scale) {
  return elementwise(
      b, loc, shapeOf(x), elementOf(x), ValueRange{x, scale},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::MulFOp>(nloc, args[0], args[1]);
      },
      {b.getMultiDimIdentityMap(5), loopDims(b, 5, {0, 1, 2, 3})});
}

Value attention::causalChunkMask(OpBuilder &b, Location loc, Value x,
                                 Value stabiliser) {
  Type element = elementOf(x);
  // x is [B, NC, H, C, C]; the stabilisers of rows i and columns j.
  return elementwise(
      b, loc, shapeOf(x), element, ValueRange{x, stabiliser, stabiliser},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value allowed = withinChunkCausal(nb, nloc, 3, 4);
        Value scaled = nb.create<arith::MulFOp>(
            nloc, args[0], rescaling(nb, nloc, args[2], args[1]));
        return nb.create<arith::SelectOp>(
            nloc, allowed, scaled, floatConstant(nb, nloc, element, 0.0));
      },
      {b.getMultiDimIdentityMap(5), loopDims(b, 5, {0, 1, 3, 2}),
       loopDims(b, 5, {0, 1, 4, 2})});
}

CausalChunks attention::buildCausalChunks(OpBuilder &b, Location loc,
                                          Value queryFeatures,
                                          Value keyFeatures,
                                          Value keyStabiliser, Value v,
                                          int64_t length) {
  CausalChunks c;
  Type element = elementOf(v);
  c.chunking = performerChunking(length);
  c.query = toChunks(b, loc, queryFeatures, c.chunking);
  c.key = toChunks(b, loc, keyFeatures, c.chunking);
  c.value = toChunks(b, loc, v, c.chunking);
  c.stabiliser =
      toChunks(b, loc, keyStabiliser, c.chunking, lowestFinite(element));
  ArrayRef<int64_t> shape = shapeOf(c.stabiliser);
  // E_n, the stabiliser at the end of chunk n (the running max never
  // decreases); loops (b, n, h, i), i is reduced.
  Value end =
      buildGeneric(b, loc, ValueRange{c.stabiliser},
                   filledTensor(b, loc, {shape[0], shape[1], shape[3]}, element,
                                lowestFinite(element)),
                   {loopDims(b, 4, {0, 1, 3, 2})}, loopDims(b, 4, {0, 1, 2}),
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return stabilizerMax(nb, nloc, args[1], args[0]);
                   });
  // F_n = E_{n-1}.
  Value start = exclusiveChunkMaximum(b, loc, end);
  AffineMap identity = b.getMultiDimIdentityMap(4);
  AffineMap chunkMap = loopDims(b, 4, {0, 1, 3});
  c.queryScale =
      elementwise(b, loc, shape, element, ValueRange{start, c.stabiliser},
                  [](OpBuilder &nb, Location nloc, ValueRange args) {
                    return rescaling(nb, nloc, args[0], args[1]);
                  },
                  {chunkMap, identity});
  c.keyScale =
      elementwise(b, loc, shape, element, ValueRange{c.stabiliser, end},
                  [](OpBuilder &nb, Location nloc, ValueRange args) {
                    return rescaling(nb, nloc, args[0], args[1]);
                  },
                  {identity, chunkMap});
  c.decay = elementwise(b, loc, shapeOf(end), element, ValueRange{start, end},
                        [](OpBuilder &nb, Location nloc, ValueRange args) {
                          return rescaling(nb, nloc, args[0], args[1]);
                        });
  // The scale goes with the narrower operand: a * v is Dh wide, a * phiK
  // would be M wide.
  c.scaledValue = scaleChunkRows(b, loc, c.value, c.keyScale);
  auto [kv, z] = chunkStates(b, loc, c.key, c.keyScale, c.scaledValue);
  c.prefixKv = exclusiveChunkScan(b, loc, kv, /*reverse=*/false, c.decay);
  c.prefixZ = exclusiveChunkScan(b, loc, z, /*reverse=*/false, c.decay);
  c.scores = chunkScores(b, loc, c.query, c.key, c.stabiliser);
  return c;
}

Value attention::chunkScores(OpBuilder &b, Location loc, Value queryFeatures,
                             Value keyFeatures, Value stabiliser) {
  ArrayRef<int64_t> shape = shapeOf(queryFeatures);
  Type element = elementOf(queryFeatures);
  // Loops (b, n, h, i, j, m); m is reduced.
  Value scores = accumulateProducts(
      b, loc, ValueRange{queryFeatures, keyFeatures},
      filledTensor(b, loc, {shape[0], shape[1], shape[3], shape[2], shape[2]},
                   element, 0.0),
      {loopDims(b, 6, {0, 1, 3, 2, 5}), loopDims(b, 6, {0, 1, 4, 2, 5})},
      loopDims(b, 6, {0, 1, 2, 3, 4}));
  return causalChunkMask(b, loc, scores, stabiliser);
}

std::pair<Value, Value>
attention::chunkNumeratorDenominator(OpBuilder &b, Location loc,
                                     Value queryFeatures, Value queryScale,
                                     Value v, Value scores, Value kv, Value z) {
  ArrayRef<int64_t> qShape = shapeOf(queryFeatures);
  Type element = elementOf(v);
  // Across chunks, g (phiQ kv): the scale g is applied to the Dh-wide
  // product rather than to the M-wide features. Loops (b, n, i, h, e, m),
  // m is reduced.
  Value num = accumulateProducts(
      b, loc, ValueRange{queryFeatures, kv},
      filledTensor(b, loc, shapeOf(v), element, 0.0),
      {loopDims(b, 6, {0, 1, 2, 3, 5}), loopDims(b, 6, {0, 1, 3, 5, 4})},
      loopDims(b, 6, {0, 1, 2, 3, 4}));
  num = scaleChunkRows(b, loc, num, queryScale);
  // Within the chunk; loops (b, n, i, h, e, j), j is reduced.
  num = accumulateProducts(
      b, loc, ValueRange{scores, v}, num,
      {loopDims(b, 6, {0, 1, 3, 2, 5}), loopDims(b, 6, {0, 1, 5, 3, 4})},
      loopDims(b, 6, {0, 1, 2, 3, 4}));
  // g (phiQ z); loops (b, n, i, h, m), m is reduced.
  Value den = accumulateProducts(
      b, loc, ValueRange{queryFeatures, z},
      filledTensor(b, loc, qShape.drop_back(), element, 0.0),
      {loopDims(b, 5, {0, 1, 2, 3, 4}), loopDims(b, 5, {0, 1, 3, 4})},
      loopDims(b, 5, {0, 1, 2, 3}));
  den = elementwise(b, loc, shapeOf(den), element, ValueRange{den, queryScale},
                    [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                      return nb.create<arith::MulFOp>(nloc, args[0], args[1]);
                    });
  // Loops (b, n, i, h, j); j is reduced.
  den = buildGeneric(
      b, loc, ValueRange{scores}, den, {loopDims(b, 5, {0, 1, 3, 2, 4})},
      loopDims(b, 5, {0, 1, 2, 3}),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::AddFOp>(nloc, args[1], args[0]);
      });
  return {num, den};
}

int64_t attention::padCausalPerformer(OpBuilder &b, Location loc, Value &q,
                                      Value &k, Value &v, Value &mask,
                                      Value *gradOut) {
  int64_t length = shapeOf(v)[1];
  int64_t padded = performerChunking(length).padded();
  if (padded == length)
    return length;
  for (Value *x : {&q, &k, &v, gradOut})
    if (x)
      *x = padPositions(b, loc, *x, padded);
  if (mask)
    mask = padPositions(b, loc, mask, padded);
  return padded;
}
