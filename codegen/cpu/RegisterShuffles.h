//===- RegisterShuffles.h - Shuffles of vectors in registers ----*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The vector shuffles with which tfc-vectorize-contractions packs its
/// panels in registers: a square tile transposed, and two vectors of bf16
/// interleaved into pairs.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_CPU_REGISTERSHUFFLES_H
#define TFC_CODEGEN_CPU_REGISTERSHUFFLES_H

#include "mlir/IR/Builders.h"

namespace mlir::tfc {

/// The transpose of the square tile whose rows are `rows` (as many vectors
/// as each has elements): for each bit b of the index, rows i and i | b
/// swap the elements whose column has bit b set in row i and clear in row
/// i | b, one two-source shuffle per row and bit.
SmallVector<Value> transposeTile(OpBuilder &b, Location loc,
                                 SmallVector<Value> rows);

/// `first` and `second`, vectors of `element` (bf16) of one length,
/// interleaved into one vector of pairs (first[i], second[i]). As 16-bit
/// integers: LLVM would take a shuffle of bf16 through float32 on a CPU
/// without AVX512-BF16.
Value interleavePairs(OpBuilder &b, Location loc, Value first, Value second,
                      Type element);

} // namespace mlir::tfc

#endif // TFC_CODEGEN_CPU_REGISTERSHUFFLES_H
