//===- ExportAbi.cpp - The tfc-export-abi pass ----------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Gives the generated object file the C entry points and data of
/// runtime/ModelABI.h: `tfc_forward` over plain buffers, and the manifest
/// text `tfc_model_manifest` built from the module attributes that the
/// importer (`tfc.config`) and tfc-flatten-params (`tfc.manifest`,
/// `tfc.param_count`, `tfc.flops`) left.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Utils.h"
#include "runtime/ManifestFormat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCEXPORTABI
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
/// The words of the manifest text, shared with the runtime that reads it.
namespace record = ::tfc::manifest;

/// The element count of a static shape, std::nullopt when it does not fit in
/// 64 bits (ShapedType::getNumElements would wrap) or is dynamic.
static std::optional<int64_t> checkedNumElements(ShapedType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> count = 1;
  for (int64_t extent : type.getShape()) {
    count = llvm::checkedMul(*count, extent);
    if (!count)
      return std::nullopt;
  }
  return count;
}

/// The bytes of a tensor of `type`, std::nullopt past 64 bits.
static std::optional<int64_t> checkedBytes(ShapedType type) {
  std::optional<int64_t> count = checkedNumElements(type);
  if (!count)
    return std::nullopt;
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  return llvm::checkedMul(*count, std::max<int64_t>(1, elementBytes));
}

/// Renders the manifest text of ModelABI.h; fails, with an error on the
/// offending op, when a size does not fit in 64 bits.
static FailureOr<std::string> manifestText(ModuleOp module,
                                           func::FuncOp forward) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << record::kMagic << " " << record::kVersion << "\n";
  if (auto config = module->getAttrOfType<DictionaryAttr>("tfc.config")) {
    for (NamedAttribute entry : config) {
      os << entry.getName().getValue() << " ";
      if (auto s = dyn_cast<StringAttr>(entry.getValue()))
        os << s.getValue();
      else if (auto i = dyn_cast<IntegerAttr>(entry.getValue()))
        os << i.getInt();
      else if (auto f = dyn_cast<FloatAttr>(entry.getValue()))
        os << llvm::format("%.17g", f.getValueAsDouble());
      os << "\n";
    }
  }
  int64_t params = 0;
  if (auto count = module->getAttrOfType<IntegerAttr>("tfc.param_count"))
    params = count.getInt();
  os << record::kParams << " " << params << "\n";
  auto tokens = cast<RankedTensorType>(forward.getArgumentTypes()[1]);
  std::optional<int64_t> positions = checkedNumElements(tokens);
  if (!positions || *positions < 1) {
    forward.emitOpError() << "has a token tensor " << tokens
                          << " whose element count is not a positive 64-bit "
                             "integer";
    return failure();
  }
  if (auto flops = module->getAttrOfType<IntegerAttr>("tfc.flops"))
    os << record::kFlopsPerToken << " " << flops.getInt() / *positions << "\n";
  if (auto precision = module->getAttrOfType<StringAttr>("tfc.precision"))
    os << record::kPrecision << " " << precision.getValue() << "\n";
  // Upper bound of the working memory: every intermediate tensor, before
  // bufferization reuses any of them.
  std::optional<int64_t> activationBytes = 0;
  WalkResult walk = forward.walk([&](tensor::EmptyOp empty) {
    std::optional<int64_t> bytes = checkedBytes(empty.getType());
    if (bytes)
      activationBytes = llvm::checkedAdd(*activationBytes, *bytes);
    if (!bytes || !activationBytes) {
      empty.emitOpError() << "makes the working memory of @forward exceed "
                             "2^63 bytes";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  os << record::kActivationBytes << " " << *activationBytes << "\n";
  if (auto manifest = module->getAttrOfType<ArrayAttr>("tfc.manifest")) {
    for (Attribute attr : manifest) {
      auto entry = cast<DictionaryAttr>(attr);
      auto shape = cast<DenseI64ArrayAttr>(entry.get("shape")).asArrayRef();
      os << record::kTensor << " "
         << cast<StringAttr>(entry.get("name")).getValue() << " "
         << cast<IntegerAttr>(entry.get("offset")).getInt() << " "
         << cast<StringAttr>(entry.get("kind")).getValue() << " "
         << cast<StringAttr>(entry.get("init")).getValue() << " "
         << shape.size();
      for (int64_t extent : shape)
        os << " " << extent;
      os << "\n";
    }
  }
  os << record::kEnd << "\n";
  return text;
}

/// Creates `name(inputs..., outputs...)` on memrefs that calls `callee`
/// (tensor inputs, tensor results) and writes its results, in the order
/// `resultOrder`, into the trailing output buffers; `callee` becomes private
/// so that the inliner folds it into the entry point. The writes are
/// `restrict` (the buffer is not the memory of any other argument) but for
/// the first `aliasedOutputs` outputs, which may be the memory of inputs.
static void exportEntry(OpBuilder &builder, func::FuncOp callee, StringRef name,
                        unsigned inputs, ArrayRef<unsigned> resultOrder,
                        unsigned aliasedOutputs = 0) {
  Location loc = callee.getLoc();
  FunctionType type = callee.getFunctionType();
  auto toMemRef = [](Type t) -> Type {
    auto tensor = cast<RankedTensorType>(t);
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  };
  SmallVector<Type> argTypes;
  for (Type input : type.getInputs().take_front(inputs))
    argTypes.push_back(toMemRef(input));
  for (unsigned result : resultOrder)
    argTypes.push_back(toMemRef(type.getResult(result)));
  auto entry = builder.create<func::FuncOp>(
      loc, name, builder.getFunctionType(argTypes, {}));
  Block *body = entry.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  SmallVector<Value> tensors;
  for (unsigned i = 0; i < inputs; ++i)
    tensors.push_back(builder.create<bufferization::ToTensorOp>(
        loc, type.getInput(i), body->getArgument(i), /*restrict=*/true,
        /*writable=*/false));
  auto call = builder.create<func::CallOp>(loc, callee, tensors);
  for (auto [i, result] : llvm::enumerate(resultOrder))
    builder.create<bufferization::MaterializeInDestinationOp>(
        loc, TypeRange{}, call.getResult(result), body->getArgument(inputs + i),
        /*restrict=*/i >= aliasedOutputs,
        /*writable=*/true);
  builder.create<func::ReturnOp>(loc);
  callee.setPrivate();
}

namespace {
struct TfcExportAbiPass
    : public mlir::tfc::impl::TfcExportAbiBase<TfcExportAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      module.emitError() << "no @forward function to export";
      return signalPassFailure();
    }
    FunctionType type = forward.getFunctionType();
    if (type.getNumInputs() != 4 || type.getNumResults() != 2) {
      forward.emitOpError() << "must take (params, tokens, targets, mask) and "
                               "return (loss, logits); run tfc-flatten-params "
                               "first";
      return signalPassFailure();
    }
    FailureOr<std::string> text = manifestText(module, forward);
    if (failed(text))
      return signalPassFailure();
    std::string manifest = std::move(*text);
    Location loc = forward.getLoc();

    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    // tfc_forward(params, tokens, targets, mask, logits, loss).
    exportEntry(builder, forward, "tfc_forward", /*inputs=*/4,
                /*resultOrder=*/{1, 0});
    // tfc_train_step(params, tokens, targets, mask, seed, grads, loss).
    if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
      exportEntry(builder, step, "tfc_train_step", 5, {1, 0});
    // tfc_optimizer_step(params, grads, m, v, step, schedule, params', m',
    //                    v', stats), where params', m' and v' may be the
    // memory of params, m and v (ModelABI.h).
    if (auto opt = module.lookupSymbol<func::FuncOp>("optimizer_step"))
      exportEntry(builder, opt, "tfc_optimizer_step", 6, {0, 1, 2, 3},
                  /*aliasedOutputs=*/3);

    // The manifest, NUL-terminated, as an external constant.
    manifest.push_back('\0');
    auto arrayType =
        LLVM::LLVMArrayType::get(builder.getI8Type(), manifest.size());
    builder.setInsertionPointToEnd(module.getBody());
    builder.create<LLVM::GlobalOp>(loc, arrayType, /*isConstant=*/true,
                                   LLVM::Linkage::External, record::kGlobalName,
                                   builder.getStringAttr(manifest));
  }
};
} // namespace
