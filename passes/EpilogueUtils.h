//===- EpilogueUtils.h - Contractions and their epilogues -------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What `tfc-fuse-epilogues` (on tensors), `tfc-outline-kernels` and
/// `tfc-vectorize-contractions` (on buffers) agree on about a contraction
/// and the element-wise op applied to its result (its epilogue).
///
/// On tensors, `tfc-fuse-epilogues` rewrites
///
///   %c = <contraction> ins(%a, %b) outs(%init)          // out + a * b
///   %y = linalg.generic ins(%c, %bias) outs(%empty)     // all parallel
///
/// into
///
///   %c = <contraction> {tfc.epilogue} ins(%a, %b) outs(%init)
///   %y = linalg.generic ins(%bias) outs(%c)             // reads its out
///
/// with nothing between the two. The element-wise op then updates C in
/// place: after bufferization both write one buffer, and that buffer is live
/// while the contraction runs, so nothing the contraction reads can share
/// its bytes. The pair still means what it did when the mark is ignored
/// (the GPU pipelines, contractions the kernels do not handle); the
/// contraction kernels apply the consumer to their accumulators after the
/// last K panel instead of storing C and reading it again.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_EPILOGUEUTILS_H
#define TFC_PASSES_EPILOGUEUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfc {

/// The unit attribute that marks a contraction whose next linalg op is its
/// epilogue.
inline constexpr llvm::StringLiteral kEpilogueAttr = "tfc.epilogue";

/// Bits of the vector registers that the contraction kernels and the
/// vectorised rows are written for (AVX-512).
inline constexpr int64_t kVectorBits = 512;

/// True when the body of `op` is `out + in0 * in1` (in any operand order).
inline bool isMulAddBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 || body->getOperations().size() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  auto add = dyn_cast_or_null<arith::AddFOp>(
      yield ? yield.getOperand(0).getDefiningOp() : nullptr);
  if (!add)
    return false;
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if ((add.getLhs() == out) == (add.getRhs() == out))
    return false;
  auto mul = dyn_cast_or_null<arith::MulFOp>(product.getDefiningOp());
  if (!mul)
    return false;
  Value in0 = body->getArgument(0), in1 = body->getArgument(1);
  return (mul.getLhs() == in0 && mul.getRhs() == in1) ||
         (mul.getLhs() == in1 && mul.getRhs() == in0);
}

/// True when the last dimension of the memref `type` has unit stride.
inline bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 &&
         succeeded(getStridesAndOffset(type, strides, offset)) &&
         strides.back() == 1;
}

/// True when every loop of `op` is parallel.
inline bool isAllParallel(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

/// True when every operation of `body` but its terminator is a scalar arith
/// or math operation without memory effects or regions on integers, floats
/// and indices, or a `linalg.index` (no integer division), so that the same
/// operation on vectors of those types computes each lane as the scalar one
/// would. A `linalg.index` becomes the vector of the lanes' positions along
/// that dimension (a causal or banded mask on the accumulators).
inline bool isVectorizableEpilogueBody(Block &body) {
  auto scalar = [](Type type) { return type.isIntOrIndexOrFloat(); };
  for (Operation &op : body.without_terminator()) {
    if (isa<linalg::IndexOp>(op))
      continue;
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
        op.getNumResults() != 1)
      return false;
    if (!llvm::all_of(op.getOperandTypes(), scalar) ||
        !llvm::all_of(op.getResultTypes(), scalar))
      return false;
    // Lanes past the edge of N compute on zeros; an integer division by
    // zero would trap there.
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op))
      return false;
  }
  return llvm::all_of(body.getTerminator()->getOperandTypes(),
                      [](Type type) { return type.isIntOrFloat(); });
}

/// Repeats the operations of `body` (one that isVectorizableEpilogueBody
/// accepts) on vectors of `lanes` elements, at `b`'s insertion point, and
/// returns the vectors of its terminator's operands. `mapping` gives the
/// vector of each block argument the body reads; values from outside the
/// body and constants are broadcast, and a `linalg.index` becomes
/// `positions(dim)`, the lanes' positions along that dimension (never
/// called when `positions` is null: the caller refused such bodies).
inline SmallVector<Value>
cloneBodyOnVectors(OpBuilder &b, Location loc, Block &body, int64_t lanes,
                   IRMapping &mapping,
                   function_ref<Value(uint64_t)> positions = nullptr) {
  auto vectorOf = [&](Type type) { return VectorType::get({lanes}, type); };
  auto vectorValue = [&](Value value) {
    if (!mapping.contains(value))
      mapping.map(value, b.create<vector::BroadcastOp>(
                             loc, vectorOf(value.getType()), value));
    return mapping.lookup(value);
  };
  for (Operation &op : body.without_terminator()) {
    if (auto position = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(position.getResult(), positions(position.getDim()));
      continue;
    }
    if (op.hasTrait<OpTrait::ConstantLike>()) {
      Operation *constant = b.clone(op);
      mapping.map(op.getResult(0),
                  b.create<vector::BroadcastOp>(
                      loc, vectorOf(op.getResultTypes()[0]),
                      constant->getResult(0)));
      continue;
    }
    for (Value operand : op.getOperands())
      vectorValue(operand);
    Operation *vectorOp = b.clone(op, mapping);
    for (OpResult result : vectorOp->getResults())
      result.setType(vectorOf(result.getType()));
  }
  SmallVector<Value> results;
  for (Value yielded : body.getTerminator()->getOperands())
    results.push_back(vectorValue(yielded));
  return results;
}

/// The first operation after `op` in its block that has memory effects (a
/// linalg op on buffers, a call...), skipping views and scalar arithmetic;
/// null when there is none.
inline Operation *nextWithMemoryEffects(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isMemoryEffectFree(next))
      return next;
  return nullptr;
}

/// The epilogue of `contraction` on buffers: the first linalg op after it
/// (only operations without memory effects in between), when it is an
/// all-parallel `linalg.generic` that updates the contraction's output
/// through the identity map and reads it nowhere else. Null when
/// `contraction` carries no kEpilogueAttr or there is no such op.
inline linalg::GenericOp findEpilogue(linalg::LinalgOp contraction) {
  if (!contraction->hasAttr(kEpilogueAttr) ||
      !contraction.hasPureBufferSemantics() ||
      contraction.getNumDpsInits() != 1)
    return nullptr;
  Value c = contraction.getDpsInitOperand(0)->get();
  auto consumer = dyn_cast_or_null<linalg::GenericOp>(
      nextWithMemoryEffects(contraction));
  if (!consumer || !consumer.hasPureBufferSemantics() ||
      !isAllParallel(consumer) || consumer.getNumDpsInits() != 1 ||
      consumer.getDpsInitOperand(0)->get() != c ||
      !consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0))
           .isIdentity())
    return nullptr;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get() == c)
      return nullptr;
  return consumer;
}

} // namespace mlir::tfc

#endif // TFC_PASSES_EPILOGUEUTILS_H
