//===- RegisterShuffles.cpp - Shuffles of vectors in registers ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/RegisterShuffles.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

SmallVector<Value> mlir::tfc::transposeTile(OpBuilder &b, Location loc,
                                            SmallVector<Value> rows) {
  int64_t size = rows.size();
  for (int64_t bit = size / 2; bit >= 1; bit /= 2) {
    SmallVector<int64_t> low, high;
    for (int64_t c = 0; c < size; ++c) {
      low.push_back(c & bit ? size + (c ^ bit) : c);
      high.push_back(c & bit ? size + c : c ^ bit);
    }
    for (int64_t i = 0; i < size; ++i) {
      if (i & bit)
        continue;
      Value top = rows[i], bottom = rows[i | bit];
      rows[i] = b.create<vector::ShuffleOp>(loc, top, bottom, low);
      rows[i | bit] = b.create<vector::ShuffleOp>(loc, top, bottom, high);
    }
  }
  return rows;
}

Value mlir::tfc::interleavePairs(OpBuilder &b, Location loc, Value first,
                                 Value second, Type element) {
  int64_t length = cast<VectorType>(first.getType()).getNumElements();
  auto bitsType = VectorType::get({length}, b.getI16Type());
  SmallVector<int64_t> interleave;
  for (int64_t i = 0; i < length; ++i)
    interleave.append({i, length + i});
  Value bits = b.create<vector::ShuffleOp>(
      loc, b.create<vector::BitCastOp>(loc, bitsType, first),
      b.create<vector::BitCastOp>(loc, bitsType, second), interleave);
  return b.create<vector::BitCastOp>(
      loc, VectorType::get({2 * length}, element), bits);
}
