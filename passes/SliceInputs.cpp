//===- SliceInputs.cpp - The tfc-slice-inputs pass ------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every parameter is a `tensor.extract_slice` of the flat parameter buffer,
/// which an entry point reads as one read-only `bufferization.to_tensor`.
/// One-Shot Bufferize keeps every slice (and every reshape of one) in the
/// alias set of that buffer, and its analysis of each of them goes through
/// the whole set: time that grows with the square of the parameter count,
/// so of the layer count. This pass reads each such slice as a tensor of its
/// own:
///
///   %p = bufferization.to_tensor %buffer restrict
///   %w = tensor.extract_slice %p[...]
///
/// becomes
///
///   %s = memref.subview %buffer[...]
///   %w = bufferization.to_tensor %s restrict
///
/// Both read the same elements, and bufferization turns both into the same
/// subview. The source must be read-only (a `to_tensor` without
/// `writable`): its slices are then never written in place, so that they
/// overlap does not matter to the analysis.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCSLICEINPUTS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {
struct TfcSliceInputsPass
    : public tfc::impl::TfcSliceInputsBase<TfcSliceInputsPass> {
  void runOnOperation() override {
    SmallVector<tensor::ExtractSliceOp> slices;
    getOperation().walk([&](tensor::ExtractSliceOp slice) {
      auto input = slice.getSource().getDefiningOp<bufferization::ToTensorOp>();
      if (input && input.getRestrict() && !input.getWritable() &&
          isa<MemRefType>(input.getMemref().getType()))
        slices.push_back(slice);
    });
    for (tensor::ExtractSliceOp slice : slices) {
      auto input = slice.getSource().getDefiningOp<bufferization::ToTensorOp>();
      Value buffer = input.getMemref();
      OpBuilder builder(slice);
      auto viewType =
          cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
              slice.getType().getShape(), cast<MemRefType>(buffer.getType()),
              slice.getMixedOffsets(), slice.getMixedSizes(),
              slice.getMixedStrides()));
      Value view = builder.create<memref::SubViewOp>(
          slice.getLoc(), viewType, buffer, slice.getMixedOffsets(),
          slice.getMixedSizes(), slice.getMixedStrides());
      Value tensor = builder.create<bufferization::ToTensorOp>(
          slice.getLoc(), slice.getType(), view, /*restrict=*/true,
          /*writable=*/false);
      slice.replaceAllUsesWith(tensor);
      slice.erase();
      if (input->use_empty())
        input->erase();
    }
  }
};
} // namespace
