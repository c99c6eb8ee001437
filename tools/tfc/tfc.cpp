//===- tfc.cpp - The tfc compiler driver ----------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `tfc compile spec.toml` reads a model spec, builds its tfc IR and runs the
/// pipeline up to the stage that `--emit` names.
///
//===----------------------------------------------------------------------===//

#include "codegen/Pipeline.h"
#include "dialect/TfcDialect.h"
#include "frontend/Spec.h"
#include "frontend/ir/SpecToTfc.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

/// The bytes of the zero-initialised arenas that tfc-static-buffers places
/// every intermediate buffer in (`mlir::tfc::kArenaPrefix`); the executable
/// maps all of them when it starts.
uint64_t staticArenaBytes(ModuleOp module) {
  uint64_t bytes = 0;
  // The arenas are module-level globals: no need to walk function bodies.
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    if (!global.getSymName().starts_with(mlir::tfc::kArenaPrefix))
      continue;
    if (auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType()))
      bytes += array.getNumElements();
  }
  return bytes;
}

/// Warns when the executable's arenas exceed this machine's memory: the
/// loader cannot map them, and the executable would die before `main`.
void warnAboutArenaSize(ModuleOp module, llvm::StringRef output) {
  uint64_t bytes = staticArenaBytes(module);
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return;
  uint64_t memory = uint64_t(pages) * uint64_t(pageSize);
  if (bytes <= memory)
    return;
  auto gib = [](uint64_t b) { return double(b) / double(1ull << 30); };
  llvm::errs() << llvm::format(
      "tfc: warning: %s: the model's working memory (the arenas of its "
      "entry points) is %.1f GiB, more than this machine's %.1f GiB; the "
      "executable cannot start here (a smaller --batch or --seq-len, or "
      "--train=false, needs less)\n",
      output.str().c_str(), gib(bytes), gib(memory));
}

/// The stages `--emit` can stop after.
enum class Stage { SpecIR, Tfc, Linalg, LLVMDialect, LLVMIR, Obj, Exe };

cl::OptionCategory compileCategory("tfc compile options");

cl::opt<std::string> specPath(cl::Positional, cl::desc("<spec.toml>"),
                              cl::Required, cl::cat(compileCategory));

cl::opt<Stage> emitStage(
    "emit", cl::desc("The stage to stop after and print"),
    cl::values(clEnumValN(Stage::SpecIR, "spec-ir",
                          "the tfc IR as built from the spec, before passes"),
               clEnumValN(Stage::Tfc, "tfc",
                          "the tfc IR after the tfc-level pipeline"),
               clEnumValN(Stage::Linalg, "linalg",
                          "linalg/tensor IR with the C entry point"),
               clEnumValN(Stage::LLVMDialect, "llvm-dialect",
                          "MLIR's LLVM dialect, after bufferization"),
               clEnumValN(Stage::LLVMIR, "llvm", "optimised LLVM IR"),
               clEnumValN(Stage::Obj, "obj", "an object file"),
               clEnumValN(Stage::Exe, "exe",
                          "the model's executable (default)")),
    cl::init(Stage::Exe), cl::cat(compileCategory));

cl::opt<std::string> cpuName(
    "cpu", cl::desc("Target CPU for the generated code (default: this "
                    "machine's, 'native')"),
    cl::init("native"), cl::cat(compileCategory));

cl::opt<std::string> outputPath(
    "o",
    cl::desc("Output file; '-' is stdout for the textual stages (default: "
             "stdout for IR, the spec's name for obj/exe)"),
    cl::value_desc("path"), cl::init(""), cl::cat(compileCategory));

cl::opt<int64_t> batchOverride(
    "batch", cl::desc("Batch size of the generated code (default: "
                      "training.batch)"),
    cl::init(0), cl::cat(compileCategory));

cl::opt<int64_t> seqLenOverride(
    "seq-len", cl::desc("Sequence length of the generated code (default: "
                        "training.seq_len)"),
    cl::init(0), cl::cat(compileCategory));

cl::opt<bool> useF64("f64", cl::desc("Build the model in float64"),
                     cl::init(false), cl::cat(compileCategory));

cl::opt<unsigned> optLevel(
    "O", cl::desc("LLVM optimisation level of the generated code (0-3, "
                  "default 3; lower levels compile large models faster)"),
    cl::Prefix, cl::init(3), cl::cat(compileCategory));

cl::opt<bool> withTraining(
    "train",
    cl::desc("Generate the training entry points (tfc_train_step, "
             "tfc_optimizer_step); --train=false builds an evaluation-only "
             "executable faster"),
    cl::init(true), cl::cat(compileCategory));

cl::opt<bool> noFusion(
    "no-fusion",
    cl::desc("Lower every tfc op on its own, without the fusion passes "
             "(blocked attention); for comparing and testing them"),
    cl::init(false), cl::cat(compileCategory));

cl::opt<int64_t> attentionBlock(
    "attention-block",
    cl::desc("Rows of the query and key blocks of blocked attention "
             "(default 128)"),
    cl::init(128), cl::cat(compileCategory));

cl::opt<bool> evalOnly("eval",
                       cl::desc("Strip dropout at --emit=tfc (evaluation "
                                "graph; later stages always do)"),
                       cl::init(false), cl::cat(compileCategory));

/// The folder of the running executable, to find the runtime libraries.
std::string toolDirectory(const char *argv0) {
  static int anchor;
  std::string path = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  return llvm::sys::path::parent_path(path).str();
}

/// Prints `module` to `path` ("-" for stdout).
int printModule(ModuleOp module, const std::string &path) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &error);
  if (!output) {
    llvm::errs() << "tfc: error: " << path << ": " << error << "\n";
    return 1;
  }
  module.print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

void printTopLevelHelp() {
  llvm::outs()
      << "OVERVIEW: tfc - a compiler for efficient transformers\n\n"
         "USAGE: tfc <command> [options]\n\n"
         "COMMANDS:\n"
         "  compile <spec.toml>   build the model a spec describes\n\n"
         "Run 'tfc compile --help' for the options of compile.\n";
}

int compile(int argc, char **argv, const std::string &toolDir) {
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  // `--help` lists tfc's own options; LLVM's and MLIR's (such as
  // --mlir-print-ir-after-all) stay accepted and are listed by
  // `--help-hidden`.
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    if (!llvm::is_contained(option->Categories, &compileCategory) &&
        entry.first() != "help" && entry.first() != "help-hidden")
      option->setHiddenFlag(cl::Hidden);
  }
  cl::ParseCommandLineOptions(argc, argv, "tfc compile\n");

  ::tfc::spec::Diagnostic diag;
  std::optional<::tfc::spec::Spec> spec = ::tfc::spec::parseSpecFile(specPath, diag);
  if (!spec) {
    llvm::errs() << diag.str() << "\n";
    return 1;
  }
  if (batchOverride < 0 || seqLenOverride < 0) {
    llvm::errs() << "tfc: error: --batch and --seq-len must be positive\n";
    return 1;
  }
  if (attentionBlock < 1) {
    llvm::errs() << "tfc: error: --attention-block must be at least 1, got "
                 << attentionBlock << "\n";
    return 1;
  }

  DialectRegistry registry;
  ::tfc::registerCodegenDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  ::tfc::ImportOptions opts;
  opts.batch = batchOverride;
  opts.seqLen = seqLenOverride;
  opts.useF64 = useF64;
  OwningOpRef<ModuleOp> module = ::tfc::buildForwardModule(ctx, *spec, opts);
  if (!module)
    return 1;

  Stage stage = emitStage;
  bool binary = stage == Stage::Obj || stage == Stage::Exe;
  std::string output = outputPath;
  if (output.empty())
    output = binary ? llvm::sys::path::stem(specPath).str() +
                          (stage == Stage::Obj ? ".o" : "")
                    : "-";
  if (stage == Stage::SpecIR)
    return printModule(*module, output);

  // -mlir-timing reports the passes and, for binary output, the LLVM stage.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope rootTiming = timing.getRootScope();
  PassManager pm(&ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  pm.enableTiming(rootTiming);
  if (stage == Stage::Tfc) {
    if (evalOnly)
      pm.addPass(mlir::tfc::createTfcStripDropout());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  } else {
    pm.addPass(createCanonicalizerPass());
    ::tfc::PipelineOptions pipeline;
    pipeline.train = withTraining;
    pipeline.fusion = !noFusion;
    pipeline.attentionBlock = attentionBlock;
    ::tfc::buildTfcToLinalgPipeline(pm, pipeline);
    if (stage != Stage::Linalg)
      ::tfc::buildLinalgToLLVMPipeline(pm);
  }
  if (failed(pm.run(*module)))
    return 1;
  if (stage == Stage::Tfc || stage == Stage::Linalg ||
      stage == Stage::LLVMDialect)
    return printModule(*module, output);
  if (stage == Stage::Exe || stage == Stage::Obj)
    warnAboutArenaSize(*module, output);

  std::string object = output;
  if (stage == Stage::Exe) {
    llvm::SmallString<128> temp;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("tfc-model", "o", temp)) {
      llvm::errs() << "tfc: error: cannot create a temporary file: "
                   << ec.message() << "\n";
      return 1;
    }
    object = temp.str().str();
  }
  if (optLevel > 3) {
    llvm::errs() << "tfc: error: -O" << optLevel << ": expected 0 to 3\n";
    return 1;
  }
  TimingScope llvmTiming = rootTiming.nest("LLVM: translate, optimise, emit");
  std::string error = ::tfc::emitObjectFile(*module, cpuName, object,
                                            stage == Stage::LLVMIR, optLevel);
  llvmTiming.stop();
  if (error.empty() && stage == Stage::Exe) {
    llvm::SmallString<256> parent(llvm::sys::path::parent_path(output));
    if (!parent.empty())
      llvm::sys::fs::create_directories(parent);
    error = ::tfc::linkExecutable(object, output, toolDir);
  }
  if (stage == Stage::Exe)
    llvm::sys::fs::remove(object);
  if (!error.empty()) {
    llvm::errs() << "tfc: error: " << error << "\n";
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2) {
    printTopLevelHelp();
    return 1;
  }
  llvm::StringRef command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    printTopLevelHelp();
    return 0;
  }
  if (command == "compile") {
    // Hand the options after the command to the command-line parser, with
    // "tfc compile" as the program name.
    std::string program = std::string(argv[0]) + " compile";
    std::vector<char *> args;
    args.push_back(program.data());
    for (int i = 2; i < argc; ++i)
      args.push_back(argv[i]);
    return compile(static_cast<int>(args.size()), args.data(),
                   toolDirectory(argv[0]));
  }
  llvm::errs() << "tfc: error: unknown command '" << command
               << "' (expected 'compile'; see 'tfc --help')\n";
  return 1;
}
