//===- TensorCoreContractions.cpp - tfc-gpu-tensor-core-contractions ------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A contraction of two bf16 operands into a float32 output becomes a
/// kernel on the tensor cores: `mma.sync.m16n8k16` with bf16 operands and
/// float32 accumulators, its operand fragments read from shared memory by
/// `ldmatrix`, the shared tiles filled by `cp.async` up to three k steps
/// ahead of their use.
///
/// A block of 4 warps (2 x 2) computes BM x BN outputs, a warp (BM / 2) x
/// (BN / 2) of them as (BM / 32) x (BN / 16) mma tiles of 16 x 8. The k
/// loop steps by 32 through a ring of shared-memory stages: at each step
/// the block waits for the copies of the stage it multiplies, then issues
/// those of the step `stages - 1` ahead into the stage the previous step
/// used, 16 bytes per copy. Each tile keeps the operand's orientation (its
/// innermost dimension contiguous), its 16-byte chunks permuted within
/// each row by an XOR with the row (a swizzle), so that the 8 rows an
/// `ldmatrix` reads fall in distinct banks without padding;
/// `ldmatrix.trans` reads the orientations that the mma fragments do not
/// have (an activation used transposed, as in a weight gradient, or a
/// weight [in, out]). The mma of bf16 goes through `llvm.call_intrinsic`,
/// since nvgpu and nvvm reject bf16 operands in MLIR 19.
///
/// The accumulators start from the output, or from zero when a fill of
/// zeros writes the output just before the contraction (the fill is then
/// dropped), and are stored once, after the k loop, two adjacent columns
/// per store. When the output is a buffer of its own that the next op only
/// rounds to bf16, the kernel stores the rounded values instead and the
/// float32 buffer disappears. Otherwise the element-wise op that follows
/// (a bias, a residual) is applied to the accumulators before they are
/// stored, and so are the element-wise ops after it that read what the
/// kernel stores element for element (a bf16 copy, an activation, an
/// activation's gradient): the float32 output of a feed-forward
/// projection is then never written.
///
/// A contraction with too few output tiles to fill the GPU and a long k
/// (a weight gradient, k the batch's tokens) is split along k first: S
/// contractions of k / S each into a buffer of S partial outputs, the
/// tensor-core kernel's batch dimension, then their sum into the output,
/// in order (a linalg op that the rest of the pipeline maps).
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/ContractionEpilogues.h"
#include "codegen/gpu/Passes.h"
#include "codegen/gpu/TensorCorePlan.h"
#include "codegen/gpu/Utils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUTENSORCORECONTRACTIONS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::tensorcore;

namespace {

/// Builds the kernel of one contraction in place of it.
class KernelBuilder : IndexArithmetic {
public:
  KernelBuilder(linalg::LinalgOp op, const TensorCorePlan &plan)
      : IndexArithmetic(OpBuilder(op), op.getLoc()), op(op), plan(plan) {}

  void build();

private:
  linalg::LinalgOp op;
  const TensorCorePlan &plan;
  gpu::LaunchOp launch;
  Value tid, lane, warp, firstRow, firstCol, warpRow, warpCol;
  /// Per loop dimension, the block's index (batch dimensions only).
  SmallVector<Value> dims;
  Value rowTiles, colTiles; ///< the shared tiles, [stage][..][..]
  /// The warpgroup kernel's shared tiles: all stages of the row operand,
  /// then all of the column operand, as bf16 elements from a 1024-byte
  /// aligned address, and that address (i64).
  Value sharedTiles, sharedAddress;

  int64_t warpRows() const { return plan.blockRows / kWarpsAcross; }
  int64_t warpCols() const { return plan.blockCols / kWarpsAcross; }
  /// The mma tiles of a thread's accumulators: 16 x 8 tiles of a warp's
  /// outputs, or, on the warpgroup mma, a wgmma of 64 rows per 64 rows of
  /// the block, each BN / 8 tiles of 8 columns.
  int64_t mmaRows() const {
    return plan.warpgroup ? plan.blockRows / kWarpgroupRows
                          : warpRows() / kMmaRows;
  }
  int64_t mmaCols() const {
    return plan.warpgroup ? plan.blockCols / kMmaCols : warpCols() / kMmaCols;
  }

  Type tokenType() { return nvgpu::DeviceAsyncTokenType::get(b.getContext()); }

  /// The indices of `map` with m at `row`, n at `col`, k at `kv` and the
  /// batch dimensions at the block's.
  SmallVector<Value> indices(AffineMap map, Value row, Value col, Value kv) {
    return contractionIndices(map, plan.m, plan.n, plan.k, row, col, kv, dims);
  }

  /// The shared tiles of one operand: [stage][rows or k][k or rows],
  /// innermost as in the operand.
  Value addTile(int64_t extent, bool kInner) {
    auto workgroup = gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
    SmallVector<int64_t> shape =
        kInner ? SmallVector<int64_t>{plan.stages, extent, kDepth}
               : SmallVector<int64_t>{plan.stages, kDepth, extent};
    auto type = MemRefType::get(shape, b.getBF16Type(),
                                MemRefLayoutAttrInterface(), workgroup);
    return launch.addWorkgroupAttribution(type, loc);
  }

  /// Issues the copies of k tile `kt` of both operands into `stage`, 16
  /// bytes per copy, consecutive threads along the operand's innermost
  /// dimension; returns their group.
  Value copyTiles(Value kt, Value stage);
  /// The copies of k tile `kt` into its stage when it is a tile, an empty
  /// group otherwise.
  Value copyTilesIfAny(Value kt);
  /// The mma of the k tile in `stage` on `accs` (as the loop carries them).
  void multiply(Value stage, SmallVector<Value> &accs);
  /// The warpgroup kernel's shared tiles, in dynamic shared memory.
  void addWarpgroupTiles();
  /// The element of the warpgroup kernel's shared tiles where the copy of
  /// 16-byte chunk `chunk` of line `across` of the row (`rows`) or column
  /// operand's tile in `stage` goes (as copyTiles numbers them: a line is
  /// one of its rows when its k is innermost, else one k).
  Value warpgroupTileElement(bool rows, Value stage, Value across, Value chunk);
  /// The byte where the row or column operand's tile in `stage` starts in
  /// the warpgroup kernel's shared tiles.
  Value warpgroupTileStart(bool rows, Value stage);
  /// The shared address (i64) of the row or column operand's tile in
  /// `stage`, `bytes` into it.
  Value warpgroupTileAddress(bool rows, Value stage, int64_t bytes);
  /// The wgmma of the k tile in `stage` on `accs`, one accumulator struct
  /// per 64 rows of the block, as one group.
  void multiplyWarpgroup(Value stage, SmallVector<Value> &accs);
  /// The k loop of the warpgroup kernel from `init` (the accumulators,
  /// then the copies' group in flight); the accumulators after it, each
  /// as its own value.
  SmallVector<Value> warpgroupLoop(ArrayRef<Value> init);
  /// The values of two adjacent elements of the buffers (by root) that
  /// the kernel writes, as it stores them.
  using StoredPairs = llvm::SmallDenseMap<Value, SmallVector<Value, 2>>;
  /// Stores the accumulators `accs` (after the k loop), rows past m left
  /// out, with the plan's down-cast, epilogue and consumers.
  void storeAccumulators(ArrayRef<Value> accs);
  /// Applies the plan's epilogue to `out`, the output's values at row
  /// `row`, columns `col` and `col + 1` (which it replaces when the
  /// epilogue writes the output), and stores its other results, two per
  /// store, unless they are dead; all of them go to `stored`.
  void applyEpilogue(Value row, Value col, SmallVectorImpl<Value> &out,
                     StoredPairs &stored);
  /// Applies `consumer`, one of the plan's consumers, to the elements of
  /// `stored` at the output's row `row`, columns `col` and `col + 1`;
  /// stores its results likewise and adds them to `stored`.
  void applyConsumer(linalg::GenericOp consumer, Value row, Value col,
                     StoredPairs &stored);
  /// Records `values`, two adjacent elements of `init` at `at` (the
  /// first's indices), in `stored`, and stores them as one pair unless
  /// nothing reads `init`'s buffer.
  void storeResult(Value init, ArrayRef<Value> values, ArrayRef<Value> at,
                   StoredPairs &stored);
  /// Row and column of accumulator q of mma tile (i, j) of the thread.
  std::pair<Value, Value> accumulatorPosition(int64_t i, int64_t j, int64_t q);
};

void KernelBuilder::build() {
  if (plan.epilogue)
    for (Value operand : plan.epilogue->getOperands())
      moveDefinitionBefore(operand, op);
  for (linalg::GenericOp consumer : plan.consumers)
    for (Value operand : consumer->getOperands())
      moveDefinitionBefore(operand, op);
  Value one = index(1);
  // The warpgroup kernel's tiles: dynamic shared memory, 1024 bytes more
  // than they take, from which they start at a 1024-byte boundary.
  Value sharedBytes;
  if (plan.warpgroup)
    sharedBytes = b.create<arith::ConstantIntOp>(
        loc, plan.stages * plan.stageBytes() + kSwizzleGroupBytes, 32);
  launch = b.create<gpu::LaunchOp>(loc, index(plan.blocks()), one, one,
                                   index(kBlockThreads), one, one, sharedBytes);
  launch->setAttr("tfc.tensor_core_tile",
                  b.getDenseI64ArrayAttr({plan.blockRows, plan.blockCols,
                                          plan.depth, plan.stages}));
  if (plan.warpgroup)
    launch->setAttr("tfc.warpgroup_mma", b.getUnitAttr());
  b.setInsertionPointToEnd(&launch.getBody().front());
  b.create<gpu::TerminatorOp>(loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  if (plan.warpgroup) {
    addWarpgroupTiles();
  } else {
    rowTiles = addTile(plan.blockRows, plan.rowKInner);
    colTiles = addTile(plan.blockCols, plan.colKInner);
  }

  // The block's tile: column tiles fastest (the blocks that run together
  // share their rows of the row operand), then row tiles, then batch.
  int64_t colBlocks = plan.extents[plan.n] / plan.blockCols;
  int64_t rowBlocks = plan.rowBlocks();
  Value block = launch.getBlockIds().x;
  firstCol = mul(rem(block, colBlocks), plan.blockCols);
  Value rest = div(block, colBlocks);
  firstRow = mul(rem(rest, rowBlocks), plan.blockRows);
  rest = div(rest, rowBlocks);
  dims.assign(plan.extents.size(), Value());
  for (unsigned d : llvm::reverse(plan.batch)) {
    dims[d] = rem(rest, plan.extents[d]);
    rest = div(rest, plan.extents[d]);
  }
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarp);
  warp = div(tid, kWarp);
  warpRow = div(warp, kWarpsAcross);
  warpCol = rem(warp, kWarpsAcross);

  // The accumulators: zero, or the output's elements.
  SmallVector<Value> init;
  Value output = op.getDpsInits()[0];
  AffineMap outMap = op.getIndexingMapsArray()[2];
  Value zero = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0));
  for (int64_t i = 0; i < mmaRows(); ++i)
    for (int64_t j = 0; j < mmaCols(); ++j)
      for (int64_t q = 0; q < 4; ++q) {
        if (plan.zeroFill) {
          init.push_back(zero);
          continue;
        }
        auto [row, col] = accumulatorPosition(i, j, q);
        // A row past m: any row's value (it is not stored).
        if (plan.raggedRows())
          row = b.create<arith::MinUIOp>(loc, row,
                                         index(plan.extents[plan.m] - 1));
        init.push_back(b.create<memref::LoadOp>(loc, output,
                                                indices(outMap, row, col, {})));
      }

  // The first stages - 1 tiles, one group each; then at step kt: wait for
  // tile kt (at most stages - 2 groups still pending), a barrier (every
  // warp is done with tile kt - 1, whose stage the next copies reuse), the
  // copies of tile kt + stages - 1, the mma of tile kt.
  Value group;
  for (int64_t t = 0; t + 1 < plan.stages; ++t)
    group = copyTilesIfAny(index(t));
  init.push_back(group);
  SmallVector<Value> accs;
  if (plan.warpgroup) {
    accs = warpgroupLoop(init);
  } else {
    auto loop =
        b.create<scf::ForOp>(loc, index(0), index(plan.kSteps()), one, init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    b.create<nvgpu::DeviceAsyncWaitOp>(loc, loop.getRegionIterArgs().back(),
                                       b.getI32IntegerAttr(plan.stages - 2));
    b.create<gpu::BarrierOp>(loc);
    Value next = copyTilesIfAny(add(kt, plan.stages - 1));
    SmallVector<Value> carried(loop.getRegionIterArgs().drop_back());
    multiply(rem(kt, plan.stages), carried);
    carried.push_back(next);
    b.create<scf::YieldOp>(loc, carried);
    llvm::append_range(accs, loop.getResults().drop_back());
  }
  storeAccumulators(accs);
  linalg::GenericOp downCast = plan.downCast, epilogue = plan.epilogue;
  // The ops that the stores replace, and the buffers that nothing reads
  // any more (the float32 output among them): their allocations, fills,
  // views and deallocations.
  if (epilogue)
    epilogue->erase();
  for (linalg::GenericOp consumer : plan.consumers)
    consumer->erase();
  if (downCast)
    downCast->erase();
  if (plan.zeroFill)
    plan.zeroFill->erase();
  op->erase();
  if (downCast)
    eraseBuffer(output);
  for (Value root : plan.deadRoots)
    eraseBuffer(root);
}

void KernelBuilder::storeAccumulators(ArrayRef<Value> accs) {
  // The stores: accumulators 2q and 2q + 1 are adjacent columns, stored
  // as one vector of 2 (rounded to bf16 when the output's down-cast is
  // folded in), the epilogue's and the consumers' results likewise.
  linalg::GenericOp downCast = plan.downCast, epilogue = plan.epilogue;
  Value output = op.getDpsInits()[0];
  AffineMap outMap = op.getIndexingMapsArray()[2];
  Value target = downCast ? downCast.getDpsInits()[0] : output;
  Value outputRoot = rootBuffer(output);
  bool storesOutput = !plan.deadRoots.contains(outputRoot);
  Type f32 = b.getF32Type();
  for (int64_t i = 0; i < mmaRows(); ++i)
    for (int64_t j = 0; j < mmaCols(); ++j)
      for (int64_t q = 0; q < 4; q += 2) {
        auto [row, col] = accumulatorPosition(i, j, q);
        int64_t a = (i * mmaCols() + j) * 4 + q;
        // Rows past m are not stored (nor are their epilogue's operands
        // read).
        OpBuilder::InsertionGuard guard(b);
        if (plan.raggedRows()) {
          auto inRows = b.create<scf::IfOp>(
              loc,
              b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row,
                                      index(plan.extents[plan.m])),
              /*withElseRegion=*/false);
          b.setInsertionPoint(inRows.thenBlock()->getTerminator());
        }
        StoredPairs stored;
        SmallVector<Value> out = {accs[a], accs[a + 1]};
        if (epilogue)
          applyEpilogue(row, col, out, stored);
        stored[outputRoot].assign(out.begin(), out.end());
        if (storesOutput) {
          Value pair = b.create<vector::FromElementsOp>(
              loc, VectorType::get({2}, f32), out);
          if (downCast)
            pair = b.create<arith::TruncFOp>(
                loc, VectorType::get({2}, b.getBF16Type()), pair);
          storePair(b, loc, pair, target, indices(outMap, row, col, {}));
        }
        for (linalg::GenericOp consumer : plan.consumers)
          applyConsumer(consumer, row, col, stored);
      }
}

void KernelBuilder::applyEpilogue(Value row, Value col,
                                  SmallVectorImpl<Value> &out,
                                  StoredPairs &stored) {
  linalg::GenericOp epilogue = plan.epilogue;
  Value output = op.getDpsInits()[0];
  Block &body = epilogue.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  // Per init, its two values: the body cloned once per column, the
  // contraction's output read as the accumulator, the other inputs loaded.
  SmallVector<SmallVector<Value>> results(epilogue.getNumDpsInits());
  for (int64_t e = 0; e < 2; ++e) {
    Value column = add(col, e);
    IRMapping mapping;
    for (OpOperand &operand : epilogue->getOpOperands()) {
      BlockArgument arg = epilogue.getMatchingBlockArgument(&operand);
      if (operand.get() == output) {
        mapping.map(arg, out[e]);
        continue;
      }
      if (epilogue.isDpsInit(&operand))
        continue; // isEpilogue: its value is not read
      AffineMap map = epilogue.getMatchingIndexingMap(&operand);
      SmallVector<Value> at;
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        at.push_back(map.getDimPosition(r) == 0 ? row : column);
      mapping.map(arg, b.create<memref::LoadOp>(loc, operand.get(), at));
    }
    for (Operation &inner : body.without_terminator())
      b.clone(inner, mapping);
    for (auto [k, value] : llvm::enumerate(yield.getOperands()))
      results[k].push_back(mapping.lookupOrDefault(value));
  }
  // The output's new values go to the caller, which stores them (or not);
  // the other inits' are stored here unless nothing reads them.
  for (auto [init, values] : llvm::zip(epilogue.getDpsInits(), results)) {
    if (init == output) {
      out.assign(values.begin(), values.end());
      continue;
    }
    storeResult(init, values, {row, col}, stored);
  }
}

void KernelBuilder::applyConsumer(linalg::GenericOp consumer, Value row,
                                  Value col, StoredPairs &stored) {
  // The consumer's loop indices at the output's (row, col): the row
  // spread over its outer loops, the column its innermost (consumersOf).
  SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
  SmallVector<Value> at(ranges.size());
  Value rest = row;
  for (int64_t d = ranges.size() - 2; d > 0; --d) {
    at[d] = rem(rest, ranges[d]);
    rest = div(rest, ranges[d]);
  }
  at[0] = rest;
  Block &body = consumer.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<SmallVector<Value>> results(consumer.getNumDpsInits());
  for (int64_t e = 0; e < 2; ++e) {
    at.back() = add(col, e);
    IRMapping mapping;
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      BlockArgument arg = consumer.getMatchingBlockArgument(operand);
      auto known = stored.find(rootBuffer(operand->get()));
      if (known != stored.end()) {
        mapping.map(arg, known->second[e]);
        continue;
      }
      AffineMap map = consumer.getMatchingIndexingMap(operand);
      SmallVector<Value> position;
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        position.push_back(at[map.getDimPosition(r)]);
      mapping.map(arg, b.create<memref::LoadOp>(loc, operand->get(), position));
    }
    for (Operation &inner : body.without_terminator())
      b.clone(inner, mapping);
    for (auto [k, value] : llvm::enumerate(yield.getOperands()))
      results[k].push_back(mapping.lookupOrDefault(value));
  }
  at.back() = col;
  for (auto [init, values] : llvm::zip(consumer.getDpsInits(), results))
    storeResult(init, values, at, stored);
}

void KernelBuilder::storeResult(Value init, ArrayRef<Value> values,
                                ArrayRef<Value> at, StoredPairs &stored) {
  Value root = rootBuffer(init);
  stored[root].assign(values.begin(), values.end());
  if (plan.deadRoots.contains(root))
    return;
  Value pair = b.create<vector::FromElementsOp>(
      loc, VectorType::get({2}, values[0].getType()), values);
  storePair(b, loc, pair, init, at);
}

std::pair<Value, Value> KernelBuilder::accumulatorPosition(int64_t i, int64_t j,
                                                           int64_t q) {
  // Accumulator q of a thread: row lane / 4 (+ 8 for q >= 2), column
  // 2 (lane % 4) (+ 1 for odd q) of the 16 x 8 tile: a warp's 16 rows of
  // the wgmma of rows i, or its tile (i, j).
  Value row = plan.warpgroup ? add(add(firstRow, mul(warp, kMmaRows)),
                                   i * kWarpgroupRows + (q / 2) * 8)
                             : add(add(firstRow, mul(warpRow, warpRows())),
                                   i * kMmaRows + (q / 2) * 8);
  row = add(row, div(lane, 4));
  Value col =
      add(plan.warpgroup ? firstCol : add(firstCol, mul(warpCol, warpCols())),
          j * kMmaCols + q % 2);
  col = add(col, mul(rem(lane, 4), 2));
  return {row, col};
}

Value KernelBuilder::copyTilesIfAny(Value kt) {
  Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, kt,
                                          index(plan.kSteps()));
  auto ifOp = b.create<scf::IfOp>(loc, TypeRange{tokenType()}, inRange,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  b.create<scf::YieldOp>(loc, copyTiles(kt, rem(kt, plan.stages)));
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  b.create<scf::YieldOp>(loc, b.create<nvgpu::DeviceAsyncCreateGroupOp>(
                                   loc, tokenType(), ValueRange{})
                                  .getResult());
  return ifOp.getResult(0);
}

Value KernelBuilder::copyTiles(Value kt, Value stage) {
  SmallVector<Value> tokens;
  int64_t depth = plan.depth;
  Value k0 = mul(kt, depth);
  auto copy = [&](unsigned input, bool kInner, int64_t extent, Value first,
                  Value tile, bool rows) {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(input));
    int64_t inner = kInner ? depth : extent;
    int64_t chunksPerRow = inner / kCopyElements;
    int64_t chunks = extent * depth / kCopyElements;
    for (int64_t r = 0; r < chunks / kBlockThreads; ++r) {
      Value c = add(tid, r * kBlockThreads);
      Value across = div(c, chunksPerRow);
      Value chunk = rem(c, chunksPerRow);
      Value along = mul(chunk, kCopyElements);
      Value kk = kInner ? along : across;
      Value slot = kInner ? across : along;
      Value position = add(first, slot);
      Value kv = add(k0, kk);
      // A row tile past m reads the last rows again (their products are
      // not stored); a k step past k copies zeros, from k 0.
      if (rows && plan.raggedRows())
        position = b.create<arith::MinUIOp>(
            loc, position,
            index(plan.extents[plan.m] - (kInner ? 1 : kCopyElements)));
      Value srcElements;
      if (plan.raggedDepth()) {
        Value inDepth = b.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::ult, kv, index(plan.extents[plan.k]));
        kv = b.create<arith::SelectOp>(loc, inDepth, kv, index(0));
        srcElements = b.create<arith::SelectOp>(loc, inDepth,
                                                index(kCopyElements), index(0));
      }
      SmallVector<Value> src = indices(map, rows ? position : Value(),
                                       rows ? Value() : position, kv);
      SmallVector<Value> dst =
          plan.warpgroup ? SmallVector<Value>{warpgroupTileElement(
                               rows, stage, across, chunk)}
                         : SmallVector<Value>{
                               stage, across,
                               swizzledColumn(b, loc, across, chunk, inner)};
      tokens.push_back(b.create<nvgpu::DeviceAsyncCopyOp>(
          loc, tokenType(), plan.warpgroup ? sharedTiles : tile, dst,
          op.getDpsInputs()[input], src, b.getIndexAttr(kCopyElements),
          srcElements, b.getUnitAttr()));
    }
  };
  copy(plan.rowInput, plan.rowKInner, plan.blockRows, firstRow, rowTiles,
       /*rows=*/true);
  copy(plan.colInput, plan.colKInner, plan.blockCols, firstCol, colTiles,
       /*rows=*/false);
  return b.create<nvgpu::DeviceAsyncCreateGroupOp>(loc, tokenType(), tokens);
}

void KernelBuilder::multiply(Value stage, SmallVector<Value> &accs) {
  // ldmatrix x4 addresses, lane l giving row l % 8 of matrix l / 8. The
  // row operand's matrices are (rows 0-7, k 0-7), (8-15, 0-7), (0-7,
  // 8-15), (8-15, 8-15): the A fragment. The column operand's are (k
  // 0-7, columns 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15): the B
  // fragments of two 16 x 8 tiles. `half` is ((l / 8) % 2) 8 and
  // `quarter` (l / 16) 8, in elements; chunks are 8 elements.
  Value l8 = rem(lane, 8), halfChunk = rem(div(lane, 8), 2),
        quarterChunk = div(lane, 16);
  Value half = mul(halfChunk, 8), quarter = mul(quarterChunk, 8);
  Value warpFirstRow = mul(warpRow, warpRows());
  Value warpFirstCol = mul(warpCol, warpCols());
  // The x4 of the 16 x 16 block of `tiles` at `base` along the operand's
  // rows and `ks` along k: lane l's row is `across` + l % 8 along the rows
  // and `along` along k ([rows][k]), or, transposed ([k][rows]), `along` +
  // l % 8 along k and `across` along the rows.
  auto loadBlock = [&](Value tiles, bool kInner, int64_t extent, Value base,
                       int64_t ks, Value across, Value acrossChunk, Value along,
                       Value alongChunk) {
    return kInner
               ? loadMatrixX4(b, loc, tiles, stage, add(add(base, across), l8),
                              add(alongChunk, ks / kCopyElements), kDepth,
                              false)
               : loadMatrixX4(b, loc, tiles, stage, add(add(along, l8), ks),
                              add(div(base, kCopyElements), acrossChunk),
                              extent, true);
  };
  for (int64_t ks = 0; ks < kDepth; ks += kMmaDepth) {
    SmallVector<SmallVector<Value>> aFrags, bFrags;
    // The row operand: rows ((l / 8) % 2) 8, k (l / 16) 8.
    for (int64_t i = 0; i < mmaRows(); ++i)
      aFrags.push_back(loadBlock(rowTiles, plan.rowKInner, plan.blockRows,
                                 add(warpFirstRow, i * kMmaRows), ks, half,
                                 halfChunk, quarter, quarterChunk));
    // The column operand, two 16 x 8 tiles: columns (l / 16) 8, k
    // ((l / 8) % 2) 8.
    for (int64_t j = 0; j < mmaCols(); j += 2)
      bFrags.push_back(loadBlock(colTiles, plan.colKInner, plan.blockCols,
                                 add(warpFirstCol, j * kMmaCols), ks, quarter,
                                 quarterChunk, half, halfChunk));
    for (int64_t i = 0; i < mmaRows(); ++i)
      for (int64_t j = 0; j < mmaCols(); ++j) {
        ArrayRef<Value> pair = bFrags[j / 2];
        mmaBf16(b, loc, aFrags[i], pair.slice((j % 2) * 2, 2),
                MutableArrayRef<Value>(accs).slice((i * mmaCols() + j) * 4, 4));
      }
  }
}

void KernelBuilder::addWarpgroupTiles() {
  MLIRContext *ctx = b.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  Value raw = b.create<gpu::DynamicSharedMemoryOp>(
      loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                           MemRefLayoutAttrInterface(), workgroup));
  // From the first 1024-byte boundary: (1024 - p % 1024) % 1024 bytes on.
  Value start = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, raw);
  Value shift = rem(b.create<arith::SubIOp>(loc, index(kSwizzleGroupBytes),
                                            rem(start, kSwizzleGroupBytes)),
                    kSwizzleGroupBytes);
  int64_t elements = plan.stages * plan.stageBytes() / 2;
  sharedTiles = b.create<memref::ViewOp>(
      loc,
      MemRefType::get({elements}, b.getBF16Type(), MemRefLayoutAttrInterface(),
                      workgroup),
      raw, shift, ValueRange{});
  sharedAddress =
      b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), add(start, shift));
}

Value KernelBuilder::warpgroupTileElement(bool rows, Value stage, Value across,
                                          Value chunk) {
  bool kInner = rows ? plan.rowKInner : plan.colKInner;
  // K-major: a 128-byte row per row of the operand. M- or N-major: a row
  // per k of 64 of the operand's rows, in atoms of 64 rows by the tile's
  // k, one after another.
  int64_t rowChunks = kSwizzleBytes / 16;
  Value offset =
      kInner ? add(mul(across, kSwizzleBytes), mul(chunk, 16))
             : add(add(mul(div(chunk, rowChunks), plan.depth * kSwizzleBytes),
                       mul(across, kSwizzleBytes)),
                   mul(rem(chunk, rowChunks), 16));
  return div(add(warpgroupTileStart(rows, stage), swizzle128(b, loc, offset)),
             2);
}

Value KernelBuilder::warpgroupTileStart(bool rows, Value stage) {
  // All stages of the row operand's tile, then all of the column operand's.
  int64_t extent = rows ? plan.blockRows : plan.blockCols;
  Value first = mul(stage, extent * plan.depth * 2);
  return rows ? first
              : add(first, plan.stages * plan.blockRows * plan.depth * 2);
}

Value KernelBuilder::warpgroupTileAddress(bool rows, Value stage,
                                          int64_t bytes) {
  Value offset = b.create<arith::IndexCastUIOp>(
      loc, b.getI64Type(), add(warpgroupTileStart(rows, stage), bytes));
  return b.create<arith::AddIOp>(loc, sharedAddress, offset);
}

void KernelBuilder::multiplyWarpgroup(Value stage, SmallVector<Value> &accs) {
  // K-major: the next 8 rows 1024 bytes on, each k step 32 bytes along the
  // row. M- or N-major: the next 8 k 1024 bytes on, the next 64 rows an
  // atom on, each k step 16 rows (2048 bytes) down.
  int64_t atomBytes = plan.depth * kSwizzleBytes;
  auto descriptor = [&](bool rows, bool kInner, int64_t bytes) {
    return warpgroupDescriptor(b, loc, warpgroupTileAddress(rows, stage, bytes),
                               kInner ? 16 : atomBytes, kSwizzleGroupBytes);
  };
  b.create<NVVM::WgmmaFenceAlignedOp>(loc);
  for (int64_t ks = 0; ks < plan.depth; ks += kWarpgroupMmaDepth) {
    // The bytes of k step ks into an operand's tile.
    auto stepBytes = [&](bool kInner) {
      return kInner ? ks * 2 : ks * kSwizzleBytes;
    };
    Value descB =
        descriptor(/*rows=*/false, plan.colKInner, stepBytes(plan.colKInner));
    for (int64_t i = 0; i < mmaRows(); ++i) {
      int64_t rowBlock =
          i * (plan.rowKInner ? kWarpgroupRows * kSwizzleBytes : atomBytes);
      Value descA = descriptor(/*rows=*/true, plan.rowKInner,
                               rowBlock + stepBytes(plan.rowKInner));
      accs[i] = warpgroupMmaBf16(b, loc, accs[i], descA, descB, plan.blockCols,
                                 plan.rowKInner, plan.colKInner);
    }
  }
  b.create<NVVM::WgmmaGroupSyncAlignedOp>(loc);
}

SmallVector<Value> KernelBuilder::warpgroupLoop(ArrayRef<Value> init) {
  // One struct per 64 rows of accumulators (init holds them in the
  // order of accumulatorPosition: wgmma i, tile j, register q).
  Type accType = warpgroupAccumulatorType(b.getContext(), plan.blockCols);
  int64_t fields = plan.blockCols / 2;
  SmallVector<Value> structs;
  for (int64_t i = 0; i < mmaRows(); ++i) {
    Value acc = b.create<LLVM::UndefOp>(loc, accType);
    for (int64_t f = 0; f < fields; ++f)
      acc = b.create<LLVM::InsertValueOp>(loc, acc, init[i * fields + f], f);
    structs.push_back(acc);
  }
  structs.push_back(init.back());
  // At step kt: wait for tile kt's copies (at most stages - 2 groups
  // still pending), make them visible to the wgmma (the async proxy) and
  // to every thread; issue the wgmma of tile kt as one group; wait for
  // that of tile kt - 1 (the one before, at most, in flight), and, after
  // a barrier (every warp has waited for it), copy tile kt + stages - 1
  // into the stage that tile kt - 1 used.
  auto loop = b.create<scf::ForOp>(loc, index(0), index(plan.kSteps()),
                                   index(1), structs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    b.create<nvgpu::DeviceAsyncWaitOp>(loc, loop.getRegionIterArgs().back(),
                                       b.getI32IntegerAttr(plan.stages - 2));
    b.create<NVVM::FenceProxyOp>(
        loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    b.create<gpu::BarrierOp>(loc);
    SmallVector<Value> accs(loop.getRegionIterArgs().drop_back());
    multiplyWarpgroup(rem(kt, plan.stages), accs);
    b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, b.getI32IntegerAttr(1));
    b.create<gpu::BarrierOp>(loc);
    accs.push_back(copyTilesIfAny(add(kt, plan.stages - 1)));
    b.create<scf::YieldOp>(loc, accs);
  }
  b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, b.getI32IntegerAttr(0));
  SmallVector<Value> accs;
  for (Value acc : loop.getResults().drop_back())
    for (int64_t f = 0; f < fields; ++f)
      accs.push_back(b.create<LLVM::ExtractValueOp>(loc, acc, f));
  return accs;
}

struct TensorCoreContractions
    : public mlir::tfc::impl::TfcGpuTensorCoreContractionsBase<
          TensorCoreContractions> {
  using TfcGpuTensorCoreContractionsBase::TfcGpuTensorCoreContractionsBase;

  void runOnOperation() override {
    if (maxStages < 2)
      return signalPassFailure();
    SmallVector<std::pair<linalg::LinalgOp, TensorCorePlan>, 0> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<TensorCorePlan> plan =
              planFor(op, maxStages, minBlocks, warpgroupMma))
        work.push_back({op, *plan});
    });
    for (auto &[op, plan] : work) {
      if (int64_t splits = splitsFor(plan, minBlocks); splits > 1 && splitK) {
        op = splitAlongK(op, plan, splits);
        plan = *planFor(op, maxStages, minBlocks, warpgroupMma);
        ++splitOps;
      }
      KernelBuilder(op, plan).build();
      ++mappedOps;
    }
  }
};

} // namespace
