//===- ObjectFile.cpp - LLVM IR and object files of a module --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/emit/Emit.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace tfc {
std::string emitObjectFile(ModuleOp module, const std::string &cpu,
                           const std::string &path, bool emitLLVMIR,
                           unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "model");
  if (!llvmModule)
    return "translation to LLVM IR failed";

  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return error;
  std::string cpuName = cpu;
  std::string features;
  if (cpuName.empty() || cpuName == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
    for (auto &feature : hostFeatures)
      features += (feature.second ? "+" : "-") + feature.first().str() + ",";
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, options, llvm::Reloc::PIC_,
      // The static activation buffers of a large model exceed the 2 GiB
      // that the small code model can address.
      llvm::CodeModel::Medium,
      optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                      : llvm::CodeGenOptLevel::None));
  if (!machine)
    return "no target machine for cpu '" + cpuName + "'";
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  auto optimize = makeOptimizingTransformer(optLevel, 0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return llvm::toString(std::move(err));

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return path + ": " + ec.message();
  if (emitLLVMIR) {
    llvmModule->print(out.os(), nullptr);
  } else {
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, out.os(), nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return "the target cannot emit object files";
    codegen.run(*llvmModule);
  }
  return finishOutput(out, path);
}

std::string finishOutput(llvm::ToolOutputFile &out, const std::string &path) {
  out.os().flush();
  if (!out.os().has_error()) {
    out.keep();
    return "";
  }
  std::string message = path + ": " + out.os().error().message();
  out.os().clear_error();
  if (!llvm::sys::fs::is_regular_file(path))
    out.keep();
  return message;
}

} // namespace tfc
