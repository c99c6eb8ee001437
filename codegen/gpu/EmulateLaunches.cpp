//===- EmulateLaunches.cpp - The tfc-gpu-emulate-launches pass ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs each `gpu.launch` on the host: a loop over its blocks, one after
/// another, whose body runs the block's threads one after another, part by
/// part. A part is a
/// run of the body's operations between two points where the threads meet
/// (a barrier, or an instruction that a warp or a warpgroup executes
/// together: EmulatedInstructions.h); each part is a loop over the threads,
/// and every thread finishes it before the next part begins.
///
/// What one thread computes in a part and uses in a later one is kept in
/// a slot: a stack array of one element per thread (of n per thread for a
/// struct of n values), freed at the end of the block. Values free of memory
/// effects (index arithmetic, views, casts) are computed again where they are
/// used instead. A loop or a branch that holds a meeting point runs once per
/// block, its bounds or condition being the same for every thread, with its
/// parts inside; the values it carries from one iteration to the next are
/// slots, unless they are the same for every thread. What every thread of a
/// block computes alike (from block ids, sizes and constants) runs once per
/// block.
///
/// A meeting instruction runs in two loops over the threads: the first
/// puts every thread's operands in slots, the second computes every
/// thread's results from the operands of the threads of its warp. Shared
/// memory (the launch's workgroup buffers, its dynamic shared memory) is
/// a stack buffer of each block. `cp.async` copies complete at once, so
/// their groups and waits, the fences of the warpgroup mma and the
/// device's fences are dropped.
///
/// So an emulated kernel checks what each thread computes and reads, the
/// instructions' layouts and the barriers' places; it cannot check timing:
/// a race that a missing barrier or wait would cause on a GPU, or the
/// order in which a GPU's threads add to the same element.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/EmulatedInstructions.h"
#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUEMULATELAUNCHES
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Whether the threads meet at `op`: a barrier or a collective instruction.
bool isMeetingPoint(Operation *op) {
  return isa<gpu::BarrierOp>(op) || isEmulatedCollective(op);
}

/// Whether `op` holds a meeting point in its regions.
bool holdsMeetingPoint(Operation *op) {
  return op
      ->walk([&](Operation *inner) {
        return inner != op && isMeetingPoint(inner) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `value` is the token of `cp.async` copies or their group, which
/// an emulation drops: the copies complete at once.
bool isAsyncToken(Value value) {
  return isa<nvgpu::DeviceAsyncTokenType>(value.getType());
}

/// Whether `op` can be computed again wherever its value is used.
bool isRecomputable(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         !isEmulatedCollective(op);
}

/// A `memref` type without the workgroup address space.
Type withoutWorkgroupSpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  auto space =
      memref ? dyn_cast_or_null<gpu::AddressSpaceAttr>(memref.getMemorySpace())
             : nullptr;
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout());
}

/// Rebuilds `loop` without the copies' tokens it carries: uses of a token
/// argument or result (yields that go next) take its initial token.
void dropCarriedTokens(scf::ForOp loop) {
  SmallVector<unsigned> kept;
  for (auto [i, argument] : llvm::enumerate(loop.getRegionIterArgs()))
    if (!isAsyncToken(argument))
      kept.push_back(i);
  if (kept.size() == loop.getNumRegionIterArgs())
    return;
  OpBuilder b(loop);
  SmallVector<Value> inits;
  for (unsigned i : kept)
    inits.push_back(loop.getInitArgs()[i]);
  auto rebuilt =
      b.create<scf::ForOp>(loop.getLoc(), loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), inits);
  Block *body = rebuilt.getBody();
  if (!body->empty())
    body->getTerminator()->erase();
  for (auto [i, argument] : llvm::enumerate(loop.getRegionIterArgs()))
    if (isAsyncToken(argument)) {
      argument.replaceAllUsesWith(loop.getInitArgs()[i]);
      loop.getResult(i).replaceAllUsesWith(loop.getInitArgs()[i]);
    }
  loop.getInductionVar().replaceAllUsesWith(rebuilt.getInductionVar());
  for (auto [j, i] : llvm::enumerate(kept)) {
    loop.getRegionIterArgs()[i].replaceAllUsesWith(
        rebuilt.getRegionIterArgs()[j]);
    loop.getResult(i).replaceAllUsesWith(rebuilt.getResult(j));
  }
  body->getOperations().splice(body->end(), loop.getBody()->getOperations());
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  SmallVector<Value> yielded;
  for (unsigned i : kept)
    yielded.push_back(yield.getOperand(i));
  yield->setOperands(yielded);
  loop.erase();
}

/// Rebuilds `branch` without the copies' tokens it yields: their uses
/// (yields that go next) take `token`, a group made before the branch.
void dropYieldedTokens(scf::IfOp branch) {
  SmallVector<unsigned> kept;
  SmallVector<Type> types;
  for (auto [i, result] : llvm::enumerate(branch.getResults()))
    if (!isAsyncToken(result)) {
      kept.push_back(i);
      types.push_back(result.getType());
    }
  if (kept.size() == branch.getNumResults())
    return;
  OpBuilder b(branch);
  Value token = b.create<nvgpu::DeviceAsyncCreateGroupOp>(
      branch.getLoc(), nvgpu::DeviceAsyncTokenType::get(b.getContext()),
      ValueRange{});
  auto rebuilt =
      b.create<scf::IfOp>(branch.getLoc(), types, branch.getCondition(),
                          /*addThenBlock=*/false,
                          /*addElseBlock=*/false);
  rebuilt.getThenRegion().takeBody(branch.getThenRegion());
  rebuilt.getElseRegion().takeBody(branch.getElseRegion());
  for (Region *region : {&rebuilt.getThenRegion(), &rebuilt.getElseRegion()})
    if (!region->empty()) {
      Operation *yield = region->front().getTerminator();
      SmallVector<Value> yielded;
      for (unsigned i : kept)
        yielded.push_back(yield->getOperand(i));
      yield->setOperands(yielded);
    }
  for (auto [i, result] : llvm::enumerate(branch.getResults()))
    if (isAsyncToken(result))
      result.replaceAllUsesWith(token);
  for (auto [j, i] : llvm::enumerate(kept))
    branch.getResult(i).replaceAllUsesWith(rebuilt.getResult(j));
  branch.erase();
}

/// Replaces, in `launch`'s body, the operations that one thread runs on
/// its own on a GPU but that the host cannot: a `cp.async` copy becomes
/// loads and stores (zeros past its source elements), the `exp2` and
/// `log2` of NVVM become math's, global pointers generic ones; the copies'
/// groups and waits and the fences go. Fails on any other NVVM or NVGPU
/// operation, or intrinsic, that no collective instruction takes.
LogicalResult lowerThreadOperations(gpu::LaunchOp launch) {
  SmallVector<Operation *> erased, copies;
  WalkResult walk = launch.getBody().walk([&](Operation *op) {
    if (isEmulatedCollective(op))
      return WalkResult::advance();
    if (isa<nvgpu::DeviceAsyncWaitOp, NVVM::WgmmaFenceAlignedOp,
            NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp,
            NVVM::FenceProxyOp>(op)) {
      erased.push_back(op);
      return WalkResult::advance();
    }
    // A group's token may be carried by loops: the group goes once none
    // does (dropCarriedTokens).
    if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
      op->setOperands({});
      return WalkResult::advance();
    }
    if (isa<nvgpu::DeviceAsyncCopyOp>(op)) {
      copies.push_back(op);
      return WalkResult::advance();
    }
    if (auto pointer = dyn_cast<LLVM::IntToPtrOp>(op)) {
      pointer.getResult().setType(LLVM::LLVMPointerType::get(op->getContext()));
      return WalkResult::advance();
    }
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      StringRef name = call.getIntrin();
      if (name == kDeviceFenceIntrinsic) {
        erased.push_back(op);
        return WalkResult::advance();
      }
      OpBuilder b(op);
      Value replacement;
      if (name == "llvm.nvvm.ex2.approx.ftz.f")
        replacement = b.create<math::Exp2Op>(op->getLoc(), op->getOperand(0));
      else if (name == "llvm.nvvm.lg2.approx.ftz.f")
        replacement = b.create<math::Log2Op>(op->getLoc(), op->getOperand(0));
      if (!replacement) {
        op->emitOpError("cannot be emulated");
        return WalkResult::interrupt();
      }
      op->getResult(0).replaceAllUsesWith(replacement);
      erased.push_back(op);
      return WalkResult::advance();
    }
    if (isa<NVVM::NVVMDialect, nvgpu::NVGPUDialect>(op->getDialect())) {
      op->emitOpError("cannot be emulated");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (Operation *op : erased)
    op->dropAllUses();
  for (Operation *op : llvm::reverse(erased))
    op->erase();
  for (Operation *op : copies) {
    auto copy = cast<nvgpu::DeviceAsyncCopyOp>(op);
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    Value sourceElements = copy.getSrcElements();
    Type element = copy.getDst().getType().getElementType();
    Value zero = b.create<arith::ConstantOp>(
        loc, cast<TypedAttr>(b.getZeroAttr(element)));
    for (int64_t e = 0, n = copy.getDstElements().getZExtValue(); e < n; ++e) {
      Value offset = b.create<arith::ConstantIndexOp>(loc, e);
      SmallVector<Value> from(copy.getSrcIndices()), to(copy.getDstIndices());
      from.back() = b.create<arith::AddIOp>(loc, from.back(), offset);
      to.back() = b.create<arith::AddIOp>(loc, to.back(), offset);
      Value value;
      if (!sourceElements) {
        value = b.create<memref::LoadOp>(loc, copy.getSrc(), from);
      } else {
        Value inside = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                               offset, sourceElements);
        auto branch = b.create<scf::IfOp>(
            loc, inside,
            [&](OpBuilder &then, Location) {
              then.create<scf::YieldOp>(loc,
                                        ValueRange{then.create<memref::LoadOp>(
                                            loc, copy.getSrc(), from)});
            },
            [&](OpBuilder &other, Location) {
              other.create<scf::YieldOp>(loc, zero);
            });
        value = branch.getResult(0);
      }
      b.create<memref::StoreOp>(loc, value, copy.getDst(), to);
    }
    if (!copy.getAsyncToken().use_empty())
      return copy.emitOpError("has a token used after its group and wait");
    copy.erase();
  }
  // One view of the dynamic shared memory, at the body's start (a grouped
  // launch has one in each member's branch).
  SmallVector<gpu::DynamicSharedMemoryOp> views;
  launch.getBody().walk(
      [&](gpu::DynamicSharedMemoryOp view) { views.push_back(view); });
  if (!views.empty()) {
    Block &body = launch.getBody().front();
    auto first =
        OpBuilder::atBlockBegin(&body).create<gpu::DynamicSharedMemoryOp>(
            views.front().getLoc(), views.front().getType());
    for (gpu::DynamicSharedMemoryOp view : views) {
      if (view.getType() != first.getType())
        return view.emitOpError("differs from another view of the launch's "
                                "dynamic shared memory");
      view.replaceAllUsesWith(first.getResult());
      view.erase();
    }
  }
  // The copies' groups, once no loop carries them.
  SmallVector<Operation *> carriers;
  launch.getBody().walk([&](Operation *op) {
    if (isa<scf::ForOp, scf::IfOp>(op))
      carriers.push_back(op);
  });
  for (Operation *op : carriers) {
    if (auto loop = dyn_cast<scf::ForOp>(op))
      dropCarriedTokens(loop);
    else
      dropYieldedTokens(cast<scf::IfOp>(op));
  }
  SmallVector<Operation *> groups;
  launch.getBody().walk(
      [&](nvgpu::DeviceAsyncCreateGroupOp group) { groups.push_back(group); });
  for (Operation *group : llvm::reverse(groups)) {
    if (!group->use_empty())
      return group->emitOpError("has a token used after its copies");
    group->erase();
  }
  return success();
}

/// The emulation of one launch: its blocks' loop, in which the operations
/// that every thread of a block computes alike run once per block, and the
/// others in loops over the block's threads, one loop per part.
class LaunchEmulation {
public:
  explicit LaunchEmulation(gpu::LaunchOp launch) : launch(launch) {}

  LogicalResult run();

private:
  LogicalResult unsupported(StringRef why) {
    return launch.emitOpError("cannot be emulated: ") << why;
  }

  /// Whether every thread of a block computes `value` alike: a block id
  /// or size, a value from outside the launch, or the result of an
  /// operation free of memory effects and regions on such values.
  bool isUniform(Value value) {
    if (uniform.contains(value) ||
        !launch->isAncestor(value.getParentRegion()->getParentOp()))
      return true;
    Operation *def = value.getDefiningOp();
    return def && isRecomputable(def) &&
           !isa<gpu::DynamicSharedMemoryOp>(def) &&
           llvm::all_of(def->getOperands(),
                        [&](Value v) { return isUniform(v); });
  }

  /// The per-thread slot of `value`, made on first use.
  Value slotOf(Value value);
  Value loadSlot(OpBuilder &b, Value slot, Type type, Value thread);
  void storeSlot(OpBuilder &b, Value slot, Value value, Value thread);

  /// `value` as thread `thread` has it, at `b`: from `local` (the part's
  /// own values), the block's uniform values, the value's slot, or
  /// computed again; a value of an earlier part that is none of these gets
  /// a slot, stored where that part computes it.
  Value valueAt(Value value, OpBuilder &b, IRMapping &local, Value thread);

  /// A loop over the block's threads at `b`; `body` builds its body.
  void forEachThread(OpBuilder &b,
                     function_ref<void(OpBuilder &, IRMapping &, Value)> body);

  LogicalResult emit(Block &block, OpBuilder &b);
  void emitPart(ArrayRef<Operation *> part, OpBuilder &b);
  LogicalResult emitCollective(Operation *op, OpBuilder &b);
  LogicalResult emitLoop(scf::ForOp loop, OpBuilder &b);
  LogicalResult emitBranch(scf::IfOp branch, OpBuilder &b);

  gpu::LaunchOp launch;
  Value zero, one, threads;
  /// The builder of the block's stack arrays, at the start of its body.
  OpBuilder allocations{launch.getContext()};
  bool allocated = false;
  IRMapping mapping;
  llvm::DenseSet<Value> uniform;
  llvm::DenseMap<Value, Value> slots;
  /// Where each part computes its values: the copy and its thread.
  llvm::DenseMap<Value, std::pair<Value, Value>> computed;
  /// The conditions (negated when true) of the branches, taken differently
  /// by the block's threads, that the parts being emitted are in.
  SmallVector<std::pair<Value, bool>> guards;
  /// The block's shared buffer that warpgroup mma descriptors address.
  Value sharedBase;
  bool broken = false;
};

Value LaunchEmulation::slotOf(Value value) {
  if (Value slot = slots.lookup(value))
    return slot;
  Type type = value.getType();
  SmallVector<int64_t> shape = {ShapedType::kDynamic};
  if (auto record = dyn_cast<LLVM::LLVMStructType>(type)) {
    if (record.getBody().empty() || !llvm::all_equal(record.getBody()) ||
        !record.getBody().front().isIntOrFloat()) {
      broken = true;
      return {};
    }
    shape.push_back(record.getBody().size());
    type = record.getBody().front();
  } else if (!type.isIntOrIndexOrFloat() && !isa<VectorType>(type)) {
    broken = true;
    return {};
  }
  allocated = true;
  Value slot = allocations.create<memref::AllocaOp>(
      value.getLoc(), MemRefType::get(shape, type), ValueRange{threads});
  slots[value] = slot;
  return slot;
}

Value LaunchEmulation::loadSlot(OpBuilder &b, Value slot, Type type,
                                Value thread) {
  Location loc = slot.getLoc();
  auto record = dyn_cast<LLVM::LLVMStructType>(type);
  if (!record)
    return b.create<memref::LoadOp>(loc, slot, thread);
  Value value = b.create<LLVM::UndefOp>(loc, record);
  for (int64_t i = 0, e = record.getBody().size(); i < e; ++i) {
    Value field = b.create<memref::LoadOp>(
        loc, slot,
        ValueRange{thread, b.create<arith::ConstantIndexOp>(loc, i)});
    value = b.create<LLVM::InsertValueOp>(loc, value, field, i);
  }
  return value;
}

void LaunchEmulation::storeSlot(OpBuilder &b, Value slot, Value value,
                                Value thread) {
  Location loc = slot.getLoc();
  auto record = dyn_cast<LLVM::LLVMStructType>(value.getType());
  if (!record) {
    b.create<memref::StoreOp>(loc, value, slot, thread);
    return;
  }
  for (int64_t i = 0, e = record.getBody().size(); i < e; ++i)
    b.create<memref::StoreOp>(
        loc, b.create<LLVM::ExtractValueOp>(loc, value, i), slot,
        ValueRange{thread, b.create<arith::ConstantIndexOp>(loc, i)});
}

Value LaunchEmulation::valueAt(Value value, OpBuilder &b, IRMapping &local,
                               Value thread) {
  if (Value known = local.lookupOrNull(value))
    return known;
  Value result;
  // A uniform value of the launch's body is emitted once per block before
  // the part that uses it; one from outside is itself.
  if (Value known = mapping.lookupOrNull(value)) {
    result = known;
  } else if (!launch->isAncestor(value.getParentRegion()->getParentOp())) {
    result = value;
  } else if (Value slot = slots.lookup(value)) {
    result = loadSlot(b, slot, value.getType(), thread);
  } else if (Operation *def = value.getDefiningOp();
             def && isRecomputable(def) &&
             !isa<gpu::DynamicSharedMemoryOp>(def)) {
    for (Value operand : def->getOperands())
      local.map(operand, valueAt(operand, b, local, thread));
    b.clone(*def, local);
    return local.lookup(value);
  } else if (auto it = computed.find(value); it != computed.end()) {
    auto [copy, copyThread] = it->second;
    Value slot = slotOf(value);
    if (!slot)
      return value;
    OpBuilder store(b.getContext());
    store.setInsertionPointAfterValue(copy);
    storeSlot(store, slot, copy, copyThread);
    result = loadSlot(b, slot, value.getType(), thread);
  } else {
    broken = true;
    return value;
  }
  local.map(value, result);
  return result;
}

void LaunchEmulation::forEachThread(
    OpBuilder &b, function_ref<void(OpBuilder &, IRMapping &, Value)> body) {
  Location loc = launch.getLoc();
  auto loop = b.create<scf::ForOp>(loc, zero, threads, one);
  Value thread = loop.getInductionVar();
  OpBuilder inner = OpBuilder::atBlockTerminator(loop.getBody());
  IRMapping local;
  local.map(launch.getThreadIds().x, thread);
  // Inside branches that threads take differently, only the threads that
  // take them.
  if (!guards.empty()) {
    Value taken;
    for (auto [condition, negated] : guards) {
      Value value = valueAt(condition, inner, local, thread);
      if (negated)
        value = inner.create<arith::XOrIOp>(
            loc, value,
            inner.create<arith::ConstantOp>(loc, inner.getBoolAttr(true)));
      taken = taken ? inner.create<arith::AndIOp>(loc, taken, value) : value;
    }
    auto branch = inner.create<scf::IfOp>(loc, taken, /*withElse=*/false);
    inner.setInsertionPoint(branch.thenBlock()->getTerminator());
  }
  body(inner, local, thread);
}

void LaunchEmulation::emitPart(ArrayRef<Operation *> part, OpBuilder &b) {
  forEachThread(b, [&](OpBuilder &inner, IRMapping &local, Value thread) {
    for (Operation *op : part) {
      llvm::SetVector<Value> used(op->getOperands().begin(),
                                  op->getOperands().end());
      for (Region &region : op->getRegions())
        getUsedValuesDefinedAbove(region, used);
      for (Value value : used)
        valueAt(value, inner, local, thread);
      Operation *copy = inner.clone(*op, local);
      for (auto [result, copied] :
           llvm::zip(op->getResults(), copy->getResults()))
        computed[result] = {copied, thread};
    }
  });
}

LogicalResult LaunchEmulation::emitCollective(Operation *op, OpBuilder &b) {
  // Every thread's operands in slots first.
  SmallVector<Value> staged;
  for (Value operand : op->getOperands())
    if (!isUniform(operand) && !slots.count(operand) &&
        !llvm::is_contained(staged, operand))
      staged.push_back(operand);
  if (!staged.empty())
    forEachThread(b, [&](OpBuilder &inner, IRMapping &local, Value thread) {
      SmallVector<Value> values;
      for (Value operand : staged)
        values.push_back(valueAt(operand, inner, local, thread));
      for (auto [operand, value] : llvm::zip(staged, values))
        if (Value slot = slotOf(operand))
          storeSlot(inner, slot, value, thread);
    });
  if (broken)
    return unsupported("an operand of a collective instruction has no slot");
  SmallVector<Value> resultSlots;
  for (Value result : op->getResults())
    resultSlots.push_back(slotOf(result));
  if (broken)
    return unsupported("a result of a collective instruction has no slot");
  Value accumulators =
      isa<NVVM::WgmmaMmaAsyncOp>(op) ? resultSlots[0] : Value();
  if (accumulators && !sharedBase)
    return unsupported("a warpgroup mma without shared memory");
  forEachThread(b, [&](OpBuilder &inner, IRMapping &, Value thread) {
    auto operand = [&](OpBuilder &at, unsigned i, Value from) -> Value {
      Value value = op->getOperand(i);
      if (Value slot = slots.lookup(value))
        return loadSlot(at, slot, value.getType(), from);
      IRMapping local;
      local.map(launch.getThreadIds().x, from);
      return valueAt(value, at, local, from);
    };
    SmallVector<Value> results =
        emulateCollective(inner, op, thread, operand, sharedBase, accumulators);
    // A struct's fields come one by one (mma.sync's four accumulators).
    if (op->getNumResults() == 1 &&
        isa<LLVM::LLVMStructType>(op->getResult(0).getType())) {
      for (auto [i, field] : llvm::enumerate(results))
        inner.create<memref::StoreOp>(
            op->getLoc(), field, resultSlots[0],
            ValueRange{thread,
                       inner.create<arith::ConstantIndexOp>(op->getLoc(), i)});
      return;
    }
    for (auto [slot, result] : llvm::zip(resultSlots, results))
      storeSlot(inner, slot, result, thread);
  });
  return success();
}

LogicalResult LaunchEmulation::emitLoop(scf::ForOp loop, OpBuilder &b) {
  for (Value bound :
       {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
    if (!isUniform(bound))
      return unsupported("a loop with a meeting point has bounds that differ "
                         "between threads");
  // The carried values that are the same for every thread: their initial
  // values are, and so is what each iteration yields of them (assumed of
  // all candidates, the others dropped until none is).
  unsigned count = loop.getNumRegionIterArgs();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  SmallVector<bool> same(count);
  for (unsigned i = 0; i < count; ++i)
    same[i] = isUniform(loop.getInitArgs()[i]);
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned i = 0; i < count; ++i)
      if (same[i])
        uniform.insert(loop.getRegionIterArgs()[i]);
    for (unsigned i = 0; i < count; ++i)
      if (same[i] && !isUniform(yield.getOperand(i))) {
        same[i] = false;
        changed = true;
      }
    for (unsigned i = 0; i < count; ++i)
      if (!same[i])
        uniform.erase(loop.getRegionIterArgs()[i]);
  }
  // The others live in slots, shared by the loop's argument and result.
  SmallVector<unsigned> carried;
  for (unsigned i = 0; i < count; ++i)
    if (!same[i]) {
      Value slot = slotOf(loop.getRegionIterArgs()[i]);
      if (!slot)
        return unsupported("a value carried by a loop has no slot");
      slots[loop.getResult(i)] = slot;
      carried.push_back(i);
    }
  auto storeCarried = [&](OpBuilder &at, ValueRange values) {
    forEachThread(at, [&](OpBuilder &inner, IRMapping &local, Value thread) {
      SmallVector<Value> current;
      for (unsigned i : carried)
        current.push_back(valueAt(values[i], inner, local, thread));
      for (auto [i, value] : llvm::zip(carried, current))
        storeSlot(inner, slots.lookup(loop.getRegionIterArgs()[i]), value,
                  thread);
    });
  };
  if (!carried.empty())
    storeCarried(b, loop.getInitArgs());
  SmallVector<Value> inits;
  for (unsigned i = 0; i < count; ++i)
    if (same[i])
      inits.push_back(mapping.lookupOrDefault(loop.getInitArgs()[i]));
  auto emitted = b.create<scf::ForOp>(
      loop.getLoc(), mapping.lookupOrDefault(loop.getLowerBound()),
      mapping.lookupOrDefault(loop.getUpperBound()),
      mapping.lookupOrDefault(loop.getStep()), inits);
  mapping.map(loop.getInductionVar(), emitted.getInductionVar());
  uniform.insert(loop.getInductionVar());
  for (unsigned i = 0, j = 0; i < count; ++i)
    if (same[i])
      mapping.map(loop.getRegionIterArgs()[i],
                  emitted.getRegionIterArgs()[j++]);
  OpBuilder body = OpBuilder::atBlockEnd(emitted.getBody());
  if (emitted.getBody()->mightHaveTerminator())
    body.setInsertionPoint(emitted.getBody()->getTerminator());
  if (failed(emit(*loop.getBody(), body)))
    return failure();
  if (!carried.empty())
    storeCarried(body, yield.getOperands());
  SmallVector<Value> yielded;
  for (unsigned i = 0; i < count; ++i)
    if (same[i])
      yielded.push_back(mapping.lookupOrDefault(yield.getOperand(i)));
  if (emitted.getBody()->mightHaveTerminator())
    emitted.getBody()->getTerminator()->erase();
  body.setInsertionPointToEnd(emitted.getBody());
  body.create<scf::YieldOp>(loop.getLoc(), yielded);
  for (unsigned i = 0, j = 0; i < count; ++i)
    if (same[i]) {
      mapping.map(loop.getResult(i), emitted.getResult(j++));
      uniform.insert(loop.getResult(i));
    }
  return success();
}

LogicalResult LaunchEmulation::emitBranch(scf::IfOp branch, OpBuilder &b) {
  if (branch.getNumResults() != 0)
    return unsupported("a branch with a meeting point has results");
  // A condition that differs between threads (the same in a warp, as a
  // row kernel's on its warp's row): both sides' parts run, each for the
  // threads that take it.
  if (!isUniform(branch.getCondition())) {
    guards.push_back({branch.getCondition(), false});
    if (failed(emit(*branch.thenBlock(), b)))
      return failure();
    guards.back().second = true;
    if (!branch.getElseRegion().empty() && failed(emit(*branch.elseBlock(), b)))
      return failure();
    guards.pop_back();
    return success();
  }
  auto emitted = b.create<scf::IfOp>(
      branch.getLoc(), mapping.lookupOrDefault(branch.getCondition()),
      /*withElseRegion=*/!branch.getElseRegion().empty());
  OpBuilder thenBuilder = OpBuilder::atBlockTerminator(emitted.thenBlock());
  if (failed(emit(*branch.thenBlock(), thenBuilder)))
    return failure();
  if (!branch.getElseRegion().empty()) {
    OpBuilder elseBuilder = OpBuilder::atBlockTerminator(emitted.elseBlock());
    if (failed(emit(*branch.elseBlock(), elseBuilder)))
      return failure();
  }
  return success();
}

LogicalResult LaunchEmulation::emit(Block &block, OpBuilder &b) {
  SmallVector<Operation *> part;
  auto flush = [&]() {
    if (!part.empty())
      emitPart(part, b);
    part.clear();
  };
  for (Operation &op : block.without_terminator()) {
    if (isa<gpu::DynamicSharedMemoryOp>(op))
      continue;
    if (isa<gpu::BarrierOp>(op)) {
      // On a GPU, a barrier that some threads of the block skip hangs.
      if (!guards.empty())
        return unsupported("a barrier inside a branch that the block's "
                           "threads take differently");
      flush();
      continue;
    }
    if (isEmulatedCollective(&op)) {
      flush();
      if (failed(emitCollective(&op, b)))
        return failure();
      continue;
    }
    if (!holdsMeetingPoint(&op)) {
      if (isRecomputable(&op) && llvm::all_of(op.getOperands(), [&](Value v) {
            return isUniform(v);
          })) {
        b.clone(op, mapping);
        uniform.insert(op.getResults().begin(), op.getResults().end());
      } else {
        part.push_back(&op);
      }
      continue;
    }
    flush();
    LogicalResult emitted =
        isa<scf::ForOp>(op)  ? emitLoop(cast<scf::ForOp>(op), b)
        : isa<scf::IfOp>(op) ? emitBranch(cast<scf::IfOp>(op), b)
                             : unsupported("a meeting point inside an "
                                           "operation other than a loop or "
                                           "a branch");
    if (failed(emitted))
      return failure();
  }
  flush();
  return success(!broken);
}

LogicalResult LaunchEmulation::run() {
  if (!launch.getBody().hasOneBlock())
    return unsupported("its body has several blocks");
  if (!launch.getPrivateAttributions().empty())
    return unsupported("it has private buffers");
  if (failed(lowerThreadOperations(launch)))
    return failure();
  Location loc = launch.getLoc();
  OpBuilder b(launch);
  zero = b.create<arith::ConstantIndexOp>(loc, 0);
  one = b.create<arith::ConstantIndexOp>(loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  threads = launch.getBlockSizeOperandValues().x;
  // The blocks one after another: a block's stack arrays are freed at its
  // end.
  auto blocks = b.create<scf::ForOp>(loc, zero, grid.x, one);
  Block *body = blocks.getBody();
  // The stack arrays come before everything the body computes: before an
  // anchor at its start.
  Operation *anchor =
      OpBuilder::atBlockBegin(body).create<arith::ConstantIndexOp>(loc, 0);
  allocations.setInsertionPoint(anchor);
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 gridSizes = launch.getGridSize();
  gpu::KernelDim3 blockSizes = launch.getBlockSize();
  mapping.map(blockIds.x, blocks.getInductionVar());
  for (Value id : {blockIds.y, blockIds.z, launch.getThreadIds().y,
                   launch.getThreadIds().z})
    mapping.map(id, zero);
  mapping.map(gridSizes.x, grid.x);
  mapping.map(gridSizes.y, grid.y);
  mapping.map(gridSizes.z, grid.z);
  mapping.map(blockSizes.x, threads);
  mapping.map(blockSizes.y, launch.getBlockSizeOperandValues().y);
  mapping.map(blockSizes.z, launch.getBlockSizeOperandValues().z);
  uniform.insert(launch.getBody().getArguments().begin(),
                 launch.getBody().getArguments().end());
  uniform.erase(launch.getThreadIds().x);
  // Shared memory: a stack buffer of each block.
  for (BlockArgument buffer : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(withoutWorkgroupSpace(buffer.getType()));
    allocated = true;
    Value alloca = allocations.create<memref::AllocaOp>(
        loc, type, ValueRange{}, allocations.getI64IntegerAttr(16));
    mapping.map(buffer, alloca);
    if (!sharedBase)
      sharedBase = allocations.create<memref::ExtractAlignedPointerAsIndexOp>(
          loc, alloca);
  }
  for (auto dynamic : launch.getBody().getOps<gpu::DynamicSharedMemoryOp>()) {
    Value bytes = launch.getDynamicSharedMemorySize();
    if (!bytes)
      return unsupported("dynamic shared memory of no size");
    allocated = true;
    Value size = allocations.create<arith::IndexCastUIOp>(
        loc, allocations.getIndexType(), bytes);
    Value alloca = allocations.create<memref::AllocaOp>(
        loc, cast<MemRefType>(withoutWorkgroupSpace(dynamic.getType())),
        ValueRange{size}, allocations.getI64IntegerAttr(16));
    mapping.map(dynamic.getResult(), alloca);
    uniform.insert(dynamic.getResult());
    sharedBase =
        allocations.create<memref::ExtractAlignedPointerAsIndexOp>(loc, alloca);
  }
  OpBuilder inside = OpBuilder::atBlockTerminator(body);
  if (failed(emit(launch.getBody().front(), inside))) {
    blocks.erase();
    return broken ? unsupported("a value of one part used in another has no "
                                "slot")
                  : failure();
  }
  // Nothing emitted may use the launch's own values.
  bool escapes =
      blocks
          .walk([&](Operation *op) {
            for (Value operand : op->getOperands())
              if (launch->isAncestor(operand.getParentRegion()->getParentOp()))
                return WalkResult::interrupt();
            return WalkResult::advance();
          })
          .wasInterrupted();
  if (escapes) {
    blocks.erase();
    return unsupported("a value of the launch escaped its emulation");
  }
  // Host memory has no address spaces.
  blocks.walk([](Operation *op) {
    for (Value result : op->getResults())
      result.setType(withoutWorkgroupSpace(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &inner : region)
        for (BlockArgument argument : inner.getArguments())
          argument.setType(withoutWorkgroupSpace(argument.getType()));
  });
  anchor->erase();
  // The stack arrays of a block are freed at its end (a stack save and
  // restore, which no pattern moves, unlike `memref.alloca_scope`'s
  // allocations).
  if (allocated) {
    auto pointer = LLVM::LLVMPointerType::get(launch.getContext());
    Value stack =
        OpBuilder::atBlockBegin(body).create<LLVM::StackSaveOp>(loc, pointer);
    OpBuilder::atBlockTerminator(body).create<LLVM::StackRestoreOp>(loc, stack);
  }
  launch.erase();
  return success();
}

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
