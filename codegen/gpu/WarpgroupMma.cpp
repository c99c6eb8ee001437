//===- WarpgroupMma.cpp - Hopper's warpgroup mma on shared tiles ---------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The helpers of Utils.h that build Hopper's warpgroup mma
/// (`wgmma.mma_async`, sm_90a) on bf16 tiles in shared memory: the
/// 128-byte swizzle that the tiles are kept in, the matrix descriptors
/// that describe them to the instruction, and the instruction itself
/// (`nvvm.wgmma.mma_async`, whose operands and accumulators MLIR 19 takes
/// for bf16).
///
/// In the 128-byte swizzle, a tile is rows of 128 bytes in groups of 8
/// (1024 bytes, 1024-byte aligned), each row's 16-byte chunk c kept at
/// chunk c XOR (row mod 8). A K-major operand (k contiguous in memory) is
/// a row per m (or n) of 64 k; a core matrix is 8 rows of 16 bytes, the
/// next 8 rows 1024 bytes on (the stride byte offset), and the k steps of
/// 16 within the row are 32 bytes apart. An M-major (N-major) operand is
/// a row per k of 64 m, in atoms of 64 m by the tile's k, the next 8 k
/// 1024 bytes on (the stride byte offset), the next 64 m an atom on (the
/// leading byte offset). The instruction applies the XOR itself to the
/// addresses it computes from the descriptor.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace mlir::tfc {

Value swizzle128(OpBuilder &b, Location loc, Value offset) {
  auto index = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  // Bits 4-6 (the chunk in its row) XOR bits 7-9 (the row in its group).
  Value row = b.create<arith::DivUIOp>(loc, offset, index(kSwizzleBytes));
  Value pattern = b.create<arith::RemUIOp>(
      loc, row, index(kSwizzleGroupBytes / kSwizzleBytes));
  Value shifted = b.create<arith::MulIOp>(loc, pattern, index(16));
  return b.create<arith::XOrIOp>(loc, offset, shifted);
}

Value warpgroupDescriptor(OpBuilder &b, Location loc, Value address,
                          int64_t leadingBytes, int64_t strideBytes) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, v, i64);
  };
  uint64_t fixed = uint64_t((leadingBytes >> 4) & 0x3fff) << 16 |
                   uint64_t((strideBytes >> 4) & 0x3fff) << 32 |
                   uint64_t(1) << 62;
  Value start = b.create<arith::AndIOp>(
      loc, b.create<arith::ShRUIOp>(loc, address, constant(4)),
      constant(0x3fff));
  return b.create<arith::OrIOp>(loc, start, constant(int64_t(fixed)));
}

Type warpgroupAccumulatorType(MLIRContext *ctx, int64_t n) {
  SmallVector<Type> fields(n / 2, Float32Type::get(ctx));
  return LLVM::LLVMStructType::getLiteral(ctx, fields);
}

Value warpgroupMmaBf16(OpBuilder &b, Location loc, Value acc, Value descA,
                       Value descB, int64_t n, bool aKMajor, bool bKMajor) {
  using namespace NVVM;
  // A "row" (B "col") is K-major: the instruction's untransposed form.
  return b.create<WgmmaMmaAsyncOp>(
      loc, acc.getType(), acc, descA, descB,
      MMAShapeAttr::get(b.getContext(), 64, n, 16), WGMMATypes::bf16,
      WGMMATypes::bf16, WGMMATypes::f32, WGMMAScaleOut::one, WGMMAScaleIn::one,
      WGMMAScaleIn::one, aKMajor ? MMALayout::row : MMALayout::col,
      bKMajor ? MMALayout::col : MMALayout::row, MMAIntOverflowAttr());
}

} // namespace mlir::tfc
