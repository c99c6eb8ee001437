//===- Emit.h - Object files, IR files and executables ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The last steps of `tfc compile`, after a back end's pipeline: LLVM IR or
/// an object file from an LLVM-dialect module, and the executable linked
/// from the object and the runtime libraries.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_EMIT_EMIT_H
#define TFC_CODEGEN_EMIT_EMIT_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/ToolOutputFile.h"

#include <string>

namespace tfc {

/// Translates an LLVM-dialect module to LLVM IR, optimises it at -O3 for
/// `cpu` ("native" or "" = this machine) at `optLevel` (0-3) and writes an
/// object file. Returns an error message, empty on success.
std::string emitObjectFile(mlir::ModuleOp module, const std::string &cpu,
                           const std::string &path, bool emitLLVMIR,
                           unsigned optLevel = 3);

/// Flushes `out`, written at `path`, and keeps it; on a write error (a
/// full disk) returns "<path>: <error>" instead, removing a partial
/// regular file (a device such as /dev/full is left alone).
std::string finishOutput(llvm::ToolOutputFile &out, const std::string &path);

/// Links `object` with the runtime libraries into the executable `output`.
/// `toolDir` is the folder of the running `tfc`, from which the runtime
/// libraries are found. A `cuda` executable links the CUDA driver glue
/// (libtfcrt_cuda) instead of OpenMP, the runtime without MPI and
/// libstdc++ statically, so that it needs only the NVIDIA driver. Returns an
/// error message, empty on success.
std::string linkExecutable(const std::string &object, const std::string &output,
                           const std::string &toolDir, bool cuda = false);

} // namespace tfc

#endif // TFC_CODEGEN_EMIT_EMIT_H
