//===- FlashAttention.cpp - The FlashAttention forward kernel -------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Softmax attention's forward as one kernel on the tensor cores, in
/// FlashAttention-2's mapping: a block of 4 warps per (query block of 64
/// rows, batch, head), each warp 16 query rows; the block's Q tile is read
/// once into registers (as mma A fragments), and K and V tiles of BN keys
/// stream through two stages of shared memory (`cp.async`), the copies of
/// the next tile in flight while the warps use the current one. Per key
/// tile a warp computes its 16 x BN scores `S = Q K^T` with
/// `mma.sync.m16n8k16` (bf16 operands, float32 accumulators), masks them
/// (causal, padding keys), runs the online softmax on them in registers
/// (row maxima across the 4 threads of a row by warp shuffles, exp2 with
/// the scale and log2(e) folded in), rounds the probabilities to bf16 in
/// the registers that already hold them in the A fragment's layout, and
/// adds `P V` to its 16 x Dh output accumulators, V's B fragments read by
/// `ldmatrix.trans`. When causal, a block visits only the key tiles up to
/// its diagonal, and the blocks of the last query rows (the longest) are
/// launched first. Nothing of size S x S exists, in memory or registers.
///
/// It writes the output (float32, `[B, Sq, D]`) and each row's
/// log-sum-exp (float32, `[B, H, Sq]`, natural units, 0 for a row that
/// attends no key), which the row loops of the gradient read.
///
/// The kernel is built on tensors: the operands are rounded to bf16 by an
/// element-wise op each and reach the kernel through
/// `bufferization.to_memref` (read-only), its outputs are buffers of their
/// own returned as tensors by `bufferization.to_tensor` (restrict,
/// writable), so that bufferization places them like any other tensor.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Utils.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// A block: 4 warps of 16 query rows each.
constexpr int64_t kWarp = 32, kWarps = 4, kBlockThreads = kWarp * kWarps;
constexpr int64_t kWarpQueries = 16, kBlockQueries = kWarps * kWarpQueries;
/// The mma tile: 16 rows x 8 columns x 16 deep.
constexpr int64_t kMmaCols = 8, kMmaDepth = 16;

/// The keys of one K and V tile for head dimension `headDim`: 64, or 32
/// for 128 channels, so that the Q tile and two stages of K and V tiles
/// fit in the 48 KiB of static shared memory.
int64_t blockKeys(int64_t headDim) { return headDim > 64 ? 32 : 64; }

class FlashForwardBuilder : IndexArithmetic {
public:
  FlashForwardBuilder(OpBuilder &builder, Location loc, bool causal,
                      int64_t heads, Value query, Value key, Value value,
                      Value mask)
      : IndexArithmetic(builder, loc), causal(causal), heads(heads),
        query(query), key(key), value(value), mask(mask) {
    ArrayRef<int64_t> qShape = cast<ShapedType>(query.getType()).getShape();
    batch = qShape[0];
    queries = qShape[1];
    headDim = qShape[2] / heads;
    keys = cast<ShapedType>(key.getType()).getDimSize(1);
    keyTile = blockKeys(headDim);
  }

  FlashAttentionForward build();

private:
  bool causal;
  int64_t heads, batch = 0, queries = 0, keys = 0, headDim = 0, keyTile = 0;
  Value query, key, value, mask;
  /// Inside the kernel: the operands' buffers, the outputs, the tiles.
  Value q16, k16, v16, maskBuffer, out, lse, qTile, kTiles, vTiles;
  /// Inside the kernel: the block's batch row, head and first query; the
  /// thread's warp and lane, and the lane's row `g` (lane / 4) and column
  /// pair `t` (lane % 4) in an mma tile.
  Value bi, h, firstQuery, tid, warp, lane, g, t;

  Value f32(double v) {
    return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(v));
  }
  Value fmul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value fadd(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value fsub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value fmax(Value x, Value y) {
    return b.create<arith::MaximumFOp>(loc, x, y);
  }
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

  /// A read-only buffer of the bf16 tensor `x`.
  Value bufferOf(Value x) {
    return b.create<bufferization::ToMemrefOp>(
        loc,
        MemRefType::get(cast<ShapedType>(x.getType()).getShape(),
                        cast<ShapedType>(x.getType()).getElementType()),
        x, /*read_only=*/true);
  }
  /// A shared tile of `rows` x Dh bf16, `stages` of them when not 0.
  Value addTile(int64_t rows, int64_t stages);
  /// The copies of rows `first`.. of `source`'s head into `tile` at
  /// `leading`, 16 bytes each, consecutive threads along a row.
  void copyRows(Value source, Value first, int64_t rows, Value tile,
                ValueRange leading, SmallVector<Value> &tokens);
  /// The copies of key tile `kt` of K and V into its stage, as one group.
  Value copyKeyTile(Value kt);
  /// One key tile's step of the online softmax: the running maxima `m`
  /// and partial normalisers `l` of the thread's two rows and its output
  /// accumulators `acc`, updated with key tile `kt` from `stage`.
  void keyTileStep(Value kt, Value stage, ArrayRef<SmallVector<Value>> qFrags,
                   MutableArrayRef<Value> m, MutableArrayRef<Value> l,
                   MutableArrayRef<Value> acc);
  /// The kernel, at the builder's point.
  void buildKernel();
};

FlashAttentionForward FlashForwardBuilder::build() {
  FlashAttentionForward result;
  result.query = roundToBF16(b, loc, query);
  result.key = roundToBF16(b, loc, key);
  result.value = roundToBF16(b, loc, value);
  q16 = bufferOf(result.query);
  k16 = bufferOf(result.key);
  v16 = bufferOf(result.value);
  if (mask)
    maskBuffer = bufferOf(mask);
  Type f32 = b.getF32Type();
  out = b.create<memref::AllocOp>(
      loc, MemRefType::get(cast<ShapedType>(query.getType()).getShape(), f32));
  lse = b.create<memref::AllocOp>(
      loc, MemRefType::get({batch, heads, queries}, f32));
  buildKernel();
  result.out = b.create<bufferization::ToTensorOp>(loc, out, /*restrict=*/true,
                                                   /*writable=*/true);
  result.lse = b.create<bufferization::ToTensorOp>(loc, lse, /*restrict=*/true,
                                                   /*writable=*/true);
  return result;
}

Value FlashForwardBuilder::addTile(int64_t rows, int64_t stages) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  SmallVector<int64_t> shape = {rows, headDim};
  if (stages)
    shape.insert(shape.begin(), stages);
  auto type = MemRefType::get(shape, b.getBF16Type(),
                              MemRefLayoutAttrInterface(), workgroup);
  return cast<gpu::LaunchOp>(b.getInsertionBlock()->getParentOp())
      .addWorkgroupAttribution(type, loc);
}

void FlashForwardBuilder::copyRows(Value source, Value first, int64_t rows,
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

Value FlashForwardBuilder::copyKeyTile(Value kt) {
  SmallVector<Value> tokens;
  Value stage = rem(kt, 2);
  Value first = b.create<arith::MulIOp>(loc, kt, index(keyTile));
  copyRows(k16, first, keyTile, kTiles, stage, tokens);
  copyRows(v16, first, keyTile, vTiles, stage, tokens);
  return b.create<nvgpu::DeviceAsyncCreateGroupOp>(loc, tokenType(), tokens);
}

void FlashForwardBuilder::keyTileStep(Value kt, Value stage,
                                      ArrayRef<SmallVector<Value>> qFrags,
                                      MutableArrayRef<Value> m,
                                      MutableArrayRef<Value> l,
                                      MutableArrayRef<Value> acc) {
  // ldmatrix x4 addresses: lane l gives row l % 8 of matrix l / 8.
  Value l8 = rem(lane, 8), halfChunk = rem(div(lane, 8), 2),
        quarterChunk = div(lane, 16);
  Value half = mul(halfChunk, 8), quarter = mul(quarterChunk, 8);
  int64_t scoreTiles = keyTile / kMmaCols;
  // S = Q K^T: K's rows are the mma's columns, its channels k (innermost,
  // no .trans); one x4 gives the B fragments of two 8-key tiles.
  Value zero = f32(0.0);
  SmallVector<Value> s(scoreTiles * 4, zero);
  for (int64_t ks = 0; ks < headDim / kMmaDepth; ++ks)
    for (int64_t j = 0; j < scoreTiles; j += 2) {
      SmallVector<Value> frag = loadMatrixX4(
          b, loc, kTiles, stage, add(add(quarter, l8), j * kMmaCols),
          add(halfChunk, 2 * ks), headDim, /*transpose=*/false);
      ArrayRef<Value> pair(frag);
      mmaBf16(b, loc, qFrags[ks], pair.slice(0, 2),
              MutableArrayRef<Value>(s).slice(j * 4, 4));
      mmaBf16(b, loc, qFrags[ks], pair.slice(2, 2),
              MutableArrayRef<Value>(s).slice((j + 1) * 4, 4));
    }
  // The scores in log2 units, masked: score q of tile j is row g + 8 (q / 2)
  // of the warp, key 8 j + 2 t + q % 2 of the tile.
  double log2e = 1.0 / std::log(2.0);
  Value factor = f32(log2e / std::sqrt(static_cast<double>(headDim)));
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  Value firstKey = b.create<arith::MulIOp>(loc, kt, index(keyTile));
  Value threadKey = add(firstKey, mul(t, 2));
  Value threadQuery = add(add(firstQuery, mul(warp, kWarpQueries)), g);
  Value offset;
  if (causal)
    offset = b.create<arith::SubIOp>(loc, threadKey, threadQuery);
  for (int64_t j = 0; j < scoreTiles; ++j)
    for (int64_t q = 0; q < 4; ++q) {
      Value &score = s[j * 4 + q];
      score = fmul(score, factor);
      if (causal) {
        Value ahead = b.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::sgt,
            add(offset, j * kMmaCols + q % 2 - 8 * (q / 2)), index(0));
        score = b.create<arith::SelectOp>(loc, ahead, minusInf, score);
      }
      if (mask) {
        Value flag = b.create<memref::LoadOp>(
            loc, maskBuffer,
            ValueRange{bi, add(threadKey, j * kMmaCols + q % 2)});
        Value real =
            b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, flag, zero);
        score = b.create<arith::SelectOp>(loc, real, score, minusInf);
      }
    }
  // The online softmax of the thread's two rows (r = 0: row g, 1: g + 8).
  int64_t outTiles = headDim / kMmaCols;
  for (int64_t r = 0; r < 2; ++r) {
    Value rowMax = minusInf;
    for (int64_t j = 0; j < scoreTiles; ++j)
      for (int64_t q = 2 * r; q < 2 * r + 2; ++q)
        rowMax = fmax(rowMax, s[j * 4 + q]);
    // One maximum for the row's 4 threads: the mma of P V adds their
    // probabilities into every output column, so they share one base.
    Value next = fmax(m[r], rowReduce(rowMax, /*sum=*/false));
    // A row that has met only masked keys keeps a maximum of -inf; it
    // subtracts 0 instead, so that its weights are 0, not NaN.
    Value none =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, next, minusInf);
    Value base = b.create<arith::SelectOp>(loc, none, zero, next);
    Value c = exp2(fsub(m[r], base));
    Value sum = zero;
    for (int64_t j = 0; j < scoreTiles; ++j)
      for (int64_t q = 2 * r; q < 2 * r + 2; ++q) {
        Value &p = s[j * 4 + q];
        p = exp2(fsub(p, base));
        sum = fadd(sum, p);
      }
    l[r] = fadd(fmul(l[r], c), sum);
    m[r] = next;
    for (int64_t n = 0; n < outTiles; ++n)
      for (int64_t q = 2 * r; q < 2 * r + 2; ++q)
        acc[n * 4 + q] = fmul(acc[n * 4 + q], c);
  }
  // O += P V: the probabilities of score tiles 2 kk and 2 kk + 1 are the A
  // fragment of keys 16 kk.. as they stand (rows g and g + 8, columns
  // 2 t, 2 t + 1 of each); V's rows are k, its channels the mma's columns
  // (innermost, so .trans).
  for (int64_t kk = 0; kk < keyTile / kMmaDepth; ++kk) {
    SmallVector<Value> a;
    for (int64_t j = 2 * kk; j < 2 * kk + 2; ++j)
      for (int64_t q = 0; q < 4; q += 2)
        a.push_back(packBf16Pair(b, loc, s[j * 4 + q], s[j * 4 + q + 1]));
    // a: (row g, tile 2 kk), (g + 8, 2 kk), (g, 2 kk + 1), (g + 8,
    // 2 kk + 1): the registers a0..a3 of the A fragment.
    for (int64_t n = 0; n < outTiles; n += 2) {
      SmallVector<Value> frag =
          loadMatrixX4(b, loc, vTiles, stage, add(add(half, l8), kk * 16),
                       add(quarterChunk, n), headDim, /*transpose=*/true);
      ArrayRef<Value> pair(frag);
      mmaBf16(b, loc, a, pair.slice(0, 2),
              MutableArrayRef<Value>(acc).slice(n * 4, 4));
      mmaBf16(b, loc, a, pair.slice(2, 2),
              MutableArrayRef<Value>(acc).slice((n + 1) * 4, 4));
    }
  }
}

void FlashForwardBuilder::buildKernel() {
  int64_t queryBlocks = queries / kBlockQueries;
  int64_t pairs = batch * heads;
  Value one = index(1);
  auto launch = b.create<gpu::LaunchOp>(loc, index(queryBlocks * pairs), one,
                                        one, index(kBlockThreads), one, one);
  launch->setAttr("tfc.flash_attention_tile",
                  b.getDenseI64ArrayAttr({kBlockQueries, keyTile, headDim}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  b.create<gpu::TerminatorOp>(loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  qTile = addTile(kBlockQueries, 0);
  kTiles = addTile(keyTile, 2);
  vTiles = addTile(keyTile, 2);

  // The block's (batch, head) fastest; when causal, the last query block
  // (the most keys) first.
  Value block = launch.getBlockIds().x;
  Value pair = rem(block, pairs);
  Value queryBlock = div(block, pairs);
  if (causal)
    queryBlock =
        b.create<arith::SubIOp>(loc, index(queryBlocks - 1), queryBlock);
  bi = div(pair, heads);
  h = rem(pair, heads);
  firstQuery = mul(queryBlock, kBlockQueries);
  tid = launch.getThreadIds().x;
  warp = div(tid, kWarp);
  lane = rem(tid, kWarp);
  g = div(lane, 4);
  t = rem(lane, 4);

  // The key tiles: up to the diagonal when causal.
  Value keyTiles = index(keys / keyTile);
  if (causal)
    keyTiles = mul(add(queryBlock, 1), kBlockQueries / keyTile);

  // The Q tile and key tile 0 as one group; Q's A fragments (rows
  // ((l / 8) % 2) 8 + l % 8 of the warp's 16, chunk l / 16 of each 16
  // channels) stay in registers.
  SmallVector<Value> tokens;
  copyRows(q16, firstQuery, kBlockQueries, qTile, {}, tokens);
  copyRows(k16, index(0), keyTile, kTiles, index(0), tokens);
  copyRows(v16, index(0), keyTile, vTiles, index(0), tokens);
  Value first =
      b.create<nvgpu::DeviceAsyncCreateGroupOp>(loc, tokenType(), tokens);
  b.create<nvgpu::DeviceAsyncWaitOp>(loc, first, b.getI32IntegerAttr(0));
  b.create<gpu::BarrierOp>(loc);
  Value l8 = rem(lane, 8), half = mul(rem(div(lane, 8), 2), 8),
        quarterChunk = div(lane, 16);
  SmallVector<SmallVector<Value>> qFrags;
  for (int64_t ks = 0; ks < headDim / kMmaDepth; ++ks)
    qFrags.push_back(loadMatrixX4(
        b, loc, qTile, {}, add(add(mul(warp, kWarpQueries), half), l8),
        add(quarterChunk, 2 * ks), headDim, /*transpose=*/false));

  // The loop over key tiles carries the two rows' maxima and partial
  // normalisers, the output accumulators and the group of the copies in
  // flight. At tile kt: wait for its copies, a barrier (every warp is done
  // with tile kt - 1, whose stage the next copies reuse), the copies of
  // tile kt + 1, the step of tile kt.
  int64_t outTiles = headDim / kMmaCols;
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> init = {minusInf, minusInf, f32(0.0), f32(0.0)};
  init.append(outTiles * 4, f32(0.0));
  init.push_back(first);
  auto loop = b.create<scf::ForOp>(loc, index(0), keyTiles, one, init);
  {
    OpBuilder::InsertionGuard bodyGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    b.create<nvgpu::DeviceAsyncWaitOp>(loc, carried.back(),
                                       b.getI32IntegerAttr(0));
    b.create<gpu::BarrierOp>(loc);
    Value nextTile = add(kt, 1);
    Value more = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                         nextTile, keyTiles);
    auto ifOp = b.create<scf::IfOp>(loc, TypeRange{tokenType()}, more,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      b.create<scf::YieldOp>(loc, copyKeyTile(nextTile));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      b.create<scf::YieldOp>(loc, b.create<nvgpu::DeviceAsyncCreateGroupOp>(
                                       loc, tokenType(), ValueRange{})
                                      .getResult());
    }
    SmallVector<Value> m = {carried[0], carried[1]};
    SmallVector<Value> l = {carried[2], carried[3]};
    SmallVector<Value> acc(carried.slice(4, outTiles * 4));
    keyTileStep(kt, rem(kt, 2), qFrags, m, l, acc);
    SmallVector<Value> yield = {m[0], m[1], l[0], l[1]};
    llvm::append_range(yield, acc);
    yield.push_back(ifOp.getResult(0));
    b.create<scf::YieldOp>(loc, yield);
  }

  // The normalisers over the row's 4 threads; the output rows divided by
  // them (0 for a row that attends no key), two adjacent channels per
  // store; the log-sum-exp (m + log2 l) ln 2, stored by the row's first
  // thread.
  Value zero = f32(0.0);
  Value column = add(mul(h, headDim), mul(t, 2));
  Value warpQuery = add(add(firstQuery, mul(warp, kWarpQueries)), g);
  Value firstThread =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t, index(0));
  for (int64_t r = 0; r < 2; ++r) {
    Value l = rowReduce(loop.getResult(2 + r), /*sum=*/true);
    Value any =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, l, zero);
    Value inverse = b.create<arith::SelectOp>(
        loc, any, b.create<arith::DivFOp>(loc, f32(1.0), l), zero);
    Value row = add(warpQuery, 8 * r);
    for (int64_t n = 0; n < outTiles; ++n) {
      Value pair = b.create<vector::FromElementsOp>(
          loc, VectorType::get({2}, b.getF32Type()),
          ValueRange{fmul(loop.getResult(4 + n * 4 + 2 * r), inverse),
                     fmul(loop.getResult(4 + n * 4 + 2 * r + 1), inverse)});
      storePair(b, loc, pair, out, {bi, row, add(column, n * kMmaCols)});
    }
    Value logSumExp =
        fmul(fadd(loop.getResult(r), log2(l)), f32(std::log(2.0)));
    logSumExp = b.create<arith::SelectOp>(loc, any, logSumExp, zero);
    auto ifOp = b.create<scf::IfOp>(loc, firstThread, /*withElse=*/false);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    b.create<memref::StoreOp>(loc, logSumExp, lse, ValueRange{bi, h, row});
  }
}

} // namespace

namespace mlir::tfc {

bool flashAttentionTakes(bool causal, int64_t heads, Value query, Value key,
                         Value mask) {
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
  if (queries % kBlockQueries || keys % kBlockQueries ||
      (causal && queries != keys))
    return false;
  if (mask) {
    auto mType = dyn_cast<RankedTensorType>(mask.getType());
    if (!mType || !mType.getElementType().isF32())
      return false;
  }
  return true;
}

FlashAttentionForward buildFlashAttentionForward(OpBuilder &b, Location loc,
                                                 bool causal, int64_t heads,
                                                 Value query, Value key,
                                                 Value value, Value mask) {
  return FlashForwardBuilder(b, loc, causal, heads, query, key, value, mask)
      .build();
}

} // namespace mlir::tfc
