//===- TileContractions.cpp - The tfc-gpu-tile-contractions pass ----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// tfc-gpu-map-kernels gives a contraction one thread per output element:
/// at every step of its k loop the thread loads one element of each
/// operand for one multiply-add. Here a contraction becomes a kernel whose
/// threads each compute a register tile of TM rows x TN columns of the
/// output: per k step a thread loads TM elements of the row operand and TN
/// of the column operand for TM x TN multiply-adds. A thread's columns are
/// 32 apart, so that the 32 threads of a warp read and write consecutive
/// elements, and the threads of a warp share their rows. Each output
/// element still adds its terms in the order of k, with the op's own body,
/// so the sums are those of one thread per element, term for term.
///
/// A large contraction of two operands goes through shared memory instead:
/// a block of 256 threads computes 64 x 64 outputs, and at each step of 16
/// k it copies the 64 x 16 tile of each operand into workgroup memory,
/// reading along the operand's innermost dimension (an operand whose
/// innermost dimension is k, a weight used transposed, would otherwise be
/// read 32 rows apart by a warp), then each thread applies the body to its
/// 4 x 4 outputs for the 16 k in order.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUTILECONTRACTIONS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The threads of a block of the kernels this pass makes.
constexpr int64_t kBlockThreads = 256;
/// A warp: the threads whose columns interleave.
constexpr int64_t kWarp = 32;

/// The tile of a block of the shared-memory kernels: 64 x 64 outputs, 16
/// x 16 threads of 4 x 4 each.
constexpr int64_t kBlockTile = 64, kThreadTile = 4,
                  kThreadsAcross = kBlockTile / kThreadTile;

/// How a contraction is tiled: its loop dimensions by role, their extents
/// and the register tile of a thread.
struct ContractionPlan {
  unsigned m, n, k;
  SmallVector<unsigned> batch; ///< the other parallel dims, outer first
  SmallVector<int64_t> extents;
  int64_t tileRows, tileCols;
  /// With shared memory: the row and column operands (input numbers) and
  /// the k step of a tile; 0 without.
  unsigned rowInput = 0, colInput = 0;
  int64_t depth = 0;

  /// Per batch element, the tiles along m and along n: blocks of 64 x 64
  /// with shared memory, else threads (the column threads in whole warps).
  int64_t rowTiles() const {
    return llvm::divideCeil(extents[m], depth ? kBlockTile : tileRows);
  }
  int64_t colTiles() const {
    return depth ? llvm::divideCeil(extents[n], kBlockTile)
                 : llvm::divideCeil(extents[n], kWarp * tileCols) * kWarp;
  }
  /// The tiles of all batch elements.
  int64_t tiles() const {
    int64_t count = rowTiles() * colTiles();
    for (unsigned d : batch)
      count *= extents[d];
    return count;
  }
  /// The kernel's threads.
  int64_t threads() const {
    return depth ? tiles() * kThreadsAcross * kThreadsAcross : tiles();
  }
};

/// The plan of `op`, or nullopt when it is no contraction this pass tiles:
/// a linalg op on static float buffers with one output, one reduction
/// dimension k and at least two parallel ones, projected-permutation
/// indexing maps, an output indexed by the parallel dimensions alone (the
/// last one n; m chosen as below), an input that reads m and k but not n
/// and one that reads n and k but not m, and a body without regions.
std::optional<ContractionPlan> planFor(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 2)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()))
      return std::nullopt;
  }
  std::optional<unsigned> k = contractionReductionDim(op);
  if (!k)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps.back();
  unsigned parallel = op.getNumLoops() - 1;
  ContractionPlan plan;
  plan.k = *k;
  plan.n = outMap.getDimPosition(parallel - 1);
  ArrayRef<AffineMap> inputs = ArrayRef(maps).drop_back();
  // m: the innermost output dimension other than n that an input reading
  // k but not n reads, and no input reading k and n (so that, in
  // attention's P V over [batch, query, head, channel], the query, not
  // the head, which both operands read).
  std::optional<unsigned> m;
  for (unsigned r = 0; r + 1 < parallel; ++r) {
    unsigned d = outMap.getDimPosition(r);
    bool rowReads = false, colReads = false;
    for (AffineMap map : inputs) {
      if (!usesDim(map, plan.k))
        continue;
      if (usesDim(map, plan.n))
        colReads |= usesDim(map, d);
      else
        rowReads |= usesDim(map, d);
    }
    if (rowReads && !colReads)
      m = d;
  }
  if (!m)
    return std::nullopt;
  plan.m = *m;
  for (unsigned r = 0; r < parallel; ++r) {
    unsigned d = outMap.getDimPosition(r);
    if (d != plan.m && d != plan.n)
      plan.batch.push_back(d);
  }
  bool rowOperand = false, colOperand = false;
  for (AffineMap map : inputs) {
    bool k = usesDim(map, plan.k);
    rowOperand |= k && usesDim(map, plan.m) && !usesDim(map, plan.n);
    colOperand |= k && usesDim(map, plan.n) && !usesDim(map, plan.m);
  }
  if (!rowOperand || !colOperand)
    return std::nullopt;
  Block &body = op->getRegion(0).front();
  for (Operation &inner : body)
    if (inner.getNumRegions() != 0)
      return std::nullopt;
  plan.extents = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(plan.extents))
    return std::nullopt;
  int64_t rows = plan.extents[plan.m], cols = plan.extents[plan.n];
  int64_t depth = plan.extents[plan.k];
  plan.tileCols = cols >= 4 * kWarp ? 4 : cols >= 2 * kWarp ? 2 : 1;
  plan.tileRows = std::min<int64_t>(plan.tileCols == 1 ? 8 : 4, rows);
  // Shared memory: two inputs, one of each kind, a whole tile of rows and
  // columns, and k steps of 16 or 8.
  if (op.getNumDpsInputs() == 2 && rows >= kBlockTile && cols >= kBlockTile &&
      depth % 8 == 0) {
    AffineMap first = maps[0];
    plan.rowInput = usesDim(first, plan.m) ? 0 : 1;
    plan.colInput = 1 - plan.rowInput;
    bool rowOk = !usesDim(maps[plan.rowInput], plan.n) &&
                 usesDim(maps[plan.rowInput], plan.m);
    bool colOk = !usesDim(maps[plan.colInput], plan.m) &&
                 usesDim(maps[plan.colInput], plan.n);
    if (rowOk && colOk)
      plan.depth = depth % 16 == 0 ? 16 : 8;
  }
  return plan;
}

} // namespace

int64_t mlir::tfc::tiledContractionThreads(linalg::LinalgOp op) {
  std::optional<ContractionPlan> plan = planFor(op);
  return plan ? plan->threads() : 0;
}

namespace {

/// The result of the body of `op` for accumulator `acc`, input values
/// `inputs` and loop indices `dims` (for linalg.index), built at `b`.
Value applyBody(OpBuilder &b, linalg::LinalgOp op, ValueRange inputs, Value acc,
                ArrayRef<Value> dims) {
  Block &body = op->getRegion(0).front();
  IRMapping mapping;
  for (auto [arg, value] : llvm::zip(body.getArguments(), inputs))
    mapping.map(arg, value);
  mapping.map(body.getArgument(op.getNumDpsInputs()), acc);
  for (Operation &inner : body.without_terminator()) {
    if (auto dim = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(dim.getResult(), dims[dim.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  return mapping.lookup(body.getTerminator()->getOperand(0));
}

/// What the two kernels of a contraction share: the launch, the thread's
/// batch indices, rows and columns, the loads of the output into the
/// accumulators and their stores.
struct TileKernel {
  linalg::LinalgOp op;
  const ContractionPlan &plan;
  Location loc;
  OpBuilder b;
  gpu::LaunchOp launch;
  /// Per loop dimension, the thread's index (batch dimensions only).
  SmallVector<Value> dims;
  /// The thread's rows and columns, and the same clamped to the last row
  /// or column (for reads: threads past the edge compute and do not store).
  SmallVector<Value> rowIds, colIds, rowReads, colReads;

  /// A launch of `blocks` blocks of `threads` threads (x only) in place of
  /// `op`, the builder at the start of its body.
  TileKernel(linalg::LinalgOp op, const ContractionPlan &plan, int64_t blocks,
             int64_t threads)
      : op(op), plan(plan), loc(op.getLoc()), b(op), dims(plan.extents.size()) {
    Value one = index(1);
    launch = b.create<gpu::LaunchOp>(loc, index(blocks), one, one,
                                     index(threads), one, one);
    b.setInsertionPointToEnd(&launch.getBody().front());
    b.create<gpu::TerminatorOp>(loc);
    b.setInsertionPointToStart(&launch.getBody().front());
  }

  Value index(int64_t value) {
    return b.create<arith::ConstantIndexOp>(loc, value);
  }

  /// The row tile and the column tile of `id`, the position of the
  /// thread's (or block's) tile among those of all batch elements, and
  /// from it the batch indices, which it sets: the column tile varies
  /// fastest, then the row tile, then the last batch dimension.
  std::pair<Value, Value> placeTile(Value id) {
    Value col = b.create<arith::RemUIOp>(loc, id, index(plan.colTiles()));
    Value rest = b.create<arith::DivUIOp>(loc, id, index(plan.colTiles()));
    Value row = b.create<arith::RemUIOp>(loc, rest, index(plan.rowTiles()));
    rest = b.create<arith::DivUIOp>(loc, rest, index(plan.rowTiles()));
    for (unsigned d : llvm::reverse(plan.batch)) {
      dims[d] = b.create<arith::RemUIOp>(loc, rest, index(plan.extents[d]));
      rest = b.create<arith::DivUIOp>(loc, rest, index(plan.extents[d]));
    }
    return {row, col};
  }

  void addRow(Value row) {
    rowIds.push_back(row);
    rowReads.push_back(
        b.create<arith::MinUIOp>(loc, row, index(plan.extents[plan.m] - 1)));
  }

  void addColumn(Value col) {
    colIds.push_back(col);
    colReads.push_back(
        b.create<arith::MinUIOp>(loc, col, index(plan.extents[plan.n] - 1)));
  }

  /// The indices of `map` with m at `row`, n at `col`, k at `kv` and the
  /// batch dimensions at the thread's.
  SmallVector<Value> indices(AffineMap map, Value row, Value col, Value kv) {
    return contractionIndices(map, plan.m, plan.n, plan.k, row, col, kv, dims);
  }

  /// The loop indices of the output element (i, j) at k step `kv`.
  SmallVector<Value> loopIndices(int64_t i, int64_t j, Value kv) {
    SmallVector<Value> result(dims);
    result[plan.m] = rowIds[i];
    result[plan.n] = colIds[j];
    result[plan.k] = kv;
    return result;
  }

  /// The thread's output elements, row by row: the accumulators' start.
  SmallVector<Value> loadOutputs() {
    AffineMap outMap = op.getIndexingMapsArray().back();
    SmallVector<Value> values;
    for (Value row : rowReads)
      for (Value col : colReads)
        values.push_back(b.create<memref::LoadOp>(
            loc, op.getDpsInits()[0], indices(outMap, row, col, {})));
    return values;
  }

  /// Stores `results` (row by row) to the output elements in range, and
  /// erases `op`.
  void storeOutputsAndErase(ValueRange results) {
    AffineMap outMap = op.getIndexingMapsArray().back();
    for (auto [i, row] : llvm::enumerate(rowIds)) {
      Value rowInside = b.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::ult, row, index(plan.extents[plan.m]));
      for (auto [j, col] : llvm::enumerate(colIds)) {
        Value colInside = b.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::ult, col, index(plan.extents[plan.n]));
        Value inside = b.create<arith::AndIOp>(loc, rowInside, colInside);
        auto store = b.create<scf::IfOp>(loc, inside, /*withElse=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&store.getThenRegion().front());
        b.create<memref::StoreOp>(
            loc, results[i * colIds.size() + j], op.getDpsInits()[0],
            indices(outMap, rowReads[i], colReads[j], {}));
      }
    }
    op->erase();
  }
};

struct TileContractions
    : public mlir::tfc::impl::TfcGpuTileContractionsBase<TileContractions> {
  using TfcGpuTileContractionsBase::TfcGpuTileContractionsBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, ContractionPlan>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<ContractionPlan> plan = planFor(op))
        work.push_back({op, *plan});
    });
    for (auto &[op, plan] : work) {
      if (!sharedMemory)
        plan.depth = 0;
      if (plan.depth)
        tileThroughSharedMemory(op, plan);
      else
        tile(op, plan);
      ++tiledOps;
    }
  }

  /// Replaces `op` by a kernel of 64 x 64 output tiles per block of 256
  /// threads, 4 x 4 outputs per thread (rows 4 * ty + i, columns tx + 16 *
  /// j), whose k loop steps by `plan.depth`: the block copies the rows' and
  /// the columns' operand tiles into shared memory (consecutive threads
  /// reading consecutive elements of the operand's innermost dimension),
  /// waits, and each thread applies the body to its outputs for each k of
  /// the step, in order.
  void tileThroughSharedMemory(linalg::LinalgOp op,
                               const ContractionPlan &plan) {
    int64_t rows = plan.extents[plan.m], cols = plan.extents[plan.n];
    int64_t depth = plan.depth, threads = kThreadsAcross * kThreadsAcross;
    TileKernel kernel(op, plan, plan.tiles(), threads);
    OpBuilder &b = kernel.b;
    Location loc = kernel.loc;
    auto index = [&](int64_t v) { return kernel.index(v); };
    // Tiles [k][row or column] of each operand's element type, one element
    // longer per k to spread the copies' stores over the banks.
    auto workgroup = gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
    auto tileOf = [&](unsigned input) {
      Type element =
          cast<MemRefType>(op.getDpsInputs()[input].getType()).getElementType();
      auto tileType = MemRefType::get({depth, kBlockTile + 1}, element,
                                      MemRefLayoutAttrInterface(), workgroup);
      return kernel.launch.addWorkgroupAttribution(tileType, loc);
    };
    Value rowTile = tileOf(plan.rowInput);
    Value colTile = tileOf(plan.colInput);

    Value block = kernel.launch.getBlockIds().x;
    Value thread = kernel.launch.getThreadIds().x;
    auto [rowBlock, colBlock] = kernel.placeTile(block);
    Value firstRow = b.create<arith::MulIOp>(loc, rowBlock, index(kBlockTile));
    Value firstCol = b.create<arith::MulIOp>(loc, colBlock, index(kBlockTile));
    Value tx = b.create<arith::RemUIOp>(loc, thread, index(kThreadsAcross));
    Value ty = b.create<arith::DivUIOp>(loc, thread, index(kThreadsAcross));
    Value rowInTile = b.create<arith::MulIOp>(loc, ty, index(kThreadTile));
    SmallVector<Value> rowSlots, colSlots;
    for (int64_t i = 0; i < kThreadTile; ++i) {
      rowSlots.push_back(b.create<arith::AddIOp>(loc, rowInTile, index(i)));
      kernel.addRow(b.create<arith::AddIOp>(loc, firstRow, rowSlots.back()));
    }
    for (int64_t j = 0; j < kThreadTile; ++j) {
      colSlots.push_back(
          b.create<arith::AddIOp>(loc, tx, index(kThreadsAcross * j)));
      kernel.addColumn(b.create<arith::AddIOp>(loc, firstCol, colSlots.back()));
    }

    auto loop = b.create<scf::ForOp>(loc, index(0), index(plan.extents[plan.k]),
                                     index(depth), kernel.loadOutputs());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value k0 = loop.getInductionVar();
      // The copies: element e = thread + 256 r of the 64 x depth tile, its
      // position along the operand's innermost dimension e mod (that
      // dimension's tile extent).
      auto copy = [&](unsigned input, unsigned dim, Value first, int64_t extent,
                      Value tile) {
        AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(input));
        bool kInnermost = map.getDimPosition(map.getNumResults() - 1) == plan.k;
        for (int64_t r = 0; r < kBlockTile * depth / threads; ++r) {
          Value e = b.create<arith::AddIOp>(loc, thread, index(threads * r));
          int64_t inner = kInnermost ? depth : kBlockTile;
          Value along = b.create<arith::RemUIOp>(loc, e, index(inner));
          Value across = b.create<arith::DivUIOp>(loc, e, index(inner));
          Value kk = kInnermost ? along : across;
          Value slot = kInnermost ? across : along;
          Value position = b.create<arith::MinUIOp>(
              loc, b.create<arith::AddIOp>(loc, first, slot),
              index(extent - 1));
          Value kv = b.create<arith::AddIOp>(loc, k0, kk);
          Value row = dim == plan.m ? position : Value();
          Value col = dim == plan.n ? position : Value();
          Value value = b.create<memref::LoadOp>(
              loc, op.getDpsInputs()[input], kernel.indices(map, row, col, kv));
          b.create<memref::StoreOp>(loc, value, tile, ValueRange{kk, slot});
        }
      };
      copy(plan.rowInput, plan.m, firstRow, rows, rowTile);
      copy(plan.colInput, plan.n, firstCol, cols, colTile);
      b.create<gpu::BarrierOp>(loc);
      SmallVector<Value> accs(loop.getRegionIterArgs());
      for (int64_t kk = 0; kk < depth; ++kk) {
        Value kIndex = index(kk);
        Value kv = b.create<arith::AddIOp>(loc, k0, kIndex);
        SmallVector<Value> rowValues, colValues;
        for (int64_t i = 0; i < kThreadTile; ++i)
          rowValues.push_back(b.create<memref::LoadOp>(
              loc, rowTile, ValueRange{kIndex, rowSlots[i]}));
        for (int64_t j = 0; j < kThreadTile; ++j)
          colValues.push_back(b.create<memref::LoadOp>(
              loc, colTile, ValueRange{kIndex, colSlots[j]}));
        for (int64_t i = 0; i < kThreadTile; ++i) {
          for (int64_t j = 0; j < kThreadTile; ++j) {
            SmallVector<Value> inputs(2);
            inputs[plan.rowInput] = rowValues[i];
            inputs[plan.colInput] = colValues[j];
            Value &acc = accs[i * kThreadTile + j];
            acc = applyBody(b, op, inputs, acc, kernel.loopIndices(i, j, kv));
          }
        }
      }
      b.create<gpu::BarrierOp>(loc);
      b.create<scf::YieldOp>(loc, accs);
    }
    kernel.storeOutputsAndErase(loop.getResults());
  }

  /// Replaces `op` by the register-tile kernel of `plan`: thread (row
  /// thread, column thread) computes rows tm * row thread + i and columns
  /// group * 32 * tn + lane + 32 * j, loading its inputs from memory.
  void tile(linalg::LinalgOp op, const ContractionPlan &plan) {
    int64_t tm = plan.tileRows, tn = plan.tileCols;
    int64_t total = plan.threads();
    int64_t threads = std::min(kBlockThreads, total);
    TileKernel kernel(op, plan, llvm::divideCeil(total, threads), threads);
    OpBuilder &b = kernel.b;
    Location loc = kernel.loc;
    auto index = [&](int64_t v) { return kernel.index(v); };

    // The thread's place: column thread, row thread, batch indices.
    Value id = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(loc, kernel.launch.getBlockIds().x,
                                index(threads)),
        kernel.launch.getThreadIds().x);
    auto inRange = b.create<scf::IfOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, id,
                                index(total)),
        /*withElse=*/false);
    b.setInsertionPointToStart(&inRange.getThenRegion().front());
    auto [rowThread, colThread] = kernel.placeTile(id);
    Value firstRow = b.create<arith::MulIOp>(loc, rowThread, index(tm));
    for (int64_t i = 0; i < tm; ++i)
      kernel.addRow(b.create<arith::AddIOp>(loc, firstRow, index(i)));
    Value group = b.create<arith::DivUIOp>(loc, colThread, index(kWarp));
    Value lane = b.create<arith::RemUIOp>(loc, colThread, index(kWarp));
    Value firstCol = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, group, index(kWarp * tn)), lane);
    for (int64_t j = 0; j < tn; ++j)
      kernel.addColumn(
          b.create<arith::AddIOp>(loc, firstCol, index(kWarp * j)));

    auto loop = b.create<scf::ForOp>(loc, index(0), index(plan.extents[plan.k]),
                                     index(1), kernel.loadOutputs());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kv = loop.getInductionVar();
      // Each input loaded once per (row, column) it depends on, all
      // before the multiply-adds.
      SmallVector<DenseMap<std::pair<int64_t, int64_t>, Value>> loads(
          op.getNumDpsInputs());
      auto key = [&](unsigned t, int64_t i, int64_t j) {
        AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(t));
        return std::pair<int64_t, int64_t>{usesDim(map, plan.m) ? i : 0,
                                           usesDim(map, plan.n) ? j : 0};
      };
      for (unsigned t = 0; t < op.getNumDpsInputs(); ++t) {
        AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(t));
        for (int64_t i = 0; i < tm; ++i) {
          for (int64_t j = 0; j < tn; ++j) {
            auto [ki, kj] = key(t, i, j);
            Value &value = loads[t][{ki, kj}];
            if (!value)
              value = b.create<memref::LoadOp>(
                  loc, op.getDpsInputs()[t],
                  kernel.indices(map, kernel.rowReads[ki], kernel.colReads[kj],
                                 kv));
          }
        }
      }
      SmallVector<Value> results;
      for (int64_t i = 0; i < tm; ++i) {
        for (int64_t j = 0; j < tn; ++j) {
          SmallVector<Value> inputs;
          for (unsigned t = 0; t < op.getNumDpsInputs(); ++t)
            inputs.push_back(loads[t][key(t, i, j)]);
          results.push_back(applyBody(b, op, inputs,
                                      loop.getRegionIterArgs()[i * tn + j],
                                      kernel.loopIndices(i, j, kv)));
        }
      }
      b.create<scf::YieldOp>(loc, results);
    }
    kernel.storeOutputsAndErase(loop.getResults());
  }
};

} // namespace
