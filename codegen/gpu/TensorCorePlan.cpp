//===- TensorCorePlan.cpp - How a contraction runs on tensor cores --------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/TensorCorePlan.h"
#include "codegen/gpu/ContractionEpilogues.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tfc;

namespace mlir::tfc::tensorcore {

namespace {

/// Whether `map` reads dimensions `a` and `b`, one of them innermost.
bool readsWithInnermost(AffineMap map, unsigned a, unsigned b) {
  unsigned inner = map.getDimPosition(map.getNumResults() - 1);
  return usesDim(map, a) && usesDim(map, b) && (inner == a || inner == b);
}

} // namespace

/// The plan of `op`, or nullopt when it is no contraction this pass maps:
/// a linalg op on static bf16 inputs (two) and a float32 output, all with
/// the identity layout, one reduction dimension k, projected-permutation
/// maps, an output whose innermost dimension is n, a column input that
/// reads n and k, one of them innermost, a row input likewise with m and
/// k and not n, where m is the output's second innermost dimension, or,
/// when the column input reads that one, the one other dimension of the
/// output that it does not read (such as a Performer chunk's positions,
/// with a head between them and n); the rest are batch dimensions; a body
/// `acc + a * b`; n a multiple of 64 or 32, m and k of 8 (one 16-byte
/// copy: a row tile past m, or a k step past k, is cut short). At most
/// `maxStages` stages of shared memory, as many as fit; the largest tile
/// that gives `enoughBlocks` blocks. On the warpgroup mma when `warpgroup`, k
/// is a multiple of 64 and the column tile is 64 wide or k-innermost.
std::optional<TensorCorePlan> planFor(linalg::LinalgOp op, int64_t maxStages,
                                      int64_t enoughBlocks, bool warpgroup) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 2)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    bool output = op.isDpsInit(&operand);
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        (output ? !type.getElementType().isF32()
                : !type.getElementType().isBF16()))
      return std::nullopt;
  }
  std::optional<unsigned> k = contractionReductionDim(op);
  if (!k)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps[2];
  unsigned parallel = op.getNumLoops() - 1;
  if (parallel < 2)
    return std::nullopt;
  TensorCorePlan plan;
  plan.k = *k;
  plan.n = outMap.getDimPosition(parallel - 1);
  plan.colInput = usesDim(maps[0], plan.n) ? 0 : 1;
  plan.rowInput = 1 - plan.colInput;
  // m: the output's second innermost dimension, or, when the column input
  // reads that one, the one other that it does not read.
  std::optional<unsigned> m;
  unsigned second = outMap.getDimPosition(parallel - 2);
  if (!usesDim(maps[plan.colInput], second))
    m = second;
  for (unsigned r = 0; r + 1 < parallel && m != second; ++r) {
    unsigned d = outMap.getDimPosition(r);
    if (usesDim(maps[plan.colInput], d))
      continue;
    if (m)
      return std::nullopt;
    m = d;
  }
  if (!m)
    return std::nullopt;
  plan.m = *m;
  for (unsigned r = 0; r + 1 < parallel; ++r)
    if (outMap.getDimPosition(r) != plan.m)
      plan.batch.push_back(outMap.getDimPosition(r));
  AffineMap rowMap = maps[plan.rowInput], colMap = maps[plan.colInput];
  if (!readsWithInnermost(rowMap, plan.m, plan.k) || usesDim(rowMap, plan.n) ||
      !readsWithInnermost(colMap, plan.n, plan.k) || usesDim(colMap, plan.m))
    return std::nullopt;
  plan.rowKInner = rowMap.getDimPosition(rowMap.getNumResults() - 1) == plan.k;
  plan.colKInner = colMap.getDimPosition(colMap.getNumResults() - 1) == plan.k;
  if (!isMultiplyAddContraction(op))
    return std::nullopt;
  plan.extents = op.getStaticLoopRanges();
  int64_t rows = plan.extents[plan.m], cols = plan.extents[plan.n];
  if (rows % kCopyElements || cols % 32 || plan.extents[plan.k] % kCopyElements)
    return std::nullopt;
  // The largest tile that still gives enough blocks, else the smallest;
  // 32 columns wide when n is not a multiple of 64 (a head of 32).
  plan.blockRows = 64;
  plan.blockCols = cols % 64 ? 32 : 64;
  for (auto [bm, bn] : {std::pair<int64_t, int64_t>{128, 128},
                        {128, 64},
                        {64, 128},
                        {128, 32}}) {
    if ((rows % 64 == 0 && rows % bm) || cols % bn ||
        (bn == 32) != (cols % 64 != 0) ||
        llvm::divideCeilSigned(rows, bm) * (cols / bn) * plan.batchCount() <
            enoughBlocks)
      continue;
    plan.blockRows = bm;
    plan.blockCols = bn;
    break;
  }
  // The warpgroup kernel's N-major tiles are atoms of 64 columns. A k that
  // 32 divides but 64 does not stays on mma.sync, whose steps divide it.
  plan.warpgroup = warpgroup &&
                   (plan.extents[plan.k] % kWarpgroupDepth == 0 ||
                    plan.extents[plan.k] % kDepth != 0) &&
                   (plan.blockCols % 64 == 0 || plan.colKInner);
  plan.depth = plan.warpgroup ? kWarpgroupDepth : kDepth;
  plan.stages = std::min(
      maxStages, (plan.warpgroup ? kWarpgroupSharedBytes : kSharedBytes) /
                     plan.stageBytes());
  // No more stages than k steps, two at least.
  if (plan.warpgroup)
    plan.stages = std::max<int64_t>(2, std::min(plan.stages, plan.kSteps()));
  // A fill of zeros just before, into the same buffer.
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode())) {
    FloatAttr value;
    if (fill.getOutputs()[0] == op.getDpsInits()[0] &&
        matchPattern(fill.getInputs()[0], m_Constant(&value)) &&
        value.getValue().isZero())
      plan.zeroFill = fill;
  }
  plan.downCast = downCastOf(op, plan.zeroFill);
  if (!plan.downCast && plan.batch.empty()) {
    plan.epilogue = epilogueOf(op, rows, cols);
    plan.consumers = consumersOf(op, plan.epilogue, rows, cols);
    plan.deadRoots =
        deadRootsOf(op, plan.zeroFill, plan.epilogue, plan.consumers);
  }
  return plan;
}

/// Splits `op` (with `plan`) along k into `splits` contractions into a
/// buffer of partial outputs [splits, m, n], filled with zeros first, and
/// an element-wise sum of them into the output (which a fill of zeros just
/// before `op` need not clear); returns the contraction of the parts.
linalg::LinalgOp splitAlongK(linalg::LinalgOp op, const TensorCorePlan &plan,
                             int64_t splits) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  int64_t depth = plan.extents[plan.k] / splits;
  // Loop dimensions of the parts: (s, m, n, kc).
  AffineExpr s = getAffineDimExpr(0, ctx), m = getAffineDimExpr(1, ctx),
             n = getAffineDimExpr(2, ctx), kc = getAffineDimExpr(3, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned t = 0; t < 2; ++t) {
    Value input = op.getDpsInputs()[t];
    auto type = cast<MemRefType>(input.getType());
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(t));
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    SmallVector<AffineExpr> results;
    for (unsigned r = 0; r < 2; ++r) {
      unsigned d = map.getDimPosition(r);
      if (d == plan.k) {
        groups.push_back({int64_t(shape.size()), int64_t(shape.size()) + 1});
        shape.append({splits, depth});
        results.append({s, kc});
      } else {
        groups.push_back({int64_t(shape.size())});
        shape.push_back(type.getDimSize(r));
        results.push_back(d == plan.m ? m : n);
      }
    }
    inputs.push_back(
        b.create<memref::ExpandShapeOp>(loc, shape, input, groups));
    maps.push_back(AffineMap::get(4, 0, results, ctx));
  }
  maps.push_back(AffineMap::get(4, 0, {s, m, n}, ctx));
  int64_t rows = plan.extents[plan.m], cols = plan.extents[plan.n];
  Value partial = b.create<memref::AllocOp>(
      loc, MemRefType::get({splits, rows, cols}, b.getF32Type()));
  Value zero = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0));
  b.create<linalg::FillOp>(loc, zero, partial);
  auto parallel = utils::IteratorType::parallel;
  auto reduction = utils::IteratorType::reduction;
  auto parts = b.create<linalg::GenericOp>(
      loc, TypeRange{}, inputs, ValueRange{partial}, maps,
      SmallVector<utils::IteratorType>{parallel, parallel, parallel,
                                       reduction});
  IRMapping mapping;
  op->getRegion(0).cloneInto(&parts.getRegion(), mapping);
  // The output (unless it is a fill of zeros, then dropped) plus the parts,
  // in order: one element-wise op over [m, n].
  // Part p read through the map (m, n) -> (p, m, n): one buffer, which
  // the sum's kernel takes once.
  SmallVector<Value> slices(splits, partial);
  SmallVector<AffineMap> sumMaps;
  for (int64_t part = 0; part < splits; ++part)
    sumMaps.push_back(
        AffineMap::get(2, 0,
                       {getAffineConstantExpr(part, ctx),
                        getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)},
                       ctx));
  sumMaps.push_back(b.getMultiDimIdentityMap(2));
  bool overwrite = bool(plan.zeroFill);
  if (overwrite)
    plan.zeroFill->erase();
  b.create<linalg::GenericOp>(
      loc, TypeRange{}, slices, op.getDpsInits(), sumMaps,
      SmallVector<utils::IteratorType>{parallel, parallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value sum = overwrite ? args[0] : args.back();
        for (int64_t part = overwrite ? 1 : 0; part < splits; ++part)
          sum = nb.create<arith::AddFOp>(nloc, sum, args[part]);
        nb.create<linalg::YieldOp>(nloc, sum);
      });
  op->erase();
  return cast<linalg::LinalgOp>(parts.getOperation());
}

/// The parts to split `plan`'s contraction into along k: none (1) when it
/// has `enoughBlocks` blocks, batch dimensions or too short a k; else the
/// fewest (a power of two) that give enough blocks, each at least 256 long
/// and a multiple of 32; for a k that 32 does not divide (8 x 2,049
/// tokens), the fewest of any number up to 64 that give enough blocks,
/// each at least 256 long and a multiple of 8, else the most that do not.
int64_t splitsFor(const TensorCorePlan &plan, int64_t enoughBlocks) {
  if (plan.blocks() >= enoughBlocks || !plan.batch.empty() ||
      plan.extents.size() != 3)
    return 1;
  int64_t depth = plan.extents[plan.k];
  int64_t tiles =
      plan.extents[plan.m] / 64 * llvm::divideCeil(plan.extents[plan.n], 64);
  int64_t splits = 1;
  while (tiles * splits < enoughBlocks && splits < kMaxSplits &&
         depth % (2 * splits * kDepth) == 0 &&
         depth / (2 * splits) >= kMinSplitDepth)
    splits *= 2;
  if (depth % kDepth == 0)
    return splits;
  for (int64_t parts = 2;
       parts <= kMaxSplits && depth / parts >= kMinSplitDepth; ++parts) {
    if (depth % (parts * kCopyElements))
      continue;
    splits = parts;
    if (tiles * parts >= enoughBlocks)
      break;
  }
  return splits;
}

} // namespace mlir::tfc::tensorcore
