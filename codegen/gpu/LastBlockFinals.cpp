//===- LastBlockFinals.cpp - The tfc-gpu-last-block-finals pass -----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A split reduction ends in a kernel of one thread that adds up the
/// partial sums the kernel before it wrote (the loss over the batch, the
/// gradient's norm and the clipping factor). That thread runs instead at
/// the end of the kernel before, in the last of its blocks to finish: each
/// block, once its threads have written their results and fenced them,
/// counts itself done on a counter in device memory, and the block whose
/// count is the last one, which then sees every block's writes, runs the
/// one-thread kernel's body on its first thread and sets the counter back
/// to zero for the next launch; one-thread kernels that follow it run
/// there too, after it. One launch instead of two; the sums are the same,
/// term for term.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPULASTBLOCKFINALS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The number of blocks of `launch`'s grid; none when an extent is not a
/// constant.
std::optional<int64_t> blocksOf(gpu::LaunchOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  int64_t blocks = 1;
  for (Value extent : {grid.x, grid.y, grid.z}) {
    std::optional<int64_t> constant = getConstantIntValue(extent);
    if (!constant)
      return std::nullopt;
    blocks *= *constant;
  }
  return blocks;
}

/// Whether `launch` runs one thread: a plain kernel of one block of one
/// thread, without memory of its own or synchronisation.
bool isOneThread(gpu::LaunchOp launch) {
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  if (!isPlainLaunch(launch) || blocksOf(launch) != 1 ||
      !llvm::all_of(ValueRange{block.x, block.y, block.z},
                    [](Value v) { return isConstantIntValue(v, 1); }) ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty())
    return false;
  return !launch.getBody()
              .walk([](Operation *op) {
                return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::AllReduceOp>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted();
}

/// The launch that runs just before `launch`, with only operations free of
/// memory effects or allocations between; none otherwise.
gpu::LaunchOp launchBefore(gpu::LaunchOp launch) {
  for (Operation *op = launch->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto before = dyn_cast<gpu::LaunchOp>(op))
      return before;
    if (!isTransparent(op))
      return {};
  }
  return {};
}

struct LastBlockFinals
    : public mlir::tfc::impl::TfcGpuLastBlockFinalsBase<LastBlockFinals> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Each kernel of partials with the one-thread kernels after it, in
    // order (a final may follow another).
    SmallVector<std::pair<gpu::LaunchOp, SmallVector<gpu::LaunchOp>>> plans;
    module.walk([&](gpu::LaunchOp final) {
      if (!isOneThread(final))
        return;
      gpu::LaunchOp before = launchBefore(final);
      if (!before)
        return;
      if (!plans.empty() && plans.back().second.back() == before) {
        plans.back().second.push_back(final);
        return;
      }
      if (isPlainLaunch(before) && blocksOf(before))
        plans.push_back({before, {final}});
    });
    SymbolTable symbols(module);
    for (auto &[partials, finals] : plans) {
      fuse(symbols, partials, finals);
      fusedLaunches += finals.size();
    }
  }

  /// Runs the bodies of `finals` in the last block of `partials` to
  /// finish, and erases them; `partials` moves to the last one's place,
  /// past the operations free of memory effects (views) between.
  void fuse(SymbolTable &symbols, gpu::LaunchOp partials,
            MutableArrayRef<gpu::LaunchOp> finals) {
    Location loc = finals.front().getLoc();
    MLIRContext *context = &getContext();
    // The counter of blocks done, zero when the program loads and set
    // back to zero by the last block.
    OpBuilder top(context);
    top.setInsertionPointToStart(getOperation().getBody());
    auto counterType = MemRefType::get({1}, IntegerType::get(context, 32));
    auto counter = top.create<memref::GlobalOp>(
        loc, "tfc_blocks_done", top.getStringAttr("private"), counterType,
        DenseElementsAttr::get(
            RankedTensorType::get({1}, counterType.getElementType()),
            top.getI32IntegerAttr(0).getValue()),
        /*constant=*/false, /*alignment=*/IntegerAttr());
    symbols.insert(counter);

    partials->moveBefore(finals.back());
    Block &body = partials.getBody().front();
    OpBuilder b = OpBuilder::atBlockTerminator(&body);
    Type i32 = b.getI32Type();
    auto deviceFence = [&]() {
      b.create<LLVM::CallIntrinsicOp>(loc, TypeRange{},
                                      b.getStringAttr(kDeviceFenceIntrinsic),
                                      ValueRange{});
    };
    // Every thread's writes are seen device-wide before its block counts
    // itself done.
    deviceFence();
    b.create<gpu::BarrierOp>(loc);
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    gpu::KernelDim3 threads = partials.getThreadIds();
    Value first;
    for (Value id : {threads.x, threads.y, threads.z}) {
      Value isZero =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, id, zero);
      first = first ? b.create<arith::AndIOp>(loc, first, isZero) : isZero;
    }
    auto ifFirst = b.create<scf::IfOp>(loc, first, /*withElseRegion=*/false);
    b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
    Value done =
        b.create<memref::GetGlobalOp>(loc, counterType, counter.getSymName());
    Value before = b.create<memref::AtomicRMWOp>(
        loc, arith::AtomicRMWKind::addi,
        b.create<arith::ConstantIntOp>(loc, 1, i32), done, ValueRange{zero});
    Value last = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, before,
        b.create<arith::ConstantIntOp>(loc, *blocksOf(partials) - 1, i32));
    auto ifLast = b.create<scf::IfOp>(loc, last, /*withElseRegion=*/false);
    b.setInsertionPoint(ifLast.thenBlock()->getTerminator());
    // The other blocks' writes are seen before the final reads them.
    deviceFence();
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    for (gpu::LaunchOp final : finals) {
      IRMapping mapping;
      for (gpu::KernelDim3 ids : {final.getBlockIds(), final.getThreadIds()})
        for (Value id : {ids.x, ids.y, ids.z})
          mapping.map(id, zero);
      for (gpu::KernelDim3 sizes : {final.getGridSize(), final.getBlockSize()})
        for (Value size : {sizes.x, sizes.y, sizes.z})
          mapping.map(size, one);
      for (Operation &op : final.getBody().front().without_terminator())
        b.clone(op, mapping);
    }
    b.create<memref::StoreOp>(loc, b.create<arith::ConstantIntOp>(loc, 0, i32),
                              done, ValueRange{zero});
    for (gpu::LaunchOp final : finals)
      final->erase();
  }
};

} // namespace
