//===- FlashAttention.cpp - FlashAttention kernels on the tensor cores ----===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Softmax attention as kernels on the tensor cores, in FlashAttention-2's
/// mapping. Every kernel has one shape: a block of 4 warps owns 64 rows of
/// one side (queries, or keys) of one (batch, head), each warp 16 of them;
/// its operands on that side are read once into registers, as the A
/// fragments of `mma.sync.m16n8k16` (bf16 operands, float32
/// accumulators), through a staging tile of shared memory; the other
/// side's operands stream through two stages of shared memory in tiles of
/// BN rows (64, or 32 for 128 channels, so that all fits in 48 KiB), the
/// `cp.async` copies of the next tile in flight while the warps use the
/// current one. Products with a streamed tile take its B fragments by
/// `ldmatrix` (`.trans` where its channels are the mma's columns); a
/// product of a result already in registers (scores, probabilities)
/// takes it as the A fragment as it stands, rounded to bf16 pairs.
///
///   - Forward: owns queries (Q), streams K and V: per key tile
///     `S = Q K^T`, the online softmax in registers (exp2 with the scale
///     and log2(e) folded in; row maxima and sums over the 4 threads of a
///     row by warp shuffles), `O += P V`. It stores O and each row's
///     log-sum-exp.
///   - Query gradient: owns queries (Q, dO), streams K and V: per key
///     tile it recomputes `P = exp(S - lse)` and `dP = dO V^T`, then
///     `dS = P (dP - D)` and `dQ += dS K`.
///   - Key and value gradient: owns keys (K, V), streams Q and dO: per
///     query tile `P^T = exp(K Q^T - lse)`, `dV += P^T dO`,
///     `dP^T = V dO^T`, `dS^T = P^T (dP^T - D)`, `dK += dS^T Q`.
///
/// The two gradient kernels recompute the scores each (7 products per
/// pair of tiles instead of FlashAttention-2's 5) rather than adding dQ
/// with atomics from the key blocks: every output element is one block's,
/// summed in a fixed order, so a step gives the same result every time.
/// When causal, only the tiles that meet the diagonal or lie below it are
/// visited, the longest blocks first, and the diagonal tiles are masked.
/// A Longformer's sliding window is a band of key-minus-query offsets:
/// only the tiles that meet the band are visited, so time grows linearly
/// with the sequence, and the tiles that meet its edges are masked (every
/// visited tile under a dilation, whose offsets must also be multiples of
/// it). Its global columns, which every query attends (those at or before
/// it when causal), are kept by the mask where the band drops them: a
/// query block visits, before its band's tiles, the tiles of the global
/// columns outside them that its rows attend; a key block that holds a
/// global column visits every query tile that attends it. Its global rows
/// are not the kernels': the caller computes them apart and replaces
/// them, and zeroes their output gradient before the gradient kernels.
/// Padding keys are masked from the key mask. Nothing of size S x S
/// exists, in memory or registers.
///
/// The kernels are built on tensors (FlashAttentionTensors.cpp): the
/// operands are rounded to bf16 by an element-wise op each and reach the
/// kernels through `bufferization.to_memref` (read-only); their outputs
/// are buffers of their own returned as tensors by
/// `bufferization.to_tensor` (restrict, writable), so that bufferization
/// places them like any other tensor.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Utils.h"
#include "dialect/TfcDialect.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// A block: 4 warps of 16 own rows each.
constexpr int64_t kWarp = 32, kWarps = 4, kBlockThreads = kWarp * kWarps;
constexpr int64_t kWarpRows = 16, kBlockRows = kWarps * kWarpRows;
static_assert(kBlockRows == kFlashBlockRows, "a block of 4 warps of 16 rows");
/// The mma tile: 16 rows x 8 columns x 16 deep.
constexpr int64_t kMmaCols = 8, kMmaDepth = 16;
/// log2(e): the kernels' exponentials are exp2 of scores in log2 units.
const double kLog2e = 1.0 / std::log(2.0);

/// The rows of one streamed tile for head dimension `headDim`: 64, or 32
/// for 128 channels, so that the staging tile and two stages of two
/// streamed tiles fit in the 48 KiB of static shared memory.
int64_t streamTileRows(int64_t headDim) { return headDim > 64 ? 32 : 64; }

/// The keys that a query attends, by the key's position minus the query's,
/// `delta`: `-back <= delta <= ahead`, `delta` a multiple of `dilation`;
/// no limit on a side that is `kUnbounded`. Besides the band, every query
/// attends the keys at the `globals` positions (a Longformer's global
/// columns), only those up to itself when `globalsCausal`.
struct FlashBand {
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
  int64_t back = kUnbounded, ahead = kUnbounded, dilation = 1;
  SmallVector<int64_t> globals;
  bool globalsCausal = false;

  bool boundedBack() const { return back != kUnbounded; }
  bool boundedAhead() const { return ahead != kUnbounded; }
  /// Causal softmax: every key up to the query's own position.
  bool causal() const { return !boundedBack() && ahead == 0; }
};

/// The band of an attention of `kind` (`#tfc.softmax` or a
/// `#tfc.longformer`), with the Longformer's global columns.
FlashBand bandOf(Attribute kind) {
  FlashBand band;
  if (auto softmax = dyn_cast<SoftmaxAttr>(kind)) {
    if (softmax.getCausal())
      band.ahead = 0;
    return band;
  }
  auto longformer = cast<LongformerAttr>(kind);
  band.dilation = longformer.getDilation();
  band.back = longformer.getStepsBack() * band.dilation;
  band.ahead = longformer.getStepsAhead() * band.dilation;
  band.globals = longformer.getGlobalPositions();
  band.globalsCausal = longformer.getCausal();
  return band;
}

class FlashKernelBuilder : IndexArithmetic, public FlashKernelBuffers {
public:
  FlashKernelBuilder(OpBuilder &builder, Location loc, FlashKind kind,
                     FlashBand band, int64_t heads,
                     ArrayRef<int64_t> queryShape, int64_t keys)
      : IndexArithmetic(builder, loc), kind(kind), band(band), heads(heads),
        batch(queryShape[0]), queries(queryShape[1]), keys(keys),
        headDim(queryShape[2] / heads), tileRows(streamTileRows(headDim)) {}

  /// The kernel, at the builder's point.
  void build();

private:
  FlashKind kind;
  FlashBand band;
  int64_t heads, batch, queries, keys, headDim, tileRows;
  /// Inside the kernel: the staging tile of the own operands, the two
  /// streamed operands' tiles ([stage][row][channel]).
  Value staging, streamed[2];
  /// Inside the kernel: the block's batch row, head and first own row; the
  /// thread's warp and lane, and the lane's row `g` (lane / 4) and column
  /// pair `t` (lane % 4) in an mma tile.
  Value bi, h, firstOwn, tid, warp, lane, g, t;
  /// The lane's parts of an `ldmatrix` x4 address: lane l gives row l % 8
  /// of matrix l / 8; `halfChunk` is (l / 8) % 2, `quarterChunk` l / 16.
  Value l8, halfChunk, quarterChunk;

  bool ownQueries() const { return kind != FlashKind::KeyValueGrad; }
  int64_t ownLength() const { return ownQueries() ? queries : keys; }
  int64_t streamLength() const { return ownQueries() ? keys : queries; }
  int64_t scoreTiles() const { return tileRows / kMmaCols; }
  int64_t outTiles() const { return headDim / kMmaCols; }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(headDim)); }
  /// The operands a block owns and those it streams.
  SmallVector<Value> ownOperands() const {
    switch (kind) {
    case FlashKind::Forward:
      return {q16};
    case FlashKind::QueryGrad:
      return {q16, grad16};
    case FlashKind::KeyValueGrad:
      return {k16, v16};
    }
    llvm_unreachable("a flash kernel");
  }
  SmallVector<Value> streamedOperands() const {
    return ownQueries() ? SmallVector<Value>{k16, v16}
                        : SmallVector<Value>{q16, grad16};
  }

  Value f32(double v) {
    return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(v));
  }
  Value fmul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value fadd(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value fsub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value fmax(Value x, Value y) {
    return b.create<arith::MaximumFOp>(loc, x, y);
  }
  Value minusInf() { return f32(-std::numeric_limits<double>::infinity()); }
  /// A float32 intrinsic of NVVM on `x` (ex2, lg2).
  Value intrinsic(StringRef name, Value x) {
    return b
        .create<LLVM::CallIntrinsicOp>(loc, b.getF32Type(),
                                       b.getStringAttr(name), ValueRange{x})
        .getResult(0);
  }
  Value exp2(Value x) { return intrinsic("llvm.nvvm.ex2.approx.ftz.f", x); }
  Value log2(Value x) { return intrinsic("llvm.nvvm.lg2.approx.ftz.f", x); }
  /// `x` combined with the values of the threads whose lane differs in
  /// bit 0 and bit 1: the 4 threads that hold one row of an mma tile.
  Value rowReduce(Value x, bool sum) {
    for (int32_t offset : {1, 2}) {
      Value other =
          b.create<gpu::ShuffleOp>(loc, x, offset, kWarp, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      x = sum ? fadd(x, other) : fmax(x, other);
    }
    return x;
  }
  Type tokenType() { return nvgpu::DeviceAsyncTokenType::get(b.getContext()); }

  /// The own row that the thread's accumulators of half `r` (0: row g,
  /// 1: g + 8) of its warp's 16 are in.
  Value ownRow(int64_t r) {
    return add(add(add(firstOwn, mul(warp, kWarpRows)), g), 8 * r);
  }
  /// The streamed row of score `q` of 8-column tile `j` of streamed tile
  /// `kt`: 8 j + 2 t + q % 2 of the tile.
  Value streamRow(Value kt, int64_t j, int64_t q) {
    Value first = b.create<arith::MulIOp>(loc, kt, index(tileRows));
    return add(add(first, mul(t, 2)), j * kMmaCols + q % 2);
  }

  /// A shared tile of `rows` x Dh bf16, `stages` of them when not 0.
  Value addTile(gpu::LaunchOp launch, int64_t rows, int64_t stages);
  /// The copies of rows `first`.. of `source`'s head into `tile` at
  /// `leading`, 16 bytes each, consecutive threads along a row.
  void copyRows(Value source, Value first, int64_t rows, Value tile,
                ValueRange leading, SmallVector<Value> &tokens);
  /// The copies of streamed tile `kt` of both streamed operands into
  /// `stage`.
  void copyStreamTile(Value kt, Value stage, SmallVector<Value> &tokens);
  /// The warp's A fragments of the staging tile: rows ((l / 8) % 2) 8 +
  /// l % 8 of its 16, chunk l / 16 of each 16 channels.
  SmallVector<SmallVector<Value>> ownFragments();
  /// The 16 x BN product of the warp's own rows `aFrags` with the streamed
  /// tile `tile` at `stage` (its rows the columns, its channels k):
  /// BN / 8 tiles of 4 accumulators.
  SmallVector<Value> product(ArrayRef<SmallVector<Value>> aFrags, Value tile,
                             Value stage);
  /// `acc` (Dh / 8 tiles of 4) plus the product of `c` (a 16 x BN result
  /// in the accumulators' layout, rounded to bf16) with the streamed tile
  /// `tile` at `stage` (its rows k, its channels the columns).
  void accumulate(ArrayRef<Value> c, Value tile, Value stage,
                  MutableArrayRef<Value> acc);
  /// The warp's scores with streamed tile `kt` at `stage`, `scale Q K^T`
  /// (or `K Q^T`) of its own rows `aFrags` and the tile's first operand,
  /// in log2 units and masked (maskScores).
  SmallVector<Value> scores(ArrayRef<SmallVector<Value>> aFrags, Value kt,
                            Value stage, ArrayRef<Value> realOwn);
  /// `s` (a 16 x BN result of streamed tile `kt`) with -inf where a key
  /// lies outside its query's band (only on tiles that meet the band's
  /// edges for some row of the warp: the diagonal, when causal) or is
  /// padding (`realOwn`: whether the thread's two own rows are real keys,
  /// when keys are owned).
  void maskScores(Value kt, MutableArrayRef<Value> s, ArrayRef<Value> realOwn);
  /// Stores `acc` (Dh / 8 tiles of 4), row half r multiplied by
  /// `factor[r]`, into `buffer [B, S, D]` at the own rows, two channels
  /// per store.
  void storeRows(Value buffer, ValueRange acc, ArrayRef<Value> factor);

  /// The steps of the kernels' loops over streamed tiles: `carried` holds
  /// the loop's values and is updated.
  void forwardStep(Value kt, Value stage, ArrayRef<SmallVector<Value>> q,
                   MutableArrayRef<Value> carried);
  void queryGradStep(Value kt, Value stage,
                     ArrayRef<SmallVector<SmallVector<Value>>> own,
                     ArrayRef<Value> rowLse, ArrayRef<Value> rowDelta,
                     MutableArrayRef<Value> carried);
  void keyValueGradStep(Value kt, Value stage,
                        ArrayRef<SmallVector<SmallVector<Value>>> own,
                        ArrayRef<Value> realOwn,
                        MutableArrayRef<Value> carried);
  /// The stores after the loop, from its results.
  void finish(ValueRange results);
  /// The bounds (none: no bound) that the band sets on a streamed row's
  /// position minus its own row's.
  std::pair<std::optional<int64_t>, std::optional<int64_t>>
  streamedOffsets() const;
  /// The first and end streamed tiles that meet the band for the block's
  /// own rows (when causal: the key tiles up to the diagonal, or the query
  /// tiles from it on); for a block of keys that holds a global column,
  /// every query tile that attends it.
  std::pair<Value, Value> streamedTiles();
  /// Whether `test` holds for some global column's position.
  Value anyGlobal(function_ref<Value(int64_t)> test);
  /// Whether key `key` is a global column.
  Value isGlobal(Value key);
  /// 1 when `flag`, else 0 (an index).
  Value oneIf(Value flag) {
    return b.create<arith::SelectOp>(loc, flag, index(1), index(0));
  }

  /// The streamed tiles a block visits, in order: the global key tiles
  /// outside [first, end) that it attends (`extraTiles`, each with whether
  /// the block visits it), then [first, end). The loop over them runs its
  /// counter over [lower, upper); `tileAt` maps the counter to the tile.
  struct Visits {
    Value first, end;
    SmallVector<std::pair<int64_t, Value>> extraTiles;
    Value lower, upper;
  };
  Visits visits();
  Value tileAt(const Visits &visits, Value counter);
};

Value FlashKernelBuilder::addTile(gpu::LaunchOp launch, int64_t rows,
                                  int64_t stages) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  SmallVector<int64_t> shape = {rows, headDim};
  if (stages)
    shape.insert(shape.begin(), stages);
  auto type = MemRefType::get(shape, b.getBF16Type(),
                              MemRefLayoutAttrInterface(), workgroup);
  return launch.addWorkgroupAttribution(type, loc);
}

void FlashKernelBuilder::copyRows(Value source, Value first, int64_t rows,
                                  Value tile, ValueRange leading,
                                  SmallVector<Value> &tokens) {
  int64_t chunksPerRow = headDim / kBf16PerChunk;
  int64_t chunks = rows * chunksPerRow;
  Value column = mul(h, headDim);
  for (int64_t r = 0; r < chunks / kBlockThreads; ++r) {
    Value c = add(tid, r * kBlockThreads);
    Value row = div(c, chunksPerRow);
    Value chunk = rem(c, chunksPerRow);
    SmallVector<Value> at(leading);
    at.push_back(row);
    at.push_back(swizzledColumn(b, loc, row, chunk, headDim));
    SmallVector<Value> src = {bi, add(first, row),
                              add(column, mul(chunk, kBf16PerChunk))};
    tokens.push_back(b.create<nvgpu::DeviceAsyncCopyOp>(
        loc, tokenType(), tile, at, source, src, b.getIndexAttr(kBf16PerChunk),
        /*srcElements=*/Value(), b.getUnitAttr()));
  }
}

void FlashKernelBuilder::copyStreamTile(Value kt, Value stage,
                                        SmallVector<Value> &tokens) {
  Value first = b.create<arith::MulIOp>(loc, kt, index(tileRows));
  SmallVector<Value> operands = streamedOperands();
  for (int64_t i = 0; i < 2; ++i)
    copyRows(operands[i], first, tileRows, streamed[i], stage, tokens);
}

SmallVector<SmallVector<Value>> FlashKernelBuilder::ownFragments() {
  Value half = mul(halfChunk, 8);
  SmallVector<SmallVector<Value>> frags;
  for (int64_t ks = 0; ks < headDim / kMmaDepth; ++ks)
    frags.push_back(loadMatrixX4(
        b, loc, staging, {}, add(add(mul(warp, kWarpRows), half), l8),
        add(quarterChunk, 2 * ks), headDim, /*transpose=*/false));
  return frags;
}

SmallVector<Value>
FlashKernelBuilder::product(ArrayRef<SmallVector<Value>> aFrags, Value tile,
                            Value stage) {
  // The tile's rows are the mma's columns and its channels k (innermost,
  // no .trans); one x4 gives the B fragments of two 8-column tiles.
  Value quarter = mul(quarterChunk, 8);
  SmallVector<Value> s(scoreTiles() * 4, f32(0.0));
  for (int64_t ks = 0; ks < headDim / kMmaDepth; ++ks)
    for (int64_t j = 0; j < scoreTiles(); j += 2) {
      SmallVector<Value> frag =
          loadMatrixX4(b, loc, tile, stage, add(add(quarter, l8), j * kMmaCols),
                       add(halfChunk, 2 * ks), headDim, /*transpose=*/false);
      ArrayRef<Value> pair(frag);
      mmaBf16(b, loc, aFrags[ks], pair.slice(0, 2),
              MutableArrayRef<Value>(s).slice(j * 4, 4));
      mmaBf16(b, loc, aFrags[ks], pair.slice(2, 2),
              MutableArrayRef<Value>(s).slice((j + 1) * 4, 4));
    }
  return s;
}

void FlashKernelBuilder::accumulate(ArrayRef<Value> c, Value tile, Value stage,
                                    MutableArrayRef<Value> acc) {
  // Result tiles 2 kk and 2 kk + 1 are the A fragment of k = 16 kk.. as
  // they stand: a0..a3 are (row g, tile 2 kk), (g + 8, 2 kk), (g,
  // 2 kk + 1), (g + 8, 2 kk + 1), columns 2 t and 2 t + 1 of each. The
  // tile's rows are k and its channels the mma's columns (innermost, so
  // .trans).
  Value half = mul(halfChunk, 8);
  for (int64_t kk = 0; kk < tileRows / kMmaDepth; ++kk) {
    SmallVector<Value> a;
    for (int64_t j = 2 * kk; j < 2 * kk + 2; ++j)
      for (int64_t q = 0; q < 4; q += 2)
        a.push_back(packBf16Pair(b, loc, c[j * 4 + q], c[j * 4 + q + 1]));
    for (int64_t n = 0; n < outTiles(); n += 2) {
      SmallVector<Value> frag =
          loadMatrixX4(b, loc, tile, stage, add(add(half, l8), kk * 16),
                       add(quarterChunk, n), headDim, /*transpose=*/true);
      ArrayRef<Value> pair(frag);
      mmaBf16(b, loc, a, pair.slice(0, 2), acc.slice(n * 4, 4));
      mmaBf16(b, loc, a, pair.slice(2, 2), acc.slice((n + 1) * 4, 4));
    }
  }
}

void FlashKernelBuilder::maskScores(Value kt, MutableArrayRef<Value> s,
                                    ArrayRef<Value> realOwn) {
  // Score q of tile j: own row g + 8 (q / 2) of the warp, streamed row
  // 8 j + 2 t + q % 2 of the tile. Its streamed minus own position `d` is
  // `offset` plus a constant, which the band bounds.
  auto [lowest, highest] = streamedOffsets();
  if (lowest || highest) {
    auto maskBand = [&](MutableArrayRef<Value> scores) {
      Value offset =
          b.create<arith::SubIOp>(loc, streamRow(kt, 0, 0), ownRow(0));
      // Whether the key of score q of tile j is a global column: the
      // streamed row of its column (2 per tile), or its own row.
      SmallVector<Value> globalKey;
      for (int64_t j = 0; j < scoreTiles() && !band.globals.empty(); ++j)
        for (int64_t q = 0; q < 4; ++q) {
          if (ownQueries())
            globalKey.push_back(q >= 2 ? globalKey[j * 4 + q - 2]
                                       : isGlobal(streamRow(kt, j, q)));
          else
            globalKey.push_back(j > 0   ? globalKey[q]
                                : q % 2 ? globalKey[q - 1]
                                        : isGlobal(ownRow(q / 2)));
        }
      for (int64_t j = 0; j < scoreTiles(); ++j)
        for (int64_t q = 0; q < 4; ++q) {
          Value d = add(offset, j * kMmaCols + q % 2 - 8 * (q / 2));
          SmallVector<Value> outside;
          if (lowest)
            outside.push_back(b.create<arith::CmpIOp>(
                loc, arith::CmpIPredicate::slt, d, index(*lowest)));
          if (highest)
            outside.push_back(b.create<arith::CmpIOp>(
                loc, arith::CmpIPredicate::sgt, d, index(*highest)));
          if (band.dilation != 1)
            outside.push_back(b.create<arith::CmpIOp>(
                loc, arith::CmpIPredicate::ne,
                b.create<arith::RemSIOp>(loc, d, index(band.dilation)),
                index(0)));
          Value masked = outside.front();
          for (Value other : ArrayRef<Value>(outside).drop_front())
            masked = b.create<arith::OrIOp>(loc, masked, other);
          if (!band.globals.empty()) {
            // A global column is attended from outside the band too (only
            // by the queries at or after it when causal: d <= 0 for a
            // streamed key, d >= 0 for an own one).
            Value attended = globalKey[j * 4 + q];
            if (band.globalsCausal)
              attended = b.create<arith::AndIOp>(
                  loc, attended,
                  b.create<arith::CmpIOp>(loc,
                                          ownQueries()
                                              ? arith::CmpIPredicate::sle
                                              : arith::CmpIPredicate::sge,
                                          d, index(0)));
            masked = b.create<arith::AndIOp>(
                loc, masked,
                b.create<arith::XOrIOp>(
                    loc, attended, b.create<arith::ConstantIntOp>(loc, 1, 1)));
          }
          Value &score = scores[j * 4 + q];
          score = b.create<arith::SelectOp>(loc, masked, minusInf(), score);
        }
    };
    // Over the warp's 16 rows and the tile's, d runs from tileFirst -
    // warpFirst - 15 to tileFirst + BN - 1 - warpFirst: only a tile where
    // that range leaves [lowest, highest] needs the mask (the same answer
    // for the whole warp). With a dilation every tile does.
    if (band.dilation != 1) {
      maskBand(s);
    } else {
      Value tileFirst = b.create<arith::MulIOp>(loc, kt, index(tileRows));
      Value warpFirst = add(firstOwn, mul(warp, kWarpRows));
      Value meets;
      if (lowest)
        meets =
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, tileFirst,
                                    add(warpFirst, kWarpRows - 1 + *lowest));
      if (highest) {
        Value after = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt,
                                              add(tileFirst, tileRows - 1),
                                              add(warpFirst, *highest));
        meets = meets ? b.create<arith::OrIOp>(loc, meets, after) : after;
      }
      auto ifOp = b.create<scf::IfOp>(loc, ValueRange(s).getTypes(), meets,
                                      /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      b.create<scf::YieldOp>(loc, ValueRange(s));
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> masked(s.begin(), s.end());
      maskBand(masked);
      b.create<scf::YieldOp>(loc, masked);
      llvm::copy(ifOp.getResults(), s.begin());
    }
  }
  if (!mask)
    return;
  for (int64_t j = 0; j < scoreTiles(); ++j) {
    // Whether the keys of the thread's two columns are real, when keys are
    // streamed (each flag read once for both rows).
    SmallVector<Value> realColumn;
    for (int64_t q = 0; q < 2 && ownQueries(); ++q) {
      Value flag = b.create<memref::LoadOp>(
          loc, mask, ValueRange{bi, streamRow(kt, j, q)});
      realColumn.push_back(b.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::UNE, flag, f32(0.0)));
    }
    for (int64_t q = 0; q < 4; ++q) {
      Value real = ownQueries() ? realColumn[q % 2] : realOwn[q / 2];
      Value &score = s[j * 4 + q];
      score = b.create<arith::SelectOp>(loc, real, score, minusInf());
    }
  }
}

SmallVector<Value>
FlashKernelBuilder::scores(ArrayRef<SmallVector<Value>> aFrags, Value kt,
                           Value stage, ArrayRef<Value> realOwn) {
  SmallVector<Value> s = product(aFrags, streamed[0], stage);
  Value factor = f32(scale() * kLog2e);
  for (Value &score : s)
    score = fmul(score, factor);
  maskScores(kt, s, realOwn);
  return s;
}

void FlashKernelBuilder::storeRows(Value buffer, ValueRange acc,
                                   ArrayRef<Value> factor) {
  Value column = add(mul(h, headDim), mul(t, 2));
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t n = 0; n < outTiles(); ++n) {
      Value pair = b.create<vector::FromElementsOp>(
          loc, VectorType::get({2}, b.getF32Type()),
          ValueRange{fmul(acc[n * 4 + 2 * r], factor[r]),
                     fmul(acc[n * 4 + 2 * r + 1], factor[r])});
      if (element.isBF16())
        pair =
            b.create<arith::TruncFOp>(loc, VectorType::get({2}, element), pair);
      storePair(b, loc, pair, buffer,
                {bi, ownRow(r), add(column, n * kMmaCols)})
          ->setAttr(kFlashRowStoreAttr, b.getUnitAttr());
    }
}

void FlashKernelBuilder::forwardStep(Value kt, Value stage,
                                     ArrayRef<SmallVector<Value>> q,
                                     MutableArrayRef<Value> carried) {
  // carried: the maxima and partial normalisers of the thread's two rows,
  // then O's accumulators.
  MutableArrayRef<Value> m = carried.slice(0, 2), l = carried.slice(2, 2),
                         acc = carried.slice(4, outTiles() * 4);
  SmallVector<Value> s = scores(q, kt, stage, {});
  Value zero = f32(0.0);
  for (int64_t r = 0; r < 2; ++r) {
    Value rowMax = minusInf();
    for (int64_t j = 0; j < scoreTiles(); ++j)
      for (int64_t q = 2 * r; q < 2 * r + 2; ++q)
        rowMax = fmax(rowMax, s[j * 4 + q]);
    // One maximum for the row's 4 threads: the mma of P V adds their
    // probabilities into every output column, so they share one base.
    Value next = fmax(m[r], rowReduce(rowMax, /*sum=*/false));
    // A row that has met only masked keys keeps a maximum of -inf; it
    // subtracts 0 instead, so that its weights are 0, not NaN.
    Value none = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, next,
                                         minusInf());
    Value base = b.create<arith::SelectOp>(loc, none, zero, next);
    Value c = exp2(fsub(m[r], base));
    Value sum = zero;
    for (int64_t j = 0; j < scoreTiles(); ++j)
      for (int64_t q = 2 * r; q < 2 * r + 2; ++q) {
        Value &p = s[j * 4 + q];
        p = exp2(fsub(p, base));
        sum = fadd(sum, p);
      }
    l[r] = fadd(fmul(l[r], c), sum);
    m[r] = next;
    for (int64_t n = 0; n < outTiles(); ++n)
      for (int64_t q = 2 * r; q < 2 * r + 2; ++q)
        acc[n * 4 + q] = fmul(acc[n * 4 + q], c);
  }
  accumulate(s, streamed[1], stage, acc);
}

void FlashKernelBuilder::queryGradStep(
    Value kt, Value stage, ArrayRef<SmallVector<SmallVector<Value>>> own,
    ArrayRef<Value> rowLse, ArrayRef<Value> rowDelta,
    MutableArrayRef<Value> carried) {
  // P = exp2(S scale log2(e) - lse log2(e)) from Q K^T; dP = dO V^T;
  // dS = P (dP - D); dQ += dS K.
  SmallVector<Value> p = scores(own[0], kt, stage, {});
  for (int64_t j = 0; j < scoreTiles(); ++j)
    for (int64_t q = 0; q < 4; ++q)
      p[j * 4 + q] = exp2(fsub(p[j * 4 + q], rowLse[q / 2]));
  SmallVector<Value> ds = product(own[1], streamed[1], stage);
  for (int64_t j = 0; j < scoreTiles(); ++j)
    for (int64_t q = 0; q < 4; ++q) {
      Value &x = ds[j * 4 + q];
      x = fmul(p[j * 4 + q], fsub(x, rowDelta[q / 2]));
    }
  accumulate(ds, streamed[0], stage, carried);
}

void FlashKernelBuilder::keyValueGradStep(
    Value kt, Value stage, ArrayRef<SmallVector<SmallVector<Value>>> own,
    ArrayRef<Value> realOwn, MutableArrayRef<Value> carried) {
  // P^T = exp2(K Q^T scale log2(e) - lse log2(e)), the log-sum-exp of each
  // column's query; dV += P^T dO; dP^T = V dO^T; dS^T = P^T (dP^T - D);
  // dK += dS^T Q.
  MutableArrayRef<Value> dkAcc = carried.slice(0, outTiles() * 4),
                         dvAcc = carried.slice(outTiles() * 4, outTiles() * 4);
  SmallVector<Value> p = scores(own[0], kt, stage, realOwn);
  SmallVector<Value> columnLse, columnDelta;
  for (int64_t j = 0; j < scoreTiles(); ++j)
    for (int64_t q = 0; q < 2; ++q) {
      SmallVector<Value> at = {bi, h, streamRow(kt, j, q)};
      columnLse.push_back(
          fmul(b.create<memref::LoadOp>(loc, lse, at), f32(kLog2e)));
      columnDelta.push_back(b.create<memref::LoadOp>(loc, delta, at));
    }
  for (int64_t j = 0; j < scoreTiles(); ++j)
    for (int64_t q = 0; q < 4; ++q)
      p[j * 4 + q] = exp2(fsub(p[j * 4 + q], columnLse[j * 2 + q % 2]));
  accumulate(p, streamed[1], stage, dvAcc);
  SmallVector<Value> ds = product(own[1], streamed[1], stage);
  for (int64_t j = 0; j < scoreTiles(); ++j)
    for (int64_t q = 0; q < 4; ++q) {
      Value &x = ds[j * 4 + q];
      x = fmul(p[j * 4 + q], fsub(x, columnDelta[j * 2 + q % 2]));
    }
  accumulate(ds, streamed[0], stage, dkAcc);
}

void FlashKernelBuilder::finish(ValueRange results) {
  Value zero = f32(0.0), one = f32(1.0), scaled = f32(scale());
  int64_t accs = outTiles() * 4;
  switch (kind) {
  case FlashKind::Forward: {
    // The normalisers over the row's 4 threads; the output rows divided
    // by them (0 for a row that attends no key); the log-sum-exp
    // (m + log2 l) ln 2, stored by the row's first thread.
    Value firstThread =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t, index(0));
    SmallVector<Value> inverse, logSumExp;
    for (int64_t r = 0; r < 2; ++r) {
      Value l = rowReduce(results[2 + r], /*sum=*/true);
      Value any =
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, l, zero);
      inverse.push_back(b.create<arith::SelectOp>(
          loc, any, b.create<arith::DivFOp>(loc, one, l), zero));
      Value natural = fmul(fadd(results[r], log2(l)), f32(std::log(2.0)));
      logSumExp.push_back(b.create<arith::SelectOp>(loc, any, natural, zero));
    }
    storeRows(out, results.slice(4, accs), inverse);
    if (!lseOut)
      return;
    auto ifOp = b.create<scf::IfOp>(loc, firstThread, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (int64_t r = 0; r < 2; ++r)
      b.create<memref::StoreOp>(loc, logSumExp[r], lseOut,
                                ValueRange{bi, h, ownRow(r)});
    return;
  }
  case FlashKind::QueryGrad:
    storeRows(dq, results.slice(0, accs), {scaled, scaled});
    return;
  case FlashKind::KeyValueGrad:
    storeRows(dk, results.slice(0, accs), {scaled, scaled});
    storeRows(dv, results.slice(accs, accs), {one, one});
    return;
  }
}

std::pair<std::optional<int64_t>, std::optional<int64_t>>
FlashKernelBuilder::streamedOffsets() const {
  // The key's position minus the query's is the streamed minus the own
  // position when queries are owned, its negation when keys are.
  std::optional<int64_t> back, ahead;
  if (band.boundedBack())
    back = band.back;
  if (band.boundedAhead())
    ahead = band.ahead;
  if (ownQueries())
    return {back ? std::optional<int64_t>(-*back) : std::nullopt, ahead};
  return {ahead ? std::optional<int64_t>(-*ahead) : std::nullopt, back};
}

std::pair<Value, Value> FlashKernelBuilder::streamedTiles() {
  // The streamed rows from `lowest` after the block's first own row to
  // `highest` after its last.
  auto [lowest, highest] = streamedOffsets();
  int64_t streamTiles = streamLength() / tileRows;
  Value firstTile = index(0), endTile = index(streamTiles);
  if (lowest) {
    Value first = b.create<arith::SubIOp>(loc, firstOwn, index(-*lowest));
    firstTile = div(b.create<arith::MaxSIOp>(loc, first, index(0)), tileRows);
  }
  if (highest) {
    Value end = add(firstOwn, kBlockRows + *highest + tileRows - 1);
    endTile =
        b.create<arith::MinUIOp>(loc, div(end, tileRows), index(streamTiles));
  }
  if (ownQueries() || band.globals.empty())
    return {firstTile, endTile};
  // Keys: every query attends a global column (from the column on when
  // causal, which the band's first tile already is).
  Value holdsGlobal = anyGlobal([&](int64_t position) -> Value {
    return b.create<arith::AndIOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, firstOwn,
                                index(position)),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt,
                                add(firstOwn, kBlockRows), index(position)));
  });
  endTile =
      b.create<arith::SelectOp>(loc, holdsGlobal, index(streamTiles), endTile);
  if (!band.globalsCausal)
    firstTile =
        b.create<arith::SelectOp>(loc, holdsGlobal, index(0), firstTile);
  return {firstTile, endTile};
}

Value FlashKernelBuilder::anyGlobal(function_ref<Value(int64_t)> test) {
  Value any;
  for (int64_t position : band.globals) {
    Value holds = test(position);
    any = any ? b.create<arith::OrIOp>(loc, any, holds) : holds;
  }
  return any;
}

Value FlashKernelBuilder::isGlobal(Value key) {
  return anyGlobal([&](int64_t position) -> Value {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, key,
                                   index(position));
  });
}

FlashKernelBuilder::Visits FlashKernelBuilder::visits() {
  Visits visits;
  std::tie(visits.first, visits.end) = streamedTiles();
  visits.lower = visits.first;
  visits.upper = visits.end;
  if (!ownQueries() || band.globals.empty())
    return visits;
  // The key tiles of the global columns, each with its first global
  // position: a block visits one outside [first, end) when one of its rows
  // attends that position (any row, or, when causal, its last).
  SmallVector<std::pair<int64_t, int64_t>> tiles;
  for (int64_t position : band.globals)
    if (tiles.empty() || tiles.back().first != position / tileRows)
      tiles.push_back({position / tileRows, position});
  Value count = index(0);
  for (auto [tile, position] : tiles) {
    Value outside = b.create<arith::OrIOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, index(tile),
                                visits.first),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, index(tile),
                                visits.end));
    if (band.globalsCausal)
      outside = b.create<arith::AndIOp>(
          loc, outside,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule,
                                  index(position),
                                  add(firstOwn, kBlockRows - 1)));
    visits.extraTiles.push_back({tile, outside});
    count = add(count, oneIf(outside));
  }
  visits.lower = index(0);
  visits.upper =
      add(count, b.create<arith::SubIOp>(loc, visits.end, visits.first));
  return visits;
}

Value FlashKernelBuilder::tileAt(const Visits &visits, Value counter) {
  if (visits.extraTiles.empty())
    return counter;
  // The counter's extra tile when it is below their count, else the
  // band's tile `counter - count`.
  Value before = index(0), tile;
  for (auto [extra, visited] : visits.extraTiles) {
    Value here = b.create<arith::AndIOp>(
        loc, visited,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, counter,
                                before));
    tile =
        tile ? b.create<arith::SelectOp>(loc, here, index(extra), tile)
             : b.create<arith::SelectOp>(loc, here, index(extra), visits.first);
    before = add(before, oneIf(visited));
  }
  Value bandTile =
      add(visits.first, b.create<arith::SubIOp>(loc, counter, before));
  Value inBand =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, counter, before);
  return b.create<arith::SelectOp>(loc, inBand, bandTile, tile);
}

void FlashKernelBuilder::build() {
  int64_t ownBlocks = ownLength() / kBlockRows;
  int64_t pairs = batch * heads;
  Value one = index(1);
  auto launch = b.create<gpu::LaunchOp>(loc, index(ownBlocks * pairs), one, one,
                                        index(kBlockThreads), one, one);
  launch->setAttr(kFlashAttentionTileAttr,
                  b.getDenseI64ArrayAttr({kBlockRows, tileRows, headDim}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  b.create<gpu::TerminatorOp>(loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  staging = addTile(launch, kBlockRows, 0);
  streamed[0] = addTile(launch, tileRows, 2);
  streamed[1] = addTile(launch, tileRows, 2);

  // The block's (batch, head) fastest; when causal, the blocks with the
  // most tiles first: the last query blocks, the first key blocks.
  Value block = launch.getBlockIds().x;
  Value pair = rem(block, pairs);
  Value ownBlock = div(block, pairs);
  if (band.causal() && ownQueries())
    ownBlock = b.create<arith::SubIOp>(loc, index(ownBlocks - 1), ownBlock);
  bi = div(pair, heads);
  h = rem(pair, heads);
  firstOwn = mul(ownBlock, kBlockRows);
  tid = launch.getThreadIds().x;
  warp = div(tid, kWarp);
  lane = rem(tid, kWarp);
  g = div(lane, 4);
  t = rem(lane, 4);
  l8 = rem(lane, 8);
  halfChunk = rem(div(lane, 8), 2);
  quarterChunk = div(lane, 16);

  Visits tiles = visits();

  // The own operands through the staging tile into registers, the first's
  // copies in one group with the first streamed tile's.
  SmallVector<SmallVector<SmallVector<Value>>> own;
  Value group;
  SmallVector<Value> operands = ownOperands();
  for (auto [i, operand] : llvm::enumerate(operands)) {
    SmallVector<Value> tokens;
    if (i)
      b.create<gpu::BarrierOp>(loc);
    copyRows(operand, firstOwn, kBlockRows, staging, {}, tokens);
    if (i == 0)
      copyStreamTile(tileAt(tiles, tiles.lower), rem(tiles.lower, 2), tokens);
    group = b.create<nvgpu::DeviceAsyncCreateGroupOp>(loc, tokenType(), tokens);
    b.create<nvgpu::DeviceAsyncWaitOp>(loc, group, b.getI32IntegerAttr(0));
    b.create<gpu::BarrierOp>(loc);
    own.push_back(ownFragments());
  }
  // What the steps read of the own rows: the log-sum-exp (in log2 units)
  // and D of the query gradient's rows; whether the key gradient's rows
  // are real keys.
  SmallVector<Value> rowLse, rowDelta, realOwn;
  for (int64_t r = 0; r < 2 && kind == FlashKind::QueryGrad; ++r) {
    SmallVector<Value> at = {bi, h, ownRow(r)};
    rowLse.push_back(fmul(b.create<memref::LoadOp>(loc, lse, at), f32(kLog2e)));
    rowDelta.push_back(b.create<memref::LoadOp>(loc, delta, at));
  }
  for (int64_t r = 0; r < 2 && mask && !ownQueries(); ++r) {
    Value flag = b.create<memref::LoadOp>(loc, mask, ValueRange{bi, ownRow(r)});
    realOwn.push_back(b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE,
                                              flag, f32(0.0)));
  }

  // The loop over streamed tiles carries the kernel's accumulators and the
  // group of the copies in flight. At tile kt: wait for its copies, a
  // barrier (every warp is done with tile kt - 1, whose stage the next
  // copies reuse), the copies of tile kt + 1, the step of tile kt.
  SmallVector<Value> init;
  int64_t accs = outTiles() * 4;
  switch (kind) {
  case FlashKind::Forward:
    init = {minusInf(), minusInf(), f32(0.0), f32(0.0)};
    init.append(accs, f32(0.0));
    break;
  case FlashKind::QueryGrad:
    init.append(accs, f32(0.0));
    break;
  case FlashKind::KeyValueGrad:
    init.append(2 * accs, f32(0.0));
    break;
  }
  init.push_back(group);
  auto loop = b.create<scf::ForOp>(loc, tiles.lower, tiles.upper, one, init);
  {
    OpBuilder::InsertionGuard bodyGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value counter = loop.getInductionVar();
    Value kt = tileAt(tiles, counter);
    SmallVector<Value> carried(loop.getRegionIterArgs());
    b.create<nvgpu::DeviceAsyncWaitOp>(loc, carried.back(),
                                       b.getI32IntegerAttr(0));
    b.create<gpu::BarrierOp>(loc);
    Value next = add(counter, 1);
    Value more = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, next,
                                         tiles.upper);
    auto ifOp = b.create<scf::IfOp>(loc, TypeRange{tokenType()}, more,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> tokens;
      copyStreamTile(tileAt(tiles, next), rem(next, 2), tokens);
      b.create<scf::YieldOp>(loc, b.create<nvgpu::DeviceAsyncCreateGroupOp>(
                                       loc, tokenType(), tokens)
                                      .getResult());
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      b.create<scf::YieldOp>(loc, b.create<nvgpu::DeviceAsyncCreateGroupOp>(
                                       loc, tokenType(), ValueRange{})
                                      .getResult());
    }
    Value stage = rem(counter, 2);
    MutableArrayRef<Value> state = MutableArrayRef<Value>(carried).drop_back();
    switch (kind) {
    case FlashKind::Forward:
      forwardStep(kt, stage, own[0], state);
      break;
    case FlashKind::QueryGrad:
      queryGradStep(kt, stage, own, rowLse, rowDelta, state);
      break;
    case FlashKind::KeyValueGrad:
      keyValueGradStep(kt, stage, own, realOwn, state);
      break;
    }
    carried.back() = ifOp.getResult(0);
    b.create<scf::YieldOp>(loc, carried);
  }
  finish(loop.getResults().drop_back());
}

} // namespace

namespace mlir::tfc {

bool flashAttentionTakes(Attribute kind, int64_t heads, Value query, Value key,
                         Value mask) {
  auto longformer = dyn_cast<LongformerAttr>(kind);
  if (!isa<SoftmaxAttr>(kind) &&
      (!longformer ||
       static_cast<int64_t>(longformer.getGlobalPositions().size()) >
           kMaxFlashGlobals))
    return false;
  auto qType = dyn_cast<RankedTensorType>(query.getType());
  auto kType = dyn_cast<RankedTensorType>(key.getType());
  if (!qType || !kType || !qType.hasStaticShape() || !kType.hasStaticShape() ||
      !qType.getElementType().isF32() || qType.getRank() != 3 ||
      qType.getDimSize(2) % heads)
    return false;
  int64_t headDim = qType.getDimSize(2) / heads;
  if (headDim != 16 && headDim != 32 && headDim != 64 && headDim != 128)
    return false;
  int64_t queries = qType.getDimSize(1), keys = kType.getDimSize(1);
  FlashBand band = bandOf(kind);
  if ((!flashAttentionGradientTakes(heads, query) &&
       (queries % kBlockRows || keys % kBlockRows)) ||
      ((band.boundedBack() || band.boundedAhead()) && queries != keys))
    return false;
  if (mask) {
    auto mType = dyn_cast<RankedTensorType>(mask.getType());
    if (!mType || !mType.getElementType().isF32())
      return false;
  }
  return true;
}

bool flashAttentionGradientTakes(int64_t heads, Value query) {
  return cast<ShapedType>(query.getType()).getDimSize(2) / heads <= 64;
}

void buildFlashKernel(OpBuilder &b, Location loc, FlashKind kernelKind,
                      Attribute kind, int64_t heads,
                      ArrayRef<int64_t> queryShape, int64_t keys,
                      const FlashKernelBuffers &buffers) {
  FlashKernelBuilder kernel(b, loc, kernelKind, bandOf(kind), heads, queryShape,
                            keys);
  static_cast<FlashKernelBuffers &>(kernel) = buffers;
  kernel.build();
}

} // namespace mlir::tfc
