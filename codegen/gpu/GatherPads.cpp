//===- GatherPads.cpp - The tfc-gpu-gather-pads pass ----------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A `tensor.pad` bufferizes to a fill of the whole padded buffer and a
/// copy of the source into its interior: two kernels on the GPU, the copy
/// waiting for the fill, and the padded buffers of one layer's three
/// Primer convolutions chained through them. Here each pad of static
/// shape and constant value becomes one element-wise `linalg.generic`
/// that reads its source at the clamped index and selects the padding
/// value outside it: one kernel, with which the element-wise op after it
/// (a bf16 copy) merges, and which depends on nothing but its source.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCGPUGATHERPADS
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The padding value of `pad` when it is one value from outside its body.
Value paddingValueOf(tensor::PadOp pad) {
  Value value = pad.getConstantPaddingValue();
  if (!value || pad.getRegion().isAncestor(value.getParentRegion()))
    return {};
  return value;
}

/// Whether `pad` can become a generic: static shapes, low and high pads.
bool isGatherable(tensor::PadOp pad) {
  return pad.getSourceType().hasStaticShape() &&
         pad.getResultType().hasStaticShape() &&
         pad.getStaticLow().size() == pad.getStaticHigh().size() &&
         !ShapedType::isDynamicShape(pad.getStaticLow()) &&
         !ShapedType::isDynamicShape(pad.getStaticHigh()) &&
         paddingValueOf(pad);
}

/// The generic that computes `pad`.
Value gather(OpBuilder &b, tensor::PadOp pad) {
  Location loc = pad.getLoc();
  RankedTensorType resultType = pad.getResultType();
  ArrayRef<int64_t> sourceShape = pad.getSourceType().getShape();
  ArrayRef<int64_t> low = pad.getStaticLow();
  int64_t rank = resultType.getRank();
  Value padding = paddingValueOf(pad);
  Value source = pad.getSource();
  Value empty = b.create<tensor::EmptyOp>(loc, resultType.getShape(),
                                          resultType.getElementType());
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, ValueRange{}, ValueRange{empty}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange) {
        Value inside;
        SmallVector<Value> indices;
        Value zero = nb.create<arith::ConstantIndexOp>(nloc, 0);
        for (int64_t d = 0; d < rank; ++d) {
          Value index = nb.create<linalg::IndexOp>(nloc, d);
          if (low[d] == 0 && sourceShape[d] == resultType.getDimSize(d)) {
            indices.push_back(index);
            continue;
          }
          // The source index, and whether it is within the source.
          Value shifted = nb.create<arith::SubIOp>(
              nloc, index, nb.create<arith::ConstantIndexOp>(nloc, low[d]));
          Value last =
              nb.create<arith::ConstantIndexOp>(nloc, sourceShape[d] - 1);
          Value within = nb.create<arith::AndIOp>(
              nloc,
              nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::sge, shifted,
                                       zero),
              nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::sle, shifted,
                                       last));
          inside =
              inside ? nb.create<arith::AndIOp>(nloc, inside, within) : within;
          indices.push_back(nb.create<arith::MinSIOp>(
              nloc, nb.create<arith::MaxSIOp>(nloc, shifted, zero), last));
        }
        Value read = nb.create<tensor::ExtractOp>(nloc, source, indices);
        Value value =
            inside ? nb.create<arith::SelectOp>(nloc, inside, read, padding)
                   : read;
        nb.create<linalg::YieldOp>(nloc, value);
      });
  return generic.getResult(0);
}

struct GatherPads : public mlir::tfc::impl::TfcGpuGatherPadsBase<GatherPads> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) {
      if (isGatherable(pad))
        pads.push_back(pad);
    });
    IRRewriter rewriter(&getContext());
    for (tensor::PadOp pad : pads) {
      rewriter.setInsertionPoint(pad);
      rewriter.replaceOp(pad, gather(rewriter, pad));
    }
    gatheredPads += pads.size();
  }
};

} // namespace
