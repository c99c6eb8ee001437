//===- ContractionPlan.h - A contraction's kernel plan ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The plan of tfc-vectorize-contractions for one linalg contraction on
/// buffers: which dimensions are M, N and K, the register tile, how B is
/// packed, which loops the threads share, and the zero fill and epilogue
/// that go into the kernel.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_CPU_CONTRACTIONPLAN_H
#define TFC_CODEGEN_CPU_CONTRACTIONPLAN_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::tfc {

/// Depth of the K panel that is packed and kept in cache.
inline constexpr int64_t kPanelDepth = 256;
/// Contractions with fewer multiply-adds than this do not fork threads.
inline constexpr int64_t kParallelMacs = 1 << 16;
/// Independent outer iterations that are enough to share between threads.
inline constexpr int64_t kParallelOuterIterations = 8;
/// The largest packing panel (bytes) put on a thread's stack.
inline constexpr int64_t kStackPanelBytes = 64 * 1024;
/// The size of C up to which its tiles are left to the cache without
/// prefetching (a core's L2 is 512 KiB to 2 MiB on the CPUs with AVX-512).
inline constexpr int64_t kCacheResidentBytes = 256 * 1024;
/// Bytes of a cache line.
inline constexpr int64_t kCacheLineBytes = 64;

/// How one contraction maps onto the tiled kernel. Dimensions are indices of
/// the op's iteration space; `m` is -1 when C has no row dimension of A.
struct ContractionPlan {
  linalg::LinalgOp op;
  Value a, b, c;
  AffineMap aMap, bMap, cMap;
  int64_t m = -1, n = -1, k = -1;
  SmallVector<int64_t> outer;
  SmallVector<int64_t> sizes;
  /// C's element type, that of the accumulators.
  FloatType elementType;
  /// Whether A and B are bf16, widened to float32 C in the body
  /// (`--precision=bf16`). The panel then holds bf16 pairs along K: each
  /// step of the kernel's K loop multiplies two k at once, on `vdpbf16ps`
  /// where the target has it (`bf16-dot`), else widened to float32 FMAs in
  /// the instruction's order.
  bool bf16 = false;
  /// The element type of the packing panel: B's.
  Type panelType;
  /// The register tile: `rowsPerBlock` rows of `vectorsPerRow` vectors of
  /// `lanes` elements; B's panel rows are N rounded up to whole tiles.
  int64_t lanes = 0, vectorsPerRow = 0, rowsPerBlock = 0, panelWidth = 0;
  /// Elements of one sliver of the packing panel (a tile's columns over the
  /// panel's depth), with the padding that follows it when there are
  /// several.
  int64_t sliverElements = 0;
  /// Elements of the packing panel: its slivers, padding included.
  int64_t panelElements = 0;
  /// How B is copied into the panel: by vectors along N when B runs along
  /// N with unit stride, by tiles transposed in registers when it runs along
  /// K, else element by element.
  enum class Packing { Elements, AlongN, Transposed };
  Packing packing = Packing::Elements;
  /// How many leading `outer` loops run as one `scf.parallel` with a stack
  /// panel per iteration (0: the row blocks are split instead).
  unsigned parallelOuter = 0;
  /// The outermost parallel loop (`scf.forall` or `scf.parallel`) that the
  /// contraction runs in, or null. Such a contraction runs on the thread of
  /// its iteration and packs into a panel on that thread's stack (allocated
  /// at the start of the loop's body), since other threads use the shared
  /// one.
  Operation *parallelLoop = nullptr;
  /// The `linalg.fill` of zeros into C that the kernel makes redundant by
  /// starting its accumulators from zero (erased with the op), or null.
  linalg::FillOp zeroFill;
  /// The element-wise op applied to the accumulators after the last K
  /// panel (tfc-fuse-epilogues; erased with the op), or null.
  linalg::GenericOp epilogue;
  /// For each input of the epilogue, whether it is read as vectors along N
  /// (else one element, broadcast).
  SmallVector<bool> epilogueVectors;
  /// Where the epilogue's results go: C, or a rounded epilogue's own output
  /// (the bf16 copy, findEpilogue), which the last K panel's tiles store
  /// instead of C.
  Value epilogueOutput;
};

/// The plan for `op`, or nothing when it is not a contraction the kernel
/// handles (those stay linalg ops and become plain loops).
std::optional<ContractionPlan> planContraction(linalg::LinalgOp op);

/// Whether the buffer `operand`, read through `map`, runs along loop `dim`
/// with unit stride: its innermost dimension is `dim`'s, contiguous.
bool runsAlong(Value operand, AffineMap map, int64_t dim);

} // namespace mlir::tfc

#endif // TFC_CODEGEN_CPU_CONTRACTIONPLAN_H
