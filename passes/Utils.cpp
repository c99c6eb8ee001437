//===- LoweringUtils.cpp - Helpers for lowering tfc ops to linalg ---------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/Utils.h"

#include "dialect/TfcDialect.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfc;

ArrayRef<int64_t> mlir::tfc::shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Type mlir::tfc::elementOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

Value mlir::tfc::floatConstant(OpBuilder &b, Location loc, Type type,
                               double value) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
}

Value mlir::tfc::indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

Value mlir::tfc::stabilizerMax(OpBuilder &b, Location loc, Value x, Value y) {
  auto flags = arith::FastMathFlagsAttr::get(
      b.getContext(), arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
  return b.create<arith::MaximumFOp>(loc, x, y, flags);
}

Value mlir::tfc::emptyTensor(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, Type element) {
  return b.create<tensor::EmptyOp>(loc, shape, element);
}

Value mlir::tfc::roundToBF16(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Value empty = emptyTensor(b, loc, type.getShape(), b.getBF16Type());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  auto round = b.create<linalg::GenericOp>(
      loc, empty.getType(), ValueRange{value}, ValueRange{empty},
      SmallVector<AffineMap>{identity, identity},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value rounded =
            nb.create<arith::TruncFOp>(nloc, nb.getBF16Type(), args[0]);
        nb.create<linalg::YieldOp>(nloc, rounded);
      });
  return round.getResult(0);
}

Operation *mlir::tfc::elementwiseConversion(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !isAllParallel(op) ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return nullptr;
  Block &body = op.getRegion().front();
  Operation &conversion = body.front();
  if (body.getOperations().size() != 2 || conversion.getNumOperands() != 1 ||
      conversion.getNumResults() != 1 ||
      conversion.getOperand(0) != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != conversion.getResult(0))
    return nullptr;
  return &conversion;
}

bool mlir::tfc::isBF16Rounding(linalg::GenericOp op) {
  auto trunc = dyn_cast_or_null<arith::TruncFOp>(elementwiseConversion(op));
  return trunc && trunc.getType().isBF16();
}

Value mlir::tfc::filledTensor(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape, Type element,
                              double value) {
  Value empty = emptyTensor(b, loc, shape, element);
  Value scalar = floatConstant(b, loc, element, value);
  return b.create<linalg::FillOp>(loc, scalar, empty).getResult(0);
}

Value mlir::tfc::reshape(OpBuilder &b, Location loc, Value value,
                         ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = shapeOf(value);
  if (from == shape)
    return value;
  Type element = elementOf(value);
  int64_t count = 1;
  for (int64_t extent : from)
    count *= extent;
  Value flat = value;
  if (from.size() != 1) {
    ReassociationIndices all;
    for (unsigned i = 0; i < from.size(); ++i)
      all.push_back(i);
    SmallVector<ReassociationIndices> groups;
    if (!from.empty())
      groups.push_back(all);
    flat = b.create<tensor::CollapseShapeOp>(
        loc, RankedTensorType::get({count}, element), value, groups);
  }
  if (shape.size() == 1)
    return flat;
  ReassociationIndices all;
  for (unsigned i = 0; i < shape.size(); ++i)
    all.push_back(i);
  SmallVector<ReassociationIndices> groups;
  if (!shape.empty())
    groups.push_back(all);
  return b.create<tensor::ExpandShapeOp>(
      loc, RankedTensorType::get(shape, element), flat, groups);
}

Value mlir::tfc::matmulTransposeB(OpBuilder &b, Location loc, Value a,
                                  Value w) {
  int64_t m = shapeOf(a)[0], n = shapeOf(w)[0];
  Type element = elementOf(a);
  Value init = filledTensor(b, loc, {m, n}, element, 0.0);
  Value source;
  if (auto transpose = w.getDefiningOp<TransposeOp>())
    source = transpose.getInput();
  if (auto transpose = w.getDefiningOp<linalg::TransposeOp>())
    if (transpose.getPermutation() == ArrayRef<int64_t>{1, 0})
      source = transpose.getInput();
  if (source)
    return b
        .create<linalg::MatmulOp>(loc, TypeRange{init.getType()},
                                  ValueRange{a, source}, ValueRange{init})
        .getResult(0);
  return b
      .create<linalg::MatmulTransposeBOp>(loc, TypeRange{init.getType()},
                                          ValueRange{a, w}, ValueRange{init})
      .getResult(0);
}

SmallVector<utils::IteratorType> mlir::tfc::parallelIterators(unsigned rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

Value mlir::tfc::elementwise(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type element,
    ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body,
    ArrayRef<AffineMap> inputMaps) {
  unsigned rank = shape.size();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps;
  if (inputMaps.empty())
    maps.assign(inputs.size(), identity);
  else
    maps.assign(inputMaps.begin(), inputMaps.end());
  maps.push_back(identity);
  Value init = emptyTensor(b, loc, shape, element);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      parallelIterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value mlir::tfc::reduceLastDim(
    OpBuilder &b, Location loc, Value input, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  ArrayRef<int64_t> shape = shapeOf(input);
  unsigned rank = shape.size();
  Type element = elementOf(input);
  SmallVector<int64_t> outShape(shape.drop_back());
  Value acc = filledTensor(b, loc, outShape, element, init);
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i + 1 < rank; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  AffineMap inMap = b.getMultiDimIdentityMap(rank);
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, b.getContext());
  SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
  iterators.back() = utils::IteratorType::reduction;
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{acc.getType()}, ValueRange{input}, ValueRange{acc},
      ArrayRef<AffineMap>{inMap, outMap}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, combine(nb, nloc, args[1], args[0]));
      });
  return generic.getResult(0);
}

PairLoop mlir::tfc::buildPairLoop(OpBuilder &b, Location loc, int64_t batch,
                                  int64_t heads, ValueRange inits) {
  auto loop = b.create<scf::ForallOp>(
      loc, ArrayRef<OpFoldResult>{b.getIndexAttr(batch * heads)}, inits,
      std::nullopt);
  b.setInsertionPoint(loop.getTerminator());
  Value pair = loop.getInductionVar(0);
  Value headCount = indexConstant(b, loc, heads);
  return {loop, b.create<arith::DivUIOp>(loc, pair, headCount),
          b.create<arith::RemUIOp>(loc, pair, headCount)};
}

namespace {
/// A reshape of a `tensor.empty` of static shape is an empty of its
/// result's shape.
template <typename ReshapeOp>
struct EmptyReshapeFolding : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(reshape.getType());
    if (!reshape.getSrc().template getDefiningOp<tensor::EmptyOp>() || !type ||
        !type.hasStaticShape())
      return failure();
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(reshape, type.getShape(),
                                                 type.getElementType());
    return success();
  }
};
} // namespace

LogicalResult mlir::tfc::dropPairDims(ArrayRef<scf::ForallOp> loops) {
  if (loops.empty())
    return success();
  MLIRContext *context = loops.front()->getContext();
  linalg::ControlDropUnitDims options;
  RewritePatternSet patterns(context);
  linalg::populateFoldUnitExtentDimsPatterns(patterns, options);
  patterns.add<EmptyReshapeFolding<tensor::CollapseShapeOp>,
               EmptyReshapeFolding<tensor::ExpandShapeOp>>(context);
  FrozenRewritePatternSet frozen(std::move(patterns));
  for (scf::ForallOp loop : loops)
    if (failed(applyPatternsAndFoldGreedily(loop, frozen)))
      return failure();
  return success();
}

Value mlir::tfc::rowMaxima(OpBuilder &b, Location loc, Value input) {
  return reduceLastDim(b, loc, input, -std::numeric_limits<double>::infinity(),
                       [](OpBuilder &nb, Location nloc, Value acc, Value x) {
                         return stabilizerMax(nb, nloc, acc, x);
                       });
}

Value mlir::tfc::sumLastDim(OpBuilder &b, Location loc, Value input) {
  return reduceLastDim(b, loc, input, 0.0,
                       [](OpBuilder &nb, Location nloc, Value acc, Value x) {
                         return nb.create<arith::AddFOp>(nloc, acc, x);
                       });
}

LogicalResult mlir::tfc::fuseProducerIntoConsumer(RewriterBase &rewriter,
                                                  OpOperand *operand) {
  Operation *consumer = operand->getOwner();
  Operation *producer = operand->get().getDefiningOp();
  FailureOr<linalg::ElementwiseOpFusionResult> fused =
      linalg::fuseElementwiseOps(rewriter, operand);
  if (failed(fused))
    return failure();
  for (auto [original, replacement] : fused->replacements)
    rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
      return use.getOwner() != producer;
    });
  rewriter.eraseOp(consumer);
  if (producer->use_empty())
    rewriter.eraseOp(producer);
  return success();
}
