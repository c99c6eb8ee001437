//===- EmulatedInstructions.cpp - Warp instructions on the CPU ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The emulation of the warp-wide instructions of tfc's kernels, for one
/// thread at a time, from the operands of every thread of its warp or
/// warpgroup. The layouts are the PTX ISA's:
///
///   - `shfl.sync` (`gpu.shuffle`): the value of lane `lane ^ offset`
///     (xor), `lane + offset` (down), `lane - offset` (up) or `offset`
///     (idx), when that lane lies in the caller's segment of `width` lanes;
///     else the caller's own value, and `valid` false.
///   - `ldmatrix.x{1,2,4}` (`nvgpu.ldmatrix`): matrix i's 8 rows are the 8
///     bf16 at the addresses that lanes 8i..8i+7 give; lane l receives row
///     l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of each matrix, or with
///     `.trans` column l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
///   - `mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32`: with g = l / 4 and
///     t = l % 4, A's register r holds row g + 8 (r % 2), columns
///     2t + 8 (r / 2) and the next; B's register r rows 2t + 8r and the
///     next of column g; C and D's value v row g + 8 (v / 2), column
///     2t + v % 2.
///   - `wgmma.mma_async.m64nNk16.f32.bf16.bf16`: A (64 x 16) and B
///     (16 x N) read from shared memory through their descriptors in the
///     128-byte swizzle: a K-major operand's element (r, k) at
///     `start + (r % 8) 128 + (r / 8) SBO + 2k`, an M- or N-major one's at
///     `start + 2 (r % 64) + (r / 64) LBO + (k % 8) 128 + (k / 8) SBO`,
///     each address's bits 4-6 XOR its bits 7-9. Warp w of the warpgroup
///     holds rows 16w..16w+15 of D; its value v of lane l is row
///     16w + l / 4 + 8 ((v / 2) % 2), column 8 (v / 4) + 2 (l % 4) + v % 2.
///     A descriptor of another swizzle or with a base offset makes every
///     accumulator NaN, so that the emulated kernel's results show it.
///
/// Products of bf16 values are exact in float32; each output's terms are
/// added in k order, which the hardware may not follow, so results agree
/// with a GPU's to float32 rounding.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/EmulatedInstructions.h"
#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;

namespace mlir::tfc {

namespace {

/// The builder of one thread's results: index and i64 arithmetic at `b`.
class Emulator {
public:
  Emulator(OpBuilder &b, Location loc, Value thread, ThreadOperand operand)
      : b(&b), loc(loc), thread(thread), operand(operand) {}

  SmallVector<Value> shuffle(gpu::ShuffleOp op);
  Value loadMatrix(nvgpu::LdMatrixOp op);
  SmallVector<Value> mmaBf16();
  void warpgroupMma(NVVM::WgmmaMmaAsyncOp op, Value sharedBase,
                    Value accumulators);

private:
  Value index(int64_t v) { return b->create<arith::ConstantIndexOp>(loc, v); }
  Value i64(int64_t v) {
    return b->create<arith::ConstantIntOp>(loc, v, b->getI64Type());
  }
  Value add(Value x, Value y) { return b->create<arith::AddIOp>(loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, index(y)) : x; }
  Value sub(Value x, Value y) { return b->create<arith::SubIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b->create<arith::MulIOp>(loc, x, y); }
  Value mul(Value x, int64_t y) { return mul(x, index(y)); }
  Value div(Value x, int64_t y) {
    return b->create<arith::DivUIOp>(loc, x, index(y));
  }
  Value rem(Value x, int64_t y) {
    return b->create<arith::RemUIOp>(loc, x, index(y));
  }
  Value eq(Value x, Value y) {
    return b->create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, y);
  }
  Value toI64(Value x) {
    return b->create<arith::IndexCastUIOp>(loc, b->getI64Type(), x);
  }
  /// Bits `shift`.. of the i64 `x`, `mask` wide.
  Value field(Value x, int64_t shift, int64_t mask) {
    Value shifted = shift ? b->create<arith::ShRUIOp>(loc, x, i64(shift)) : x;
    return b->create<arith::AndIOp>(loc, shifted, i64(mask));
  }
  /// The bf16 in half `half` (index, 0 low) of the i32 `word`, as float32.
  Value bf16Half(Value word, Value half) {
    Type i32 = b->getI32Type();
    Value shift = b->create<arith::IndexCastUIOp>(loc, i32, mul(half, 16));
    Value bits = b->create<arith::TruncIOp>(
        loc, b->getI16Type(), b->create<arith::ShRUIOp>(loc, word, shift));
    Value value = b->create<arith::BitcastOp>(loc, b->getBF16Type(), bits);
    return b->create<arith::ExtFOp>(loc, b->getF32Type(), value);
  }
  /// The element (mn, k) of a wgmma operand at shared address `start`
  /// (i64), as float32.
  Value warpgroupElement(Value start, Value leading, Value stride, Value mn,
                         Value k, bool kMajor);

  OpBuilder *b;
  Location loc;
  Value thread;
  ThreadOperand operand;
};

SmallVector<Value> Emulator::shuffle(gpu::ShuffleOp op) {
  Type i32 = b->getI32Type();
  Value lane = rem(thread, 32), warp = sub(thread, lane);
  Value self = b->create<arith::IndexCastUIOp>(loc, i32, lane);
  Value offset = operand(*b, 1, thread), width = operand(*b, 2, thread);
  Value source;
  switch (op.getMode()) {
  case gpu::ShuffleMode::XOR:
    source = b->create<arith::XOrIOp>(loc, self, offset);
    break;
  case gpu::ShuffleMode::DOWN:
    source = b->create<arith::AddIOp>(loc, self, offset);
    break;
  case gpu::ShuffleMode::UP:
    source = b->create<arith::SubIOp>(loc, self, offset);
    break;
  case gpu::ShuffleMode::IDX:
    source = offset;
    break;
  }
  Value first = b->create<arith::MulIOp>(
      loc, b->create<arith::DivSIOp>(loc, self, width), width);
  Value end = b->create<arith::AddIOp>(loc, first, width);
  Value valid = b->create<arith::AndIOp>(
      loc,
      b->create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, source, first),
      b->create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, source, end));
  Value other =
      add(warp, b->create<arith::IndexCastOp>(loc, b->getIndexType(), source));
  Value from = b->create<arith::SelectOp>(loc, valid, other, thread);
  return {operand(*b, 0, from), valid};
}

Value Emulator::loadMatrix(nvgpu::LdMatrixOp op) {
  VectorType type = op.getRes().getType();
  Value lane = rem(thread, 32), warp = sub(thread, lane);
  Value group = div(lane, 4), pair = rem(lane, 4);
  Value memref = operand(*b, 0, thread);
  unsigned rank = op.getIndices().size();
  Value result =
      b->create<arith::ConstantOp>(loc, cast<TypedAttr>(b->getZeroAttr(type)));
  for (int64_t i = 0, e = op.getNumTiles(); i < e; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      Value across = add(mul(pair, 2), j);
      Value row = op.getTranspose() ? across : group;
      Value column = op.getTranspose() ? group : across;
      Value source = add(add(warp, 8 * i), row);
      SmallVector<Value> at;
      for (unsigned d = 0; d < rank; ++d)
        at.push_back(operand(*b, 1 + d, source));
      at.back() = add(at.back(), column);
      Value element = b->create<memref::LoadOp>(loc, memref, at);
      result = b->create<vector::InsertOp>(loc, element, result,
                                           ArrayRef<int64_t>{i, j});
    }
  return result;
}

SmallVector<Value> Emulator::mmaBf16() {
  Value lane = rem(thread, 32), warp = sub(thread, lane);
  Value group = div(lane, 4), pair = rem(lane, 4);
  SmallVector<Value> results;
  for (int64_t v = 0; v < 4; ++v) {
    Value column = add(mul(pair, 2), v % 2);
    auto loop = b->create<scf::ForOp>(
        loc, index(0), index(16), index(1),
        ValueRange{operand(*b, 6 + v, thread)},
        [&](OpBuilder &nested, Location, Value k, ValueRange sums) {
          OpBuilder *outer = std::exchange(b, &nested);
          Value within = rem(k, 8), upper = div(k, 8), half = rem(k, 2);
          // A (row g + 8 (v / 2), column k): register (v / 2) + 2 (k / 8)
          // of lane 4g + (k % 8) / 2.
          Value aLane = add(warp, add(mul(group, 4), div(within, 2)));
          Value aRegister = add(mul(upper, 2), v / 2);
          Value aWord = operand(nested, 0, aLane);
          for (unsigned r = 1; r < 4; ++r)
            aWord = nested.create<arith::SelectOp>(
                loc, eq(aRegister, index(r)), operand(nested, r, aLane), aWord);
          // B (row k, column c): register k / 8 of lane 4c + (k % 8) / 2.
          Value bLane = add(warp, add(mul(column, 4), div(within, 2)));
          Value bWord = nested.create<arith::SelectOp>(
              loc, eq(upper, index(0)), operand(nested, 4, bLane),
              operand(nested, 5, bLane));
          Value product = nested.create<arith::MulFOp>(
              loc, bf16Half(aWord, half), bf16Half(bWord, half));
          Value sum = nested.create<arith::AddFOp>(loc, sums[0], product);
          nested.create<scf::YieldOp>(loc, sum);
          b = outer;
        });
    results.push_back(loop.getResult(0));
  }
  return results;
}

Value Emulator::warpgroupElement(Value start, Value leading, Value stride,
                                 Value mn, Value k, bool kMajor) {
  auto mul64 = [&](Value x, Value y) {
    return b->create<arith::MulIOp>(loc, toI64(x), y);
  };
  Value offset;
  if (kMajor)
    offset = b->create<arith::AddIOp>(
        loc,
        b->create<arith::AddIOp>(loc, mul64(rem(mn, 8), i64(128)),
                                 mul64(div(mn, 8), stride)),
        mul64(k, i64(2)));
  else
    offset = b->create<arith::AddIOp>(
        loc,
        b->create<arith::AddIOp>(loc, mul64(rem(mn, 64), i64(2)),
                                 mul64(div(mn, 64), leading)),
        b->create<arith::AddIOp>(loc, mul64(rem(k, 8), i64(128)),
                                 mul64(div(k, 8), stride)));
  Value address = b->create<arith::AddIOp>(loc, start, offset);
  Value pattern = b->create<arith::ShLIOp>(loc, field(address, 7, 7), i64(4));
  address = b->create<arith::XOrIOp>(loc, address, pattern);
  Value pointer = b->create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(b->getContext()), address);
  Value element = b->create<LLVM::LoadOp>(loc, b->getBF16Type(), pointer);
  return b->create<arith::ExtFOp>(loc, b->getF32Type(), element);
}

void Emulator::warpgroupMma(NVVM::WgmmaMmaAsyncOp op, Value sharedBase,
                            Value accumulators) {
  int64_t n = op.getShape().getN();
  bool aKMajor = op.getLayoutA() == NVVM::MMALayout::row;
  bool bKMajor = op.getLayoutB() == NVVM::MMALayout::col;
  Value within = rem(thread, 128), warp = div(within, 32),
        lane = rem(within, 32);
  // The accumulators in: D = A B + C (or A B when scale-d is zero).
  Value in = operand(*b, 0, thread);
  bool scaled = op.getScaleD() == NVVM::WGMMAScaleOut::one;
  Value zero = b->create<arith::ConstantOp>(loc, b->getF32FloatAttr(0.0));
  for (int64_t v = 0; v < n / 2; ++v) {
    Value value =
        scaled ? b->create<LLVM::ExtractValueOp>(loc, in, v).getResult() : zero;
    b->create<memref::StoreOp>(loc, value, accumulators,
                               ValueRange{thread, index(v)});
  }
  // Each descriptor's start address in the 256 KiB window of shared memory
  // that holds the shared buffer, and its byte offsets.
  Value base = toI64(sharedBase);
  struct Descriptor {
    Value start, leading, stride, valid;
  };
  auto decode = [&](Value descriptor) {
    Value encoded =
        b->create<arith::ShLIOp>(loc, field(descriptor, 0, 0x3fff), i64(4));
    Value start = b->create<arith::AddIOp>(
        loc, base,
        b->create<arith::AndIOp>(
            loc, b->create<arith::SubIOp>(loc, encoded, base), i64(0x3ffff)));
    Value leading =
        b->create<arith::ShLIOp>(loc, field(descriptor, 16, 0x3fff), i64(4));
    Value stride =
        b->create<arith::ShLIOp>(loc, field(descriptor, 32, 0x3fff), i64(4));
    // The 128-byte swizzle (1 in bits 62-63) and no base offset.
    Value valid = b->create<arith::AndIOp>(
        loc,
        b->create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                 field(descriptor, 62, 3), i64(1)),
        b->create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                 field(descriptor, 49, 7), i64(0)));
    return Descriptor{start, leading, stride, valid};
  };
  Descriptor a = decode(operand(*b, 1, thread));
  Descriptor bDesc = decode(operand(*b, 2, thread));
  Value valid = b->create<arith::AndIOp>(loc, a.valid, bDesc.valid);
  Value nan = b->create<arith::ConstantOp>(
      loc, b->getF32FloatAttr(std::numeric_limits<float>::quiet_NaN()));
  b->create<scf::ForOp>(
      loc, index(0), index(n / 2), index(1), ValueRange{},
      [&](OpBuilder &outerLoop, Location, Value v, ValueRange) {
        OpBuilder *outer = std::exchange(b, &outerLoop);
        Value row =
            add(add(mul(warp, 16), div(lane, 4)), mul(rem(div(v, 2), 2), 8));
        Value column =
            add(add(mul(div(v, 4), 8), mul(rem(lane, 4), 2)), rem(v, 2));
        Value init = outerLoop.create<memref::LoadOp>(loc, accumulators,
                                                      ValueRange{thread, v});
        auto sum = outerLoop.create<scf::ForOp>(
            loc, index(0), index(16), index(1), ValueRange{init},
            [&](OpBuilder &innerLoop, Location, Value k, ValueRange sums) {
              b = &innerLoop;
              Value product = innerLoop.create<arith::MulFOp>(
                  loc,
                  warpgroupElement(a.start, a.leading, a.stride, row, k,
                                   aKMajor),
                  warpgroupElement(bDesc.start, bDesc.leading, bDesc.stride,
                                   column, k, bKMajor));
              innerLoop.create<scf::YieldOp>(
                  loc, ValueRange{innerLoop.create<arith::AddFOp>(loc, sums[0],
                                                                  product)});
              b = &outerLoop;
            });
        Value result = outerLoop.create<arith::SelectOp>(loc, valid,
                                                         sum.getResult(0), nan);
        outerLoop.create<memref::StoreOp>(loc, result, accumulators,
                                          ValueRange{thread, v});
        outerLoop.create<scf::YieldOp>(loc);
        b = outer;
      });
}

} // namespace

bool isEmulatedCollective(Operation *op) {
  if (isa<gpu::ShuffleOp, nvgpu::LdMatrixOp>(op))
    return true;
  if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
    return mma.getTypeA() == NVVM::WGMMATypes::bf16 &&
           mma.getTypeB() == NVVM::WGMMATypes::bf16 &&
           mma.getTypeD() == NVVM::WGMMATypes::f32 &&
           mma.getShape().getM() == 64 && mma.getShape().getK() == 16;
  auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
  return call && call.getIntrin() == kMmaBf16Intrinsic;
}

SmallVector<Value> emulateCollective(OpBuilder &b, Operation *op, Value thread,
                                     ThreadOperand operand, Value sharedBase,
                                     Value accumulators) {
  Emulator emulator(b, op->getLoc(), thread, operand);
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op))
    return emulator.shuffle(shuffle);
  if (auto load = dyn_cast<nvgpu::LdMatrixOp>(op))
    return {emulator.loadMatrix(load)};
  if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
    emulator.warpgroupMma(mma, sharedBase, accumulators);
    return {};
  }
  return emulator.mmaBf16();
}

} // namespace mlir::tfc
