//===- FlashAttentionTensors.cpp - The tensors around FlashAttention ------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a FlashAttention forward or gradient is on tensors around its
/// kernels (FlashAttention.cpp): the bf16 roundings of the operands, each
/// built right after its producer; the kernels' buffers, read through
/// `bufferization.to_memref` (read-only) and returned as tensors by
/// `bufferization.to_tensor` (restrict, writable), so that bufferization
/// places them like any other tensor; the forward's bf16 output widened
/// for float32 readers; the gradient's `D = rowsum(dO O)`. Lengths that
/// the kernels' block of 64 rows does not divide are padded with zero rows
/// (`tensor.pad`, one kernel each after tfc-gpu-gather-pads), the padding
/// keys masked where a real query could attend them, and the results
/// sliced back: a padding query's output gradient is zero, so it adds
/// nothing to dK and dV.
///
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Utils.h"
#include "dialect/TfcDialect.h"
#include "passes/AttentionBuilders.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// A read-only buffer of the tensor `x`.
Value bufferOf(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  return b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType()), x,
      /*read_only=*/true);
}

/// A buffer of `shape` for a kernel to write, float32 unless `element`.
Value outputBuffer(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type element = {}) {
  return b.create<memref::AllocOp>(
      loc, MemRefType::get(shape, element ? element : b.getF32Type()));
}

/// `x` (bf16) widened to float32 by an element-wise op of identity maps,
/// which tfc-precision rounds back to `x` itself.
Value widenToF32(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  return elementwise(
      b, loc, type.getShape(), b.getF32Type(), ValueRange{x},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return nb.create<arith::ExtFOp>(nloc, nb.getF32Type(), args[0]);
      });
}

/// The bf16 rounding of `x`, built right after the op that computes `x`
/// when that op is in the block of `b`'s point: each operand's rounding
/// then follows its own producer (Primer's convolution of the query, of
/// the key, of the value), with which the GPU pipeline fuses it, rather
/// than all three following the last producer.
Value roundAfterProducer(OpBuilder &b, Location loc, Value x) {
  OpBuilder::InsertionGuard guard(b);
  if (Operation *producer = x.getDefiningOp())
    if (producer->getBlock() == b.getInsertionBlock())
      b.setInsertionPointAfter(producer);
  return roundToBF16(b, loc, x);
}

/// The tensor of a buffer that a kernel wrote.
Value tensorOf(OpBuilder &b, Location loc, Value buffer, bool writable = true) {
  return b.create<bufferization::ToTensorOp>(loc, buffer, /*restrict=*/true,
                                             writable);
}

/// A buffer of its own that holds the tensor `x` (bf16) from here on, for
/// the forward kernel and the gradient's. Read through
/// `bufferization.to_memref`, a forward's operand was overwritten in place
/// by the next layer's rounding while its gradient still had to read it
/// (One-Shot Bufferize gave both roundings one buffer). `x` becomes the
/// buffer's tensor, which no op writes into.
Value ownBuffer(OpBuilder &b, Location loc, Value &x) {
  auto type = cast<RankedTensorType>(x.getType());
  Value buffer = outputBuffer(b, loc, type.getShape(), type.getElementType());
  b.create<bufferization::MaterializeInDestinationOp>(loc, /*result=*/Type(), x,
                                                      buffer, /*restrict=*/true,
                                                      /*writable=*/true);
  x = tensorOf(b, loc, buffer, /*writable=*/false);
  return buffer;
}

/// `x` with zeros after the end of dimension `dim` up to `size`; `x` when
/// that is its size.
Value padDim(OpBuilder &b, Location loc, Value x, int64_t dim, int64_t size) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getDimSize(dim) == size)
    return x;
  SmallVector<OpFoldResult> low(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> high(type.getRank(), b.getIndexAttr(0));
  high[dim] = b.getIndexAttr(size - type.getDimSize(dim));
  return b.create<tensor::PadOp>(loc, Type(), x, low, high,
                                 floatConstant(b, loc, elementOf(x), 0.0));
}

/// The first `length` rows of `x` along dimension 1; `x` when that is all
/// of it.
Value leadingRows(OpBuilder &b, Location loc, Value x, int64_t length) {
  if (cast<RankedTensorType>(x.getType()).getDimSize(1) == length)
    return x;
  return attention::leadingPositions(b, loc, x, length);
}

/// `length` rounded up to a multiple of the kernels' block of rows.
int64_t paddedLength(int64_t length) {
  return llvm::alignTo(length, kFlashBlockRows);
}

/// Whether an attention of `kind` is causal.
bool isCausal(Attribute kind) {
  if (auto softmax = dyn_cast<SoftmaxAttr>(kind))
    return softmax.getCausal();
  return cast<LongformerAttr>(kind).getCausal();
}

/// The key mask of the kernels, `[B, keys]` (float32, 0 for a key no query
/// attends): `mask` (`[B, Sk]`, or null) with the padding keys masked
/// when a real query could attend them, that is unless the attention is
/// causal over equal lengths (the padding keys then come after every real
/// query); null when nothing is masked.
Value paddedKeyMask(OpBuilder &b, Location loc, Attribute kind, Value mask,
                    int64_t batch, int64_t queries, int64_t realKeys,
                    int64_t keys) {
  if (keys == realKeys || (isCausal(kind) && queries == realKeys))
    return mask ? padDim(b, loc, mask, 1, keys) : mask;
  if (!mask)
    mask = filledTensor(b, loc, {batch, realKeys}, b.getF32Type(), 1.0);
  return padDim(b, loc, mask, 1, keys);
}

/// `D = rowsum(dO O)` per (batch, head, row), `[B, H, S]`, from `grad`
/// (`[B, S, D]`, float32) and `out` (the same, bf16, widened in the sum)
/// viewed as `[B, S, H, Dh]`.
Value rowDeltas(OpBuilder &b, Location loc, int64_t heads, Value grad,
                Value out) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(out.getType()).getShape();
  SmallVector<int64_t> split = {shape[0], shape[1], heads, shape[2] / heads};
  Value init =
      filledTensor(b, loc, {shape[0], heads, shape[1]}, b.getF32Type(), 0.0);
  // Loops (b, h, s, e), in the order of the result's dimensions: its
  // threads are those of its zero fill, which tfc-gpu-merge-launches then
  // merges into it.
  MLIRContext *ctx = b.getContext();
  AffineExpr bd = getAffineDimExpr(0, ctx), hd = getAffineDimExpr(1, ctx),
             s = getAffineDimExpr(2, ctx), e = getAffineDimExpr(3, ctx);
  AffineMap rows = AffineMap::get(4, 0, {bd, s, hd, e}, ctx);
  auto parallel = utils::IteratorType::parallel;
  auto sum = b.create<linalg::GenericOp>(
      loc, init.getType(),
      ValueRange{reshape(b, loc, grad, split), reshape(b, loc, out, split)},
      ValueRange{init},
      SmallVector<AffineMap>{rows, rows,
                             AffineMap::get(4, 0, {bd, hd, s}, ctx)},
      SmallVector<utils::IteratorType>{parallel, parallel, parallel,
                                       utils::IteratorType::reduction},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value o = nb.create<arith::ExtFOp>(nloc, nb.getF32Type(), args[1]);
        Value product = nb.create<arith::MulFOp>(nloc, args[0], o);
        nb.create<linalg::YieldOp>(
            nloc, ValueRange{nb.create<arith::AddFOp>(nloc, args[2], product)});
      });
  return sum.getResult(0);
}

} // namespace

namespace mlir::tfc {

FlashAttentionForward buildFlashAttentionForward(OpBuilder &b, Location loc,
                                                 Attribute kind, int64_t heads,
                                                 Value query, Value key,
                                                 Value value, Value mask) {
  FlashAttentionForward result;
  result.queries = cast<ShapedType>(query.getType()).getDimSize(1);
  result.keys = cast<ShapedType>(key.getType()).getDimSize(1);
  SmallVector<int64_t> shape(cast<ShapedType>(query.getType()).getShape());
  shape[1] = paddedLength(result.queries);
  int64_t keys = paddedLength(result.keys);
  result.query = padDim(b, loc, roundAfterProducer(b, loc, query), 1, shape[1]);
  result.key = padDim(b, loc, roundAfterProducer(b, loc, key), 1, keys);
  result.value = padDim(b, loc, roundAfterProducer(b, loc, value), 1, keys);
  result.mask = paddedKeyMask(b, loc, kind, mask, shape[0], result.queries,
                              result.keys, keys);
  FlashKernelBuffers kernel;
  kernel.q16 = ownBuffer(b, loc, result.query);
  kernel.k16 = ownBuffer(b, loc, result.key);
  kernel.v16 = ownBuffer(b, loc, result.value);
  if (result.mask)
    kernel.mask = bufferOf(b, loc, result.mask);
  kernel.out = outputBuffer(b, loc, shape, b.getBF16Type());
  kernel.lseOut = outputBuffer(b, loc, {shape[0], heads, shape[1]});
  buildFlashKernel(b, loc, FlashKind::Forward, kind, heads, shape, keys,
                   kernel);
  result.out16 = tensorOf(b, loc, kernel.out);
  result.out =
      widenToF32(b, loc, leadingRows(b, loc, result.out16, result.queries));
  result.lse = tensorOf(b, loc, kernel.lseOut);
  return result;
}

SmallVector<Value>
buildFlashAttentionGradient(OpBuilder &b, Location loc, Attribute kind,
                            int64_t heads, const FlashAttentionForward &forward,
                            Value grad) {
  ArrayRef<int64_t> qShape =
      cast<RankedTensorType>(forward.query.getType()).getShape();
  ArrayRef<int64_t> kShape =
      cast<RankedTensorType>(forward.key.getType()).getShape();
  // The padding query rows' output gradient is zero: so are their D and
  // their share of dK and dV.
  grad = padDim(b, loc, grad, 1, qShape[1]);
  Value delta = rowDeltas(b, loc, heads, grad, forward.out16);
  Value grad16 = roundToBF16(b, loc, grad);
  SmallVector<Value> outputs = {outputBuffer(b, loc, qShape),
                                outputBuffer(b, loc, kShape),
                                outputBuffer(b, loc, kShape)};
  for (FlashKind kernelKind : {FlashKind::QueryGrad, FlashKind::KeyValueGrad}) {
    FlashKernelBuffers kernel;
    kernel.q16 = bufferOf(b, loc, forward.query);
    kernel.k16 = bufferOf(b, loc, forward.key);
    kernel.v16 = bufferOf(b, loc, forward.value);
    kernel.grad16 = bufferOf(b, loc, grad16);
    kernel.lse = bufferOf(b, loc, forward.lse);
    kernel.delta = bufferOf(b, loc, delta);
    if (forward.mask)
      kernel.mask = bufferOf(b, loc, forward.mask);
    kernel.dq = outputs[0];
    kernel.dk = outputs[1];
    kernel.dv = outputs[2];
    buildFlashKernel(b, loc, kernelKind, kind, heads, qShape, kShape[1],
                     kernel);
  }
  return {leadingRows(b, loc, tensorOf(b, loc, outputs[0]), forward.queries),
          leadingRows(b, loc, tensorOf(b, loc, outputs[1]), forward.keys),
          leadingRows(b, loc, tensorOf(b, loc, outputs[2]), forward.keys)};
}

} // namespace mlir::tfc
