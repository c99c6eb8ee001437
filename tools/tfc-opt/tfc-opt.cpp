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
#include "codegen/cpu/CpuPipeline.h"
#include "codegen/gpu/GpuPipeline.h"
#include "dialect/TfcDialect.h"
#include "tools/Registration.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tfc::registerCodegenDialects(registry);
  tfc::registerGpuCodegenDialects(registry);
  tfc::registerAllPasses();
  tfc::registerCodegenPipelines();
  tfc::registerCpuCodegenPipelines();
  tfc::registerGpuCodegenPipelines();
  // The upstream steps of the GPU pipeline, for its lit tests.
  mlir::registerGpuModuleToBinaryPass();
  mlir::registerGpuNVVMAttachTarget();
  mlir::registerConvertGpuOpsToNVVMOps();
  // linalg on buffers to loops, which tfc-gpu-map-kernels maps.
  mlir::registerConvertLinalgToParallelLoopsPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfc optimizer driver\n", registry));
}
