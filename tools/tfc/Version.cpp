//===- Version.cpp - tfc --version ----------------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `TFC_VERSION` comes from the top-level `project()`; `TFC_GIT_COMMIT` from
/// `GitCommit.h`, which `GitCommit.cmake` rewrites at every build when the
/// commit changes ("unknown" outside a git checkout).
///
//===----------------------------------------------------------------------===//

#include "tools/tfc/Version.h"

#include "tools/tfc/GitCommit.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

void tfc::printVersion(llvm::raw_ostream &os) {
  os << "tfc version " << TFC_VERSION << "\n"
     << "LLVM/MLIR version " << LLVM_VERSION_STRING << "\n"
     << "git commit " << TFC_GIT_COMMIT << "\n";
}
