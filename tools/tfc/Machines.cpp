//===- Machines.cpp - The CPUs and GPUs tfc compiles for ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Machines.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <string>

namespace tfc {

/// LLVM's description of CPU `cpu` ("": the generic one) of this machine's
/// target; null if LLVM cannot describe it or has no target (`error`).
static std::unique_ptr<llvm::MCSubtargetInfo>
hostSubtarget(llvm::StringRef cpu, std::string &error) {
  llvm::InitializeNativeTarget();
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error = "no target for " + triple + ": " + error;
    return nullptr;
  }
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, ""));
}

/// Checks `--cpu` against the CPUs LLVM knows for this machine's target, so
/// that a typo is an error rather than code for a generic CPU.
bool checkCpu(llvm::StringRef cpu) {
  if (cpu.empty() || cpu == "native")
    return true;
  std::string triple = llvm::sys::getDefaultTargetTriple(), error;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget = hostSubtarget("", error);
  if (!error.empty()) {
    llvm::errs() << "tfc: error: --cpu: " << error << "\n";
    return false;
  }
  if (subtarget && subtarget->isCPUStringValid(cpu)) {
    // The generated code is 64-bit: a 32-bit x86 CPU (i386, pentium4)
    // would stop LLVM's code generator.
    std::unique_ptr<llvm::MCSubtargetInfo> chosen = hostSubtarget(cpu, error);
    if (llvm::Triple(triple).getArch() != llvm::Triple::x86_64 || !chosen ||
        chosen->checkFeatures("+64bit"))
      return true;
    llvm::errs() << "tfc: error: --cpu: '" << cpu
                 << "' has no 64-bit mode; expected a 64-bit CPU of " << triple
                 << " (such as x86-64-v3, skylake-avx512, znver4)\n";
    return false;
  }
  llvm::errs() << "tfc: error: --cpu: expected 'native' or a CPU of " << triple
               << " (such as x86-64-v3, skylake-avx512, znver4), got '" << cpu
               << "'\n";
  return false;
}

/// Whether `cpu` ("native" or "": this machine's; else a CPU that checkCpu
/// accepted) has the feature `feature`, in LLVM's name (`avx512bf16`).
bool cpuHasFeature(llvm::StringRef cpu, llvm::StringRef feature) {
  if (cpu.empty() || cpu == "native")
    return llvm::sys::getHostCPUFeatures().lookup(feature);
  std::string error;
  std::unique_ptr<llvm::MCSubtargetInfo> chosen = hostSubtarget(cpu, error);
  return chosen && chosen->checkFeatures(("+" + feature).str());
}

/// Checks `--gpu-arch` against the architectures LLVM's NVPTX back end
/// knows (sm_52 and later: the oldest that CUDA 12 still supports).
bool checkGpuArch(llvm::StringRef arch) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  std::string triple = "nvptx64-nvidia-cuda", error;
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(triple, error);
  unsigned number = 0;
  llvm::StringRef digits = arch;
  bool ok = nvptx && digits.consume_front("sm_") &&
            !digits.rtrim('a').getAsInteger(10, number) && number >= 52;
  if (ok) {
    std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
        nvptx->createMCSubtargetInfo(triple, "", ""));
    ok = subtarget && subtarget->isCPUStringValid(arch);
  }
  if (!ok)
    llvm::errs() << "tfc: error: --gpu-arch: expected an NVIDIA architecture "
                    "sm_52 or later (such as sm_80, sm_90, sm_90a), got '"
                 << arch << "'\n";
  return ok;
}

} // namespace tfc
