//===- SplitReductions.cpp - The tfc-gpu-split-reductions pass ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A linalg op that reduces everything into one value (a gradient's squared
/// norm over every parameter, a loss summed over the batch) has no parallel
/// dimension, so tfc-gpu-map-kernels can only run it as a kernel of one
/// thread: millions of dependent loads and adds. Here such a sum becomes
/// two ops: P partial sums, thread p adding the elements p, p + P, p + 2P,
/// ... of the outermost reduction dimension (so that a warp reads
/// consecutive elements), into a buffer of P zeros; then the P partial
/// sums added into the output in order.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/AffineMap.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUSPLITREDUCTIONS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The number of partial sums for an outermost reduction dimension of
/// `extent` elements: its largest divisor up to 8192 that leaves each
/// thread at least 16 elements; 0 when that is fewer than 64 threads.
int64_t partialCount(int64_t extent) {
  int64_t best = 0;
  for (int64_t p = 1; p <= 8192 && p * 16 <= extent; ++p)
    if (extent % p == 0)
      best = p;
  return best >= 64 ? best : 0;
}

/// The `arith.addf` that `op`'s body yields, when the body adds a term that
/// does not depend on the output to the output (`out + f(ins)` or
/// `f(ins) + out`); null otherwise.
arith::AddFOp sumOfTerms(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (!body.getOps<linalg::IndexOp>().empty())
    return {};
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return {};
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  BlockArgument out = body.getArguments().back();
  if (!add || !out.hasOneUse() ||
      (add.getLhs() != out && add.getRhs() != out))
    return {};
  return add;
}

std::optional<int> outerDimResult(AffineMap map);

/// Whether `op` reduces every dimension of statically known extents into
/// one float, at the top level of a function.
bool isSplittable(linalg::LinalgOp op) {
  if (!isa<func::FuncOp>(op->getParentOp()) || !op.hasPureBufferSemantics() ||
      op.getNumDpsInits() != 1 || op.getNumParallelLoops() != 0 ||
      op.getNumLoops() == 0)
    return false;
  auto outType = dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!outType || outType.getRank() != 0 ||
      !isa<FloatType>(outType.getElementType()))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isa<MemRefType>(input->get().getType()) ||
        !outerDimResult(op.getMatchingIndexingMap(input)))
      return false;
  return partialCount(ranges.front()) != 0;
}

/// The result of `map` that is the outermost loop dimension alone, or -1
/// when no result uses that dimension; nullopt when one uses it in an
/// expression or more than one result is it.
std::optional<int> outerDimResult(AffineMap map) {
  int position = -1;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(0))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || position != -1)
      return std::nullopt;
    position = i;
  }
  return position;
}

/// Replaces the whole-buffer sum `op` by partial sums and their sum. An
/// input read along the outermost loop dimension d0 (extent E) is viewed
/// as [E / P, P] in place of that dimension, so that sum p reads the
/// elements p, p + P, ... of it.
void split(IRRewriter &rewriter, linalg::GenericOp op, arith::AddFOp add) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t extent = ranges.front();
  int64_t parts = partialCount(extent);
  Value out = op.getDpsInitOperand(0)->get();
  auto floatType = cast<FloatType>(cast<MemRefType>(out.getType()).getElementType());
  unsigned loops = op.getNumLoops();
  bool outFirst = add.getLhs() == op.getRegion().front().getArguments().back();

  // The partial sums, zero to start with.
  rewriter.setInsertionPoint(op);
  Value partial = rewriter.create<memref::AllocOp>(
      loc, MemRefType::get({parts}, floatType));
  Value zero = rewriter.create<arith::ConstantOp>(
      loc, floatType, rewriter.getFloatAttr(floatType, 0.0));
  rewriter.create<linalg::FillOp>(loc, zero, partial);

  // Loops (p, i, d1, ...): the old d0 is i * P + p, the others shift by one.
  SmallVector<AffineExpr> shifted = {getAffineConstantExpr(0, ctx)};
  for (unsigned d = 1; d < loops; ++d)
    shifted.push_back(getAffineDimExpr(d + 1, ctx));
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    int position = *outerDimResult(map);
    SmallVector<AffineExpr> results;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      if (static_cast<int>(i) == position) {
        results.push_back(getAffineDimExpr(1, ctx));
        results.push_back(getAffineDimExpr(0, ctx));
      } else {
        results.push_back(expr.replaceDimsAndSymbols(shifted, {}));
      }
    }
    maps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
    Value value = input->get();
    if (position >= 0) {
      auto type = cast<MemRefType>(value.getType());
      SmallVector<int64_t> shape;
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (d == position) {
          groups.push_back({static_cast<int64_t>(shape.size()),
                            static_cast<int64_t>(shape.size()) + 1});
          shape.push_back(extent / parts);
          shape.push_back(parts);
        } else {
          groups.push_back({static_cast<int64_t>(shape.size())});
          shape.push_back(type.getDimSize(d));
        }
      }
      value = rewriter.create<memref::ExpandShapeOp>(loc, shape, value, groups);
    }
    inputs.push_back(value);
  }
  maps.push_back(AffineMap::get(loops + 1, 0, getAffineDimExpr(0, ctx)));
  SmallVector<utils::IteratorType> iterators(loops + 1,
                                             utils::IteratorType::reduction);
  iterators.front() = utils::IteratorType::parallel;
  auto partialSums = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{}, inputs, ValueRange{partial}, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partialSums.getRegion(),
                              partialSums.getRegion().end());

  // The partial sums added into the output, in order.
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  AffineMap scalar = AffineMap::get(1, 0, ctx);
  rewriter.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{partial}, ValueRange{out},
      ArrayRef<AffineMap>{identity, scalar},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value sum = outFirst ? b.create<arith::AddFOp>(l, args[1], args[0])
                             : b.create<arith::AddFOp>(l, args[0], args[1]);
        b.create<linalg::YieldOp>(l, sum);
      });
  rewriter.eraseOp(op);
}

struct SplitReductions
    : public mlir::tfc::impl::TfcGpuSplitReductionsBase<SplitReductions> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isSplittable(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue;
        generic = *generalized;
      }
      if (arith::AddFOp add = sumOfTerms(generic)) {
        split(rewriter, generic, add);
        ++splitOps;
      }
    }
  }
};

} // namespace
