//===- ManifestText.h - Records of the embedded manifest --------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The manifest text (runtime/ModelABI.h) is the NUL-terminated string of
/// the LLVM global `tfc_model_manifest` that tfc-export-abi creates. Passes
/// that learn more about the model (arena sizes, kernel counts) record it
/// there, and `tfc compile` reads records back from it.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_MANIFESTTEXT_H
#define TFC_PASSES_MANIFESTTEXT_H

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::tfc {

/// Sets the record `key value` of the module's manifest: replaces the line
/// that starts with `key ` or, when there is none, adds one before `end`.
/// Does nothing when the module has no manifest.
void setManifestRecord(ModuleOp module, StringRef key, StringRef value);

/// The value of the record `key value` of the module's manifest, or
/// std::nullopt when the module has no manifest or no such record.
std::optional<StringRef> getManifestRecord(ModuleOp module, StringRef key);

} // namespace mlir::tfc

#endif // TFC_PASSES_MANIFESTTEXT_H
