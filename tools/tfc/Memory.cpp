//===- Memory.cpp - Sizes of a model's buffers, checked -------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Byte counts with overflow checks: a `--batch` or `--seq-len` in range can
/// still give tensors whose element counts wrap 64 bits (the attention
/// scores grow with the square of the sequence), and the passes multiply
/// shapes without checks. The driver measures the graph here first.
///
//===----------------------------------------------------------------------===//

#include "tools/tfc/Memory.h"

#include "dialect/TfcDialect.h"
#include "passes/ManifestText.h"
#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace mlir;

namespace tfc {
namespace {

/// `a * b`, std::nullopt past 64 bits.
std::optional<uint64_t> mul(std::optional<uint64_t> a,
                            std::optional<uint64_t> b) {
  if (!a || !b)
    return std::nullopt;
  return llvm::checkedMulUnsigned(*a, *b);
}

/// `a + b`, std::nullopt past 64 bits.
std::optional<uint64_t> add(std::optional<uint64_t> a,
                            std::optional<uint64_t> b) {
  if (!a || !b)
    return std::nullopt;
  return llvm::checkedAddUnsigned(*a, *b);
}

/// Bytes of one element of `type` (at least 1: booleans take a byte).
uint64_t elementBytes(Type type) {
  unsigned bits = type.isIntOrFloat() ? type.getIntOrFloatBitWidth() : 64;
  return std::max<uint64_t>(1, (bits + 7) / 8);
}

/// Bytes of a tensor of `shape` with elements of `element`.
std::optional<uint64_t> shapeBytes(ArrayRef<int64_t> shape, Type element) {
  std::optional<uint64_t> bytes = elementBytes(element);
  for (int64_t extent : shape) {
    if (extent < 0)
      return std::nullopt;
    bytes = mul(bytes, uint64_t(extent));
  }
  return bytes;
}

/// `a` is larger than `b`, std::nullopt counting as infinite.
bool larger(std::optional<uint64_t> a, std::optional<uint64_t> b) {
  if (!a)
    return b.has_value();
  return b && *a > *b;
}

/// A shape in MLIR's notation, e.g. "4x32x64xf32".
std::string shapeText(ArrayRef<int64_t> shape, Type element) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (int64_t extent : shape)
    os << extent << "x";
  os << element;
  return text;
}

} // namespace

TensorSizes measureTensors(ModuleOp module, bool blockedAttention,
                           int64_t block) {
  TensorSizes sizes;
  sizes.largestBytes = 0;
  sizes.totalBytes = 0;
  auto count = [&](std::optional<uint64_t> bytes, const std::string &what) {
    sizes.totalBytes = add(sizes.totalBytes, bytes);
    if (larger(bytes, sizes.largestBytes)) {
      sizes.largestBytes = bytes;
      sizes.largest = what;
    }
  };
  module.walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type)
        continue;
      count(shapeBytes(type.getShape(), type.getElementType()),
            "the result of " + op->getName().getStringRef().str() + ", " +
                shapeText(type.getShape(), type.getElementType()));
    }
    auto attention = dyn_cast<mlir::tfc::AttentionOp>(op);
    if (!attention)
      return;
    // The dense lowering materialises one score per (batch, head, query,
    // key), blocked attention one per key of a block, the Performer one per
    // random feature.
    auto query = cast<RankedTensorType>(attention.getQuery().getType());
    auto key = cast<RankedTensorType>(attention.getKey().getType());
    if (query.getRank() != 3 || key.getRank() != 3)
      return;
    int64_t columns = key.getDimSize(1);
    bool blocked = blockedAttention &&
                   isa<mlir::tfc::SoftmaxAttr, mlir::tfc::LongformerAttr>(
                       attention.getKind()) &&
                   query.getDimSize(1) == key.getDimSize(1);
    if (blocked)
      columns = std::min(columns, block);
    if (Value features = attention.getFeatures())
      columns = cast<RankedTensorType>(features.getType()).getDimSize(0);
    SmallVector<int64_t> scores = {query.getDimSize(0),
                                   int64_t(attention.getHeads()),
                                   query.getDimSize(1), columns};
    count(shapeBytes(scores, query.getElementType()),
          "attention scores " + shapeText(scores, query.getElementType()));
  });
  return sizes;
}

std::optional<uint64_t> staticArenaBytes(ModuleOp module) {
  std::optional<uint64_t> bytes = 0;
  // The arenas are module-level globals: no need to walk function bodies.
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    if (!global.getSymName().starts_with(mlir::tfc::kArenaPrefix))
      continue;
    if (auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType()))
      bytes = add(bytes, mul(uint64_t(array.getNumElements()),
                             elementBytes(array.getElementType())));
  }
  return bytes;
}

uint64_t threadHeapBytes(ModuleOp module) {
  std::optional<StringRef> record =
      mlir::tfc::getManifestRecord(module, "thread_heap_bytes");
  uint64_t bytes;
  if (!record || record->getAsInteger(10, bytes))
    return 0;
  return bytes;
}

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return llvm::checkedMulUnsigned(uint64_t(pages), uint64_t(pageSize))
      .value_or(UINT64_MAX);
}

std::string formatBytes(std::optional<uint64_t> bytes) {
  if (!bytes)
    return "more than 16 EiB";
  std::string text;
  llvm::raw_string_ostream os(text);
  double value = double(*bytes);
  if (*bytes >= (uint64_t(1) << 40))
    os << llvm::format("%.1f TiB", value / double(uint64_t(1) << 40));
  else
    os << llvm::format("%.1f GiB", value / double(uint64_t(1) << 30));
  return text;
}

} // namespace tfc
