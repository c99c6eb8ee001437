//===- EmulateLaunches.cpp - The tfc-gpu-emulate-launches pass ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUEMULATELAUNCHES
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Whether `op` contains a barrier.
bool holdsBarrier(Operation *op) {
  return op->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// The emulation of one launch: its blocks' loop, in which the ops that
/// every thread of a block computes alike run once per block, and the
/// others in loops over the block's threads, one loop per part between
/// barriers.
class LaunchEmulation {
public:
  explicit LaunchEmulation(gpu::LaunchOp launch) : launch(launch) {}

  LogicalResult run() {
    if (!launch.getBody().hasOneBlock())
      return launch.emitOpError("with several blocks cannot be emulated");
    if (launch
            .walk([](Operation *op) {
              return isa<gpu::ShuffleOp, gpu::AllReduceOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      return unsupported();
    Location loc = launch.getLoc();
    OpBuilder b(launch);
    zero = b.create<arith::ConstantIndexOp>(loc, 0);
    one = b.create<arith::ConstantIndexOp>(loc, 1);
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    threads = launch.getBlockSizeOperandValues().x;
    auto blocks = b.create<scf::ParallelOp>(
        loc, ValueRange{zero}, ValueRange{grid.x}, ValueRange{one});
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    gpu::KernelDim3 threadIds = launch.getThreadIds();
    gpu::KernelDim3 gridSizes = launch.getGridSize();
    gpu::KernelDim3 blockSizes = launch.getBlockSize();
    mapping.map(blockIds.x, blocks.getInductionVars()[0]);
    for (Value id : {blockIds.y, blockIds.z, threadIds.y, threadIds.z})
      mapping.map(id, zero);
    mapping.map(gridSizes.x, grid.x);
    mapping.map(gridSizes.y, grid.y);
    mapping.map(gridSizes.z, grid.z);
    mapping.map(blockSizes.x, threads);
    mapping.map(blockSizes.y, launch.getBlockSizeOperandValues().y);
    mapping.map(blockSizes.z, launch.getBlockSizeOperandValues().z);
    uniform.insert(launch.getBody().getArguments().begin(),
                   launch.getBody().getArguments().end());
    uniform.erase(threadIds.x);
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    if (failed(emit(launch.getBody().front(), b)))
      return unsupported(blocks);
    // A value of a thread's part used in another part would need every
    // thread's copy.
    bool crosses = blocks
                       .walk([&](Operation *op) {
                         for (Value operand : op->getOperands())
                           if (launch->isAncestor(
                                   operand.getParentRegion()->getParentOp()))
                             return WalkResult::interrupt();
                         return WalkResult::advance();
                       })
                       .wasInterrupted();
    if (crosses)
      return unsupported(blocks);
    // Threads that run one after another need no fence between them.
    blocks.walk([](LLVM::CallIntrinsicOp call) {
      if (call.getIntrin() == kDeviceFenceIntrinsic)
        call.erase();
    });
    launch.erase();
    return success();
  }

private:
  LogicalResult unsupported(Operation *partial = nullptr) {
    if (partial)
      partial->erase();
    return launch.emitOpError("synchronises its threads and cannot be "
                              "emulated one thread at a time");
  }

  /// Whether every thread of a block computes `op` alike: an op free of
  /// memory effects and regions whose operands are block ids, sizes,
  /// values from outside the launch or results of such ops.
  bool isUniform(Operation *op) {
    return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
           llvm::all_of(op->getOperands(),
                        [&](Value v) { return isUniform(v); });
  }
  bool isUniform(Value value) {
    return uniform.contains(value) ||
           !launch->isAncestor(value.getParentRegion()->getParentOp());
  }

  /// Emits the operations of `block` at `b`: the uniform ones once, the
  /// others in a loop over the threads per part between barriers; a
  /// branch that holds barriers, on a uniform condition, is emitted as a
  /// branch with its own parts inside.
  LogicalResult emit(Block &block, OpBuilder &b) {
    SmallVector<Operation *> part;
    auto flush = [&]() {
      if (part.empty())
        return;
      auto loop =
          b.create<scf::ForOp>(part.front()->getLoc(), zero, threads, one);
      OpBuilder inner = OpBuilder::atBlockTerminator(loop.getBody());
      IRMapping threadMapping = mapping;
      threadMapping.map(launch.getThreadIds().x, loop.getInductionVar());
      for (Operation *op : part)
        inner.clone(*op, threadMapping);
      part.clear();
    };
    for (Operation &op : block.without_terminator()) {
      if (isa<gpu::BarrierOp>(op)) {
        flush();
        continue;
      }
      if (!holdsBarrier(&op)) {
        if (isUniform(&op)) {
          b.clone(op, mapping);
          uniform.insert(op.getResults().begin(), op.getResults().end());
        } else {
          part.push_back(&op);
        }
        continue;
      }
      auto branch = dyn_cast<scf::IfOp>(op);
      if (!branch || branch.getNumResults() != 0 ||
          !isUniform(branch.getCondition()))
        return failure();
      flush();
      auto emitted = b.create<scf::IfOp>(
          branch.getLoc(), mapping.lookupOrDefault(branch.getCondition()),
          /*withElseRegion=*/!branch.getElseRegion().empty());
      OpBuilder thenBuilder = OpBuilder::atBlockTerminator(emitted.thenBlock());
      if (failed(emit(*branch.thenBlock(), thenBuilder)))
        return failure();
      if (!branch.getElseRegion().empty()) {
        OpBuilder elseBuilder =
            OpBuilder::atBlockTerminator(emitted.elseBlock());
        if (failed(emit(*branch.elseBlock(), elseBuilder)))
          return failure();
      }
    }
    flush();
    return success();
  }

  gpu::LaunchOp launch;
  Value zero, one, threads;
  IRMapping mapping;
  llvm::DenseSet<Value> uniform;
};

struct EmulateLaunches
    : public mlir::tfc::impl::TfcGpuEmulateLaunchesBase<EmulateLaunches> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(LaunchEmulation(launch).run()))
        return signalPassFailure();
  }
};

} // namespace
