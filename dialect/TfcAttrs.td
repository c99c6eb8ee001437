//===- TfcAttrs.td - Attributes of the tfc dialect ---------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_ATTRS_TD
#define TFC_ATTRS_TD

include "dialect/TfcDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

def Tfc_ActivationKind : I32EnumAttr<"ActivationKind", "activation function", [
    I32EnumAttrCase<"relu", 0>,
    I32EnumAttrCase<"gelu", 1>,
    I32EnumAttrCase<"squared_relu", 2>]> {
  let cppNamespace = "::mlir::tfc";
}

def Tfc_ShortenKind : I32EnumAttr<"ShortenKind", "hourglass shortening", [
    I32EnumAttrCase<"avg", 0>,
    I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"attention", 2>]> {
  let cppNamespace = "::mlir::tfc";
}

def Tfc_UpsampleKind : I32EnumAttr<"UpsampleKind", "hourglass up-sampling", [
    I32EnumAttrCase<"naive", 0>,
    I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"attention", 2>]> {
  let cppNamespace = "::mlir::tfc";
}

def Tfc_ClassifyLossKind : I32EnumAttr<"ClassifyLossKind",
    "classification loss", [
    I32EnumAttrCase<"ce", 0>,
    I32EnumAttrCase<"bce", 1>]> {
  let cppNamespace = "::mlir::tfc";
}

def Tfc_ParamKind : I32EnumAttr<"ParamKind", "kind of a model tensor", [
    I32EnumAttrCase<"param", 0>,
    I32EnumAttrCase<"buffer", 1>]> {
  let cppNamespace = "::mlir::tfc";
}

//===----------------------------------------------------------------------===//
// Attention kinds
//===----------------------------------------------------------------------===//

class Tfc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tfc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tfc_SoftmaxAttr : Tfc_Attr<"Softmax", "softmax"> {
  let summary = "Scaled dot-product softmax attention";
  let description = [{
    `#tfc.softmax<causal>` or `#tfc.softmax<>`: exact attention, with the
    causal mask when `causal` is present.
  }];
  let parameters = (ins "bool":$causal);
  let hasCustomAssemblyFormat = 1;
}

def Tfc_PerformerAttr : Tfc_Attr<"Performer", "performer"> {
  let summary = "FAVOR+ random-feature linear attention";
  let description = [{
    `#tfc.performer<features = 256, redraw = 1000, orthogonal, causal>`:
    softmax-kernel approximation with `features` positive random features
    (orthogonal blocks when `orthogonal`), redrawn every `redraw` training
    steps (0: never); the causal form uses prefix sums.
  }];
  let parameters = (ins "int64_t":$features, "int64_t":$redraw,
                        "bool":$orthogonal, "bool":$causal);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Tfc_LongformerAttr : Tfc_Attr<"Longformer", "longformer"> {
  let summary = "Sliding-window attention with global tokens";
  let description = [{
    `#tfc.longformer<window = 128, dilation = 1, global = [0], causal>`:
    every token attends to the `window` positions around it (`window / 2`
    on each side; with `causal`, the `window` positions up to itself),
    `dilation` apart; the positions in `global` attend to and are attended
    by every token, through their own projections.
  }];
  let parameters = (ins "int64_t":$window, "int64_t":$dilation,
                        ArrayRefParameter<"int64_t">:$globalTokens,
                        "bool":$causal);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// How many dilated steps (`dilation` keys each) the sliding window
    /// reaches before its query: `window - 1` when causal, else
    /// `window / 2`.
    int64_t getStepsBack() const;
    /// How many dilated steps it reaches after its query: 0 when causal,
    /// else `window / 2`.
    int64_t getStepsAhead() const;
    /// The global token positions, sorted and without duplicates.
    ::llvm::SmallVector<int64_t> getGlobalPositions() const;
  }];
}

#endif // TFC_ATTRS_TD
