//===- ContractionEpilogue.h - An epilogue on a contraction's tile -*- C++
//-*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The epilogue of a contraction (tfc-fuse-epilogues: a bias add, an
/// activation, a residual add, an attention mask) applied by
/// tfc-vectorize-contractions to the vectors of its register tile before
/// they are stored.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_CPU_CONTRACTIONEPILOGUE_H
#define TFC_CODEGEN_CPU_CONTRACTIONEPILOGUE_H

#include "codegen/cpu/ContractionPlan.h"

#include "mlir/IR/Builders.h"

namespace mlir::tfc {

/// The body of `plan.epilogue` on the vector `acc` of C at row `row`
/// (ignored without M) and columns from `column`, at `b`'s insertion
/// point: its inputs loaded as vectors there (masked like C by `mask`) or
/// as one element broadcast, C's element (the output's, in place; the last
/// input, for a rounded epilogue) being `acc`, and the scalar operations
/// repeated on vectors of the same element types. `dims` holds the
/// contraction's loop indices by loop; those of M and N are set to the
/// tile's.
Value emitEpilogueOnVector(OpBuilder &b, Location loc,
                           const ContractionPlan &plan,
                           MutableArrayRef<Value> dims, Value acc, Value row,
                           Value column, Value mask);

} // namespace mlir::tfc

#endif // TFC_CODEGEN_CPU_CONTRACTIONEPILOGUE_H
