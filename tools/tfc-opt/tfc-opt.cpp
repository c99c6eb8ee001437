//===- tfc-opt.cpp - mlir-opt with the tfc dialect and passes -------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs any of tfc's passes, or a pipeline of them, on a `.mlir` file; the
/// lit tests drive every pass through it.
///
//===----------------------------------------------------------------------===//

#include "codegen/Pipeline.h"
#include "dialect/TfcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tfc::registerCodegenDialects(registry);
  mlir::registerTransformsPasses();
  mlir::tfc::registerTfcPasses();
  tfc::registerCodegenPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfc optimizer driver\n", registry));
}
