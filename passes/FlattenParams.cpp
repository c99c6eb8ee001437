//===- FlattenParams.cpp - The tfc-flatten-params pass --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One flat parameter buffer: every `tfc.param` of a function becomes a slice
/// of a new leading argument, and the module records the manifest that the
/// runtime reads (names, offsets, shapes, init schemes, kinds) together with
/// the forward's matmul FLOP count (ForwardFlopCount, FlopCount.h).
///
//===----------------------------------------------------------------------===//

#include "passes/FlopCount.h"
#include "passes/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFLATTENPARAMS
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

/// Parameter offsets are multiples of this many elements (64 bytes in f32).
static constexpr int64_t kParamAlignment = 16;

static int64_t elementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

/// Replaces the per-parameter gradient results of `func` (after the loss,
/// named by `names`) by one flat gradient buffer laid out like the
/// parameters, zero where no gradient flows (buffers, alignment padding).
static LogicalResult packGradients(func::FuncOp func, ArrayAttr names,
                                   const llvm::StringMap<int64_t> &offsets,
                                   RankedTensorType flatType) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (ret.getNumOperands() != names.size() + 1)
    return func.emitOpError() << "'tfc.param_grads' names " << names.size()
                              << " gradients but the function returns "
                              << ret.getNumOperands() - 1;
  OpBuilder builder(ret);
  Location loc = ret.getLoc();
  Type element = flatType.getElementType();
  Value flat = filledTensor(builder, loc, flatType.getShape(), element, 0.0);
  for (auto [name, grad] : llvm::zip(names.getAsValueRange<StringAttr>(),
                                     ret.getOperands().drop_front())) {
    auto it = offsets.find(name);
    if (it == offsets.end())
      return func.emitOpError()
             << "gradient of unknown parameter '" << name << "'";
    int64_t count = elementCount(shapeOf(grad));
    Value line = reshape(builder, loc, grad, {count});
    flat = builder.create<tensor::InsertSliceOp>(
        loc, line, flat,
        ArrayRef<OpFoldResult>{builder.getIndexAttr(it->second)},
        ArrayRef<OpFoldResult>{builder.getIndexAttr(count)},
        ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
  }
  SmallVector<Value> results = {ret.getOperand(0), flat};
  builder.create<func::ReturnOp>(loc, results);
  ret.erase();
  func.setFunctionType(builder.getFunctionType(func.getArgumentTypes(),
                                               ValueRange(results).getTypes()));
  func->removeAttr("tfc.param_grads");
  return success();
}

namespace {
struct TfcFlattenParamsPass
    : public tfc::impl::TfcFlattenParamsBase<TfcFlattenParamsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder builder(ctx);
    SmallVector<Attribute> manifest;
    llvm::StringMap<int64_t> offsets;
    int64_t total = 0;
    Type element;

    // Assign offsets over the whole module, so that every function sees the
    // same layout.
    WalkResult result = module.walk([&](ParamOp param) {
      RankedTensorType type = param.getType();
      if (!element)
        element = type.getElementType();
      if (element != type.getElementType()) {
        param.emitOpError() << "all parameters must share one element type";
        return WalkResult::interrupt();
      }
      StringRef name = param.getTensorName();
      if (offsets.count(name))
        return WalkResult::advance();
      offsets[name] = total;
      manifest.push_back(builder.getDictionaryAttr({
          builder.getNamedAttr("name", builder.getStringAttr(name)),
          builder.getNamedAttr("offset", builder.getI64IntegerAttr(total)),
          builder.getNamedAttr("shape",
                               builder.getDenseI64ArrayAttr(type.getShape())),
          builder.getNamedAttr("init", param.getInitAttr()),
          builder.getNamedAttr("kind", builder.getStringAttr(stringifyParamKind(
                                           param.getKind()))),
      }));
      int64_t count = elementCount(type.getShape());
      total +=
          (count + kParamAlignment - 1) / kParamAlignment * kParamAlignment;
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    if (!element)
      return;

    auto flatType = RankedTensorType::get({total}, element);
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<ParamOp> params;
      func.walk([&](ParamOp param) { params.push_back(param); });
      if (params.empty() || func.isExternal())
        continue;
      if (func.getSymName() == "forward") {
        if (std::optional<int64_t> flops =
                getChildAnalysis<ForwardFlopCount>(func).flops())
          module->setAttr("tfc.flops", builder.getI64IntegerAttr(*flops));
        else
          func.emitWarning("the forward's FLOP count overflows 64 bits; the "
                           "manifest records none");
      }
      func.insertArgument(0, flatType, {}, func.getLoc());
      func.setArgAttr(0, "tfc.arg", builder.getStringAttr("params"));
      Value flat = func.getArgument(0);
      for (ParamOp param : params) {
        builder.setInsertionPoint(param);
        Location loc = param.getLoc();
        ArrayRef<int64_t> shape = param.getType().getShape();
        int64_t count = elementCount(shape);
        int64_t offset = offsets[param.getTensorName()];
        Value slice = builder.create<tensor::ExtractSliceOp>(
            loc, RankedTensorType::get({count}, element), flat,
            ArrayRef<OpFoldResult>{builder.getIndexAttr(offset)},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(count)},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
        param.replaceAllUsesWith(reshape(builder, loc, slice, shape));
        param.erase();
      }
      if (auto gradNames = func->getAttrOfType<ArrayAttr>("tfc.param_grads"))
        if (failed(packGradients(func, gradNames, offsets, flatType)))
          return signalPassFailure();
    }
    module->setAttr("tfc.manifest", builder.getArrayAttr(manifest));
    module->setAttr("tfc.param_count", builder.getI64IntegerAttr(total));
  }
};
} // namespace
