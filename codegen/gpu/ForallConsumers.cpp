//===- ForallConsumers.cpp - The tfc-gpu-forall-consumers pass ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// tfc-row-attention's loops write each row of their outputs as one vector
/// (a head's Dh values of one query or key row). A bf16 build then rounds
/// every output to bf16 in an element-wise op of its own, one more kernel
/// that reads the whole output back. This pass applies such an op inside
/// the loop instead: right after the row's write, on the vector just
/// written, storing its results' rows likewise.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUFORALLCONSUMERS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// A row that a loop writes: the vector, the `memref.subview` of one
/// innermost run of a buffer it is written to, and the write.
struct RowWrite {
  Value vector;
  memref::SubViewOp row;
  vector::TransferWriteOp write;
};

/// The row write of `op` when it is one: a 1-D in-bounds
/// `vector.transfer_write` at index 0 of a unit-stride subview of a buffer
/// from above `loop`, the subview's sizes all 1 but the innermost, which
/// the vector fills.
std::optional<RowWrite> rowWriteOf(Operation *op, scf::ForallOp loop) {
  auto write = dyn_cast<vector::TransferWriteOp>(op);
  if (!write || write.getVectorType().getRank() != 1 || write.getMask() ||
      !write.getInBoundsValues()[0] ||
      !matchPattern(write.getIndices()[0], m_Zero()))
    return std::nullopt;
  auto row = write.getSource().getDefiningOp<memref::SubViewOp>();
  if (!row || !row->getBlock() || row->getParentOp() != loop ||
      loop->isAncestor(row.getSource().getParentBlock()->getParentOp()))
    return std::nullopt;
  ArrayRef<int64_t> sizes = row.getStaticSizes();
  if (sizes.empty() || sizes.back() != write.getVectorType().getDimSize(0) ||
      !llvm::all_of(sizes.drop_back(), [](int64_t s) { return s == 1; }) ||
      !llvm::all_of(row.getStaticStrides(), [](int64_t s) { return s == 1; }))
    return std::nullopt;
  return RowWrite{write.getVector(), row, write};
}

/// Whether `value` is a buffer allocated before `loop` that nothing uses
/// before it: what the loop leaves unwritten of it is undefined.
bool isFreshBefore(Value value, scf::ForallOp loop) {
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != loop->getBlock())
    return false;
  return llvm::all_of(alloc->getUsers(), [&](Operation *user) {
    Operation *top = loop->getBlock()->findAncestorOpInBlock(*user);
    return top && !top->isBeforeInBlock(loop);
  });
}

/// Whether `generic` can be applied row by row to vectors: all loops
/// parallel, every map the identity, every operand a static buffer of the
/// same shape, inits whose values the body does not read, and a body of
/// element-wise ops.
bool isRowwise(linalg::GenericOp generic, ArrayRef<int64_t> shape) {
  if (generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getShape() != shape ||
        (generic.isDpsInit(&operand) &&
         !generic.getMatchingBlockArgument(&operand).use_empty()))
      return false;
  }
  Block &body = generic.getRegion().front();
  auto inBody = [&](Value value) { return value.getParentBlock() == &body; };
  return llvm::all_of(body.without_terminator(),
                      [](Operation &op) {
                        return op.getNumRegions() == 0 &&
                               op.hasTrait<OpTrait::Elementwise>();
                      }) &&
         llvm::all_of(body.getTerminator()->getOperands(), inBody);
}

struct ForallConsumers
    : public mlir::tfc::impl::TfcGpuForallConsumersBase<ForallConsumers> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    for (Block &block : getOperation().getBody())
      for (Operation &op : block)
        if (auto loop = dyn_cast<scf::ForallOp>(op))
          if (loop.getNumResults() == 0)
            loops.push_back(loop);
    for (scf::ForallOp loop : loops)
      fuseInto(loop);
  }

  /// Adds to `written` the buffers of `rows` that an op of `loop` other
  /// than their row writes also writes (a copy of the row onto itself, as
  /// bufferization leaves, excepted); false when an op's writes are
  /// unknown.
  static bool otherWrites(scf::ForallOp loop,
                          const llvm::SmallDenseMap<Value, RowWrite> &rows,
                          llvm::SmallDenseSet<Value> &written) {
    llvm::SmallPtrSet<Operation *, 4> rowWrites;
    for (auto &entry : rows) {
      vector::TransferWriteOp write = entry.second.write;
      rowWrites.insert(write);
    }
    auto isSelfCopy = [&](Operation *op) {
      auto copy = dyn_cast<linalg::CopyOp>(op);
      if (!copy)
        return false;
      auto from = copy.getInputs()[0].getDefiningOp<memref::SubViewOp>();
      auto to = copy.getOutputs()[0].getDefiningOp<memref::SubViewOp>();
      return from && to && from.getSource() == to.getSource() &&
             from.getMixedOffsets() == to.getMixedOffsets() &&
             from.getMixedSizes() == to.getMixedSizes() &&
             from.getMixedStrides() == to.getMixedStrides();
    };
    WalkResult result = loop.getBody()->walk([&](Operation *op) {
      if (rowWrites.contains(op) || isSelfCopy(op))
        return WalkResult::advance();
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects)
        return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      SmallVector<Value> targets;
      if (!declaredWrites(effects, targets))
        return WalkResult::interrupt();
      for (Value target : targets)
        if (rows.count(rootBuffer(target)))
          written.insert(rootBuffer(target));
      return WalkResult::advance();
    });
    return !result.wasInterrupted();
  }

  /// Applies the element-wise ops after `loop` that read a buffer it
  /// writes row by row inside it, at most 4 of them among the next 16 ops.
  void fuseInto(scf::ForallOp loop) {
    // The buffers written row by row, each by one write, and fresh.
    llvm::SmallDenseMap<Value, RowWrite> rows;
    llvm::SmallDenseSet<Value> written;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (std::optional<RowWrite> row = rowWriteOf(&op, loop)) {
        Value buffer = row->row.getSource();
        if (!rows.try_emplace(buffer, *row).second)
          written.insert(buffer);
      }
    }
    SmallVector<Value> loopReads, loopWrites;
    if (!bufferEffects(loop, loopReads, loopWrites) ||
        !otherWrites(loop, rows, written))
      return;
    for (Value buffer : llvm::to_vector(llvm::make_first_range(rows)))
      if (written.contains(buffer) || !isFreshBefore(buffer, loop))
        rows.erase(buffer);
    if (rows.empty())
      return;

    SmallVector<Value> reads, writes;
    int64_t fused = 0;
    Operation *next = loop->getNextNode();
    for (int64_t count = 0; next && count < 16 && fused < 4; ++count) {
      Operation *op = next;
      next = next->getNextNode();
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (generic &&
          fuse(generic, loop, rows, loopReads, loopWrites, reads, writes)) {
        ++fused;
        continue;
      }
      if (!bufferEffects(op, reads, writes) ||
          llvm::any_of(writes, [&](Value w) { return rows.count(w); }))
        return;
    }
  }

  /// Applies `generic` inside `loop` when it reads exactly one of `rows`
  /// (the buffers the loop writes by rows), with the rows of its other
  /// inputs read where the loop writes that one's and nothing between
  /// writing them (`writes`); its inits fresh buffers that neither the
  /// loop nor the ops between touch. Its inits are then written by rows
  /// too.
  bool fuse(linalg::GenericOp generic, scf::ForallOp loop,
            llvm::SmallDenseMap<Value, RowWrite> &rows,
            ArrayRef<Value> loopReads, ArrayRef<Value> loopWrites,
            ArrayRef<Value> reads, ArrayRef<Value> writes) {
    std::optional<RowWrite> source;
    for (Value input : generic.getDpsInputs()) {
      auto it = rows.find(input);
      if (it == rows.end()) {
        if (llvm::is_contained(writes, rootBuffer(input)) ||
            llvm::is_contained(loopWrites, rootBuffer(input)) ||
            !availableAt(input, loop))
          return false;
        continue;
      }
      if (source)
        return false;
      source = it->second;
    }
    if (!source ||
        !isRowwise(
            generic,
            cast<MemRefType>(source->row.getSource().getType()).getShape()))
      return false;
    Block &body = generic.getRegion().front();
    for (Operation &op : body.without_terminator())
      for (Value operand : op.getOperands())
        if (operand.getParentBlock() != &body && !availableAt(operand, loop))
          return false;
    for (Value init : generic.getDpsInits()) {
      Value root = rootBuffer(init);
      if (init != root || !availableAt(init, loop) ||
          llvm::is_contained(reads, root) || llvm::is_contained(writes, root) ||
          llvm::is_contained(loopReads, root) ||
          llvm::is_contained(loopWrites, root) ||
          llvm::is_contained(generic.getDpsInputs(), init))
        return false;
    }

    // The body on the row's vectors, after the row's write.
    for (Value operand : generic->getOperands())
      moveDefinitionBefore(operand, loop);
    OpBuilder b(source->write->getNextNode());
    Location loc = generic.getLoc();
    int64_t length = source->write.getVectorType().getDimSize(0);
    auto rowOf = [&](Value buffer) {
      auto type = cast<MemRefType>(buffer.getType());
      auto rowType =
          cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
              {length}, type, source->row.getMixedOffsets(),
              source->row.getMixedSizes(), source->row.getMixedStrides()));
      return b.create<memref::SubViewOp>(
          loc, rowType, buffer, source->row.getMixedOffsets(),
          source->row.getMixedSizes(), source->row.getMixedStrides());
    };
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    IRMapping mapping;
    for (OpOperand *operand : generic.getDpsInputOperands()) {
      Value input = operand->get();
      Value value;
      if (rows.count(input)) {
        value = source->vector;
      } else {
        Type element = getElementTypeOrSelf(input.getType());
        value = b.create<vector::TransferReadOp>(
            loc, VectorType::get({length}, element), rowOf(input),
            ValueRange{zero}, ArrayRef<bool>{true});
      }
      mapping.map(generic.getMatchingBlockArgument(operand), value);
    }
    // Values from outside the body (constants) are broadcast to rows.
    for (Operation &op : body.without_terminator()) {
      for (Value operand : op.getOperands())
        if (operand.getParentBlock() != &body && !mapping.contains(operand)) {
          moveDefinitionBefore(operand, loop);
          mapping.map(
              operand,
              b.create<vector::BroadcastOp>(
                  loc, VectorType::get({length}, operand.getType()), operand));
        }
      Operation *clone = b.clone(op, mapping);
      for (OpResult result : clone->getResults())
        result.setType(VectorType::get({length}, result.getType()));
    }
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    for (auto [init, value] :
         llvm::zip(generic.getDpsInits(), yield.getOperands())) {
      Value vector = mapping.lookupOrDefault(value);
      memref::SubViewOp row = rowOf(init);
      auto write = b.create<vector::TransferWriteOp>(
          loc, vector, row, ValueRange{zero}, ArrayRef<bool>{true});
      rows[init] = RowWrite{vector, row, write};
    }
    generic->erase();
    return true;
  }
};

} // namespace
