//===- Memory.h - Sizes of a model's buffers, checked ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The byte counts `tfc compile` checks before and after the pipeline: the
/// tensors of the forward graph as built from the spec (every product
/// computed with overflow checks, before any pass multiplies them again),
/// and the arenas of the lowered module against this machine's memory.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_MEMORY_H
#define TFC_TOOLS_TFC_MEMORY_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tfc {

/// The address space of an x86-64 process (47 bits, 128 TiB): no buffer of
/// the executable, and not all of them together, can be larger anywhere.
constexpr uint64_t kMaxAddressableBytes = uint64_t(1) << 47;

/// What measureTensors found in a forward graph.
struct TensorSizes {
  /// The largest tensor in bytes, std::nullopt when its byte count does not
  /// fit in 64 bits.
  std::optional<uint64_t> largestBytes;
  /// That tensor, in words: its type and what it holds.
  std::string largest;
  /// All tensors together in bytes, std::nullopt past 64 bits.
  std::optional<uint64_t> totalBytes;
};

/// Measures every tensor value of `module` (the tfc forward graph) and, for
/// every `tfc.attention`, the scores its lowering materialises: `batch x
/// heads x queries x keys` when it is dense, `batch x heads x queries x
/// block` when `blockedAttention` (the fusion passes) lowers softmax and
/// Longformer attention of equal lengths by blocks of up to `block` keys
/// (the whole length when shorter), random features for the Performer.
TensorSizes measureTensors(mlir::ModuleOp module, bool blockedAttention,
                           int64_t block);

/// The bytes of the zero-initialised arenas that tfc-static-buffers places
/// every intermediate buffer in (`mlir::tfc::kArenaPrefix`); the executable
/// maps all of them when it starts. std::nullopt past 64 bits.
std::optional<uint64_t> staticArenaBytes(mlir::ModuleOp module);

/// The heap bytes that one iteration of a parallel loop allocates (the
/// manifest's `thread_heap_bytes` record, from tfc-static-buffers): each
/// worker thread holds that much while it runs one. 0 when not recorded.
uint64_t threadHeapBytes(mlir::ModuleOp module);

/// This machine's physical memory in bytes, 0 when unknown.
uint64_t physicalMemoryBytes();

/// `bytes` for a message: "12.3 GiB", or "more than 16 EiB" for std::nullopt.
std::string formatBytes(std::optional<uint64_t> bytes);

} // namespace tfc

#endif // TFC_TOOLS_TFC_MEMORY_H
