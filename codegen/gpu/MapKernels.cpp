//===- MapKernels.cpp - The tfc-gpu-map-kernels pass ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUMAPKERNELS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Whether `type` can be passed to a kernel as a bare pointer: a static
/// shape, static strides and a static offset.
bool isStaticMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(memref, strides, offset)))
    return false;
  return !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// Operations that only compute addresses or hold buffers; they stay on
/// the host (or are moved into kernels by sinking).
bool isBufferBookkeeping(Operation *op) {
  return isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
             memref::GetGlobalOp, ViewLikeOpInterface>(op);
}

/// Whether the region of `op` holds an scf.parallel, which maps to
/// threads, or a kernel already mapped; such a loop stays on the host.
bool holdsParallelLoop(Operation *op) {
  WalkResult found = op->walk([&](Operation *inner) {
    return isa<scf::ParallelOp, gpu::LaunchOp>(inner) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// An operation worth moving into the kernels that use its result: scalar
/// arithmetic, reads of scalars, views with layouts that a bare pointer
/// cannot carry, and constant globals.
bool isSinkable(Operation *op) {
  if (isa<memref::LoadOp>(op))
    return true;
  if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
    auto module = op->getParentOfType<ModuleOp>();
    auto def = module.lookupSymbol<memref::GlobalOp>(global.getName());
    return def && def.getConstant();
  }
  if (isa<ViewLikeOpInterface>(op))
    return !isStaticMemRef(op->getResult(0).getType());
  if (op->getNumRegions() != 0 || !isPure(op))
    return false;
  return llvm::all_of(op->getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); });
}

struct MapKernels : public mlir::tfc::impl::TfcGpuMapKernelsBase<MapKernels> {
  using TfcGpuMapKernelsBase::TfcGpuMapKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      recordArguments(func);
      if (failed(mapBlock(func.getBody().front())) ||
          failed(sinkIntoKernels(func)))
        return signalPassFailure();
    }
  }

  /// Records the byte size of every argument and the arguments written.
  void recordArguments(func::FuncOp func) {
    Builder b(func.getContext());
    SmallVector<int64_t> bytes;
    for (Type type : func.getArgumentTypes()) {
      auto memref = dyn_cast<MemRefType>(type);
      bytes.push_back(memref && memref.hasStaticShape()
                          ? memref.getNumElements() *
                                memref.getElementTypeBitWidth() / 8
                          : 0);
    }
    llvm::SmallSetVector<int64_t, 8> written;
    func.walk([&](Operation *op) {
      Value target;
      if (auto store = dyn_cast<memref::StoreOp>(op))
        target = store.getMemRef();
      else if (auto copy = dyn_cast<memref::CopyOp>(op))
        target = copy.getTarget();
      else
        return;
      if (auto arg = dyn_cast<BlockArgument>(rootBuffer(target)))
        if (arg.getOwner()->getParentOp() == func)
          written.insert(arg.getArgNumber());
    });
    SmallVector<int64_t> writtenList(written.begin(), written.end());
    llvm::sort(writtenList);
    func->setAttr("tfc.gpu.arg_bytes", b.getDenseI64ArrayAttr(bytes));
    func->setAttr("tfc.gpu.written", b.getDenseI64ArrayAttr(writtenList));
  }

  /// Maps the operations of a host block: parallel loops to kernels of
  /// one thread per iteration, loops holding parallel loops recursively,
  /// other memory work to kernels of one thread.
  LogicalResult mapBlock(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (op.hasTrait<OpTrait::IsTerminator>() || isBufferBookkeeping(&op) ||
          isa<memref::LoadOp, gpu::LaunchOp>(op))
        continue;
      if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
        if (failed(launchParallel(parallel)))
          return failure();
        continue;
      }
      if (isa<scf::ForOp, scf::IfOp>(op) && holdsParallelLoop(&op)) {
        for (Region &region : op.getRegions())
          for (Block &inner : region)
            if (failed(mapBlock(inner)))
              return failure();
        continue;
      }
      if (isMemoryEffectFree(&op))
        continue;
      if (failed(launchSerial(&op)))
        return failure();
    }
    return success();
  }

  /// A launch with the given grid and block sizes (x only) and an empty
  /// body; the builder is left at the start of the body.
  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value grid,
                             Value threads) {
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    auto launch =
        b.create<gpu::LaunchOp>(loc, grid, one, one, threads, one, one);
    b.setInsertionPointToEnd(&launch.getBody().front());
    b.create<gpu::TerminatorOp>(loc);
    b.setInsertionPointToStart(&launch.getBody().front());
    return launch;
  }

  /// One thread per iteration of `parallel`, the iterations linearised
  /// row-major (the innermost dimension fastest).
  LogicalResult launchParallel(scf::ParallelOp parallel) {
    if (parallel.getNumResults() != 0)
      return parallel.emitOpError("with reductions cannot be mapped to a "
                                  "GPU kernel");
    Location loc = parallel.getLoc();
    OpBuilder b(parallel);
    SmallVector<Value> trips;
    Value total = b.create<arith::ConstantIndexOp>(loc, 1);
    for (auto [lb, ub, step] :
         llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                   parallel.getStep())) {
      Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
      Value trip = b.createOrFold<arith::CeilDivUIOp>(loc, span, step);
      trips.push_back(trip);
      total = b.createOrFold<arith::MulIOp>(loc, total, trip);
    }
    // A full block even for fewer iterations (the guard idles the rest),
    // so that a small kernel groups with its neighbours of the same block
    // (tfc-gpu-group-launches).
    std::optional<int64_t> staticTotal = getConstantIntValue(total);
    if (staticTotal && *staticTotal == 0) {
      parallel.erase();
      return success();
    }
    Value threads = b.create<arith::ConstantIndexOp>(loc, blockSize);
    Value grid = b.createOrFold<arith::CeilDivUIOp>(loc, total, threads);
    gpu::LaunchOp launch = createLaunch(b, loc, grid, threads);

    Value id = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, launch.getBlockIds().x, threads),
        launch.getThreadIds().x);
    Value inRange =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, id, total);
    auto guard = b.create<scf::IfOp>(loc, inRange, /*withElse=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    IRMapping mapping;
    Value rest = id;
    for (int64_t d = parallel.getNumLoops() - 1; d >= 0; --d) {
      Value index =
          d == 0 ? rest : b.create<arith::RemUIOp>(loc, rest, trips[d]);
      if (d != 0)
        rest = b.create<arith::DivUIOp>(loc, rest, trips[d]);
      Value iv = b.create<arith::AddIOp>(
          loc, parallel.getLowerBound()[d],
          b.create<arith::MulIOp>(loc, index, parallel.getStep()[d]));
      mapping.map(parallel.getInductionVars()[d], iv);
    }
    for (Operation &op : parallel.getBody()->without_terminator())
      b.clone(op, mapping);
    parallel.erase();
    return success();
  }

  /// `op` run by one thread. A loop that threads a buffer through its
  /// iterations (`iter_args`) returns that same buffer, so its results are
  /// replaced by its initial values.
  LogicalResult launchSerial(Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (auto [result, init] :
           llvm::zip(loop.getResults(), loop.getInitArgs())) {
        if (!isa<MemRefType>(result.getType()))
          return op->emitOpError("with a non-buffer result cannot run in a "
                                 "GPU kernel");
        result.replaceAllUsesWith(init);
      }
    } else if (op->getNumResults() != 0) {
      return op->emitOpError("with results cannot run in a GPU kernel");
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    gpu::LaunchOp launch = createLaunch(b, loc, one, one);
    op->moveBefore(&launch.getBody().front().front());
    return success();
  }

  /// Clones into `launch` the sinkable operations that compute the values
  /// it uses from the host, with the sinkable operations they depend on;
  /// what they use besides becomes an argument of the kernel.
  void sinkInto(gpu::LaunchOp launch) {
    Region &body = launch.getBody();
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(body, captured);
    llvm::SetVector<Operation *> sunk;
    std::function<void(Operation *)> collect = [&](Operation *op) {
      if (sunk.contains(op))
        return;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (isSinkable(def))
            collect(def);
      sunk.insert(op);
    };
    for (Value value : captured)
      if (Operation *def = value.getDefiningOp())
        if (isSinkable(def))
          collect(def);
    OpBuilder b(&body.front(), body.front().begin());
    IRMapping mapping;
    for (Operation *op : sunk) {
      Operation *clone = b.clone(*op, mapping);
      for (auto [from, to] : llvm::zip(op->getResults(), clone->getResults()))
        from.replaceUsesWithIf(to, [&](OpOperand &use) {
          return body.isAncestor(use.getOwner()->getParentRegion());
        });
    }
  }

  /// Moves scalar reads and arithmetic, dynamic views and constant globals
  /// into the kernels that use them, then checks that the host reads no
  /// device memory and passes only static buffers.
  LogicalResult sinkIntoKernels(func::FuncOp func) {
    SmallVector<gpu::LaunchOp> launches;
    func.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      sinkInto(launch);
    // Reads and views left without users on the host.
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>() || op->getNumResults() == 0)
        return;
      if (isSinkable(op))
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead))
      if (op->use_empty())
        op->erase();

    WalkResult result = func.walk([&](Operation *op) {
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (!op->getParentOfType<gpu::LaunchOp>()) {
          op->emitOpError("reads a buffer on the host, which cannot read "
                          "device memory");
          return WalkResult::interrupt();
        }
      }
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch)
        return WalkResult::advance();
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(launch.getBody(), captured);
      for (Value value : captured) {
        if (isa<MemRefType>(value.getType()) &&
            !isStaticMemRef(value.getType())) {
          launch.emitOpError("uses a buffer of dynamic layout ")
              << value.getType() << " defined on the host";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::skip();
    });
    return failure(result.wasInterrupted());
  }
};

} // namespace
