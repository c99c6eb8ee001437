//===- Machines.h - The CPUs and GPUs tfc compiles for ---------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The checks of `--cpu` and `--gpu-arch` against what LLVM's back ends
/// know, and the features of the CPU a build is for.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_MACHINES_H
#define TFC_TOOLS_TFC_MACHINES_H

#include "llvm/ADT/StringRef.h"

namespace tfc {

/// Checks `--cpu` against the CPUs LLVM knows for this machine's target, so
/// that a typo is an error rather than code for a generic CPU.
bool checkCpu(llvm::StringRef cpu);

/// Whether `cpu` ("native" or "": this machine's; else a CPU that checkCpu
/// accepted) has the feature `feature`, in LLVM's name (`avx512bf16`).
bool cpuHasFeature(llvm::StringRef cpu, llvm::StringRef feature);

/// Checks `--gpu-arch` against the architectures LLVM's NVPTX back end
/// knows (sm_52 and later: the oldest that CUDA 12 still supports).
bool checkGpuArch(llvm::StringRef arch);

} // namespace tfc

#endif // TFC_TOOLS_TFC_MACHINES_H
