//===- Utils.cpp - Helpers of the GPU back end's passes -------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The helpers of Utils.h that build the instructions of tensor-core
/// kernels: swizzled shared tiles, `ldmatrix`, `mma.sync` on bf16, packed
/// bf16 registers and paired stores.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace mlir::tfc {

Value swizzledColumn(OpBuilder &b, Location loc, Value row, Value chunk,
                     int64_t inner) {
  auto index = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  int64_t chunks = inner / kBf16PerChunk;
  int64_t rowsPerLine = std::max<int64_t>(1, 8 / chunks);
  Value line = b.create<arith::DivUIOp>(loc, row, index(rowsPerLine));
  Value pattern =
      b.create<arith::RemUIOp>(loc, line, index(std::min<int64_t>(chunks, 8)));
  Value swizzled = b.create<arith::XOrIOp>(loc, chunk, pattern);
  return b.create<arith::MulIOp>(loc, swizzled, index(kBf16PerChunk));
}

SmallVector<Value> loadMatrixX4(OpBuilder &b, Location loc, Value tile,
                                ValueRange leading, Value row, Value chunk,
                                int64_t inner, bool transpose) {
  auto type = VectorType::get({4, 2}, b.getBF16Type());
  SmallVector<Value> at(leading);
  at.push_back(row);
  at.push_back(swizzledColumn(b, loc, row, chunk, inner));
  Value matrix = b.create<nvgpu::LdMatrixOp>(loc, type, tile, at, transpose,
                                             /*numTiles=*/4);
  SmallVector<Value> regs;
  for (int64_t r = 0; r < 4; ++r) {
    Value pair = b.create<vector::ExtractOp>(loc, matrix, r);
    Value word = b.create<vector::BitCastOp>(
        loc, VectorType::get({1}, b.getI32Type()), pair);
    regs.push_back(b.create<vector::ExtractOp>(loc, word, 0));
  }
  return regs;
}

void mmaBf16(OpBuilder &b, Location loc, ArrayRef<Value> a,
             ArrayRef<Value> bFrag, MutableArrayRef<Value> acc) {
  Type f32 = b.getF32Type();
  auto result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  SmallVector<Value> args(a);
  llvm::append_range(args, bFrag);
  llvm::append_range(args, acc);
  Value d = b.create<LLVM::CallIntrinsicOp>(
                 loc, result, b.getStringAttr(kMmaBf16Intrinsic), args)
                .getResult(0);
  for (int64_t q = 0; q < 4; ++q)
    acc[q] = b.create<LLVM::ExtractValueOp>(loc, d, q);
}

Value packBf16Pair(OpBuilder &b, Location loc, Value low, Value high) {
  Value pair = b.create<vector::FromElementsOp>(
      loc, VectorType::get({2}, b.getF32Type()), ValueRange{low, high});
  Value rounded = b.create<arith::TruncFOp>(
      loc, VectorType::get({2}, b.getBF16Type()), pair);
  Value word = b.create<vector::BitCastOp>(
      loc, VectorType::get({1}, b.getI32Type()), rounded);
  return b.create<vector::ExtractOp>(loc, word, 0);
}

LLVM::StoreOp storePair(OpBuilder &b, Location loc, Value pair, Value buffer,
                        ArrayRef<Value> at) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  Value linear = b.create<arith::ConstantIndexOp>(loc, 0);
  int64_t stride = bytes;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    Value term = b.create<arith::MulIOp>(
        loc, at[d], b.create<arith::ConstantIndexOp>(loc, stride));
    linear = b.create<arith::AddIOp>(loc, linear, term);
    stride *= type.getDimSize(d);
  }
  return storeAtByteOffset(b, loc, pair, buffer, linear, 2 * bytes);
}

LLVM::StoreOp storeAtByteOffset(OpBuilder &b, Location loc, Value value,
                                Value buffer, Value offset, int64_t alignment) {
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
  Value address = b.create<arith::IndexCastOp>(
      loc, b.getI64Type(), b.create<arith::AddIOp>(loc, base, offset));
  // Global memory's generic addresses are its global addresses.
  Value pointer = b.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext(), 1), address);
  return b.create<LLVM::StoreOp>(loc, value, pointer, alignment);
}

//===----------------------------------------------------------------------===//
// Moving ops past each other
//===----------------------------------------------------------------------===//

bool isTransparent(Operation *op) {
  return isa<memref::AllocOp>(op) || isMemoryEffectFree(op);
}

bool declaredWrites(MemoryEffectOpInterface op,
                    SmallVectorImpl<Value> &targets) {
  SmallVector<MemoryEffects::EffectInstance> instances;
  op.getEffects(instances);
  for (const MemoryEffects::EffectInstance &instance : instances) {
    if (!isa<MemoryEffects::Write>(instance.getEffect()))
      continue;
    if (!instance.getValue())
      return false;
    targets.push_back(instance.getValue());
  }
  return true;
}

bool isPlainLaunch(gpu::LaunchOp launch, bool dynamicShared) {
  return launch.getBody().hasOneBlock() &&
         launch.getAsyncDependencies().empty() && !launch.getAsyncToken() &&
         (dynamicShared || !launch.getDynamicSharedMemorySize());
}

bool bufferEffects(Operation *op, SmallVectorImpl<Value> &reads,
                   SmallVectorImpl<Value> &writes) {
  if (isTransparent(op))
    return true;
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
    writes.push_back(rootBuffer(dealloc.getMemref()));
    return true;
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    for (Value v : linalgOp->getOperands())
      if (isa<MemRefType>(v.getType()))
        reads.push_back(rootBuffer(v));
    for (Value v : linalgOp.getDpsInits())
      writes.push_back(rootBuffer(v));
    linalgOp->walk([&](memref::LoadOp load) {
      reads.push_back(rootBuffer(load.getMemRef()));
    });
    return true;
  }
  if (isa<gpu::LaunchOp, scf::ForallOp>(op)) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(op->getRegion(0), used);
    for (Value v : used)
      if (isa<MemRefType>(v.getType())) {
        reads.push_back(rootBuffer(v));
        writes.push_back(rootBuffer(v));
      }
    return true;
  }
  return false;
}

bool availableAt(Value value, Operation *op) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op))
    return true;
  if (!isa<memref::AllocOp, ViewLikeOpInterface, arith::ConstantOp>(def) ||
      def->getNumRegions())
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value v) { return availableAt(v, op); });
}

void moveDefinitionBefore(Value value, Operation *op) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op))
    return;
  for (Value operand : def->getOperands())
    moveDefinitionBefore(operand, op);
  def->moveBefore(op);
}

Span spanOf(Value memref) {
  Span whole{rootBuffer(memref)};
  for (Value value = memref; value != whole.root;) {
    Operation *def = value.getDefiningOp();
    if (!isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
             memref::CastOp>(def))
      return whole;
    value = cast<ViewLikeOpInterface>(def).getViewSource();
  }
  auto type = dyn_cast<MemRefType>(memref.getType());
  auto rootType = dyn_cast<MemRefType>(whole.root.getType());
  if (!type || !rootType || !type.hasStaticShape() ||
      type.getElementType() != rootType.getElementType() ||
      !rootType.getLayout().isIdentity())
    return whole;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset))
    return whole;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (size == 0)
      return {whole.root, offset, offset};
    if (ShapedType::isDynamic(stride) || stride < 0)
      return whole;
    last += (size - 1) * stride;
  }
  return {whole.root, offset, last + 1};
}

} // namespace mlir::tfc
