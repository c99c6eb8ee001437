//===- FlopCount.h - Multiply-add FLOPs of a forward graph ------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The analysis behind the manifest's `flops_per_token`: the multiply-add
/// FLOPs (2 per multiply-add) of the matmuls of a forward graph in tfc IR,
/// before it is lowered. It counts the linear layers, and attention over
/// the (query, key) pairs its mask lets through (softmax and Longformer) or
/// over its random features (Performer). Element-wise work is not counted.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_FLOPCOUNT_H
#define TFC_PASSES_FLOPCOUNT_H

#include "dialect/TfcDialect.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::tfc {

/// The multiply-add FLOPs of the matmuls under an operation (a function),
/// for `getAnalysis<ForwardFlopCount>()`. The count is absent when it does
/// not fit in 63 bits.
class ForwardFlopCount {
public:
  explicit ForwardFlopCount(Operation *op);

  /// The FLOPs, or nullopt when the count overflowed int64_t.
  std::optional<int64_t> flops() const { return total; }

private:
  std::optional<int64_t> total;
};

/// The (query, key) pairs of one sequence and head that softmax or
/// Longformer attention of `kind` computes a score for: every pair, the
/// pairs `j <= i` when causal, and for Longformer each local row's sliding
/// window plus the global columns and each global row's keys. Padding is
/// data, not counted. nullopt when the count overflows.
std::optional<int64_t> attendedPairs(Attribute kind, int64_t queries,
                                     int64_t keys);

} // namespace mlir::tfc

#endif // TFC_PASSES_FLOPCOUNT_H
