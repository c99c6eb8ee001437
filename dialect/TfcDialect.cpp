//===- TfcDialect.cpp - The tfc dialect and its attributes ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "dialect/TfcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tfc;

#include "dialect/TfcDialect.cpp.inc"
#include "dialect/TfcEnums.cpp.inc"
#include "dialect/TfcInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/TfcAttrs.cpp.inc"

void TfcDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/TfcAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/TfcOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Attention-kind attributes: `<key = value, flag, ...>`
//===----------------------------------------------------------------------===//

namespace {
/// The fields of an attention-kind attribute as written in the IR.
struct KindFields {
  llvm::StringMap<int64_t> integers;
  llvm::SmallVector<int64_t> globalTokens;
  bool hasGlobal = false;
  llvm::StringSet<> flags;
};
} // namespace

/// Parses `<entry, entry, ...>` where an entry is `flag`, `key = integer` or
/// `global = [i, j, ...]`, accepting only the names listed.
static ParseResult parseKindFields(AsmParser &parser, KindFields &fields,
                                   ArrayRef<StringRef> integerKeys,
                                   ArrayRef<StringRef> flagKeys,
                                   bool allowGlobal) {
  if (parser.parseLess())
    return failure();
  if (succeeded(parser.parseOptionalGreater()))
    return success();
  auto parseEntry = [&]() -> ParseResult {
    llvm::SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    if (llvm::is_contained(flagKeys, key)) {
      fields.flags.insert(key);
      return success();
    }
    if (allowGlobal && key == "global") {
      fields.hasGlobal = true;
      if (parser.parseEqual() || parser.parseLSquare())
        return failure();
      if (succeeded(parser.parseOptionalRSquare()))
        return success();
      auto parseToken = [&]() -> ParseResult {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        fields.globalTokens.push_back(v);
        return success();
      };
      if (parser.parseCommaSeparatedList(parseToken) || parser.parseRSquare())
        return failure();
      return success();
    }
    if (llvm::is_contained(integerKeys, key)) {
      int64_t v;
      if (parser.parseEqual() || parser.parseInteger(v))
        return failure();
      fields.integers[key] = v;
      return success();
    }
    return parser.emitError(loc, "unknown field '") << key << "'";
  };
  if (parser.parseCommaSeparatedList(parseEntry) || parser.parseGreater())
    return failure();
  return success();
}

/// Returns the integer field `key` or reports it missing.
static FailureOr<int64_t> requireField(AsmParser &parser, KindFields &fields,
                                       StringRef key) {
  auto it = fields.integers.find(key);
  if (it == fields.integers.end()) {
    parser.emitError(parser.getCurrentLocation(), "missing field '")
        << key << "'";
    return failure();
  }
  return it->second;
}

Attribute SoftmaxAttr::parse(AsmParser &parser, Type) {
  KindFields fields;
  if (parseKindFields(parser, fields, {}, {"causal"}, false))
    return {};
  return SoftmaxAttr::get(parser.getContext(), fields.flags.contains("causal"));
}

void SoftmaxAttr::print(AsmPrinter &printer) const {
  printer << "<" << (getCausal() ? "causal" : "") << ">";
}

Attribute PerformerAttr::parse(AsmParser &parser, Type) {
  KindFields fields;
  if (parseKindFields(parser, fields, {"features", "redraw"},
                      {"orthogonal", "causal"}, false))
    return {};
  FailureOr<int64_t> features = requireField(parser, fields, "features");
  if (failed(features))
    return {};
  int64_t redraw = fields.integers.lookup("redraw");
  return PerformerAttr::getChecked(
      [&] { return parser.emitError(parser.getCurrentLocation()); },
      parser.getContext(), *features, redraw,
      fields.flags.contains("orthogonal"), fields.flags.contains("causal"));
}

void PerformerAttr::print(AsmPrinter &printer) const {
  printer << "<features = " << getFeatures() << ", redraw = " << getRedraw();
  if (getOrthogonal())
    printer << ", orthogonal";
  if (getCausal())
    printer << ", causal";
  printer << ">";
}

LogicalResult
PerformerAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                      int64_t features, int64_t redraw, bool, bool) {
  if (features <= 0)
    return emitError() << "performer 'features' must be positive, got "
                       << features;
  if (redraw < 0)
    return emitError() << "performer 'redraw' must be >= 0, got " << redraw;
  return success();
}

Attribute LongformerAttr::parse(AsmParser &parser, Type) {
  KindFields fields;
  if (parseKindFields(parser, fields, {"window", "dilation"}, {"causal"}, true))
    return {};
  FailureOr<int64_t> window = requireField(parser, fields, "window");
  if (failed(window))
    return {};
  int64_t dilation = fields.integers.lookup("dilation");
  if (!fields.integers.count("dilation"))
    dilation = 1;
  return LongformerAttr::getChecked(
      [&] { return parser.emitError(parser.getCurrentLocation()); },
      parser.getContext(), *window, dilation, fields.globalTokens,
      fields.flags.contains("causal"));
}

int64_t LongformerAttr::getStepsBack() const {
  return getCausal() ? getWindow() - 1 : getWindow() / 2;
}

int64_t LongformerAttr::getStepsAhead() const {
  return getCausal() ? 0 : getWindow() / 2;
}

SmallVector<int64_t> LongformerAttr::getGlobalPositions() const {
  SmallVector<int64_t> globals(getGlobalTokens());
  llvm::sort(globals);
  globals.erase(std::unique(globals.begin(), globals.end()), globals.end());
  return globals;
}

void LongformerAttr::print(AsmPrinter &printer) const {
  printer << "<window = " << getWindow() << ", dilation = " << getDilation()
          << ", global = [";
  llvm::interleaveComma(getGlobalTokens(), printer);
  printer << "]";
  if (getCausal())
    printer << ", causal";
  printer << ">";
}

LogicalResult
LongformerAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                       int64_t window, int64_t dilation,
                       ArrayRef<int64_t> globalTokens, bool) {
  if (window <= 0)
    return emitError() << "longformer 'window' must be positive, got "
                       << window;
  if (dilation <= 0)
    return emitError() << "longformer 'dilation' must be positive, got "
                       << dilation;
  for (int64_t position : globalTokens)
    if (position < 0)
      return emitError() << "longformer 'global' positions must be >= 0, got "
                         << position;
  return success();
}
