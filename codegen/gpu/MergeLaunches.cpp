//===- MergeLaunches.cpp - The tfc-gpu-merge-launches pass ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Merges consecutive `gpu.launch` ops of the same shape when every element
/// that one writes and the other touches belongs to one thread (Passes.td).
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <limits>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUMERGELAUNCHES
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// One `memref.load` or `memref.store` of a kernel.
struct Access {
  Value memref;
  ValueRange indices;
  Span span;
  bool write;
};

/// The memory accesses of a kernel's body; none when the body does
/// anything else with memory (then it is not merged).
std::optional<SmallVector<Access>> collectAccesses(gpu::LaunchOp launch) {
  SmallVector<Access> accesses;
  bool opaque = false;
  launch.getBody().walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({load.getMemRef(), load.getIndices(),
                          spanOf(load.getMemRef()), false});
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      // A store through a buffer the kernel makes other than its own
      // registers (an alloca): not followed.
      Span span = spanOf(store.getMemRef());
      Operation *def = span.root.getDefiningOp();
      if (def && launch->isProperAncestor(def) && !isa<memref::AllocaOp>(def)) {
        opaque = true;
        return WalkResult::interrupt();
      }
      accesses.push_back({store.getMemRef(), store.getIndices(), span, true});
    } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
               !isMemoryEffectFree(op)) {
      opaque = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (opaque)
    return std::nullopt;
  return accesses;
}

/// Whether `launch` runs a single thread.
bool isSingleThread(gpu::LaunchOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  return llvm::all_of(
      ValueRange{grid.x, grid.y, grid.z, block.x, block.y, block.z},
      [](Value v) { return isConstantIntValue(v, 1); });
}

/// Whether a host operation between two launches lets the first run
/// after it: it touches no memory, or it allocates a new buffer.
bool isInertOnHost(Operation *op) {
  return isMemoryEffectFree(op) || isa<memref::AllocOp>(op);
}

/// Whether two launch operands are the same size.
bool sameSize(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> ca = getConstantIntValue(a);
  std::optional<int64_t> cb = getConstantIntValue(b);
  return ca && cb && *ca == *cb;
}

/// Decides whether values of two kernels compute the same thing in the
/// same thread: the same host value, the same id or size argument, or the
/// same side-effect-free operation of such values.
class Equivalence {
public:
  Equivalence(gpu::LaunchOp first, gpu::LaunchOp second)
      : first(first), second(second) {}

  bool operator()(Value a, Value b) {
    if (a == b)
      return true;
    auto [it, inserted] = known.try_emplace({a, b}, false);
    if (!inserted)
      return it->second;
    bool same = compute(a, b);
    known[{a, b}] = same;
    return same;
  }

private:
  bool compute(Value a, Value b) {
    auto argA = dyn_cast<BlockArgument>(a);
    auto argB = dyn_cast<BlockArgument>(b);
    if (argA || argB) {
      return argA && argB && isLaunchArgument(argA) && isLaunchArgument(argB) &&
             argA.getArgNumber() == argB.getArgNumber();
    }
    Operation *opA = a.getDefiningOp();
    Operation *opB = b.getDefiningOp();
    if (cast<OpResult>(a).getResultNumber() !=
            cast<OpResult>(b).getResultNumber() ||
        opA->getNumRegions() != 0 || !isMemoryEffectFree(opA))
      return false;
    std::optional<int64_t> ca = getConstantIntValue(a);
    std::optional<int64_t> cb = getConstantIntValue(b);
    if (ca || cb)
      return ca && cb && *ca == *cb && a.getType() == b.getType();
    return OperationEquivalence::isEquivalentTo(
        opA, opB, [&](Value x, Value y) { return success((*this)(x, y)); },
        /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
  }

  /// Whether `arg` is an id or size argument of one of the two kernels.
  bool isLaunchArgument(BlockArgument arg) {
    Block *owner = arg.getOwner();
    return owner == &first.getBody().front() ||
           owner == &second.getBody().front();
  }

  gpu::LaunchOp first, second;
  llvm::DenseMap<std::pair<Value, Value>, bool> known;
};

/// Whether `value` is `blockIdx.x * blockDim.x + threadIdx.x` of `launch`,
/// with the block size as its constant or its argument.
bool isLinearThreadId(Value value, gpu::LaunchOp launch) {
  auto add = value.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  Value blockSize = launch.getBlockSizeOperandValues().x;
  for (auto [product, thread] : {std::pair(add.getLhs(), add.getRhs()),
                                 std::pair(add.getRhs(), add.getLhs())}) {
    auto mul = product.getDefiningOp<arith::MulIOp>();
    if (thread != launch.getThreadIds().x || !mul)
      continue;
    for (auto [block, size] : {std::pair(mul.getLhs(), mul.getRhs()),
                               std::pair(mul.getRhs(), mul.getLhs())})
      if (block == launch.getBlockIds().x &&
          (size == launch.getBlockSize().x || sameSize(size, blockSize)))
        return true;
  }
  return false;
}

/// Whether `value` can be recovered from `indices`: it is one of them, or
/// both its quotient and its remainder by one constant can.
bool recoverable(Value value, ValueRange indices, unsigned depth = 0) {
  if (llvm::is_contained(indices, value))
    return true;
  if (depth > 8)
    return false;
  for (Operation *user : value.getUsers()) {
    auto rem = dyn_cast<arith::RemUIOp>(user);
    if (!rem || rem.getLhs() != value || !getConstantIntValue(rem.getRhs()) ||
        !recoverable(rem.getResult(), indices, depth + 1))
      continue;
    for (Operation *other : value.getUsers()) {
      auto div = dyn_cast<arith::DivUIOp>(other);
      if (div && div.getLhs() == value &&
          sameSize(div.getRhs(), rem.getRhs()) &&
          recoverable(div.getResult(), indices, depth + 1))
        return true;
    }
  }
  return false;
}

/// Whether `indices` give each thread of `launch` its own element: the
/// linear thread id (`threadIdx.x` in a grid of one block) can be
/// recovered from them.
bool ownElement(ValueRange indices, gpu::LaunchOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  if (!isConstantIntValue(grid.y, 1) || !isConstantIntValue(grid.z, 1) ||
      !isConstantIntValue(block.y, 1) || !isConstantIntValue(block.z, 1))
    return false;
  // With one block, the thread's index in it (the block's id folds to 0).
  SmallVector<Value> ids;
  if (isConstantIntValue(grid.x, 1))
    ids.push_back(launch.getThreadIds().x);
  launch.getBody().walk([&](arith::AddIOp add) {
    if (isLinearThreadId(add.getResult(), launch))
      ids.push_back(add.getResult());
  });
  return llvm::any_of(ids, [&](Value id) { return recoverable(id, indices); });
}

/// Whether `first` followed by `second` (whatever runs between them aside)
/// can run as one kernel of the same shape, `first`'s body before
/// `second`'s in each thread.
bool canMerge(gpu::LaunchOp first, gpu::LaunchOp second) {
  for (gpu::LaunchOp launch : {first, second})
    if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
        launch.getDynamicSharedMemorySize() ||
        !launch.getWorkgroupAttributions().empty() ||
        !launch.getPrivateAttributions().empty() ||
        llvm::any_of(launch->getDiscardableAttrs(), [](NamedAttribute attr) {
          return attr.getName() !=
                 gpu::LaunchOp::getNumWorkgroupAttributionsAttrName();
        }))
      return false;
  gpu::KernelDim3 gridA = first.getGridSizeOperandValues();
  gpu::KernelDim3 gridB = second.getGridSizeOperandValues();
  gpu::KernelDim3 blockA = first.getBlockSizeOperandValues();
  gpu::KernelDim3 blockB = second.getBlockSizeOperandValues();
  if (!sameSize(gridA.x, gridB.x) || !sameSize(gridA.y, gridB.y) ||
      !sameSize(gridA.z, gridB.z) || !sameSize(blockA.x, blockB.x) ||
      !sameSize(blockA.y, blockB.y) || !sameSize(blockA.z, blockB.z))
    return false;
  auto accessesA = collectAccesses(first);
  auto accessesB = collectAccesses(second);
  if (!accessesA || !accessesB)
    return false;
  if (isSingleThread(first))
    return true;

  // Each element that one writes and the other touches: accessed by both
  // through one view at the one element of the thread.
  Equivalence equivalent(first, second);
  for (const Access &a : *accessesA) {
    for (const Access &b : *accessesB) {
      if ((!a.write && !b.write) || !a.span.overlaps(b.span))
        continue;
      // One view in both kernels: a host value.
      if (a.memref != b.memref || a.indices.size() != b.indices.size() ||
          !llvm::all_of(llvm::zip(a.indices, b.indices),
                        [&](auto pair) {
                          return equivalent(std::get<0>(pair),
                                            std::get<1>(pair));
                        }) ||
          !ownElement(a.indices, first))
        return false;
    }
  }
  return true;
}

/// Moves the body of `from` before `before` in the body of `to`, its ids
/// and sizes replaced by `to`'s, and erases `from`.
void moveBody(gpu::LaunchOp from, gpu::LaunchOp to, Operation *before) {
  Block &source = from.getBody().front();
  for (auto [a, b] :
       llvm::zip(source.getArguments(), to.getBody().front().getArguments()))
    a.replaceAllUsesWith(b);
  for (Operation &op : llvm::make_early_inc_range(source.without_terminator()))
    op.moveBefore(before);
  from.erase();
}

/// The parts of buffers a launch reads and writes; every buffer it uses
/// counts as written whole when it does more with memory than loads and
/// stores.
struct Footprint {
  SmallVector<std::pair<Span, bool>> spans; ///< and whether written

  explicit Footprint(gpu::LaunchOp launch) {
    if (auto accesses = collectAccesses(launch)) {
      for (const Access &access : *accesses)
        spans.push_back({access.span, access.write});
      return;
    }
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(launch.getBody(), used);
    for (Value value : used)
      if (isa<MemRefType>(value.getType()))
        spans.push_back({spanOf(value), true});
  }

  /// Whether the two launches can run in either order.
  bool commutesWith(const Footprint &other) const {
    for (auto &[a, writesA] : spans)
      for (auto &[b, writesB] : other.spans)
        if ((writesA || writesB) && a.overlaps(b))
          return false;
    return true;
  }
};

/// Whether `launch` can run anywhere between `from` and `to` (exclusive,
/// one of them `launch`): what runs between them is host work that touches
/// no memory or allocates, or launches that touch nothing `launch` writes
/// and write nothing it reads.
bool commutesBetween(gpu::LaunchOp launch, Operation *from, Operation *to) {
  std::optional<Footprint> footprint;
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode()) {
    if (isInertOnHost(op))
      continue;
    auto other = dyn_cast<gpu::LaunchOp>(op);
    if (!other)
      return false;
    if (!footprint)
      footprint.emplace(launch);
    if (!footprint->commutesWith(Footprint(other)))
      return false;
  }
  return true;
}

/// The host operations between `first` and `second` that compute what
/// `second` uses, in order, when all of them can move before `first`
/// (allocations and operations free of memory effects whose own operands
/// are defined before `first` or move too); none otherwise.
std::optional<SmallVector<Operation *>>
definitionsToHoist(gpu::LaunchOp first, gpu::LaunchOp second) {
  llvm::SetVector<Operation *> moving;
  std::function<bool(Value)> available = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != first->getBlock() ||
        def->isBeforeInBlock(first))
      return true;
    if (moving.contains(def))
      return true;
    if (!isInertOnHost(def) || def->getNumRegions() != 0)
      return false;
    for (Value operand : def->getOperands())
      if (!available(operand))
        return false;
    moving.insert(def);
    return true;
  };
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(second.getBody(), used);
  for (Value value : used)
    if (!available(value))
      return std::nullopt;
  SmallVector<Operation *> ordered(moving.begin(), moving.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// How many values the kernel that merges `first` and `second` takes from
/// the host as parameters (constants are copied into kernels instead).
int64_t hostValues(gpu::LaunchOp first, gpu::LaunchOp second) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(first.getBody(), used);
  getUsedValuesDefinedAbove(second.getBody(), used);
  return llvm::count_if(
      used, [](Value value) { return !matchPattern(value, m_Constant()); });
}

struct MergeLaunches
    : public mlir::tfc::impl::TfcGpuMergeLaunchesBase<MergeLaunches> {
  using TfcGpuMergeLaunchesBase::TfcGpuMergeLaunchesBase;

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      if (!block->getParentOp()->getParentOfType<gpu::LaunchOp>() &&
          !isa<gpu::LaunchOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks) {
      // The launches since the last host operation that touches memory,
      // the latest last: candidates to merge into the next one.
      SmallVector<gpu::LaunchOp> recent;
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        auto launch = dyn_cast<gpu::LaunchOp>(&op);
        if (!launch) {
          if (!isInertOnHost(&op))
            recent.clear();
          continue;
        }
        for (int64_t i = recent.size() - 1,
                     stop = std::max<int64_t>(0, recent.size() - window);
             i >= stop; --i) {
          if (!canMerge(recent[i], launch) ||
              hostValues(recent[i], launch) > maxArguments)
            continue;
          // The earlier launch runs later, in the later one's place...
          if (commutesBetween(recent[i], recent[i], launch)) {
            moveBody(recent[i], launch, &launch.getBody().front().front());
            recent.erase(recent.begin() + i);
            break;
          }
          // ...or the later one earlier, in the earlier one's place.
          if (commutesBetween(launch, recent[i], launch)) {
            if (auto definitions = definitionsToHoist(recent[i], launch)) {
              for (Operation *definition : *definitions)
                definition->moveBefore(recent[i]);
              moveBody(launch, recent[i],
                       recent[i].getBody().front().getTerminator());
              launch = nullptr;
              break;
            }
          }
        }
        if (launch)
          recent.push_back(launch);
      }
    }
  }
};

} // namespace
