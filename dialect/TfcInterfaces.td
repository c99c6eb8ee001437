//===- TfcInterfaces.td - Interfaces of the tfc dialect ----*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_INTERFACES_TD
#define TFC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tfc_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let description = [{
    A differentiable tfc operation: builds its vector-Jacobian product out of
    tfc operations, so that `tfc-autodiff` can derive the backward graph of
    any model. Backward ops recompute what they need from the forward
    operands.
  }];
  let cppNamespace = "::mlir::tfc";
  let methods = [
    InterfaceMethod<[{
        Given the gradient of each result (`resultGrads`, same order and types
        as the results; null for a result nothing depends on), appends the
        gradient of each operand to `operandGrads`, in operand order: null
        for an operand that is not differentiable (ids, masks, buffers).
      }],
      "::mlir::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // TFC_INTERFACES_TD
