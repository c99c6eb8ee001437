//===- Link.cpp - The executable from an object and the runtime -----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "codegen/emit/Emit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"

#include <optional>
#include <vector>

std::string tfc::linkExecutable(const std::string &object,
                                const std::string &output,
                                const std::string &toolDir, bool cuda) {
  llvm::SmallString<256> libDir(toolDir);
  llvm::sys::path::append(libDir, "..", "lib");
  std::string runtimeMain = (libDir + "/libtfcrt_main.a").str();
  std::string runtime = (libDir + "/libtfcrt.a").str();
  std::string runtimeCuda = (libDir + "/libtfcrt_cuda.a").str();
  // A GPU executable runs where only the NVIDIA driver is installed: no
  // MPI, no OpenMP, libstdc++ inside.
  if (cuda)
    runtimeMain = (libDir + "/libtfcrt_main_serial.a").str();
  for (const std::string &lib : {runtimeMain, runtime, runtimeCuda})
    if (!llvm::sys::fs::exists(lib))
      return lib + ": runtime library not found";
  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName("c++");
  if (!linker)
    linker = llvm::sys::findProgramByName("g++");
  if (!linker)
    linker = llvm::sys::findProgramByName("clang++-19");
  if (!linker)
    return "no C++ linker (c++, g++ or clang++-19) on PATH";
  // The generated kernels fork threads through OpenMP (libomp of LLVM).
  std::string ompDir = TFC_OPENMP_LIB_DIR;
  std::string ompSearch = "-L" + ompDir, ompRpath = "-Wl,-rpath," + ompDir;
  std::vector<llvm::StringRef> args = {*linker, object, runtimeMain};
  llvm::SmallVector<llvm::StringRef> mpiArgs;
  if (cuda) {
    // The driver glue loads libcuda at run time (dlopen).
    args.insert(args.end(), {runtimeCuda, runtime, "-ldl", "-static-libstdc++",
                             "-static-libgcc"});
  } else {
    args.insert(args.end(), {runtime, ompSearch, ompRpath, "-lomp"});
    // MPI, when the runtime was built with it (data-parallel `train`).
    llvm::StringRef(TFC_MPI_LINK_ARGS).split(mpiArgs, '|', -1, false);
  }
  args.insert(args.end(), mpiArgs.begin(), mpiArgs.end());
  args.insert(args.end(), {"-lm", "-lpthread", "-o", output});
  // The linker's messages go to a file; a failure reports its first line.
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("tfc-link", "log", log))
    log.clear();
  else
    llvm::sys::RemoveFileOnSignal(log);
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(
      *linker, args, std::nullopt,
      log.empty() ? llvm::ArrayRef<std::optional<llvm::StringRef>>()
                  : llvm::ArrayRef<std::optional<llvm::StringRef>>(redirects),
      0, 0, &error);
  std::string message;
  if (!log.empty()) {
    if (auto text = llvm::MemoryBuffer::getFile(log))
      message = (*text)->getBuffer().split('\n').first.trim().str();
    llvm::sys::fs::remove(log);
    llvm::sys::DontRemoveFileOnSignal(log);
  }
  if (status == 0)
    return "";
  std::string why = !message.empty() ? message : error;
  return "linking " + output + " failed" + (why.empty() ? "" : ": " + why);
}
