//===- SplitReductions.cpp - The tfc-gpu-split-reductions pass ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// tfc-gpu-map-kernels gives a linalg op one thread per iteration of its
/// parallel dimensions, each thread running the reductions. An op with few
/// outputs and a long reduction leaves the GPU idle: the squared norm of
/// the gradient (one output, millions of terms) runs on one thread, a bias
/// or LayerNorm gradient (256 outputs, a sum over 4,096 rows) on one block.
/// Here such a sum becomes two ops: P partial sums of each output, sum p
/// adding the elements p, p + P, p + 2P, ... of the longest reduction
/// dimension (so that consecutive threads read consecutive elements of it)
/// into a buffer of zeros, then the P partial sums of each output added
/// into it, in order.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/AffineMap.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUSPLITREDUCTIONS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The threads a split sum is given at most: outputs x partial sums.
constexpr int64_t kThreads = 32768;

/// The number of partial sums of each of `outputs` outputs of `terms`
/// terms, split along a reduction dimension of `extent` elements: the
/// largest divisor of `extent` that keeps the threads at `kThreads` (and at
/// most 8,192 sums) and each sum at least 16 terms long; 0 when splitting is
/// not worth its two more launches (fewer than 1,024 terms, or fewer than 2
/// sums per output).
int64_t partialCount(int64_t outputs, int64_t terms, int64_t extent) {
  if (terms < 1024)
    return 0;
  int64_t limit = std::min<int64_t>(8192, kThreads / outputs);
  int64_t best = 0;
  for (int64_t p = 1; p <= std::min(limit, extent) && terms / p >= 16; ++p)
    if (extent % p == 0)
      best = p;
  return best >= 2 ? best : 0;
}

/// The threads a contraction's kernel (tfc-gpu-tile-contractions) should
/// have at least: 32 blocks of 256 threads per multiprocessor of a 132-SM
/// GPU would be more than it holds; a quarter of that keeps it busy.
constexpr int64_t kContractionThreads = 65536;

/// The number of partial sums of a contraction whose tiled kernel has
/// `threads` threads, split along a reduction dimension of `extent`
/// elements (`terms` per output): the smallest divisor of `extent` that
/// brings the threads to kContractionThreads, each partial sum at least
/// 64 terms long (the largest such divisor when none reaches it); 0 when
/// the kernel has the threads already, or when splitting leaves fewer than
/// 2 sums.
int64_t contractionPartialCount(int64_t threads, int64_t terms,
                                int64_t extent) {
  if (threads >= kContractionThreads)
    return 0;
  int64_t best = 0;
  for (int64_t p = 2; p <= extent && terms / p >= 64; ++p) {
    if (extent % p != 0)
      continue;
    best = p;
    if (threads * p >= kContractionThreads)
      break;
  }
  return best;
}

/// The result of `map` that is loop dimension `dim` alone, or -1 when no
/// result uses that dimension; nullopt when one uses it in an expression
/// or more than one result is it.
std::optional<int> dimResult(AffineMap map, unsigned dim) {
  int position = -1;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(dim))
      continue;
    auto dimExpr = dyn_cast<AffineDimExpr>(expr);
    if (!dimExpr || position != -1)
      return std::nullopt;
    position = i;
  }
  return position;
}

/// For each output of `op`, whether its body adds the output first
/// (`out + f(ins)`, true) or second (`f(ins) + out`), when every value it
/// yields is such a sum of a term that depends on no output; empty
/// otherwise.
SmallVector<bool> sumsOfTerms(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (!body.getOps<linalg::IndexOp>().empty())
    return {};
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto outs = body.getArguments().take_back(op.getNumDpsInits());
  SmallVector<bool> outFirst;
  for (auto [value, out] : llvm::zip_equal(yield.getOperands(), outs)) {
    auto add = value.getDefiningOp<arith::AddFOp>();
    if (!add || !out.hasOneUse() ||
        (add.getLhs() != out && add.getRhs() != out))
      return {};
    outFirst.push_back(add.getLhs() == out);
  }
  return outFirst;
}

/// How to split `op`: the reduction dimension to split (the longest, the
/// first of equals) and the number of partial sums. `op` qualifies at the
/// top level of a function, of static extents, with its parallel
/// dimensions first (tfc-gpu-parallel-dims-first), float outputs that
/// they index in order, and inputs that read the split dimension, if at
/// all, as one of their dimensions. {0, 0} when it does not.
std::pair<unsigned, int64_t> splitPlan(linalg::LinalgOp op) {
  if (!isa<func::FuncOp>(op->getParentOp()) || !op.hasPureBufferSemantics() ||
      op.getNumReductionLoops() == 0)
    return {0, 0};
  unsigned parallel = op.getNumParallelLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d)
    if ((iterators[d] == utils::IteratorType::parallel) != (d < parallel))
      return {0, 0};
  SmallVector<AffineExpr> outputDims;
  for (unsigned d = 0; d < parallel; ++d)
    outputDims.push_back(getAffineDimExpr(d, op.getContext()));
  AffineMap outputMap =
      AffineMap::get(op.getNumLoops(), 0, outputDims, op.getContext());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto type = dyn_cast<MemRefType>(init.get().getType());
    if (!type || !isa<FloatType>(type.getElementType()) ||
        op.getMatchingIndexingMap(&init) != outputMap)
      return {0, 0};
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return {0, 0};
  unsigned dim = parallel;
  int64_t outputs = 1, terms = 1;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    (d < parallel ? outputs : terms) *= ranges[d];
    if (d >= parallel && ranges[d] > ranges[dim])
      dim = d;
  }
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isa<MemRefType>(input->get().getType()) ||
        !dimResult(op.getMatchingIndexingMap(input), dim))
      return {0, 0};
  if (int64_t threads = tiledContractionThreads(op))
    return {dim, contractionPartialCount(threads, terms, ranges[dim])};
  return {dim, partialCount(outputs, terms, ranges[dim])};
}

/// Replaces the sums `op` (parallel dimensions d0..d(m-1), then
/// reductions) by P partial sums of each output and their sums. The partial
/// sums run over (p, d0, ..., i, ...), every old dimension one further, the
/// split one, ds = i * P + p, as i: an input read along ds (extent E) is
/// viewed as [E / P, P] in place of that dimension.
void split(IRRewriter &rewriter, linalg::GenericOp op, ArrayRef<bool> outFirst,
           unsigned splitDim, int64_t parts) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned parallel = op.getNumParallelLoops();
  unsigned loops = op.getNumLoops();
  int64_t extent = ranges[splitDim];
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };

  // The partial sums, [P, outputs...] each, zero to start with.
  rewriter.setInsertionPoint(op);
  SmallVector<Value> outs(op.getDpsInits()), partials;
  for (Value out : outs) {
    auto type = cast<MemRefType>(out.getType());
    SmallVector<int64_t> shape = {parts};
    llvm::append_range(shape, type.getShape());
    Value partial = rewriter.create<memref::AllocOp>(
        loc, MemRefType::get(shape, type.getElementType()));
    Value zero = rewriter.create<arith::ConstantOp>(
        loc, type.getElementType(),
        rewriter.getFloatAttr(type.getElementType(), 0.0));
    rewriter.create<linalg::FillOp>(loc, zero, partial);
    partials.push_back(partial);
  }

  SmallVector<AffineExpr> moved;
  for (unsigned d = 0; d < loops; ++d)
    moved.push_back(d == splitDim ? getAffineConstantExpr(0, ctx) : dim(d + 1));
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    int position = *dimResult(map, splitDim);
    SmallVector<AffineExpr> results;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      if (static_cast<int>(i) == position) {
        results.push_back(dim(splitDim + 1));
        results.push_back(dim(0));
      } else {
        results.push_back(expr.replaceDimsAndSymbols(moved, {}));
      }
    }
    maps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
    Value value = input->get();
    if (position >= 0) {
      auto type = cast<MemRefType>(value.getType());
      SmallVector<int64_t> shape;
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        int64_t next = shape.size();
        if (d == position) {
          groups.push_back({next, next + 1});
          shape.push_back(extent / parts);
          shape.push_back(parts);
        } else {
          groups.push_back({next});
          shape.push_back(type.getDimSize(d));
        }
      }
      value = rewriter.create<memref::ExpandShapeOp>(loc, shape, value, groups);
    }
    inputs.push_back(value);
  }
  SmallVector<AffineExpr> partialResults;
  for (unsigned d = 0; d <= parallel; ++d)
    partialResults.push_back(dim(d));
  maps.append(outs.size(), AffineMap::get(loops + 1, 0, partialResults, ctx));
  SmallVector<utils::IteratorType> iterators(loops + 1,
                                             utils::IteratorType::reduction);
  for (unsigned d = 0; d <= parallel; ++d)
    iterators[d] = utils::IteratorType::parallel;
  auto partialSums = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{}, inputs, partials, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partialSums.getRegion(),
                              partialSums.getRegion().end());

  // Each output plus its partial sums in order: loops (outputs..., p).
  SmallVector<AffineExpr> readPartial = {dim(parallel)};
  SmallVector<AffineExpr> writeOut;
  for (unsigned d = 0; d < parallel; ++d) {
    readPartial.push_back(dim(d));
    writeOut.push_back(dim(d));
  }
  SmallVector<AffineMap> finalMaps(
      outs.size(), AffineMap::get(parallel + 1, 0, readPartial, ctx));
  finalMaps.append(outs.size(), AffineMap::get(parallel + 1, 0, writeOut, ctx));
  SmallVector<utils::IteratorType> finalIterators(
      parallel + 1, utils::IteratorType::parallel);
  finalIterators.back() = utils::IteratorType::reduction;
  rewriter.create<linalg::GenericOp>(
      loc, TypeRange{}, partials, outs, finalMaps, finalIterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> sums;
        for (size_t k = 0; k < outs.size(); ++k) {
          Value part = args[k], out = args[outs.size() + k];
          sums.push_back(outFirst[k] ? b.create<arith::AddFOp>(l, out, part)
                                     : b.create<arith::AddFOp>(l, part, out));
        }
        b.create<linalg::YieldOp>(l, sums);
      });
  rewriter.eraseOp(op);
}

struct SplitReductions
    : public mlir::tfc::impl::TfcGpuSplitReductionsBase<SplitReductions> {
  void runOnOperation() override {
    SmallVector<std::tuple<linalg::LinalgOp, unsigned, int64_t>> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      auto [dim, parts] = splitPlan(op);
      if (parts)
        ops.push_back({op, dim, parts});
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, dim, parts] : ops) {
      FailureOr<linalg::GenericOp> asGeneric = asGenericOp(rewriter, op);
      if (failed(asGeneric))
        continue;
      linalg::GenericOp generic = *asGeneric;
      rewriter.setInsertionPoint(generic);
      SmallVector<bool> outFirst = sumsOfTerms(generic);
      if (outFirst.empty())
        continue;
      split(rewriter, generic, outFirst, dim, parts);
      ++splitOps;
    }
  }
};

} // namespace
