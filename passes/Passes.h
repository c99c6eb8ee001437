//===- Passes.h - tfc passes -------------------------------------*- C++
//-*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_PASSES_H
#define TFC_PASSES_PASSES_H

#include "dialect/TfcDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tfc {

/// Name prefix of the zero-initialised arena globals that
/// tfc-static-buffers creates, `__tfc_arena_<n>`, one per function.
inline constexpr llvm::StringLiteral kArenaPrefix = "__tfc_arena_";

/// Whether `op` is a contraction `acc + a * b`: two inputs (read as they
/// are or widened by `arith.extf`), one output, one reduction loop.
bool isMultiplyAddContraction(linalg::LinalgOp op);

/// `op` as a linalg.generic: itself, or its generalization, which replaces
/// it (a named op such as linalg.matmul); failure when it has none.
FailureOr<linalg::GenericOp> asGenericOp(RewriterBase &rewriter,
                                         linalg::LinalgOp op);

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::tfc

#endif // TFC_PASSES_PASSES_H
