//===- StaticBuffers.cpp - The tfc-static-buffers pass --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/ManifestText.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCSTATICBUFFERS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
/// One allocation of a function and the top-level operations between which
/// its buffer (or a view of it) is used.
struct Allocation {
  memref::AllocOp op;
  int64_t bytes;
  int64_t first, last;
  int64_t offset = 0;
};

constexpr int64_t kAlignment = 64;
constexpr int64_t kLiveToEnd = std::numeric_limits<int64_t>::max();

/// The position in `block` of the operation that holds `op`.
int64_t positionIn(Block &block, Operation *op,
                   const llvm::DenseMap<Operation *, int64_t> &positions) {
  Operation *top = block.findAncestorOpInBlock(*op);
  return top ? positions.lookup(top) : kLiveToEnd;
}

/// The last top-level position at which `value` or a memref derived from
/// it is used; kLiveToEnd when it is returned or escapes the block.
int64_t lastUse(Value value, Block &block,
                const llvm::DenseMap<Operation *, int64_t> &positions) {
  int64_t last = 0;
  SmallVector<Value> worklist = {value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        continue;
      if (user->hasTrait<OpTrait::ReturnLike>() &&
          user->getParentOp() == block.getParentOp())
        return kLiveToEnd;
      last = std::max(last, positionIn(block, user, positions));
      // A contraction's kernel applies its epilogue while it still reads
      // its operands: they live until the epilogue, whose output (a
      // rounded epilogue's own buffer) must not take their bytes.
      if (auto contraction = dyn_cast<linalg::LinalgOp>(user))
        if (linalg::GenericOp epilogue = findEpilogue(contraction))
          last = std::max(last, positionIn(block, epilogue, positions));
      // Views, casts, reshapes and calls may hand out aliases.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return last;
}

/// Places every allocation at an offset of one arena so that two buffers
/// share bytes only when their live ranges do not overlap (largest first,
/// each at the lowest offset free over its range). Returns the arena size.
int64_t assignOffsets(SmallVectorImpl<Allocation> &allocations) {
  SmallVector<Allocation *> order;
  for (Allocation &a : allocations)
    order.push_back(&a);
  llvm::stable_sort(
      order, [](Allocation *a, Allocation *b) { return a->bytes > b->bytes; });
  SmallVector<Allocation *> placed;
  int64_t size = 0;
  for (Allocation *a : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (Allocation *p : placed)
      if (!(p->last < a->first || a->last < p->first))
        busy.push_back({p->offset, p->offset + p->bytes});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + a->bytes <= begin)
        break;
      offset =
          std::max(offset, (end + kAlignment - 1) / kAlignment * kAlignment);
    }
    a->offset = offset;
    size = std::max(size, offset + a->bytes);
    placed.push_back(a);
  }
  return size;
}

/// The arena bytes that a call of `func` uses: its own and those of every
/// function it calls, each counted once.
int64_t reachableArenaBytes(func::FuncOp func,
                            const llvm::DenseMap<Operation *, int64_t> &arenas,
                            llvm::DenseSet<Operation *> &seen) {
  if (!func || !seen.insert(func).second)
    return 0;
  int64_t bytes = arenas.lookup(func);
  func.walk([&](func::CallOp call) {
    bytes +=
        reachableArenaBytes(SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                                call, call.getCalleeAttr()),
                            arenas, seen);
  });
  return bytes;
}

/// Rewrites the `activation_bytes` record of the manifest text (ExportAbi's
/// upper bound, the sum of every intermediate tensor) with the arena bytes
/// of `tfc_forward`, records those of the training entry points as
/// `train_activation_bytes`, and the bytes of all arenas together (the
/// entry points share theirs) as `arena_bytes`.
void recordArenaSizes(ModuleOp module,
                      const llvm::DenseMap<Operation *, int64_t> &arenas,
                      int64_t totalArenaBytes, int64_t threadHeapBytes) {
  if (!module.lookupSymbol("tfc_model_manifest"))
    return;
  // The working memory of entry points that run one after the other: the
  // largest of them.
  auto entryBytes = [&](ArrayRef<StringRef> names) {
    int64_t bytes = 0;
    for (StringRef name : names) {
      llvm::DenseSet<Operation *> seen;
      bytes = std::max(
          bytes, reachableArenaBytes(module.lookupSymbol<func::FuncOp>(name),
                                     arenas, seen));
    }
    return bytes;
  };
  setManifestRecord(module, "activation_bytes",
                    std::to_string(entryBytes({"tfc_forward"})));
  if (module.lookupSymbol("tfc_train_step"))
    setManifestRecord(
        module, "train_activation_bytes",
        std::to_string(entryBytes({"tfc_train_step", "tfc_optimizer_step"})));
  setManifestRecord(module, "arena_bytes", std::to_string(totalArenaBytes));
  // The heap buffers of one iteration of a parallel loop, which each thread
  // holds while it runs one, besides the arenas.
  if (threadHeapBytes > 0)
    setManifestRecord(module, "thread_heap_bytes",
                      std::to_string(threadHeapBytes));
}

/// The stack bytes one iteration of a parallel loop may take for its
/// private buffers (a worker thread of libomp has 4 MiB of stack).
constexpr int64_t kPrivateStackBytes = 1 << 20;

/// The bytes of a buffer of static shape (at least 1).
int64_t bufferBytes(MemRefType type) {
  int64_t bits =
      type.getNumElements() * type.getElementType().getIntOrFloatBitWidth();
  return std::max<int64_t>((bits + 7) / 8, 1);
}

/// The buffers of one function, placed in an arena of `bytes` bytes.
struct FunctionPlan {
  func::FuncOp func;
  SmallVector<Allocation> allocations;
  int64_t bytes = 0;
  /// The most that one iteration of its parallel loops takes on the heap.
  int64_t threadHeapBytes = 0;
};

/// True when no other function calls `func` and `func` calls none: an entry
/// point whose working memory is dead between its calls, which may share
/// bytes with the others (they never run at the same time).
bool isLeafEntryPoint(func::FuncOp func, ModuleOp module) {
  if (!SymbolTable::symbolKnownUseEmpty(func, module))
    return false;
  return !func.walk([](func::CallOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

struct TfcStaticBuffersPass
    : public tfc::impl::TfcStaticBuffersBase<TfcStaticBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder builder(&getContext());
    unsigned counter = 0;
    int64_t threadHeapBytes = 0;
    llvm::DenseMap<Operation *, int64_t> arenas;
    SmallVector<FunctionPlan> shared;
    int64_t totalBytes = 0;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FunctionPlan plan{func, {}, 0};
      if (failed(planBuffers(func, plan)))
        return signalPassFailure();
      arenas[func] = plan.bytes;
      threadHeapBytes = std::max(threadHeapBytes, plan.threadHeapBytes);
      if (plan.allocations.empty())
        continue;
      if (isLeafEntryPoint(func, module)) {
        shared.push_back(std::move(plan));
        continue;
      }
      std::string name =
          createArena(module, builder, func.getLoc(), plan.bytes, counter);
      placeBuffers(plan, builder, name, plan.bytes);
      totalBytes += plan.bytes;
    }
    // One arena for the entry points, as large as the largest of them.
    int64_t sharedBytes = 0;
    for (FunctionPlan &plan : shared)
      sharedBytes = std::max(sharedBytes, plan.bytes);
    if (!shared.empty()) {
      std::string name = createArena(
          module, builder, shared.front().func.getLoc(), sharedBytes, counter);
      for (FunctionPlan &plan : shared)
        placeBuffers(plan, builder, name, sharedBytes);
      totalBytes += sharedBytes;
    }
    recordArenaSizes(module, arenas, totalBytes, threadHeapBytes);
  }

  /// Makes the allocations in the body of each `scf.forall` of `func`
  /// private to an iteration: on the stack of the thread that runs it
  /// (`memref.alloca`; the forall is an allocation scope), smallest first,
  /// while they take at most kPrivateStackBytes together; the larger rest
  /// on the heap, freed at the end of the iteration. Returns the most heap
  /// bytes that one iteration takes.
  int64_t privatizeLoopBuffers(func::FuncOp func) {
    int64_t threadHeapBytes = 0;
    func.walk([&](scf::ForallOp loop) {
      Block &body = *loop.getBody();
      SmallVector<memref::AllocOp> allocs;
      for (auto alloc : body.getOps<memref::AllocOp>())
        if (alloc.getType().hasStaticShape())
          allocs.push_back(alloc);
      llvm::stable_sort(allocs, [](memref::AllocOp a, memref::AllocOp b) {
        return bufferBytes(a.getType()) < bufferBytes(b.getType());
      });
      int64_t stackBytes = 0, heapBytes = 0;
      for (memref::AllocOp alloc : allocs) {
        stackBytes += bufferBytes(alloc.getType());
        if (stackBytes <= kPrivateStackBytes) {
          OpBuilder builder(alloc);
          auto alloca = builder.create<memref::AllocaOp>(
              alloc.getLoc(), alloc.getType(), alloc.getAlignmentAttr());
          alloc.getResult().replaceAllUsesWith(alloca);
          alloc.erase();
          continue;
        }
        OpBuilder atEnd(loop.getTerminator());
        atEnd.create<memref::DeallocOp>(alloc.getLoc(), alloc);
        heapBytes += bufferBytes(alloc.getType());
      }
      threadHeapBytes = std::max(threadHeapBytes, heapBytes);
    });
    return threadHeapBytes;
  }

  /// Collects the allocations of `func` and their offsets in its arena.
  LogicalResult planBuffers(func::FuncOp func, FunctionPlan &plan) {
    plan.threadHeapBytes = privatizeLoopBuffers(func);
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, int64_t> positions;
    int64_t position = 0;
    for (Operation &op : block)
      positions[&op] = position++;

    WalkResult walk = func.walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
        alloc.emitOpError() << "has a dynamic shape or a non-identity layout; "
                               "tfc needs static buffers";
        return WalkResult::interrupt();
      }
      if (isa<scf::ForallOp>(alloc->getParentOp()))
        return WalkResult::advance();
      if (alloc->getParentOfType<LoopLikeOpInterface>()) {
        alloc.emitOpError() << "is inside a loop and cannot become a static "
                               "buffer";
        return WalkResult::interrupt();
      }
      plan.allocations.push_back({alloc, bufferBytes(type),
                                  positionIn(block, alloc, positions),
                                  lastUse(alloc, block, positions)});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (!plan.allocations.empty())
      plan.bytes = assignOffsets(plan.allocations);
    return success();
  }

  /// A new zero-initialised arena global of `bytes` bytes; returns its name.
  std::string createArena(ModuleOp module, OpBuilder &builder, Location loc,
                          int64_t bytes, unsigned &counter) {
    auto arenaType = MemRefType::get({bytes}, builder.getI8Type());
    std::string name = kArenaPrefix.str() + std::to_string(counter++);
    builder.setInsertionPointToStart(module.getBody());
    builder.create<memref::GlobalOp>(
        loc, name, builder.getStringAttr("private"), arenaType,
        builder.getUnitAttr(), /*constant=*/false,
        builder.getI64IntegerAttr(kAlignment));
    return name;
  }

  /// Replaces the allocations of `plan` by views of the arena `name`.
  void placeBuffers(FunctionPlan &plan, OpBuilder &builder, StringRef name,
                    int64_t arenaBytes) {
    Block &block = plan.func.getBody().front();
    auto arenaType = MemRefType::get({arenaBytes}, builder.getI8Type());
    builder.setInsertionPointToStart(&block);
    Value arena = builder.create<memref::GetGlobalOp>(plan.func.getLoc(),
                                                      arenaType, name);
    for (Allocation &a : plan.allocations) {
      builder.setInsertionPoint(a.op);
      Value offset =
          builder.create<arith::ConstantIndexOp>(a.op.getLoc(), a.offset);
      Value view = builder.create<memref::ViewOp>(a.op.getLoc(), a.op.getType(),
                                                  arena, offset, ValueRange{});
      for (Operation *user : llvm::make_early_inc_range(a.op->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      a.op.getResult().replaceAllUsesWith(view);
      a.op.erase();
    }
  }
};
} // namespace
