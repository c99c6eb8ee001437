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
#include "codegen/cpu/CpuPipeline.h"
#include "codegen/emit/Emit.h"
#include "codegen/gpu/GpuPipeline.h"
#include "codegen/gpu/Passes.h"
#include "dialect/TfcDialect.h"
#include "frontend/Spec.h"
#include "frontend/ir/SpecToTfc.h"
#include "passes/Passes.h"
#include "tools/Registration.h"
#include "tools/tfc/Machines.h"
#include "tools/tfc/Memory.h"
#include "tools/tfc/Version.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
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
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

/// The stages `--emit` can stop after.
enum class Stage { SpecIR, Tfc, Linalg, LLVMDialect, PTX, LLVMIR, Obj, Exe };

/// The code the executable runs on.
enum class Target { CPU, CUDA };

cl::OptionCategory compileCategory("tfc compile options");

cl::opt<std::string> specPath(cl::Positional, cl::desc("<spec.toml>"),
                              cl::Required, cl::cat(compileCategory));

cl::opt<Stage> emitStage(
    "emit", cl::desc("The stage to stop after and print"),
    cl::values(
        clEnumValN(Stage::SpecIR, "spec-ir",
                   "the tfc IR as built from the spec, before passes"),
        clEnumValN(Stage::Tfc, "tfc",
                   "the tfc IR after the tfc-level pipeline"),
        clEnumValN(Stage::Linalg, "linalg",
                   "linalg/tensor IR with the C entry point"),
        clEnumValN(Stage::LLVMDialect, "llvm-dialect",
                   "MLIR's LLVM dialect, after bufferization"),
        clEnumValN(Stage::PTX, "ptx", "the kernels' PTX (--target=cuda)"),
        clEnumValN(Stage::LLVMIR, "llvm", "optimised LLVM IR"),
        clEnumValN(Stage::Obj, "obj", "an object file"),
        clEnumValN(Stage::Exe, "exe", "the model's executable (default)")),
    cl::init(Stage::Exe), cl::cat(compileCategory));

cl::opt<Target> target(
    "target", cl::desc("Where the generated kernels run"),
    cl::values(clEnumValN(Target::CPU, "cpu", "this machine's CPU (default)"),
               clEnumValN(Target::CUDA, "cuda",
                          "an NVIDIA GPU, through NVVM and the CUDA driver")),
    cl::init(Target::CPU), cl::cat(compileCategory));

cl::opt<std::string>
    gpuArch("gpu-arch",
            cl::desc("NVIDIA architecture of the kernels with --target=cuda "
                     "(default sm_90; sm_90a runs the bf16 contractions on "
                     "Hopper's warpgroup mma)"),
            cl::init("sm_90"), cl::cat(compileCategory));

cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("CUDA toolkit folder whose ptxas and libdevice --target=cuda "
             "uses (default: $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, above the "
             "ptxas on PATH or /usr/local/cuda, preferring one with "
             "libdevice); 'none' embeds PTX only"),
    cl::init(""), cl::cat(compileCategory));

cl::opt<bool> gpuEmulate(
    "gpu-emulate",
    cl::desc("With --target=cuda: run the GPU kernels on this CPU, one "
             "thread at a time, instead of through NVVM (a check of the GPU "
             "mapping on a machine without a GPU; slow)"),
    cl::init(false), cl::cat(compileCategory));

/// How the GPU target runs softmax attention.
enum class GpuAttention { Blocks, Rows, Flash };

cl::opt<GpuAttention> gpuAttention(
    "gpu-attention", cl::desc("With --target=cuda: how softmax attention runs"),
    cl::values(
        clEnumValN(GpuAttention::Rows, "rows",
                   "one thread per (batch, head, query row) over its keys, "
                   "three kernels per attention and gradient "
                   "(tfc-row-attention; default)"),
        clEnumValN(GpuAttention::Blocks, "blocks",
                   "query and key blocks, a kernel per block operation"),
        clEnumValN(GpuAttention::Flash, "flash",
                   "with --precision=bf16: each softmax or Longformer "
                   "(up to 8 global tokens, whose rows are computed apart) "
                   "attention that fits (head dimension 16 to 64, or 128 "
                   "with lengths that 64 divides; other lengths padded to "
                   "a multiple of 64) one FlashAttention kernel on the "
                   "tensor cores, its gradient two (up to 64 channels), the "
                   "rest as with rows")),
    cl::init(GpuAttention::Rows), cl::cat(compileCategory));

cl::opt<std::string>
    cpuName("cpu",
            cl::desc("Target CPU for the generated code (default: this "
                     "machine's, 'native')"),
            cl::init("native"), cl::cat(compileCategory));

cl::opt<std::string> outputPath(
    "o",
    cl::desc(
        "Output file; '-' is stdout for the textual stages and obj (default: "
        "stdout for IR, the spec's name for obj/exe)"),
    cl::value_desc("path"), cl::init(""), cl::cat(compileCategory));

cl::opt<int64_t>
    batchOverride("batch",
                  cl::desc("Batch size of the generated code, 1 to 1048576 "
                           "(default: training.batch)"),
                  cl::init(0), cl::cat(compileCategory));

cl::opt<int64_t>
    seqLenOverride("seq-len",
                   cl::desc("Sequence length of the generated code, 1 to "
                            "4194304, checked against the spec like "
                            "training.seq_len (default: training.seq_len)"),
                   cl::init(0), cl::cat(compileCategory));

cl::opt<bool> useF64("f64",
                     cl::desc("Build the model in float64 (an object or IR "
                              "for the gradient check; the executable's "
                              "runtime holds float32 tensors)"),
                     cl::init(false), cl::cat(compileCategory));

cl::opt<unsigned>
    optLevel("O",
             cl::desc("LLVM optimisation level of the generated code (0-3, "
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
             "(blocked attention, element-wise, epilogue and row fusion); "
             "for comparing and testing them"),
    cl::init(false), cl::cat(compileCategory));

cl::opt<int64_t> attentionBlock(
    "attention-block",
    cl::desc("Rows of the query and key blocks of blocked attention "
             "(default: 128 for softmax attention; for Longformer the block "
             "from 16 to 128 rows that visits the fewest keys outside the "
             "window, weighed against the cost per block; a length that the "
             "block does not divide is padded to one that it does)"),
    cl::init(0), cl::cat(compileCategory));

cl::opt<bool> recomputeAttention(
    "recompute-attention",
    cl::desc("Recompute Performer attention (features, chunk states, "
             "scores) in the backward pass instead of keeping the forward's: "
             "less memory for long sequences, more time (with --no-fusion "
             "and the GPU target; a fused CPU build recomputes them per "
             "head anyway)"),
    cl::init(false), cl::cat(compileCategory));

cl::opt<bool> recomputeElementwise(
    "recompute-elementwise",
    cl::desc("Recompute cheap element-wise results of the forward (GELU and "
             "LayerNorm outputs) where the backward reads them instead of "
             "keeping them: about a third less training memory, a little "
             "more time"),
    cl::init(false), cl::cat(compileCategory));

cl::opt<::tfc::spec::Precision> precision(
    "precision",
    cl::desc("The arithmetic of the generated step (docs/precision.md); "
             "default: the spec's training.precision, else f32"),
    cl::values(clEnumValN(::tfc::spec::Precision::F32, "f32",
                          "float32 everywhere"),
               clEnumValN(::tfc::spec::Precision::BF16, "bf16",
                          "contraction operands rounded to bf16, float32 "
                          "sums, master weights and optimizer state")),
    cl::init(::tfc::spec::Precision::F32), cl::cat(compileCategory));

cl::opt<bool> allowOversize(
    "allow-oversize",
    cl::desc("Write the executable even when its working memory exceeds "
             "this machine's (for another machine; a warning instead of an "
             "error)"),
    cl::init(false), cl::cat(compileCategory));

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
  std::string written = ::tfc::finishOutput(*output, path);
  if (!written.empty()) {
    llvm::errs() << "tfc: error: " << written << "\n";
    return 1;
  }
  return 0;
}

/// Writes the PTX of the kernels (the `tfc_gpu_image` global that
/// tfc-gpu-launch-to-runtime made, without its final NUL) to `path`.
int printKernelImage(ModuleOp module, const std::string &path) {
  auto image = module.lookupSymbol<LLVM::GlobalOp>("tfc_gpu_image");
  auto text = image ? dyn_cast_or_null<StringAttr>(image.getValueOrNull())
                    : StringAttr();
  if (!text) {
    llvm::errs() << "tfc: error: the model has no GPU kernels\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &error);
  if (!output) {
    llvm::errs() << "tfc: error: " << path << ": " << error << "\n";
    return 1;
  }
  output->os() << text.getValue().drop_back();
  std::string written = ::tfc::finishOutput(*output, path);
  if (!written.empty()) {
    llvm::errs() << "tfc: error: " << written << "\n";
    return 1;
  }
  return 0;
}

void printTopLevelHelp() {
  llvm::outs()
      << "OVERVIEW: tfc - a compiler for efficient transformers\n\n"
         "USAGE: tfc <command> [options]\n\n"
         "COMMANDS:\n"
         "  compile <spec.toml>   build the model a spec describes\n\n"
         "OPTIONS:\n"
         "  --help                this overview\n"
         "  --version             tfc's version, LLVM/MLIR's and the git "
         "commit\n\n"
         "Run 'tfc compile --help' for the options of compile.\n";
}

/// Rewrites the command-line parser's complaints (several lines, LLVM's
/// wording) as one `tfc: error: <flag>: <what was expected>` line.
std::string optionError(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.trim().split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.empty())
    return "tfc: error: invalid command line (see 'tfc compile --help')";
  llvm::StringRef first = lines.front().trim();
  first.consume_front("tfc compile: ");
  llvm::SmallVector<llvm::StringRef> match;
  auto hint = [&]() -> std::string {
    // LLVM's "Did you mean '--batch=3'?" on the next line; its nearest
    // option is only a useful guess when it is a word, not -o or -O.
    for (llvm::StringRef line : llvm::ArrayRef(lines).drop_front()) {
      llvm::SmallVector<llvm::StringRef> guess;
      if (llvm::Regex("Did you mean '(-*([^'=]*)[^']*)'").match(line, &guess) &&
          guess[2].size() >= 3)
        return "; did you mean '" + guess[1].str() + "'?";
    }
    return " (see 'tfc compile --help')";
  };
  if (llvm::Regex("^Unknown command line argument '([^']*)'")
          .match(first, &match))
    return "tfc: error: " + match[1].str() + ": unknown option" + hint();
  if (first.starts_with("Not enough positional"))
    return "tfc: error: missing the spec: expected 'tfc compile <spec.toml> "
           "[options]'";
  if (first.starts_with("Too many positional"))
    return "tfc: error: expected one spec, got more (see 'tfc compile "
           "--help')";
  if (llvm::Regex("^for the (-+[^ ]+) option: (.*)$").match(first, &match)) {
    std::string flag = match[1].str();
    llvm::StringRef message = match[2];
    llvm::SmallVector<llvm::StringRef> value;
    if (llvm::Regex("^'(.*)' value invalid for ([a-z ]+) argument!$")
            .match(message, &value))
      return "tfc: error: " + flag + ": expected " +
             (value[2] == "uint" ? std::string("a non-negative integer")
                                 : std::string("an integer")) +
             ", got '" + value[1].str() + "'";
    if (llvm::Regex("^'(.*)' is invalid value for boolean argument!")
            .match(message, &value))
      return "tfc: error: " + flag + ": expected true or false, got '" +
             value[1].str() + "'";
    if (llvm::Regex("^Cannot find option named '(.*)'!$")
            .match(message, &value)) {
      std::string expected;
      if (flag == "--emit")
        expected = "spec-ir, tfc, linalg, llvm-dialect, ptx, llvm, obj or exe";
      else if (flag == "--target")
        expected = "cpu or cuda";
      else if (llvm::StringRef(flag).starts_with("--mlir-print-ir-"))
        expected = "the name of a pass, such as tfc-fuse-rows (the names "
                   "'-mlir-print-ir-after-all' prints in parentheses)";
      else
        expected = "one of the values 'tfc compile --help' lists";
      return "tfc: error: " + flag + ": expected " + expected + ", got '" +
             value[1].str() + "'";
    }
    return "tfc: error: " + flag + ": " + message.str();
  }
  return "tfc: error: " + first.str();
}

/// Parses the options of `tfc compile`. On failure returns false with the
/// parser's complaints in `errors`: some come through the stream that
/// ParseCommandLineOptions takes, others (a value an option cannot parse)
/// straight to stderr, which is therefore captured while it runs.
bool parseOptions(int argc, char **argv, std::string &errors) {
  llvm::raw_string_ostream stream(errors);
  llvm::errs().flush();
  int saved = dup(STDERR_FILENO);
  std::FILE *capture = saved >= 0 ? std::tmpfile() : nullptr;
  if (capture)
    dup2(fileno(capture), STDERR_FILENO);
  bool ok = cl::ParseCommandLineOptions(argc, argv, "tfc compile\n", &stream);
  if (capture) {
    llvm::errs().flush();
    dup2(saved, STDERR_FILENO);
    std::rewind(capture);
    std::string captured;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), capture)) > 0)
      captured.append(buffer, n);
    std::fclose(capture);
    errors = captured + errors;
  }
  if (saved >= 0)
    close(saved);
  return ok;
}

/// Whether writing `output` would overwrite the file at `spec`.
bool overwritesSpec(const std::string &output, const std::string &spec) {
  if (output == "-")
    return false;
  bool same = false;
  if (!llvm::sys::fs::equivalent(output, spec, same) && same)
    return true;
  llvm::SmallString<256> a(output), b(spec);
  llvm::sys::fs::make_absolute(a);
  llvm::sys::fs::make_absolute(b);
  llvm::sys::path::remove_dots(a, /*remove_dot_dot=*/true);
  llvm::sys::path::remove_dots(b, /*remove_dot_dot=*/true);
  return a == b;
}

/// The command-line flags (or, without them, the spec keys) that set the
/// sizes, for messages about sizes.
std::string sizeSource(const ::tfc::spec::Spec &spec,
                       const ::tfc::spec::Overrides &overrides) {
  std::string batch =
      overrides.batch
          ? "--batch " + std::to_string(spec.training.batch)
          : "training.batch = " + std::to_string(spec.training.batch);
  std::string seqLen =
      overrides.seqLen
          ? "--seq-len " + std::to_string(spec.training.seqLen)
          : "training.seq_len = " + std::to_string(spec.training.seqLen);
  return batch + " and " + seqLen;
}

/// Refuses a forward graph whose tensors cannot exist in any x86-64 process
/// (or whose byte counts do not even fit in 64 bits, which the passes would
/// wrap): the sizes come from the spec or from --batch and --seq-len.
bool checkTensorSizes(ModuleOp module, const ::tfc::spec::Spec &spec,
                      const ::tfc::spec::Overrides &overrides) {
  // Blocked attention's blocks: --attention-block rows, else up to 128.
  ::tfc::TensorSizes sizes = ::tfc::measureTensors(
      module, !noFusion, attentionBlock > 0 ? int64_t(attentionBlock) : 128);
  auto tooLarge = [](std::optional<uint64_t> bytes) {
    return !bytes || *bytes > ::tfc::kMaxAddressableBytes;
  };
  if (!tooLarge(sizes.largestBytes) && !tooLarge(sizes.totalBytes))
    return true;
  std::string where;
  if (overrides.batch || overrides.seqLen)
    where = "tfc: error: " +
            std::string(overrides.seqLen ? "--seq-len" : "--batch") + ": ";
  else
    where = spec.path + ":" + std::to_string(spec.training.seqLenLoc.line) +
            ":" + std::to_string(spec.training.seqLenLoc.column) +
            ": error: training.seq_len: ";
  std::string what = tooLarge(sizes.largestBytes)
                         ? "one tensor (" + sizes.largest + ") needs " +
                               ::tfc::formatBytes(sizes.largestBytes)
                         : "the tensors of the forward graph need " +
                               ::tfc::formatBytes(sizes.totalBytes);
  llvm::errs() << where << "with " << sizeSource(spec, overrides) << ", "
               << what
               << "; an x86-64 process can address 128 TiB (expected a "
                  "smaller batch or sequence length)\n";
  return false;
}

/// Warns when the arenas (`arenaBytes`) fit in this machine's `memory` but
/// not together with the heap buffers that each worker thread allocates
/// for one parallel iteration, with the default --threads (one per core
/// here): the executable starts, and a training run with that many threads
/// would run out of memory.
void warnThreadHeap(ModuleOp module, llvm::StringRef output,
                    uint64_t arenaBytes, uint64_t memory) {
  uint64_t perThread = ::tfc::threadHeapBytes(module);
  uint64_t threads = llvm::hardware_concurrency().compute_thread_count();
  if (memory == 0 || perThread == 0 || threads == 0)
    return;
  // Past 64 bits is past any memory too.
  uint64_t heap = llvm::SaturatingMultiply(perThread, threads);
  uint64_t total = llvm::SaturatingAdd(arenaBytes, heap);
  if (total <= memory)
    return;
  llvm::errs() << "tfc: warning: " << output << ": the model's arenas ("
               << ::tfc::formatBytes(arenaBytes)
               << ") and the heap buffers of one parallel iteration per "
                  "thread ("
               << ::tfc::formatBytes(perThread) << " x " << threads
               << " threads, the default --threads here) need "
               << ::tfc::formatBytes(total) << ", more than this machine's "
               << ::tfc::formatBytes(memory) << " ("
               << (llvm::SaturatingAdd(arenaBytes, perThread) <= memory
                       ? "fewer --threads, or "
                       : "")
               << "a smaller --batch or --seq-len needs less)\n";
}

/// Refuses (or, with --allow-oversize, warns about) an executable whose
/// arenas exceed this machine's memory: the loader cannot map them, and the
/// executable would die before `main`. Beyond what any x86-64 process can
/// address it refuses in any case. `attentionHint` and `elementwiseHint`
/// add --recompute-attention (a Performer trained without it) and
/// --recompute-elementwise (a training build without it) to the ways of
/// needing less.
bool checkArenaSize(ModuleOp module, llvm::StringRef output, bool attentionHint,
                    bool elementwiseHint) {
  std::optional<uint64_t> bytes = ::tfc::staticArenaBytes(module);
  uint64_t memory = ::tfc::physicalMemoryBytes();
  bool beyondAny = !bytes || *bytes > ::tfc::kMaxAddressableBytes;
  if (!beyondAny && (memory == 0 || *bytes <= memory)) {
    warnThreadHeap(module, output, *bytes, memory);
    return true;
  }
  bool refuse = beyondAny || !allowOversize;
  llvm::errs() << "tfc: " << (refuse ? "error" : "warning") << ": " << output
               << ": the model's working memory (the arenas of its entry "
                  "points) is "
               << ::tfc::formatBytes(bytes) << ", more than "
               << (beyondAny ? std::string("the 128 TiB an x86-64 process "
                                           "can address")
                             : "this machine's " + ::tfc::formatBytes(memory))
               << "; the executable cannot start here (a smaller --batch or "
                  "--seq-len, "
               << (attentionHint ? "--recompute-attention, " : "")
               << (elementwiseHint ? "--recompute-elementwise, " : "")
               << "or --train=false, needs less"
               << (refuse && !beyondAny
                       ? "; --allow-oversize writes it for a larger machine"
                       : "")
               << ")\n";
  return !refuse;
}

/// Registers the options `tfc compile` parses besides its own: the passes
/// and the MLIR options that may be named on its command line.
void registerCompileOptions() {
  // The passes that --mlir-print-ir-before/after (and -mlir-timing's
  // filters) may name. Registered before the pass manager's options, whose
  // parser lists them.
  ::tfc::registerAllPasses();
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
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { ::tfc::printVersion(os); });
}

/// Checks the options of the generated code that the spec has no say in:
/// the optimisation level and the CPU.
bool checkCodeGenOptions() {
  if (optLevel > 3) {
    llvm::errs() << "tfc: error: -O: expected 0 to 3, got " << optLevel << "\n";
    return false;
  }
  return ::tfc::checkCpu(cpuName);
}

/// The --batch and --seq-len the command line gives in place of the spec's.
::tfc::spec::Overrides sizeOverrides() {
  ::tfc::spec::Overrides overrides;
  if (batchOverride.getNumOccurrences())
    overrides.batch = batchOverride;
  if (seqLenOverride.getNumOccurrences())
    overrides.seqLen = seqLenOverride;
  return overrides;
}

/// Reads the spec with `overrides` applied, printing its diagnostic if it
/// is rejected.
std::optional<::tfc::spec::Spec>
readSpec(const ::tfc::spec::Overrides &overrides) {
  ::tfc::spec::Diagnostic diag;
  std::optional<::tfc::spec::Spec> spec =
      ::tfc::spec::parseSpecFile(specPath, diag, overrides);
  if (!spec)
    llvm::errs() << diag.str() << "\n";
  return spec;
}

/// Applies --precision to `spec` and checks it and --attention-block
/// against the rest of the build.
bool applyModelOptions(::tfc::spec::Spec &spec) {
  // The flag wins over the spec.
  if (precision.getNumOccurrences())
    spec.training.precision = precision;
  bool bf16 = spec.training.precision == ::tfc::spec::Precision::BF16;
  if (bf16 && useF64) {
    llvm::errs() << "tfc: error: --precision=bf16: expected a float32 build, "
                    "not --f64 (the gradient check's float64 build)\n";
    return false;
  }
  // The FlashAttention kernel multiplies bf16 operands on tensor cores.
  if (gpuAttention == GpuAttention::Flash && !bf16) {
    llvm::errs() << "tfc: error: --gpu-attention=flash: expected "
                    "--precision=bf16 (its kernel multiplies bf16 operands)\n";
    return false;
  }
  if (attentionBlock.getNumOccurrences() && attentionBlock < 1) {
    llvm::errs() << "tfc: error: --attention-block: expected at least 1, got "
                 << attentionBlock << "\n";
    return false;
  }
  return true;
}

/// What a compile makes, where it goes and for which machine.
struct Compilation {
  Stage stage = Stage::Exe;
  /// The output path; "-" for stdout.
  std::string output;
  /// Whether the kernels go through NVVM to a GPU: false for the CPU and
  /// for --gpu-emulate, whose kernels are CPU code.
  bool cuda = false;
  ::tfc::GpuTargetOptions gpu;
};

/// Sets `job.output` from -o (by default stdout for IR, the spec's name for
/// obj and exe) and refuses an output that would overwrite the spec or
/// cannot take the stage's result.
bool chooseOutput(Compilation &job) {
  Stage stage = job.stage;
  bool binary = stage == Stage::Obj || stage == Stage::Exe;
  std::string &output = job.output;
  output = outputPath;
  if (output.empty())
    output = binary ? llvm::sys::path::stem(specPath).str() +
                          (stage == Stage::Obj ? ".o" : "")
                    : "-";
  if (overwritesSpec(output, specPath)) {
    if (outputPath.empty())
      llvm::errs() << "tfc: error: " << specPath
                   << ": the default output (the spec's name without its "
                      "extension) is the spec itself; expected -o <path>\n";
    else
      llvm::errs() << "tfc: error: -o: " << output
                   << " is the spec itself; expected another output path\n";
    return false;
  }
  if (stage == Stage::Exe && output == "-") {
    llvm::errs() << "tfc: error: -o -: an executable is written to a file; "
                    "'-' (stdout) is for the textual stages and obj\n";
    return false;
  }
  // The executable is linked in place: an output that is a folder, a
  // device or a FIFO would fail in the linker, or block.
  llvm::sys::fs::file_status outputStatus;
  if (stage == Stage::Exe && !outputPath.empty() &&
      !llvm::sys::fs::status(output, outputStatus) &&
      llvm::sys::fs::exists(outputStatus) &&
      !llvm::sys::fs::is_regular_file(outputStatus)) {
    llvm::errs() << "tfc: error: -o: " << output
                 << (llvm::sys::fs::is_directory(outputStatus)
                         ? " is a folder"
                         : " is not a regular file")
                 << "; expected the executable's file path\n";
    return false;
  }
  return true;
}

/// Checks the target options against each other and the stage, and sets
/// `job.cuda` and `job.gpu` (the architecture, and the CUDA toolkit whose
/// ptxas and libdevice the GPU target uses).
bool chooseTarget(Compilation &job) {
  Stage stage = job.stage;
  bool cuda = target == Target::CUDA;
  if (useF64 && stage == Stage::Exe) {
    llvm::errs() << "tfc: error: --f64: an executable's runtime holds float32 "
                    "tensors; --f64 builds an object or IR (--emit=obj, as "
                    "for the gradient check)\n";
    return false;
  }
  if (stage == Stage::PTX && !cuda) {
    llvm::errs() << "tfc: error: --emit=ptx: expected --target=cuda (the CPU "
                    "target has no PTX)\n";
    return false;
  }
  for (cl::Option *option : {static_cast<cl::Option *>(&gpuArch),
                             static_cast<cl::Option *>(&cudaToolkit)})
    if (!cuda && option->getNumOccurrences()) {
      llvm::errs() << "tfc: error: --" << option->ArgStr
                   << ": expected --target=cuda (it sets the GPU target's "
                      "code)\n";
      return false;
    }
  if (cuda && !::tfc::checkGpuArch(gpuArch))
    return false;
  if (gpuEmulate && (!cuda || stage == Stage::PTX)) {
    llvm::errs() << "tfc: error: --gpu-emulate: expected --target=cuda and "
                    "a stage other than ptx\n";
    return false;
  }
  if (gpuAttention.getNumOccurrences() && target != Target::CUDA) {
    llvm::errs() << "tfc: error: --gpu-attention: expected --target=cuda "
                    "(it sets the GPU target's attention)\n";
    return false;
  }
  // The emulation is CPU code: checked and linked as such.
  if (gpuEmulate)
    cuda = false;
  job.cuda = cuda;
  job.gpu.arch = gpuArch;
  std::string toolkit = cudaToolkit;
  if (toolkit.empty())
    toolkit = ::tfc::findCudaToolkit();
  else if (toolkit == "none")
    toolkit.clear();
  else if (cuda && !llvm::sys::fs::can_execute(toolkit + "/bin/ptxas")) {
    llvm::errs() << "tfc: error: --cuda-toolkit: " << toolkit
                 << "/bin/ptxas: not found; expected a CUDA toolkit folder "
                    "or 'none'\n";
    return false;
  }
  // PTX only for --emit=ptx; otherwise a fatbin when ptxas is installed.
  if (stage != Stage::PTX)
    job.gpu.toolkit = toolkit;
  job.gpu.libdevice = ::tfc::findLibdevice(toolkit);
  return true;
}

/// Builds the tfc IR of `spec` in `ctx` and refuses tensors that no x86-64
/// process could hold; null on failure.
OwningOpRef<ModuleOp> buildModule(MLIRContext &ctx,
                                  const ::tfc::spec::Spec &spec,
                                  const ::tfc::spec::Overrides &overrides) {
  ::tfc::ImportOptions opts;
  // The spec carries --batch and --seq-len, validated with the rest.
  opts.useF64 = useF64;
  OwningOpRef<ModuleOp> module = ::tfc::buildForwardModule(ctx, spec, opts);
  if (!module)
    return nullptr;
  if (!checkTensorSizes(*module, spec, overrides))
    return nullptr;
  return module;
}

/// The pipelines' options, from the command line and the spec.
::tfc::PipelineOptions pipelineOptions(const ::tfc::spec::Spec &spec,
                                       const Compilation &job) {
  ::tfc::PipelineOptions pipeline;
  pipeline.train = withTraining;
  pipeline.fusion = !noFusion;
  pipeline.attentionBlock = attentionBlock;
  pipeline.recomputeAttention = recomputeAttention;
  pipeline.recomputeElementwise = recomputeElementwise;
  pipeline.bf16 = spec.training.precision == ::tfc::spec::Precision::BF16;
  pipeline.cpuAvx512Bf16 = pipeline.bf16 && !job.cuda && !gpuEmulate &&
                           ::tfc::cpuHasFeature(cpuName, "avx512bf16");
  pipeline.target =
      job.cuda || gpuEmulate
          ? ::tfc::gpuTargetChoices(gpuAttention != GpuAttention::Blocks,
                                    gpuAttention == GpuAttention::Flash)
          : ::tfc::cpuTargetChoices();
  return pipeline;
}

/// Runs the passes that take `module` to `job.stage` (for the binary
/// stages, to the LLVM dialect), timed under `rootTiming`.
LogicalResult runPipelines(MLIRContext &ctx, ModuleOp module,
                           const Compilation &job,
                           const ::tfc::PipelineOptions &pipeline,
                           TimingScope &rootTiming) {
  Stage stage = job.stage;
  PassManager pm(&ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(rootTiming);
  if (stage == Stage::Tfc) {
    if (evalOnly)
      pm.addNestedPass<func::FuncOp>(mlir::tfc::createTfcStripDropout());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  } else {
    pm.addPass(createCanonicalizerPass());
    ::tfc::buildTfcToLinalgPipeline(pm, pipeline);
    if (stage != Stage::Linalg && gpuEmulate)
      ::tfc::buildLinalgToEmulatedGpuPipeline(pm, job.gpu.arch);
    else if (stage != Stage::Linalg && !job.cuda)
      ::tfc::buildLinalgToLLVMPipeline(pm, pipeline);
    else if (stage != Stage::Linalg)
      ::tfc::buildLinalgToGpuPipeline(pm, job.gpu);
  }
  return pm.run(module);
}

/// Checks the working memory of an object or executable for the CPU (see
/// checkArenaSize); a GPU executable's arenas are device memory, checked
/// when it starts.
bool checkWorkingMemory(ModuleOp module, const ::tfc::spec::Spec &spec,
                        const ::tfc::PipelineOptions &pipeline,
                        const Compilation &job) {
  // By pairs, Performer's gradient recomputes its features anyway.
  bool attentionHint =
      withTraining && !recomputeAttention && !pipeline.performerByPairs() &&
      spec.attention.kind == ::tfc::spec::AttentionKind::Performer;
  bool elementwiseHint = withTraining && !recomputeElementwise;
  if ((job.stage == Stage::Exe || job.stage == Stage::Obj) && !job.cuda &&
      !checkArenaSize(module, job.output, attentionHint, elementwiseHint))
    return false;
  return true;
}

/// Creates the temporary object file that an executable is linked from,
/// removed if the compile is interrupted.
bool createTemporaryObject(std::string &object) {
  llvm::SmallString<128> temp, tempDir;
  llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, tempDir);
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tfc-model", "o", temp)) {
    llvm::errs() << "tfc: error: " << tempDir
                 << ": cannot create a temporary object file: " << ec.message()
                 << "\n";
    return false;
  }
  object = temp.str().str();
  // An interrupted compile leaves no object behind.
  llvm::sys::RemoveFileOnSignal(object);
  return true;
}

/// Links `object` into the executable `output`, creating its folder; the
/// error, empty if there is none.
std::string linkInto(const std::string &object, const std::string &output,
                     const std::string &toolDir, bool cuda) {
  llvm::SmallString<256> parent(llvm::sys::path::parent_path(output));
  if (!parent.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(parent))
      return parent.str().str() + ": cannot create the folder: " + ec.message();
  }
  return ::tfc::linkExecutable(object, output, toolDir, cuda);
}

/// Translates `module` (in the LLVM dialect) to LLVM IR, an object file or,
/// linked with the runtime from `toolDir`, an executable.
int emitBinary(ModuleOp module, const Compilation &job,
               const std::string &toolDir, TimingScope &rootTiming) {
  bool exe = job.stage == Stage::Exe;
  std::string object = job.output;
  if (exe && !createTemporaryObject(object))
    return 1;
  TimingScope llvmTiming = rootTiming.nest("LLVM: translate, optimise, emit");
  std::string error = ::tfc::emitObjectFile(
      module, cpuName, object, job.stage == Stage::LLVMIR, optLevel);
  llvmTiming.stop();
  if (exe) {
    // Writing the object kept it and forgot it on signals: the link is
    // interruptible too.
    llvm::sys::RemoveFileOnSignal(object);
    if (error.empty())
      error = linkInto(object, job.output, toolDir, job.cuda);
    llvm::sys::fs::remove(object);
    llvm::sys::DontRemoveFileOnSignal(object);
  }
  if (!error.empty()) {
    llvm::errs() << "tfc: error: " << error << "\n";
    return 1;
  }
  return 0;
}

int compile(int argc, char **argv, const std::string &toolDir) {
  registerCompileOptions();
  std::string optionErrors;
  if (!parseOptions(argc, argv, optionErrors)) {
    llvm::errs() << optionError(optionErrors) << "\n";
    return 1;
  }
  if (!checkCodeGenOptions())
    return 1;
  ::tfc::spec::Overrides overrides = sizeOverrides();
  std::optional<::tfc::spec::Spec> spec = readSpec(overrides);
  if (!spec || !applyModelOptions(*spec))
    return 1;
  Compilation job;
  job.stage = emitStage;
  if (!chooseOutput(job) || !chooseTarget(job))
    return 1;

  DialectRegistry registry;
  ::tfc::registerCodegenDialects(registry);
  ::tfc::registerGpuCodegenDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = buildModule(ctx, *spec, overrides);
  if (!module)
    return 1;
  if (job.stage == Stage::SpecIR)
    return printModule(*module, job.output);

  // -mlir-timing reports the passes and, for binary output, the LLVM stage.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope rootTiming = timing.getRootScope();
  ::tfc::PipelineOptions pipeline = pipelineOptions(*spec, job);
  if (failed(runPipelines(ctx, *module, job, pipeline, rootTiming)))
    return 1;
  if (job.stage == Stage::PTX)
    return printKernelImage(*module, job.output);
  if (job.stage == Stage::Tfc || job.stage == Stage::Linalg ||
      job.stage == Stage::LLVMDialect)
    return printModule(*module, job.output);
  if (!checkWorkingMemory(*module, *spec, pipeline, job))
    return 1;
  return emitBinary(*module, job, toolDir, rootTiming);
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
  if (command == "--version" || command == "version") {
    ::tfc::printVersion(llvm::outs());
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
