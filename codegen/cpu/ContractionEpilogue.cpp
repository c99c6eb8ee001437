//===- ContractionEpilogue.cpp - An epilogue on a contraction's tile ------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ContractionEpilogue.h"

#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tfc;

/// The positions of the lanes along dimension `dim` of C in the epilogue's
/// current vector: consecutive from the current column along N, the
/// current index broadcast along any other dimension.
static Value positionsAlong(OpBuilder &b, Location loc,
                            const ContractionPlan &plan, ArrayRef<Value> dims,
                            uint64_t dim) {
  unsigned loop = cast<AffineDimExpr>(plan.cMap.getResult(dim)).getPosition();
  auto type = VectorType::get({plan.lanes}, b.getIndexType());
  Value at = b.create<vector::BroadcastOp>(loc, type, dims[loop]);
  if (static_cast<int64_t>(loop) != plan.n)
    return at;
  SmallVector<int64_t> steps(plan.lanes);
  std::iota(steps.begin(), steps.end(), 0);
  Value lane = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(type, ArrayRef<int64_t>(steps)));
  return b.create<arith::AddIOp>(loc, at, lane);
}

Value mlir::tfc::emitEpilogueOnVector(OpBuilder &b, Location loc,
                                      const ContractionPlan &plan,
                                      MutableArrayRef<Value> dims, Value acc,
                                      Value row, Value column, Value mask) {
  linalg::GenericOp epilogue = plan.epilogue;
  Block &body = *epilogue.getBlock();
  if (plan.m >= 0)
    dims[plan.m] = row;
  dims[plan.n] = column;
  auto vectorOf = [&](Type type) {
    return VectorType::get({plan.lanes}, type);
  };
  IRMapping mapping;
  // C's element: the last input's of a rounded epilogue, else the output's.
  unsigned cArgument = plan.epilogueOutput == plan.c
                           ? epilogue.getNumDpsInputs()
                           : epilogue.getNumDpsInputs() - 1;
  mapping.map(body.getArgument(cArgument), acc);
  for (auto [i, input] : llvm::enumerate(epilogue.getDpsInputOperands())) {
    if (i == cArgument)
      continue;
    // The epilogue's dims are C's, in C's order.
    SmallVector<Value> at;
    for (AffineExpr expr :
         epilogue.getMatchingIndexingMap(input).getResults()) {
      AffineExpr dim =
          plan.cMap.getResult(cast<AffineDimExpr>(expr).getPosition());
      at.push_back(dims[cast<AffineDimExpr>(dim).getPosition()]);
    }
    Value source = input->get();
    Type element = cast<MemRefType>(source.getType()).getElementType();
    Value value;
    if (plan.epilogueVectors[i]) {
      Value zeros = b.create<arith::ConstantOp>(
          loc, cast<TypedAttr>(b.getZeroAttr(vectorOf(element))));
      value = b.create<vector::MaskedLoadOp>(loc, vectorOf(element), source, at,
                                             mask, zeros);
    } else {
      value = b.create<vector::BroadcastOp>(
          loc, vectorOf(element), b.create<memref::LoadOp>(loc, source, at));
    }
    mapping.map(body.getArgument(i), value);
  }
  return cloneBodyOnVectors(
      b, loc, body, plan.lanes, mapping,
      [&](uint64_t dim) { return positionsAlong(b, loc, plan, dims, dim); })[0];
}
