//===- Utils.h - Helpers of the GPU back end's passes -----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The names and the helpers that several passes of the GPU back end share:
/// the kernels' module, views' buffers and the indexing of contractions.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPU_UTILS_H
#define TFC_CODEGEN_GPU_UTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

namespace mlir::tfc {

/// The gpu.module that holds every kernel of a model, and the prefix of
/// its kernels' names, `tfc_k<n>` (n counts the distinct kernels).
inline constexpr llvm::StringLiteral kKernelModule = "tfc_kernels";
inline constexpr llvm::StringLiteral kKernelPrefix = "tfc_k";

/// The buffer that `value` is a view of: a function argument, an
/// allocation or a global.
inline Value rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// Whether `map` has a result that is loop dimension `dim`.
inline bool usesDim(AffineMap map, unsigned dim) {
  return llvm::any_of(map.getResults(),
                      [&](AffineExpr e) { return e.isFunctionOfDim(dim); });
}

/// The reduction dimension of `op` when it has exactly one and every
/// indexing map of it is a projected permutation (a contraction's k, for
/// the contraction kernels).
inline std::optional<unsigned> onlyReductionDim(linalg::LinalgOp op) {
  std::optional<unsigned> k;
  for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (kind != utils::IteratorType::reduction)
      continue;
    if (k)
      return std::nullopt;
    k = i;
  }
  if (!k || !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return std::nullopt;
  return k;
}

/// The reduction dimension k of a contraction `op` (see onlyReductionDim)
/// whose output, its last operand, is indexed by its parallel dimensions
/// alone, at least two of them.
inline std::optional<unsigned> contractionReductionDim(linalg::LinalgOp op) {
  std::optional<unsigned> k = onlyReductionDim(op);
  if (!k)
    return std::nullopt;
  AffineMap outMap = op.getIndexingMapsArray().back();
  unsigned parallel = op.getNumLoops() - 1;
  if (outMap.getNumResults() != parallel || parallel < 2 || usesDim(outMap, *k))
    return std::nullopt;
  return k;
}

/// The indices of `map` (a projected permutation) with loop dimension `m`
/// at `row`, `n` at `col`, `k` at `kv` and any other dimension d at
/// `dims[d]`: where a contraction kernel reads or writes an operand.
inline SmallVector<Value> contractionIndices(AffineMap map, unsigned m,
                                             unsigned n, unsigned k, Value row,
                                             Value col, Value kv,
                                             ArrayRef<Value> dims) {
  SmallVector<Value> result;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    unsigned d = map.getDimPosition(r);
    result.push_back(d == m ? row : d == n ? col : d == k ? kv : dims[d]);
  }
  return result;
}

/// The threads of the kernel that tfc-gpu-tile-contractions makes of `op`,
/// 0 when it leaves `op` alone.
int64_t tiledContractionThreads(linalg::LinalgOp op);

} // namespace mlir::tfc

#endif // TFC_CODEGEN_GPU_UTILS_H
