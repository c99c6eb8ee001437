//===- Passes.h - tfc passes of the CPU back end ----------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_CPU_PASSES_H
#define TFC_CODEGEN_CPU_PASSES_H

#include "passes/Passes.h"

namespace mlir::tfc {

#define GEN_PASS_DECL
#include "codegen/cpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/cpu/Passes.h.inc"

} // namespace mlir::tfc

#endif // TFC_CODEGEN_CPU_PASSES_H
