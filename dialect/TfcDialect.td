//===- TfcDialect.td - The tfc dialect definition ----------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TD
#define TFC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tfc_Dialect : Dialect {
  let name = "tfc";
  let summary = "A tensor-level dialect for efficient transformer models";
  let description = [{
    The `tfc` dialect carries a transformer model as a graph of model-level
    operations on ranked tensors: embeddings, positional encodings, linear
    layers, norms, activations, attention of several kinds (softmax,
    Performer FAVOR+, Longformer), Primer's depth-wise convolution, hourglass
    shortening and up-sampling, and the losses. Parameters are `tfc.param`
    values named as in PyTorch state dicts. Later passes lower it to linalg.
  }];
  let cppNamespace = "::mlir::tfc";
  let useDefaultAttributePrinterParser = 1;
}

class Tfc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfc_Dialect, mnemonic, traits>;

#endif // TFC_DIALECT_TD
