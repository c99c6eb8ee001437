//===- Passes.h - tfc conversion passes -------------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_PASSES_H
#define TFC_CONVERSION_PASSES_H

#include "passes/Passes.h"

namespace mlir::tfc {

#define GEN_PASS_DECL
#include "conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "conversion/Passes.h.inc"

} // namespace mlir::tfc

#endif // TFC_CONVERSION_PASSES_H
