//===- RowKernels.cpp - tfc-gpu-row-kernels -------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Consecutive linalg ops on buffers that work row by row over the same
/// rows (LayerNorm's statistics and normalisation, its gradient's row sums
/// and input gradient, a cross-entropy's row maximum, sum and gradient)
/// become one kernel: `lanes` threads per row (a warp), every lane running
/// the chain's ops in order over its columns `lane, lane + lanes, ...`. A
/// sum over the row is each lane's partial sum combined across the lanes
/// by a butterfly of warp shuffles, which leaves the row's value in every
/// lane, so the ops after it read it from a register.
///
/// Fusing them needs no barrier: an element of a row's buffer is written
/// and read by one lane only, and a value per row by the lanes of its row
/// after the shuffles. The pass fuses only when that holds (see
/// rowsAreIndependent).
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <map>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUROWKERNELS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Threads of a row kernel's block.
constexpr int64_t kBlockThreads = 256;
/// Threads of a warp, the width of its shuffles.
constexpr int32_t kWarp = 32;

/// How an op of a chain indexes one of its buffers.
enum class RowAccess {
  /// The element (row, column) of a row of the chain's width.
  Element,
  /// The row's one value.
  Row,
  /// Anything else (a column's value, a gathered row, another shape).
  Other,
};

/// An op of a chain: its loops over the rows (their extents, which
/// multiply to the chain's rows) and, with `hasWidth`, a last loop over
/// the columns of a row.
struct ChainOp {
  linalg::LinalgOp op;
  SmallVector<int64_t> rowExtents;
  bool hasWidth = false;

  bool reduces() const {
    linalg::LinalgOp linalgOp = op;
    return hasWidth && linalgOp.getIteratorTypesArray().back() ==
                           utils::IteratorType::reduction;
  }
};

/// One buffer access of a chain's op.
struct Access {
  Value buffer;
  RowAccess kind;
  bool write;
};

/// The combining op of the output `init` of a reduction `op`: the op that
/// the body yields for it, `out <op> term` (a sum, maximum or minimum),
/// its block argument used by it alone; null when there is none.
Operation *combinerOf(linalg::LinalgOp op, OpOperand &init) {
  BlockArgument out = op.getMatchingBlockArgument(&init);
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  unsigned result = init.getOperandNumber() - op.getNumDpsInputs();
  Operation *combiner = yield.getOperand(result).getDefiningOp();
  if (!combiner || combiner->getBlock() != op.getBlock() ||
      !combiner->hasOneUse() || !out.hasOneUse() ||
      !isa<arith::AddFOp, arith::AddIOp, arith::MaximumFOp, arith::MaxNumFOp,
           arith::MinimumFOp, arith::MinNumFOp>(combiner))
    return nullptr;
  if (combiner->getOperand(0) != out && combiner->getOperand(1) != out)
    return nullptr;
  return combiner;
}

/// The offset of `type`, a static shape laid out row-major without gaps;
/// none for another layout.
std::optional<int64_t> contiguousOffset(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset))
    return std::nullopt;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (type.getDimSize(d) != 1 && strides[d] != expected)
      return std::nullopt;
    expected *= type.getDimSize(d);
  }
  return offset;
}

/// The chain's op that `op` is over `rows` rows of `width` columns, run by
/// `lanes` lanes per row: a generic or fill on static buffers whose loops
/// are parallel but for a last reduction over the columns, that either
/// runs over the rows (every loop) or over the rows and then the columns
/// (the last loop), writes its outputs at (row, column), or at the row
/// when it reduces, reduces by a combiner (combinerOf) into 32-bit values
/// when lanes shuffle them, and whose body reads buffers, if at all, by
/// `memref.load`.
std::optional<ChainOp> asChainOp(Operation *operation, int64_t rows,
                                 int64_t width, int64_t lanes) {
  if (!isa<linalg::GenericOp, linalg::FillOp>(operation))
    return std::nullopt;
  auto op = cast<linalg::LinalgOp>(operation);
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (loops.empty() || llvm::any_of(loops, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (utils::IteratorType kind : ArrayRef(iterators).drop_back())
    if (kind != utils::IteratorType::parallel)
      return std::nullopt;
  bool reduces = iterators.back() == utils::IteratorType::reduction;
  int64_t all = 1;
  for (int64_t extent : loops)
    all *= extent;
  unsigned n = loops.size();
  ChainOp chainOp{op, SmallVector<int64_t>(loops), false};
  if (!reduces && all == rows) {
    // Over the rows alone.
  } else if (n >= 2 && loops.back() == width && all / width == rows) {
    chainOp.rowExtents.pop_back();
    chainOp.hasWidth = true;
  } else {
    return std::nullopt;
  }
  MLIRContext *context = op->getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(n, context);
  AffineMap outMap = reduces ? identity.getMajorSubMap(n - 1) : identity;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (op.getMatchingIndexingMap(&init) != outMap)
      return std::nullopt;
    if (!reduces)
      continue;
    Type element = getElementTypeOrSelf(init.get());
    if (!combinerOf(op, init) ||
        (lanes > 1 && !element.isF32() && !element.isInteger(32)))
      return std::nullopt;
  }
  for (Operation &bodyOp : op.getBlock()->without_terminator())
    if (!isa<memref::LoadOp>(bodyOp) && !isMemoryEffectFree(&bodyOp))
      return std::nullopt;
  return chainOp;
}

/// The buffers that `chainOp` reads and writes, and how.
SmallVector<Access> accessesOf(const ChainOp &chainOp) {
  linalg::LinalgOp op = chainOp.op;
  unsigned n = op.getNumLoops();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(n, op->getContext());
  AffineMap rowMap =
      chainOp.hasWidth ? identity.getMajorSubMap(n - 1) : identity;
  SmallVector<Access> accesses;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    RowAccess kind = map == rowMap                         ? RowAccess::Row
                     : chainOp.hasWidth && map == identity ? RowAccess::Element
                                                           : RowAccess::Other;
    accesses.push_back({operand.get(), kind, op.isDpsInit(&operand)});
  }
  op.getBlock()->walk([&](memref::LoadOp load) {
    accesses.push_back({load.getMemRef(), RowAccess::Other, false});
  });
  return accesses;
}

/// Whether running `chain` row by row, each row's ops in order, gives what
/// running its ops one after another gives: every buffer that an op of it
/// writes is accessed only at (row, column) or at the row, through views
/// laid out row-major without gaps, and views of one buffer that differ
/// (in offset, in kind) do not overlap.
bool rowsAreIndependent(ArrayRef<ChainOp> chain, int64_t rows, int64_t width) {
  SmallVector<Access> accesses;
  for (const ChainOp &chainOp : chain)
    llvm::append_range(accesses, accessesOf(chainOp));
  llvm::SmallDenseSet<Value> written;
  for (const Access &access : accesses)
    if (access.write)
      written.insert(rootBuffer(access.buffer));

  struct View {
    Value root;
    RowAccess kind;
    int64_t offset, size;
    Type element;
  };
  SmallVector<View> views;
  for (const Access &access : accesses) {
    Value root = rootBuffer(access.buffer);
    if (!written.contains(root))
      continue;
    auto type = cast<MemRefType>(access.buffer.getType());
    std::optional<int64_t> offset = contiguousOffset(type);
    if (access.kind == RowAccess::Other || !offset)
      return false;
    View view{root, access.kind, *offset,
              access.kind == RowAccess::Row ? rows : rows * width,
              type.getElementType()};
    for (const View &other : views) {
      if (other.root != root)
        continue;
      if (other.kind == view.kind && other.offset == view.offset &&
          other.element == view.element)
        continue;
      if (other.element != view.element ||
          (view.offset < other.offset + other.size &&
           other.offset < view.offset + view.size))
        return false;
    }
    views.push_back(view);
  }
  return true;
}

/// The rows and width of `op` when it is a row reduction that can start a
/// chain: loops parallel but for the last, a reduction over the columns
/// into outputs indexed by the rows. A long sum over few rows is left to
/// tfc-gpu-split-reductions.
std::optional<std::pair<int64_t, int64_t>> rowReduction(Operation *operation,
                                                        int64_t lanes) {
  auto op = dyn_cast<linalg::GenericOp>(operation);
  if (!op || op.getNumLoops() < 2 || !op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (llvm::any_of(loops, ShapedType::isDynamic))
    return std::nullopt;
  int64_t width = loops.back(), rows = 1;
  for (int64_t extent : ArrayRef(loops).drop_back())
    rows *= extent;
  if (width >= 1024 && rows < 1024)
    return std::nullopt;
  std::optional<ChainOp> chainOp = asChainOp(op, rows, width, lanes);
  if (!chainOp || !chainOp->reduces())
    return std::nullopt;
  return std::make_pair(rows, width);
}

/// A chain of ops over `rows` rows of `width` columns, and the op before
/// which its kernel runs (after its last op when null).
struct Chain {
  SmallVector<ChainOp> ops;
  int64_t rows = 0, width = 0;
  Operation *insertionPoint = nullptr;
};

/// The most ops that a chain steps over.
constexpr size_t kMaxSteppedOver = 4;

/// The values defined outside `op` that it uses: its operands and what
/// its body captures.
SmallVector<Value> usedValues(Operation *op) {
  llvm::SetVector<Value> used(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  return used.takeVector();
}

/// Whether `op` can run before the ops `steppedOver` that come before it:
/// it writes no buffer that they read or write and reads none that they
/// write, and what it uses can be defined before the first of them.
bool commutesWith(Operation *op, ArrayRef<Operation *> steppedOver) {
  if (steppedOver.empty())
    return true;
  SmallVector<Value> reads, writes;
  if (!bufferEffects(op, reads, writes))
    return false;
  for (Operation *other : steppedOver) {
    SmallVector<Value> otherReads, otherWrites;
    bufferEffects(other, otherReads, otherWrites);
    auto meets = [](ArrayRef<Value> x, ArrayRef<Value> y) {
      return llvm::any_of(x, [&](Value v) { return llvm::is_contained(y, v); });
    };
    if (meets(writes, otherReads) || meets(writes, otherWrites) ||
        meets(reads, otherWrites))
      return false;
  }
  return llvm::all_of(usedValues(op), [&](Value value) {
    return availableAt(value, steppedOver.front());
  });
}

/// Whether `op` reads a buffer that an op of `chain` writes.
bool readsOutputOf(Operation *op, ArrayRef<ChainOp> chain) {
  SmallVector<Value> reads, writes;
  if (!bufferEffects(op, reads, writes))
    return false;
  return llvm::any_of(chain, [&](const ChainOp &chainOp) {
    linalg::LinalgOp chainLinalgOp = chainOp.op;
    return llvm::any_of(chainLinalgOp.getDpsInits(), [&](Value init) {
      return llvm::is_contained(reads, rootBuffer(init));
    });
  });
}

/// Builds the kernel of one chain at the point of its builder.
class RowKernelBuilder : public IndexArithmetic {
public:
  RowKernelBuilder(OpBuilder builder, Location loc, int64_t rows, int64_t width,
                   int64_t lanes)
      : IndexArithmetic(builder, loc), rows(rows), width(width), lanes(lanes) {}

  void build(ArrayRef<ChainOp> chain);

private:
  void emit(const ChainOp &chainOp);
  SmallVector<Value> emitBody(const ChainOp &chainOp, ArrayRef<Value> dims,
                              ValueRange accumulators);
  SmallVector<Value> rowIndices(ArrayRef<int64_t> extents);
  SmallVector<Value> indicesOf(AffineMap map, ArrayRef<Value> dims);
  Value read(linalg::LinalgOp op, OpOperand &operand, ArrayRef<Value> dims,
             bool rowView);
  void write(linalg::LinalgOp op, OpOperand &init, ArrayRef<Value> dims,
             bool rowView, Value value);
  Value neutral(Operation *combiner, Type type);
  Value combine(Operation *combiner, Value x, Value y);

  /// The key of a row's value in `rowValues`: the buffer and the offset of
  /// its view (row-major without gaps, as every view that a chain writes).
  static std::optional<std::pair<Value, int64_t>> rowKey(Value buffer) {
    std::optional<int64_t> offset =
        contiguousOffset(cast<MemRefType>(buffer.getType()));
    if (!offset)
      return std::nullopt;
    return std::make_pair(rootBuffer(buffer), *offset);
  }

  int64_t rows, width, lanes;
  Value row, lane;
  /// The row's indices in the row loops of each extents, computed once at
  /// the kernel's top level.
  std::map<std::vector<int64_t>, SmallVector<Value>> rowIndicesByExtents;
  /// The values per row that the chain has computed so far, by buffer.
  DenseMap<std::pair<Value, int64_t>, Value> rowValues;
};

SmallVector<Value> RowKernelBuilder::rowIndices(ArrayRef<int64_t> extents) {
  SmallVector<Value> &indices = rowIndicesByExtents[extents.vec()];
  if (!indices.empty())
    return indices;
  indices.resize(extents.size());
  int64_t stride = 1;
  for (int64_t d = extents.size() - 1; d >= 0; --d) {
    Value quotient = stride == 1 ? row : div(row, stride);
    indices[d] = d == 0 ? quotient : rem(quotient, extents[d]);
    stride *= extents[d];
  }
  return indices;
}

SmallVector<Value> RowKernelBuilder::indicesOf(AffineMap map,
                                               ArrayRef<Value> dims) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(dims[dim.getPosition()]);
    else
      indices.push_back(b.create<affine::AffineApplyOp>(
          loc, AffineMap::get(map.getNumDims(), 0, expr), dims));
  }
  return indices;
}

Value RowKernelBuilder::read(linalg::LinalgOp op, OpOperand &operand,
                             ArrayRef<Value> dims, bool rowView) {
  Value buffer = operand.get();
  if (!isa<MemRefType>(buffer.getType()))
    return buffer;
  if (std::optional<std::pair<Value, int64_t>> key = rowKey(buffer);
      rowView && key) {
    auto known = rowValues.find(*key);
    if (known != rowValues.end())
      return known->second;
  }
  return b.create<memref::LoadOp>(
      loc, buffer, indicesOf(op.getMatchingIndexingMap(&operand), dims));
}

void RowKernelBuilder::write(linalg::LinalgOp op, OpOperand &init,
                             ArrayRef<Value> dims, bool rowView, Value value) {
  Value buffer = init.get();
  SmallVector<Value> indices =
      indicesOf(op.getMatchingIndexingMap(&init), dims);
  if (rowView)
    rowValues[*rowKey(buffer)] = value;
  if (!rowView || lanes == 1) {
    b.create<memref::StoreOp>(loc, value, buffer, indices);
    return;
  }
  // Every lane holds the row's value; the first stores it.
  Value first =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, lane, index(0));
  auto ifOp = b.create<scf::IfOp>(loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  b.create<memref::StoreOp>(loc, value, buffer, indices);
}

Value RowKernelBuilder::neutral(Operation *combiner, Type type) {
  if (isa<arith::AddIOp>(combiner))
    return b.create<arith::ConstantOp>(loc, type, b.getIntegerAttr(type, 0));
  if (isa<arith::AddFOp>(combiner))
    return b.create<arith::ConstantOp>(loc, type, b.getFloatAttr(type, 0.0));
  bool maximum = isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner);
  APFloat infinity = APFloat::getInf(cast<FloatType>(type).getFloatSemantics(),
                                     /*Negative=*/maximum);
  return b.create<arith::ConstantOp>(loc, type, b.getFloatAttr(type, infinity));
}

Value RowKernelBuilder::combine(Operation *combiner, Value x, Value y) {
  Operation *combined = b.clone(*combiner);
  combined->setOperands({x, y});
  return combined->getResult(0);
}

SmallVector<Value> RowKernelBuilder::emitBody(const ChainOp &chainOp,
                                              ArrayRef<Value> dims,
                                              ValueRange accumulators) {
  linalg::LinalgOp op = chainOp.op;
  bool reduces = chainOp.reduces();
  bool rowOutputs = reduces || !chainOp.hasWidth;
  Block *body = op.getBlock();
  IRMapping mapping;
  unsigned n = op.getNumLoops();
  AffineMap rowMap = AffineMap::getMultiDimIdentityMap(n, op->getContext());
  if (chainOp.hasWidth)
    rowMap = rowMap.getMajorSubMap(n - 1);
  for (OpOperand *input : op.getDpsInputOperands())
    mapping.map(op.getMatchingBlockArgument(input),
                read(op, *input, dims,
                     isa<MemRefType>(input->get().getType()) &&
                         op.getMatchingIndexingMap(input) == rowMap));
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    BlockArgument out = op.getMatchingBlockArgument(&init);
    if (reduces)
      mapping.map(out, accumulators[i]);
    else if (!out.use_empty())
      mapping.map(out, read(op, init, dims, rowOutputs));
  }
  for (Operation &bodyOp : body->without_terminator()) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(bodyOp)) {
      mapping.map(indexOp.getResult(), dims[indexOp.getDim()]);
      continue;
    }
    b.clone(bodyOp, mapping);
  }
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  SmallVector<Value> results;
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    Value value = mapping.lookupOrDefault(yield.getOperand(i));
    if (reduces)
      results.push_back(value);
    else
      write(op, init, dims, rowOutputs, value);
  }
  return results;
}

void RowKernelBuilder::emit(const ChainOp &chainOp) {
  linalg::LinalgOp op = chainOp.op;
  SmallVector<Value> dims = rowIndices(chainOp.rowExtents);
  if (!chainOp.hasWidth) {
    emitBody(chainOp, dims, {});
    return;
  }
  // The lane's columns; a reduction's partial results start from the
  // combiner's neutral value.
  SmallVector<Operation *> combiners;
  SmallVector<Value> partials;
  if (chainOp.reduces()) {
    for (OpOperand &init : op.getDpsInitsMutable()) {
      combiners.push_back(combinerOf(op, init));
      partials.push_back(
          neutral(combiners.back(), getElementTypeOrSelf(init.get())));
    }
  }
  auto loop = b.create<scf::ForOp>(
      loc, index(0), index(width / lanes), index(1), partials,
      [&](OpBuilder &loopBuilder, Location, Value step, ValueRange partial) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(loopBuilder.getInsertionBlock(),
                            loopBuilder.getInsertionPoint());
        SmallVector<Value> columnDims(dims);
        columnDims.push_back(add(lane, mul(step, lanes)));
        SmallVector<Value> results = emitBody(chainOp, columnDims, partial);
        b.create<scf::YieldOp>(loc, results);
      });
  if (!chainOp.reduces())
    return;
  // The lanes' partial results combined by a butterfly, which leaves the
  // row's in every lane, then the output's value combined with it.
  SmallVector<Value> rowDims(dims);
  rowDims.push_back(index(0));
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    Value partial = loop.getResult(i);
    for (int32_t offset = lanes / 2; offset >= 1; offset /= 2) {
      Value other = b.create<gpu::ShuffleOp>(loc, partial, offset, kWarp,
                                             gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      partial = combine(combiners[i], partial, other);
    }
    Value start = read(op, init, rowDims, /*rowView=*/true);
    write(op, init, rowDims, /*rowView=*/true,
          combine(combiners[i], start, partial));
  }
}

void RowKernelBuilder::build(ArrayRef<ChainOp> chain) {
  int64_t rowsPerBlock = kBlockThreads / lanes;
  Value one = index(1);
  auto launch =
      b.create<gpu::LaunchOp>(loc, index(llvm::divideCeil(rows, rowsPerBlock)),
                              one, one, index(rowsPerBlock * lanes), one, one);
  launch->setAttr("tfc.row_kernel",
                  b.getDenseI64ArrayAttr({rows, width, lanes}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  b.create<gpu::TerminatorOp>(loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value thread = launch.getThreadIds().x;
  row = add(mul(launch.getBlockIds().x, rowsPerBlock),
            lanes == 1 ? thread : div(thread, lanes));
  lane = lanes == 1 ? index(0) : rem(thread, lanes);
  if (rows % rowsPerBlock != 0) {
    Value inside = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row,
                                           index(rows));
    auto ifOp = b.create<scf::IfOp>(loc, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
  }
  for (const ChainOp &chainOp : chain)
    emit(chainOp);
}

struct RowKernels : public mlir::tfc::impl::TfcGpuRowKernelsBase<RowKernels> {
  using TfcGpuRowKernelsBase::TfcGpuRowKernelsBase;

  void runOnOperation() override {
    for (Block &block : getOperation().getBody())
      fuseChains(block);
  }

  /// The lanes per row of a chain over `rows` rows of `width`: the pass's
  /// lanes, or the largest power of two below them that divides the width;
  /// 1 when a warp of fewer lanes per row would hold rows past the last (a
  /// shuffle needs the whole warp).
  int64_t lanesFor(int64_t rows, int64_t width) const {
    int64_t result = std::max<int64_t>(1, lanes);
    while (result > 1 && width % result != 0)
      result /= 2;
    if (result < kWarp && rows % (kWarp / result) != 0)
      return 1;
    return result;
  }

  void fuseChains(Block &block) {
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    llvm::SmallDenseSet<Operation *> taken;
    SmallVector<Chain> chains;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (taken.contains(ops[i]))
        continue;
      std::optional<std::pair<int64_t, int64_t>> shape =
          rowReduction(ops[i], lanes);
      if (!shape)
        continue;
      Chain chain;
      std::tie(chain.rows, chain.width) = *shape;
      int64_t chainLanes = lanesFor(chain.rows, chain.width);
      chain.ops.push_back(
          *asChainOp(ops[i], chain.rows, chain.width, chainLanes));
      // Grows the chain by the op at `j` at its front or back; false when
      // that op cannot join.
      auto grow = [&](size_t j, bool front) {
        std::optional<ChainOp> chainOp =
            asChainOp(ops[j], chain.rows, chain.width, chainLanes);
        if (!chainOp)
          return false;
        auto at = front ? chain.ops.begin() : chain.ops.end();
        chain.ops.insert(at, *chainOp);
        if (rowsAreIndependent(chain.ops, chain.rows, chain.width))
          return true;
        chain.ops.erase(front ? chain.ops.begin() : chain.ops.end() - 1);
        return false;
      };
      for (size_t j = i; j-- > 0;) {
        if (taken.contains(ops[j]))
          break;
        if (!isTransparent(ops[j]) && !grow(j, /*front=*/true))
          break;
      }
      // Forwards, the chain may step over a few ops that cannot join when
      // the ops that join after them commute with them and read what the
      // chain writes (an op that does not is left to a later chain); the
      // kernel then runs before the first of them.
      SmallVector<Operation *> steppedOver;
      for (size_t j = i + 1; j < ops.size() && !taken.contains(ops[j]); ++j) {
        if (isTransparent(ops[j]))
          continue;
        if (commutesWith(ops[j], steppedOver) &&
            (steppedOver.empty() || readsOutputOf(ops[j], chain.ops)) &&
            grow(j, /*front=*/false)) {
          if (!steppedOver.empty())
            chain.insertionPoint = steppedOver.front();
          continue;
        }
        SmallVector<Value> reads, writes;
        if (steppedOver.size() == kMaxSteppedOver ||
            !bufferEffects(ops[j], reads, writes))
          break;
        steppedOver.push_back(ops[j]);
      }
      if (!rowsAreIndependent(chain.ops, chain.rows, chain.width))
        continue;
      for (const ChainOp &chainOp : chain.ops)
        taken.insert(chainOp.op);
      chains.push_back(std::move(chain));
    }
    for (Chain &chain : chains) {
      Operation *last = chain.ops.back().op;
      OpBuilder b(last->getContext());
      if (chain.insertionPoint) {
        for (const ChainOp &chainOp : chain.ops)
          for (Value value : usedValues(chainOp.op))
            moveDefinitionBefore(value, chain.insertionPoint);
        b.setInsertionPoint(chain.insertionPoint);
      } else {
        b.setInsertionPointAfter(last);
      }
      RowKernelBuilder(b, last->getLoc(), chain.rows, chain.width,
                       lanesFor(chain.rows, chain.width))
          .build(chain.ops);
      for (const ChainOp &chainOp : chain.ops)
        chainOp.op->erase();
      ++fusedChains;
      fusedOps += chain.ops.size();
    }
  }
};

} // namespace
