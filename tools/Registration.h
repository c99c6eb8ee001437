//===- Registration.h - The passes the tfc tools can name -------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_REGISTRATION_H
#define TFC_TOOLS_REGISTRATION_H

#include "codegen/cpu/Passes.h"
#include "codegen/gpu/Passes.h"
#include "conversion/Passes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

namespace tfc {

/// Registers every pass of tfc (passes/, conversion/, codegen/cpu,
/// codegen/gpu) and the upstream passes its pipelines run (MLIR's generic
/// transforms, empty-tensor elimination, one-shot bufferization), so that
/// `tfc-opt` and `tfc compile --mlir-print-ir-after=...` can name them.
inline void registerAllPasses() {
  mlir::registerTransformsPasses();
  mlir::bufferization::registerEmptyTensorEliminationPass();
  mlir::bufferization::registerOneShotBufferizePass();
  mlir::tfc::registerTfcPasses();
  mlir::tfc::registerTfcConversionPasses();
  mlir::tfc::registerTfcCpuPasses();
  mlir::tfc::registerTfcGpuPasses();
}

} // namespace tfc

#endif // TFC_TOOLS_REGISTRATION_H
