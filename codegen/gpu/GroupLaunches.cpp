//===- GroupLaunches.cpp - tfc-gpu-group-launches -------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Consecutive kernels that do not depend on each other (the query, key
/// and value projections of one input; the weight gradients of one layer)
/// become one launch whose blocks are shared out among them: block ids
/// [0, g1) run the first kernel's body, [g1, g1 + g2) the second's, and so
/// on, each with its own block ids and grid size. One launch instead of
/// several, and the blocks of all of them can be resident at once.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUGROUPLAUNCHES
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// What one kernel reads and writes of the buffers it takes from the host.
struct LaunchEffects {
  SmallVector<Span> reads, writes;

  bool conflictsWith(const LaunchEffects &other) const {
    auto meets = [](ArrayRef<Span> x, ArrayRef<Span> y) {
      return llvm::any_of(x, [&](const Span &a) {
        return llvm::any_of(y, [&](const Span &b) { return a.overlaps(b); });
      });
    };
    return meets(writes, other.reads) || meets(writes, other.writes) ||
           meets(reads, other.writes);
  }
};

/// The host buffer that `value`, a memref used in `launch`, is a view of:
/// the value from above the launch that it derives from.
Value hostBuffer(Value value, gpu::LaunchOp launch) {
  while (true) {
    Operation *def = value.getDefiningOp();
    if (!def) {
      // A block argument: from above the launch, or one of its own (its
      // ids, its shared memory), which is no host buffer.
      Operation *owner = cast<BlockArgument>(value).getOwner()->getParentOp();
      return owner == launch || launch->isProperAncestor(owner) ? Value()
                                                                : value;
    }
    if (!launch->isProperAncestor(def))
      return value;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return {};
    value = view.getViewSource();
  }
}

/// The spans of host buffers that `launch` reads and writes; none when a
/// write cannot be traced to a buffer. Every host buffer it uses is read;
/// one is written when an op writes it (directly or through a view, a
/// `cp.async` copy's destination included) or takes its address (the
/// tensor-core kernels' paired stores); a write through an address is
/// allowed only when some address is taken.
std::optional<LaunchEffects> effectsOf(gpu::LaunchOp launch) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(launch.getBody(), used);
  LaunchEffects effects;
  llvm::SmallDenseSet<Value> written;
  bool addressTaken = false, untraced = false, unknown = false;
  launch.getBody().walk([&](Operation *op) {
    if (auto address = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(op)) {
      addressTaken = true;
      if (Value host = hostBuffer(address.getSource(), launch))
        written.insert(host);
      return;
    }
    if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
      if (Value host = hostBuffer(copy.getDst(), launch))
        written.insert(host);
      return;
    }
    auto memoryEffects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!memoryEffects) {
      // Synchronisation and intrinsics on registers (the mma, the
      // warpgroup mma, which reads shared memory) write no memory; other
      // ops without declared effects are not followed.
      if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
          !isa<LLVM::CallIntrinsicOp, gpu::BarrierOp,
               nvgpu::DeviceAsyncCreateGroupOp, nvgpu::DeviceAsyncWaitOp,
               NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaMmaAsyncOp,
               NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp,
               NVVM::FenceProxyOp>(op))
        unknown = true;
      return;
    }
    SmallVector<Value> targets;
    if (!declaredWrites(memoryEffects, targets))
      unknown = true;
    for (Value target : targets) {
      if (!isa<MemRefType>(target.getType())) {
        untraced = true;
      } else if (Value host = hostBuffer(target, launch)) {
        written.insert(host);
      }
    }
  });
  if (unknown || (untraced && !addressTaken))
    return std::nullopt;
  for (Value value : used) {
    if (!isa<MemRefType>(value.getType()))
      continue;
    effects.reads.push_back(spanOf(value));
    if (written.contains(value))
      effects.writes.push_back(spanOf(value));
  }
  return effects;
}

/// Bytes of the workgroup attributions of `launch`.
int64_t sharedBytes(gpu::LaunchOp launch) {
  int64_t bytes = 0;
  for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(attribution.getType());
    bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }
  return bytes;
}

/// The types of `launch`'s workgroup attributions.
SmallVector<Type> sharedTypes(gpu::LaunchOp launch) {
  SmallVector<Type> types;
  for (BlockArgument attribution : launch.getWorkgroupAttributions())
    types.push_back(attribution.getType());
  return types;
}

/// The constant extent of `launch`'s 1-D grid (or block, with `block`),
/// none when it has more dimensions or is not a constant.
std::optional<int64_t> extentOf(gpu::LaunchOp launch, bool block) {
  gpu::KernelDim3 dims = block ? launch.getBlockSizeOperandValues()
                               : launch.getGridSizeOperandValues();
  if (!isConstantIntValue(dims.y, 1) || !isConstantIntValue(dims.z, 1))
    return std::nullopt;
  return getConstantIntValue(dims.x);
}

/// The constant dynamic shared memory of `launch`, 0 for none; none when
/// it is not a constant.
std::optional<int64_t> dynamicSharedBytes(gpu::LaunchOp launch) {
  Value size = launch.getDynamicSharedMemorySize();
  return size ? getConstantIntValue(size) : std::optional<int64_t>(0);
}

/// Whether `launch` can be grouped at all: a 1-D grid and block of
/// constant extents, one block in its body, no private attributions or
/// async dependencies, effects that effectsOf can trace; with dynamic
/// shared memory (the warpgroup mma's tiles), a constant amount of it and
/// no workgroup attributions.
bool isGroupable(gpu::LaunchOp launch) {
  std::optional<int64_t> dynamicBytes = dynamicSharedBytes(launch);
  return extentOf(launch, false) && extentOf(launch, true) &&
         isPlainLaunch(launch, /*dynamicShared=*/true) &&
         launch.getPrivateAttributions().empty() && dynamicBytes &&
         (*dynamicBytes == 0 || launch.getWorkgroupAttributions().empty());
}

/// The group that `launch` (isGroupable) may join: its block size, negated
/// when it has dynamic shared memory, so that such launches group only
/// with each other.
int64_t groupKey(gpu::LaunchOp launch) {
  int64_t threads = *extentOf(launch, true);
  return *dynamicSharedBytes(launch) ? -threads : threads;
}

struct GroupLaunches
    : public mlir::tfc::impl::TfcGpuGroupLaunchesBase<GroupLaunches> {
  using TfcGpuGroupLaunchesBase::TfcGpuGroupLaunchesBase;

  void runOnOperation() override {
    // Grouping moves launches, which can bring those it stepped over next
    // to each other: a few rounds.
    for (Block &block : getOperation().getBody())
      for (int round = 0; round < 3 && groupIn(block); ++round)
        ;
  }

  /// The values from above that the launches of `group` use, less the
  /// constants, which outlining sinks into the kernel: its arguments.
  static int64_t capturedValues(ArrayRef<gpu::LaunchOp> group) {
    llvm::SetVector<Value> used;
    for (gpu::LaunchOp launch : group)
      getUsedValuesDefinedAbove(launch.getBody(), used);
    return llvm::count_if(used, [](Value value) {
      return !value.getDefiningOp<arith::ConstantOp>();
    });
  }

  /// A group being gathered: its members so far, their effects, and the
  /// launches it has stepped over.
  struct OpenGroup {
    SmallVector<gpu::LaunchOp> members;
    SmallVector<LaunchEffects> effects;
    int64_t steppedOver = 0;

    bool commutesWith(const LaunchEffects &launch) const {
      return llvm::none_of(effects, [&](const LaunchEffects &member) {
        return member.conflictsWith(launch);
      });
    }
  };

  /// Groups the launches of `block`; whether it made any group. One group
  /// is open per block size, so that kernels of 128 threads (the
  /// tensor-core ones) and of 256 (element-wise and row kernels) that
  /// alternate each gather theirs: a launch that cannot join a group is
  /// stepped over by it, when it commutes with the group's members, and
  /// closes it otherwise.
  bool groupIn(Block &block) {
    SmallVector<SmallVector<gpu::LaunchOp>> groups;
    llvm::SmallMapVector<int64_t, OpenGroup, 2> open;
    auto close = [&](int64_t threads) {
      auto it = open.find(threads);
      if (it == open.end())
        return;
      if (it->second.members.size() > 1)
        groups.push_back(it->second.members);
      open.erase(it);
    };
    // The block sizes of the open groups, copied: closing one erases it.
    auto openSizes = [&]() {
      return llvm::to_vector(llvm::make_first_range(open));
    };
    auto closeAll = [&]() {
      for (int64_t threads : openSizes())
        close(threads);
    };
    for (Operation &op : block) {
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch) {
        if (!isTransparent(&op))
          closeAll();
        continue;
      }
      std::optional<LaunchEffects> effects = effectsOf(launch);
      if (!effects) {
        closeAll();
        continue;
      }
      int64_t threads = isGroupable(launch) ? groupKey(launch) : int64_t(0);
      // The other groups step over it, or close before it.
      for (int64_t other : openSizes()) {
        if (other == threads)
          continue;
        OpenGroup &group = open.find(other)->second;
        if (group.commutesWith(*effects) && group.steppedOver < window)
          ++group.steppedOver;
        else
          close(other);
      }
      if (!threads)
        continue;
      // It joins the group of its block size, is stepped over by it, or
      // starts one.
      auto it = open.find(threads);
      if (it != open.end()) {
        OpenGroup &group = it->second;
        bool independent = group.commutesWith(*effects);
        bool joins = independent &&
                     static_cast<int64_t>(group.members.size()) < maxLaunches;
        if (joins) {
          group.members.push_back(launch);
          if (capturedValues(group.members) > maxArguments) {
            group.members.pop_back();
            joins = false;
          }
        }
        if (joins) {
          group.effects.push_back(*effects);
          continue;
        }
        if (independent && group.steppedOver < window) {
          ++group.steppedOver;
          continue;
        }
        close(threads);
      }
      OpenGroup &group = open[threads];
      group.members.push_back(launch);
      group.effects.push_back(*effects);
    }
    closeAll();
    for (ArrayRef<gpu::LaunchOp> members : groups) {
      build(members);
      ++groupedLaunches;
      launchesInGroups += members.size();
    }
    return !groups.empty();
  }

  /// One launch in place of `members`, at the last of them.
  void build(ArrayRef<gpu::LaunchOp> members) {
    gpu::LaunchOp last = members.back();
    Location loc = last.getLoc();
    OpBuilder b(last);
    int64_t total = 0;
    SmallVector<int64_t> firsts;
    for (gpu::LaunchOp launch : members) {
      firsts.push_back(total);
      total += *extentOf(launch, false);
    }
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    // The most dynamic shared memory of a member, which every block gets.
    int64_t dynamicBytes = 0;
    for (gpu::LaunchOp launch : members)
      dynamicBytes = std::max(dynamicBytes, *dynamicSharedBytes(launch));
    Value dynamicSize;
    if (dynamicBytes)
      dynamicSize = b.create<arith::ConstantIntOp>(loc, dynamicBytes, 32);
    auto grouped = b.create<gpu::LaunchOp>(
        loc, b.create<arith::ConstantIndexOp>(loc, total), one, one,
        last.getBlockSizeOperandValues().x, one, one, dynamicSize);
    // What the members' attributes say of them (a FlashAttention or
    // tensor-core tile), the first member's where several say it.
    for (gpu::LaunchOp launch : members)
      for (NamedAttribute attribute : launch->getDiscardableAttrs())
        if (!grouped->hasAttr(attribute.getName()))
          grouped->setAttr(attribute.getName(), attribute.getValue());
    grouped->setAttr("tfc.grouped_launches",
                     b.getI64IntegerAttr(members.size()));
    // Shared memory: one set of attributions when every member's are of
    // the same types, else one byte buffer as large as the largest
    // member's, which each member views as its own (a block runs one
    // member).
    bool sameTypes = llvm::all_of(members, [&](gpu::LaunchOp launch) {
      return sharedTypes(launch) == sharedTypes(members.front());
    });
    SmallVector<Value> common;
    Value bytes;
    if (sameTypes) {
      gpu::LaunchOp front = members.front();
      for (BlockArgument old : front.getWorkgroupAttributions())
        common.push_back(
            grouped.addWorkgroupAttribution(old.getType(), old.getLoc()));
    } else {
      int64_t largest = 0;
      for (gpu::LaunchOp launch : members)
        largest = std::max(largest, sharedBytes(launch));
      auto workgroup = gpu::AddressSpaceAttr::get(
          b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
      bytes = grouped.addWorkgroupAttribution(
          MemRefType::get({largest}, b.getI8Type(), MemRefLayoutAttrInterface(),
                          workgroup),
          loc);
    }
    Block &body = grouped.getBody().front();
    b.setInsertionPointToEnd(&body);
    b.create<gpu::TerminatorOp>(loc);
    b.setInsertionPointToStart(&body);
    Value blockId = grouped.getBlockIds().x;
    for (size_t i = 0; i < members.size(); ++i) {
      gpu::LaunchOp launch = members[i];
      if (i + 1 == members.size()) {
        inlineMember(b, launch, grouped, firsts[i], common, bytes);
        break;
      }
      Value below = b.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::ult, blockId,
          b.create<arith::ConstantIndexOp>(loc, firsts[i + 1]));
      auto ifOp = b.create<scf::IfOp>(loc, below, /*withElseRegion=*/true);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      inlineMember(b, launch, grouped, firsts[i], common, bytes);
      // The later members in the else branch.
      b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    }
    for (gpu::LaunchOp launch : members)
      launch->erase();
  }

  /// Clones the body of `launch` at `b`, its block id less `first`, its
  /// grid size its own, the rest of the ids and sizes `grouped`'s, its
  /// shared memory `common` (the same attributions) or views of `bytes`
  /// (its attributions one after another, 16-byte aligned).
  static void inlineMember(OpBuilder &b, gpu::LaunchOp launch,
                           gpu::LaunchOp grouped, int64_t first,
                           ArrayRef<Value> common, Value bytes) {
    Location loc = launch.getLoc();
    IRMapping mapping;
    Value blockId = grouped.getBlockIds().x;
    if (first)
      blockId = b.create<arith::SubIOp>(
          loc, blockId, b.create<arith::ConstantIndexOp>(loc, first));
    mapping.map(launch.getBlockIds().x, blockId);
    mapping.map(launch.getBlockIds().y, grouped.getBlockIds().y);
    mapping.map(launch.getBlockIds().z, grouped.getBlockIds().z);
    mapping.map(launch.getThreadIds().x, grouped.getThreadIds().x);
    mapping.map(launch.getThreadIds().y, grouped.getThreadIds().y);
    mapping.map(launch.getThreadIds().z, grouped.getThreadIds().z);
    mapping.map(launch.getGridSize().x, b.create<arith::ConstantIndexOp>(
                                            loc, *extentOf(launch, false)));
    mapping.map(launch.getGridSize().y, grouped.getGridSize().y);
    mapping.map(launch.getGridSize().z, grouped.getGridSize().z);
    mapping.map(launch.getBlockSize().x, grouped.getBlockSize().x);
    mapping.map(launch.getBlockSize().y, grouped.getBlockSize().y);
    mapping.map(launch.getBlockSize().z, grouped.getBlockSize().z);
    int64_t offset = 0;
    for (auto [i, old] : llvm::enumerate(launch.getWorkgroupAttributions())) {
      if (!bytes) {
        mapping.map(old, common[i]);
        continue;
      }
      auto type = cast<MemRefType>(old.getType());
      mapping.map(old, b.create<memref::ViewOp>(
                           loc, type, bytes,
                           b.create<arith::ConstantIndexOp>(loc, offset),
                           ValueRange{}));
      offset += llvm::alignTo(
          type.getNumElements() * type.getElementTypeBitWidth() / 8, 16);
    }
    for (Operation &op : launch.getBody().front().without_terminator())
      b.clone(op, mapping);
  }
};

} // namespace
