//===- Version.h - tfc --version -------------------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What `tfc --version` prints: tfc's version, the LLVM/MLIR it was built
/// against and the git commit of the sources (baked in when it was built).
///
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_VERSION_H
#define TFC_TOOLS_TFC_VERSION_H

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tfc {

/// Prints the three lines of `tfc --version` to `os`.
void printVersion(llvm::raw_ostream &os);

} // namespace tfc

#endif // TFC_TOOLS_TFC_VERSION_H
