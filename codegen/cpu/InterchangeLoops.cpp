//===- InterchangeLoops.cpp - The tfc-interchange-loops pass --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Puts innermost the loop that runs along the contiguous dimension of
/// every operand of a `linalg.generic`, when reductions come after it. A
/// depth-wise convolution, `out[b, s, c] += x[b, s - j, c] * w[j, c]`, and
/// its weight gradient, `dw[j, c] += dy[b, s, c] * x[b, s - j, c]`, are
/// built with their reductions last, so their loop nests would run the
/// reduction innermost and step along the channels with the stride of a
/// whole position: scalar code, and a cache line per element. With the
/// channel loop innermost, every access is unit stride and LLVM vectorises
/// it:
///
///   loops (j, c, b, s), reductions b, s  ->  loops (j, b, s, c)
///
/// Only the parallel loop moves; the reductions keep their order, so each
/// output element accumulates the same terms in the same order as before,
/// and the results are bit-identical.
///
/// An op is interchanged when, on buffers with unit stride in their last
/// dimension, every operand's last index is the same parallel loop `p`,
/// and some reduction loop comes after `p`. Contractions whose operands
/// are indexed along different loops (matmuls) never qualify.
///
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCINTERCHANGELOOPS
#include "codegen/cpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The loop that every operand of `op` indexes by its last, unit-stride
/// dimension, when it is parallel and a reduction loop comes after it.
std::optional<unsigned> contiguousLoopBeforeReductions(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return std::nullopt;
  std::optional<unsigned> loop;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !hasUnitInnerStride(type))
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!last || (loop && *loop != last.getPosition()))
      return std::nullopt;
    loop = last.getPosition();
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!loop || iterators[*loop] != utils::IteratorType::parallel)
    return std::nullopt;
  for (unsigned d = *loop + 1; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::reduction)
      return loop;
  return std::nullopt;
}

struct TfcInterchangeLoopsPass
    : public tfc::impl::TfcInterchangeLoopsBase<TfcInterchangeLoopsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, unsigned>> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<unsigned> loop = contiguousLoopBeforeReductions(op))
        candidates.push_back({op, *loop});
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, loop] : candidates) {
      // The other loops in their order, then `loop`.
      SmallVector<unsigned> order;
      for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
        if (d != loop)
          order.push_back(d);
      order.push_back(loop);
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        return signalPassFailure();
      ++interchangedOps;
    }
  }
};

} // namespace
