//===- Utils.h - Helpers of the GPU back end's passes -----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The names and the helpers that several passes of the GPU back end share:
/// the kernels' module, views' buffers and the indexing of contractions.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPU_UTILS_H
#define TFC_CODEGEN_GPU_UTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>
#include <optional>

namespace mlir::tfc {

/// The gpu.module that holds every kernel of a model, and the prefix of
/// its kernels' names, `tfc_k<n>` (n counts the distinct kernels).
inline constexpr llvm::StringLiteral kKernelModule = "tfc_kernels";
inline constexpr llvm::StringLiteral kKernelPrefix = "tfc_k";

/// The NVVM intrinsic of `membar.gl` (`fence.sc.gpu` from sm_70): a
/// thread's writes before it are seen by the whole device before its
/// accesses after it. LLVM 19's NVPTX back end selects no `fence`
/// instruction; the emulation, which runs threads one after another,
/// drops it.
inline constexpr llvm::StringLiteral kDeviceFenceIntrinsic =
    "llvm.nvvm.membar.gl";

/// The buffer that `value` is a view of: a function argument, an
/// allocation or a global.
inline Value rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// Whether `value` is a static view with the identity layout of exactly
/// `elements` elements (all of a buffer of that many, in order).
inline bool isWholeView(Value value, int64_t elements) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getNumElements() == elements;
}

/// Whether `map` has a result that is loop dimension `dim`.
inline bool usesDim(AffineMap map, unsigned dim) {
  return llvm::any_of(map.getResults(),
                      [&](AffineExpr e) { return e.isFunctionOfDim(dim); });
}

/// The reduction dimension of `op` when it has exactly one and every
/// indexing map of it is a projected permutation (a contraction's k, for
/// the contraction kernels).
inline std::optional<unsigned> onlyReductionDim(linalg::LinalgOp op) {
  std::optional<unsigned> k;
  for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (kind != utils::IteratorType::reduction)
      continue;
    if (k)
      return std::nullopt;
    k = i;
  }
  if (!k || !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return std::nullopt;
  return k;
}

/// The reduction dimension k of a contraction `op` (see onlyReductionDim)
/// whose output, its last operand, is indexed by its parallel dimensions
/// alone, at least two of them.
inline std::optional<unsigned> contractionReductionDim(linalg::LinalgOp op) {
  std::optional<unsigned> k = onlyReductionDim(op);
  if (!k)
    return std::nullopt;
  AffineMap outMap = op.getIndexingMapsArray().back();
  unsigned parallel = op.getNumLoops() - 1;
  if (outMap.getNumResults() != parallel || parallel < 2 || usesDim(outMap, *k))
    return std::nullopt;
  return k;
}

/// The indices of `map` (a projected permutation) with loop dimension `m`
/// at `row`, `n` at `col`, `k` at `kv` and any other dimension d at
/// `dims[d]`: where a contraction kernel reads or writes an operand.
inline SmallVector<Value> contractionIndices(AffineMap map, unsigned m,
                                             unsigned n, unsigned k, Value row,
                                             Value col, Value kv,
                                             ArrayRef<Value> dims) {
  SmallVector<Value> result;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    unsigned d = map.getDimPosition(r);
    result.push_back(d == m ? row : d == n ? col : d == k ? kv : dims[d]);
  }
  return result;
}

/// The elements of a buffer that a view can reach, from the buffer's first
/// element: all of them unless the view is a static slice of it.
struct Span {
  Value root;
  int64_t begin = 0, end = std::numeric_limits<int64_t>::max();

  bool overlaps(const Span &other) const {
    return root == other.root && begin < other.end && other.begin < end;
  }
};

/// The span of `memref`: exact when it reaches its buffer through
/// subviews, reshapes and casts of static layout, of the buffer's element
/// type (their layouts' offsets count from the buffer's start).
Span spanOf(Value memref);

/// Whether `op` neither reads nor writes memory, or only allocates it:
/// kernels and host ops may move past it.
bool isTransparent(Operation *op);

/// Appends to `targets` the values that `op` declares it writes; false
/// when it declares a write of no particular value.
bool declaredWrites(MemoryEffectOpInterface op,
                    SmallVectorImpl<Value> &targets);

/// Whether `launch` is a plain kernel: one block of operations, no
/// asynchronous dependencies or token, no dynamic shared memory unless
/// `dynamicShared`.
bool isPlainLaunch(gpu::LaunchOp launch, bool dynamicShared = false);

/// The buffers (by root) that `op` reads and writes, appended to `reads`
/// and `writes`; false when they are unknown. A linalg op reads its
/// buffer operands and what its body loads and writes its inits; a kernel
/// already built (or an `scf.forall` on buffers) reads and writes every
/// buffer it uses; an allocation and
/// an op free of memory effects touch none.
bool bufferEffects(Operation *op, SmallVectorImpl<Value> &reads,
                   SmallVectorImpl<Value> &writes);

/// Whether `value`, used by an op after `op`, can be made available at
/// `op`: defined before it (or elsewhere), or by an allocation, a view or
/// a constant after it whose operands can be.
bool availableAt(Value value, Operation *op);

/// Moves the definitions of `value` that come after `op` before it
/// (availableAt holds).
void moveDefinitionBefore(Value value, Operation *op);

/// The threads of the kernel that tfc-gpu-tile-contractions makes of `op`,
/// 0 when it leaves `op` alone.
int64_t tiledContractionThreads(linalg::LinalgOp op);

//===----------------------------------------------------------------------===//
// Tensor-core kernels (tfc-gpu-tensor-core-contractions, the FlashAttention
// kernel of tfc-row-attention)
//===----------------------------------------------------------------------===//

/// The index arithmetic of a kernel builder, at the point of its builder
/// `b`: constants, sums, and products, unsigned quotients and remainders
/// by constants.
class IndexArithmetic {
protected:
  IndexArithmetic(OpBuilder builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder b;
  Location loc;

  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, index(y)) : x; }
  Value mul(Value x, int64_t y) {
    return b.create<arith::MulIOp>(loc, x, index(y));
  }
  Value div(Value x, int64_t y) {
    return b.create<arith::DivUIOp>(loc, x, index(y));
  }
  Value rem(Value x, int64_t y) {
    return b.create<arith::RemUIOp>(loc, x, index(y));
  }
};

/// bf16 elements of one 16-byte `cp.async` copy, one `ldmatrix` row.
inline constexpr int64_t kBf16PerChunk = 8;

/// The element column of a shared tile of rows `inner` bf16 long where the
/// 16-byte chunk `chunk` of row `row` is kept: the chunk's number XOR the
/// row, so that 8 consecutive rows put one chunk in 8 distinct 16-byte
/// bank groups (two rows share a 128-byte line when they are 64 bytes).
Value swizzledColumn(OpBuilder &b, Location loc, Value row, Value chunk,
                     int64_t inner);

/// The 4 registers (i32, two bf16 each) of an `ldmatrix` x4 of the shared
/// tile `tile` at `leading` (its outer indices), row `row` and 16-byte
/// chunk `chunk` (before the swizzle) of rows `inner` elements long;
/// `.trans` with `transpose`.
SmallVector<Value> loadMatrixX4(OpBuilder &b, Location loc, Value tile,
                                ValueRange leading, Value row, Value chunk,
                                int64_t inner, bool transpose);

/// The intrinsic of `mma.sync.m16n8k16.row.col` with bf16 operands and
/// float32 accumulators.
inline constexpr llvm::StringLiteral kMmaBf16Intrinsic =
    "llvm.nvvm.mma.m16n8k16.row.col.bf16";

/// One `mma.sync.m16n8k16` with bf16 operands and float32 accumulators:
/// `acc` (4 values) plus the product of the A fragment `a` (4 registers)
/// and the B fragment `bFrag` (2), through `llvm.call_intrinsic` (nvgpu
/// and nvvm reject bf16 operands in MLIR 19).
void mmaBf16(OpBuilder &b, Location loc, ArrayRef<Value> a,
             ArrayRef<Value> bFrag, MutableArrayRef<Value> acc);

/// Two float32 values rounded to bf16 (to nearest even) and packed into
/// one i32, the first in the low half: a register of an mma fragment.
Value packBf16Pair(OpBuilder &b, Location loc, Value low, Value high);

/// Stores `pair` (a vector of 2 elements) at `at` of `buffer` (identity
/// layout) as one store with the alignment of the pair (8 bytes for
/// float32, 4 for bf16): `vector.store` would take the element's
/// alignment, and the NVPTX back end would split it. The store is
/// storeAtByteOffset's.
LLVM::StoreOp storePair(OpBuilder &b, Location loc, Value pair, Value buffer,
                        ArrayRef<Value> at);

/// Stores `value` in global memory at `offset` bytes from `buffer`'s
/// aligned pointer, with `alignment`: an `llvm.store` to `inttoptr
/// (index_cast (extract_aligned_pointer_as_index(buffer) + offset))`.
LLVM::StoreOp storeAtByteOffset(OpBuilder &b, Location loc, Value value,
                                Value buffer, Value offset, int64_t alignment);

/// Hopper's warpgroup mma (`wgmma.mma_async`, sm_90a) reads both operands
/// from shared tiles in the 128-byte swizzle: rows of 128 bytes (64 bf16)
/// whose 16-byte chunks are permuted within each 1024-byte group of 8 rows
/// by an XOR with the row's place in the group (WarpgroupMma.cpp).
inline constexpr int64_t kSwizzleBytes = 128, kSwizzleGroupBytes = 1024;

/// The byte where the 16-byte chunk at `offset` bytes (a multiple of 16)
/// from a 1024-byte aligned tile is kept in the 128-byte swizzle: the
/// chunk's place in its 128-byte row XOR the row's place in its group of 8.
Value swizzle128(OpBuilder &b, Location loc, Value offset);

/// The shared-memory matrix descriptor (i64) of a wgmma operand whose
/// first element is at the shared address `address` (i64), in the 128-byte
/// swizzle, with `leadingBytes` and `strideBytes` between its core
/// matrices: bits 0-13 the address, 16-29 the leading and 32-45 the stride
/// byte offset, each in 16-byte units, and 1 in bits 62-63 (128-byte
/// swizzle; the tile is 1024-byte aligned, so the base offset is 0).
Value warpgroupDescriptor(OpBuilder &b, Location loc, Value address,
                          int64_t leadingBytes, int64_t strideBytes);

/// The accumulators of one warpgroup mma of 64 x `n` float32 outputs: a
/// struct of n / 2 float32 per thread.
Type warpgroupAccumulatorType(MLIRContext *ctx, int64_t n);

/// One `wgmma.mma_async.m64n<n>k16` with bf16 operands and float32
/// accumulators `acc` (warpgroupAccumulatorType), the operands described
/// by `descA` and `descB`: A is K-major (its rows' k contiguous) when
/// `aKMajor`, else M-major; B likewise. Returns the new accumulators (in
/// flight until a `wgmma.wait_group` that covers its group).
Value warpgroupMmaBf16(OpBuilder &b, Location loc, Value acc, Value descA,
                       Value descB, int64_t n, bool aKMajor, bool bKMajor);

/// The attribute of a FlashAttention kernel's launch (its tile shape).
inline constexpr StringLiteral kFlashAttentionTileAttr =
    "tfc.flash_attention_tile";
/// The attribute of a FlashAttention kernel's stores of its outputs' rows
/// (storePair's, read by tfc-gpu-flash-roundings).
inline constexpr StringLiteral kFlashRowStoreAttr = "tfc.flash_row_store";

/// The rows of a FlashAttention kernel's block (4 warps of 16): the
/// kernels' lengths are multiples of it.
inline constexpr int64_t kFlashBlockRows = 64;

/// The most global tokens of a Longformer that the FlashAttention kernels
/// take (each global column is a comparison in every masked score).
inline constexpr int64_t kMaxFlashGlobals = 8;

/// Whether the FlashAttention forward kernel takes an attention of `kind`
/// and `heads` heads over these float32 tensors: `#tfc.softmax`, or a
/// `#tfc.longformer` with at most kMaxFlashGlobals global tokens (its
/// sliding window, dilation included, masks the tiles it meets; the tiles
/// of its global columns are visited too, and its global rows computed
/// apart by the caller); static `[B, Sq, D]` queries and
/// `[B, Sk, D]` keys, a head dimension of 16, 32, 64 or 128, Sq and Sk
/// equal when a window; a float32 key mask `[B, Sk]` or none. Lengths
/// that 64 does not divide are padded to the next multiple of it around
/// the kernels (buildFlashAttentionForward), for heads of at most 64
/// channels, whose gradient is the FlashAttention kernels' too; heads of
/// 128 take multiples of 64 only.
bool flashAttentionTakes(Attribute kind, int64_t heads, Value query, Value key,
                         Value mask);

/// Whether the FlashAttention gradient kernels take the gradient of an
/// attention whose forward was a FlashAttention kernel: heads of at most
/// 64 channels (the key blocks' kernel holds dK, dV, K and V in
/// registers).
bool flashAttentionGradientTakes(int64_t heads, Value query);

/// The three FlashAttention kernels: the forward, the query gradient (one
/// block per query block), the key and value gradient (one per key block).
enum class FlashKind { Forward, QueryGrad, KeyValueGrad };

/// The buffers of a FlashAttention kernel: bf16 Q, K, V and dO, the
/// float32 key mask (or null), the forward's log-sum-exp and `D =
/// rowsum(dO O)` (`[B, H, Sq]`); the outputs it writes (the forward's O in
/// bf16 and log-sum-exp, the gradients in float32). A kernel uses those of
/// its kind.
struct FlashKernelBuffers {
  Value q16, k16, v16, grad16, mask, lse, delta;
  Value out, lseOut, dq, dk, dv;
};

/// The FlashAttention kernel `kernel` of an attention of `kind` that
/// flashAttentionTakes (`heads` heads, queries of `queryShape` `[B, Sq,
/// D]`, `keys` keys) on `buffers`, a `gpu.launch` at `b`'s point
/// (FlashAttention.cpp).
void buildFlashKernel(OpBuilder &b, Location loc, FlashKind kernel,
                      Attribute kind, int64_t heads,
                      ArrayRef<int64_t> queryShape, int64_t keys,
                      const FlashKernelBuffers &buffers);

/// The tensors of an attention's forward that its gradient reads: the
/// output, each row's log-sum-exp, and (after a FlashAttention kernel)
/// the bf16 operands it multiplied and the output as it stores it, in
/// bf16 (`out` is then that widened), with the key mask it applied. A
/// FlashAttention kernel's tensors have its lengths: the attention's,
/// `queries` and `keys`, padded to multiples of 64 (zero rows, the
/// padding keys masked where a real query could attend them); `out` has
/// the attention's.
struct FlashAttentionForward {
  Value out, lse;
  Value query, key, value, out16, mask;
  int64_t queries = 0, keys = 0;
};

/// The FlashAttention forward kernel of an attention of `kind` that
/// flashAttentionTakes, built at `b`'s point on tensors: its output
/// `[B, Sq, D]`, which it stores in bf16 (the precision a bf16 build's
/// out-projection reads; widened to float32 by an element-wise op that
/// tfc-precision rounds back to the kernel's output), each row's
/// log-sum-exp `[B, H, Sq]` (float32), and the bf16 roundings of the
/// operands that it reads (FlashAttentionTensors.cpp).
FlashAttentionForward buildFlashAttentionForward(OpBuilder &b, Location loc,
                                                 Attribute kind, int64_t heads,
                                                 Value query, Value key,
                                                 Value value, Value mask);

/// The FlashAttention gradient kernels of the attention whose forward
/// kernel gave `forward`, for the output gradient `grad` (float32): `D =
/// rowsum(dO O)` by an element-wise sum, then one kernel per query block
/// (dQ) and one per key block (dK, dV), which recompute the probabilities
/// from the forward's log-sum-exp; dQ, dK and dV (float32).
SmallVector<Value>
buildFlashAttentionGradient(OpBuilder &b, Location loc, Attribute kind,
                            int64_t heads, const FlashAttentionForward &forward,
                            Value grad);

} // namespace mlir::tfc

#endif // TFC_CODEGEN_GPU_UTILS_H
