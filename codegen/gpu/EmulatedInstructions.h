//===- EmulatedInstructions.h - Warp instructions on the CPU ----*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The instructions that the threads of a warp (or a warpgroup) execute
/// together, as tfc-gpu-emulate-launches runs them: for one thread of a
/// block, its results computed from the operands that every thread of its
/// warp holds. Each follows the PTX ISA's description of the instruction
/// (its fragments and shared-memory layouts), written apart from the
/// builders of the kernels that use it, so that an emulated kernel checks
/// those builders.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPU_EMULATEDINSTRUCTIONS_H
#define TFC_CODEGEN_GPU_EMULATEDINSTRUCTIONS_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::tfc {

/// Operand `i` of the instruction as the block's thread `thread` holds it,
/// built at the given builder.
using ThreadOperand =
    llvm::function_ref<Value(OpBuilder &, unsigned i, Value thread)>;

/// Whether `op` is an instruction that the threads of a warp or a
/// warpgroup execute together and that emulateCollective runs: a
/// `gpu.shuffle`, an `nvgpu.ldmatrix`, `mma.sync.m16n8k16` on bf16 (through
/// `llvm.call_intrinsic`), or `nvvm.wgmma.mma_async` on bf16.
bool isEmulatedCollective(Operation *op);

/// The results of the collective `op` for the block's thread `thread`
/// (index), built at `b`: its operands come from `operand`. A warpgroup
/// mma's accumulators are not returned but written to `accumulators`
/// (`memref<threads x n/2 x f32>`) at `thread`; its descriptors' addresses
/// are taken in the 256 KiB window of shared memory that holds
/// `sharedBase` (the shared buffer's address, index).
SmallVector<Value> emulateCollective(OpBuilder &b, Operation *op, Value thread,
                                     ThreadOperand operand, Value sharedBase,
                                     Value accumulators);

} // namespace mlir::tfc

#endif // TFC_CODEGEN_GPU_EMULATEDINSTRUCTIONS_H
