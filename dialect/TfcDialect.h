//===- TfcDialect.h - The tfc dialect ----------------------------*- C++
//-*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Declares the tfc dialect, its attributes and its operations.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCDIALECT_H
#define TFC_DIALECT_TFCDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/TfcDialect.h.inc"
#include "dialect/TfcEnums.h.inc"
#include "dialect/TfcInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/TfcAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/TfcOps.h.inc"

#endif // TFC_DIALECT_TFCDIALECT_H
