//===- Passes.h - tfc passes -------------------------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_PASSES_H
#define TFC_PASSES_PASSES_H

#include "dialect/TfcDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::tfc

#endif // TFC_PASSES_PASSES_H
