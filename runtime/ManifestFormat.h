//===- ManifestFormat.h - The words of the manifest text --------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The names of the manifest's records and of the values they take (format
/// in ModelABI.h), shared by the side that writes the text (the compiler's
/// tfc-export-abi and the passes that add records, passes/ManifestText.h)
/// and the side that reads it (runtime/Manifest.cpp). Header-only and free
/// of dependencies, so that both the MLIR side and libtfcrt include it.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MANIFESTFORMAT_H
#define TFC_RUNTIME_MANIFESTFORMAT_H

namespace tfc::manifest {

/// The LLVM global (and C symbol) that holds the NUL-terminated text.
inline constexpr char kGlobalName[] = "tfc_model_manifest";

/// The first record: `tfc-manifest 1`.
inline constexpr char kMagic[] = "tfc-manifest";
inline constexpr char kVersion[] = "1";

/// The last record; the runtime reads nothing after it.
inline constexpr char kEnd[] = "end";

/// `tensor <name> <offset> <kind> <init> <rank> <dims>...`, once a tensor.
inline constexpr char kTensor[] = "tensor";
/// The kinds of a tensor: trained, or carried along in checkpoints.
inline constexpr char kParam[] = "param";
inline constexpr char kBuffer[] = "buffer";
/// The initialisers of a tensor (`normal:<std>`, `uniform:<a>`,
/// `features:<M>:<d>` take values after a ':').
inline constexpr char kInitNormal[] = "normal";
inline constexpr char kInitZeros[] = "zeros";
inline constexpr char kInitOnes[] = "ones";
inline constexpr char kInitUniform[] = "uniform";
inline constexpr char kInitFeatures[] = "features";

// The model.
inline constexpr char kModel[] = "model";
inline constexpr char kTask[] = "task";
inline constexpr char kVocab[] = "vocab";
inline constexpr char kClasses[] = "classes";
inline constexpr char kOutputs[] = "outputs";
inline constexpr char kBatch[] = "batch";
inline constexpr char kSeqLen[] = "seq_len";
inline constexpr char kDModel[] = "d_model";
inline constexpr char kLayers[] = "layers";
inline constexpr char kHeads[] = "heads";
inline constexpr char kParams[] = "params";
/// The values of `task`.
inline constexpr char kTaskLm[] = "lm";
inline constexpr char kTaskClassify[] = "classify";

// What the compiler learnt about the generated code.
inline constexpr char kFlopsPerToken[] = "flops_per_token";
inline constexpr char kActivationBytes[] = "activation_bytes";
inline constexpr char kTrainActivationBytes[] = "train_activation_bytes";
inline constexpr char kArenaBytes[] = "arena_bytes";
inline constexpr char kThreadHeapBytes[] = "thread_heap_bytes";
inline constexpr char kKernelsPerStep[] = "kernels_per_step";
inline constexpr char kPrecision[] = "precision";
/// The values of `precision`.
inline constexpr char kPrecisionF32[] = "f32";
inline constexpr char kPrecisionBf16[] = "bf16";
/// The CPU features the generated code runs instructions of, beyond those
/// of the CPU it was compiled for by default; checked at start-up.
inline constexpr char kCpuFeatures[] = "cpu_features";
/// The values of `cpu_features`: AVX512-BF16 (`vdpbf16ps`).
inline constexpr char kCpuFeatureAvx512Bf16[] = "avx512bf16";

// The data.
inline constexpr char kMinFreq[] = "min_freq";
inline constexpr char kSplit[] = "split";
inline constexpr char kValFraction[] = "val_fraction";
inline constexpr char kDataTrain[] = "data_train";
inline constexpr char kDataVal[] = "data_val";
inline constexpr char kDataTest[] = "data_test";
/// The value of a `data_*` record that sets no path.
inline constexpr char kNoPath[] = "-";

// The training run.
inline constexpr char kLr[] = "lr";
inline constexpr char kTrainSteps[] = "train_steps";
inline constexpr char kWarmup[] = "warmup";
inline constexpr char kEvalEvery[] = "eval_every";
inline constexpr char kEvalBatches[] = "eval_batches";
inline constexpr char kCheckpointEvery[] = "checkpoint_every";
inline constexpr char kPatience[] = "patience";
inline constexpr char kSeed[] = "seed";
inline constexpr char kRedraw[] = "redraw";

} // namespace tfc::manifest

#endif // TFC_RUNTIME_MANIFESTFORMAT_H
