//===- ContractionPlan.cpp - How a contraction maps onto its kernel -------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ContractionPlan.h"
#include "passes/Utils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tfc;

namespace {
/// Whether the kernel of `plan` can apply `epilogue` to its accumulators:
/// its iteration space is C's, its inputs are buffers read through
/// projected permutations, along N with unit stride or not along N at all,
/// its output (a rounded epilogue's own) runs along N with unit stride,
/// and its body is scalar arith and math. Fills `plan.epilogueVectors` and
/// `plan.epilogueOutput`.
bool planEpilogue(ContractionPlan &plan, linalg::GenericOp epilogue) {
  auto cType = cast<MemRefType>(plan.c.getType());
  Value output = epilogue.getDpsInitOperand(0)->get();
  auto outputType = dyn_cast<MemRefType>(output.getType());
  if (epilogue.getNumLoops() != static_cast<unsigned>(cType.getRank()) ||
      !isVectorizableEpilogueBody(*epilogue.getBlock()) || !outputType ||
      (output != plan.c && !hasUnitInnerStride(outputType)))
    return false;
  unsigned nDim = cType.getRank() - 1;
  SmallVector<bool> vectors;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    // A rounded epilogue's last input is C, the accumulators.
    if (input->get() == plan.c && output != plan.c) {
      vectors.push_back(false);
      continue;
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (!type || !type.getElementType().isIntOrFloat() ||
        !map.isProjectedPermutation())
      return false;
    if (!map.isFunctionOfDim(nDim)) {
      vectors.push_back(false);
      continue;
    }
    if (cast<AffineDimExpr>(map.getResults().back()).getPosition() != nDim ||
        !hasUnitInnerStride(type))
      return false;
    vectors.push_back(true);
  }
  plan.epilogue = epilogue;
  plan.epilogueVectors = std::move(vectors);
  plan.epilogueOutput = output;
  return true;
}

/// The `linalg.fill` of 0 into exactly `c` that comes right before `op`
/// (only ops without memory effects in between), or null.
linalg::FillOp precedingZeroFill(Operation *op, Value c) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (!fill.hasPureBufferSemantics() || fill.getOutputs()[0] != c)
        return nullptr;
      FloatAttr value;
      if (!matchPattern(fill.getInputs()[0], m_Constant(&value)) ||
          !value.getValue().isZero())
        return nullptr;
      return fill;
    }
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}
} // namespace

std::optional<ContractionPlan> mlir::tfc::planContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMulAddBody(op))
    return std::nullopt;
  ContractionPlan plan;
  plan.op = op;
  plan.a = op.getDpsInputOperand(0)->get();
  plan.b = op.getDpsInputOperand(1)->get();
  plan.c = op.getDpsInitOperand(0)->get();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  plan.aMap = maps[0];
  plan.bMap = maps[1];
  plan.cMap = maps[2];
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation())
      return std::nullopt;
  auto cType = dyn_cast<MemRefType>(plan.c.getType());
  if (!cType || cType.getRank() == 0)
    return std::nullopt;
  plan.elementType = dyn_cast<FloatType>(cType.getElementType());
  if (!plan.elementType ||
      (plan.elementType.getWidth() != 32 && plan.elementType.getWidth() != 64))
    return std::nullopt;
  SmallVector<Type, 2> operandTypes;
  for (Value v : {plan.a, plan.b}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type)
      return std::nullopt;
    operandTypes.push_back(type.getElementType());
  }
  plan.bf16 = plan.elementType.isF32() && operandTypes[0].isBF16() &&
              operandTypes[1].isBF16();
  if (!plan.bf16 && (operandTypes[0] != plan.elementType ||
                     operandTypes[1] != plan.elementType))
    return std::nullopt;
  plan.panelType = operandTypes[1];
  if (!hasUnitInnerStride(cType))
    return std::nullopt;
  plan.sizes = op.getStaticLoopRanges();
  if (llvm::any_of(plan.sizes, ShapedType::isDynamic))
    return std::nullopt;

  // N: the innermost dimension of C; it must come from exactly one input,
  // which then plays B.
  plan.n = cast<AffineDimExpr>(plan.cMap.getResults().back()).getPosition();
  bool inA = plan.aMap.isFunctionOfDim(plan.n),
       inB = plan.bMap.isFunctionOfDim(plan.n);
  if (inA == inB)
    return std::nullopt;
  if (inA) {
    std::swap(plan.a, plan.b);
    std::swap(plan.aMap, plan.bMap);
  }
  if (plan.sizes[plan.n] < 4)
    return std::nullopt;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (int64_t d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (d == plan.n)
      continue;
    bool a = plan.aMap.isFunctionOfDim(d), b = plan.bMap.isFunctionOfDim(d);
    if (iterators[d] == utils::IteratorType::reduction) {
      if (a && b && (plan.k < 0 || plan.sizes[d] > plan.sizes[plan.k]))
        plan.k = d;
    } else if (a && !b && plan.cMap.isFunctionOfDim(d)) {
      if (plan.m < 0 || plan.sizes[d] > plan.sizes[plan.m])
        plan.m = d;
    }
  }
  // bf16 pairs along K: an even K, so that no pair reads past A.
  if (plan.k < 0 || (plan.bf16 && plan.sizes[plan.k] % 2 != 0))
    return std::nullopt;
  for (int64_t d = 0, e = op.getNumLoops(); d < e; ++d)
    if (d != plan.n && d != plan.k && d != plan.m)
      plan.outer.push_back(d);
  plan.lanes = kVectorBits / plan.elementType.getWidth();
  plan.vectorsPerRow = plan.sizes[plan.n] >= 2 * plan.lanes ? 2 : 1;
  plan.rowsPerBlock = plan.m < 0 ? 1 : plan.vectorsPerRow == 2 ? 8 : 12;
  int64_t tile = plan.lanes * plan.vectorsPerRow;
  plan.panelWidth = (plan.sizes[plan.n] + tile - 1) / tile * tile;
  int64_t depth = std::min(plan.sizes[plan.k], kPanelDepth);
  int64_t slivers = plan.panelWidth / tile;
  plan.sliverElements = depth * tile;
  // A sliver of a power-of-two size would put row k of every sliver in one
  // L1 set, and packing a row of B writes all of them: one cache line of
  // padding between slivers spreads those writes over the sets.
  if (slivers > 1)
    plan.sliverElements +=
        kCacheLineBytes * 8 / plan.panelType.getIntOrFloatBitWidth();
  plan.panelElements = plan.sliverElements * slivers;
  if (runsAlong(plan.b, plan.bMap, plan.n))
    plan.packing = ContractionPlan::Packing::AlongN;
  else if (runsAlong(plan.b, plan.bMap, plan.k) &&
           plan.sizes[plan.n] >= plan.lanes)
    plan.packing = ContractionPlan::Packing::Transposed;

  // Fork over the leading outer loops that write disjoint parts of C.
  int64_t macs = 1, iterations = 1;
  for (int64_t size : plan.sizes)
    macs *= size;
  unsigned lead = 0;
  for (int64_t d : plan.outer) {
    if (iterators[d] != utils::IteratorType::parallel)
      break;
    iterations *= plan.sizes[d];
    ++lead;
  }
  if (linalg::GenericOp epilogue = findEpilogue(op))
    planEpilogue(plan, epilogue);
  // C is written whole, once per K panel, unless an outer loop reduces
  // into it too; then a zero fill right before is redundant.
  if (llvm::all_of(plan.outer, [&](int64_t d) {
        return iterators[d] == utils::IteratorType::parallel;
      }))
    plan.zeroFill = precedingZeroFill(op, plan.c);
  // B's bytes in a panel, its padding left out.
  int64_t panelBytes =
      depth * plan.panelWidth * plan.panelType.getIntOrFloatBitWidth() / 8;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<scf::ForallOp, scf::ParallelOp>(parent))
      plan.parallelLoop = parent;
  if (!plan.parallelLoop && lead > 0 &&
      iterations >= kParallelOuterIterations && macs >= kParallelMacs &&
      panelBytes <= kStackPanelBytes)
    plan.parallelOuter = lead;
  return plan;
}

bool mlir::tfc::runsAlong(Value operand, AffineMap map, int64_t dim) {
  return hasUnitInnerStride(cast<MemRefType>(operand.getType())) &&
         cast<AffineDimExpr>(map.getResults().back()).getPosition() == dim;
}
