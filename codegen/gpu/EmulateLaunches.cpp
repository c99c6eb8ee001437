//===- EmulateLaunches.cpp - The tfc-gpu-emulate-launches pass ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUEMULATELAUNCHES
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

struct EmulateLaunches
    : public mlir::tfc::impl::TfcGpuEmulateLaunchesBase<EmulateLaunches> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch)))
        return signalPassFailure();
  }

  LogicalResult emulate(gpu::LaunchOp launch) {
    Block &body = launch.getBody().front();
    if (!launch.getBody().hasOneBlock())
      return launch.emitOpError("with several blocks cannot be emulated");
    WalkResult unsupported = launch.walk([](Operation *op) {
      if (isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::AllReduceOp>(op))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return launch.emitOpError("synchronises its threads and cannot be "
                                "emulated one thread at a time");
    Location loc = launch.getLoc();
    OpBuilder b(launch);
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    auto blocks = b.create<scf::ParallelOp>(
        loc, ValueRange{zero}, ValueRange{grid.x}, ValueRange{one});
    b.setInsertionPointToStart(blocks.getBody());
    auto threads = b.create<scf::ForOp>(loc, zero, block.x, one);
    b.setInsertionPointToStart(threads.getBody());

    IRMapping mapping;
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    gpu::KernelDim3 threadIds = launch.getThreadIds();
    gpu::KernelDim3 gridSizes = launch.getGridSize();
    gpu::KernelDim3 blockSizes = launch.getBlockSize();
    mapping.map(blockIds.x, blocks.getInductionVars()[0]);
    mapping.map(threadIds.x, threads.getInductionVar());
    for (Value id : {blockIds.y, blockIds.z, threadIds.y, threadIds.z})
      mapping.map(id, zero);
    mapping.map(gridSizes.x, grid.x);
    mapping.map(gridSizes.y, grid.y);
    mapping.map(gridSizes.z, grid.z);
    mapping.map(blockSizes.x, block.x);
    mapping.map(blockSizes.y, block.y);
    mapping.map(blockSizes.z, block.z);
    for (Operation &op : body.without_terminator())
      b.clone(op, mapping);
    launch.erase();
    return success();
  }
};

} // namespace
