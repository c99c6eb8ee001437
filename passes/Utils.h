//===- Utils.h - Helpers of the target-independent passes -------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the passes of passes/, the conversion to linalg
/// (conversion/TfcToLinalg) and the back ends' passes share:
///
/// - small builders: constants, empty and filled tensors, reshapes, GEMMs
///   and element-wise or reducing `linalg.generic`s (all shapes static);
/// - contractions and their epilogues: what `tfc-fuse-epilogues` marks and
///   the contraction kernels of the back ends read.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_UTILS_H
#define TFC_PASSES_UTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfc {

/// The shape of a ranked tensor value.
ArrayRef<int64_t> shapeOf(Value value);
/// The element type of a ranked tensor value.
Type elementOf(Value value);

/// A scalar float constant of type `type`.
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);
/// An `index` constant.
Value indexConstant(OpBuilder &b, Location loc, int64_t value);

/// `max(x, y)` as the offset that keeps a softmax's exponentials in range
/// (the row maximum of scores or logits): marked `nnan` and `nsz`, so that
/// it compiles to the machine's max instruction instead of the sequence
/// that orders NaN and signed zeros. A NaN among the inputs still reaches
/// the result through `exp(x - max)`, and either zero is as good an
/// offset as the other.
Value stabilizerMax(OpBuilder &b, Location loc, Value x, Value y);

/// `tensor.empty` of the given shape.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type element);
/// `value` (a float32 tensor) rounded to bf16 (to nearest even) by an
/// element-wise op of identity maps.
Value roundToBF16(OpBuilder &b, Location loc, Value value);
/// The one op of `op`'s body when `op` applies it element by element to
/// its one input (tensor or buffer): one input and one init, all loops
/// parallel, identity maps, a body of that op on the input, yielded;
/// null otherwise.
Operation *elementwiseConversion(linalg::GenericOp op);
/// Whether `op` is a rounding as roundToBF16 makes it (on tensors or
/// buffers): one float32 input rounded to bf16 element by element.
bool isBF16Rounding(linalg::GenericOp op);
/// A tensor of the given shape filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type element, double value);

/// Reshapes a contiguous static tensor to `shape` (same element count), by
/// collapsing to 1-D and expanding.
Value reshape(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> shape);

/// `a[M, K] * w[N, K]^T -> [M, N]` (nn.Linear without bias). When `w` is
/// itself a transpose `v^T` (`tfc.transpose`, or `linalg.transpose` once
/// lowered; a linear layer's input gradient `dy W`), `a * v` instead, so
/// that no transposed copy of `v` is made: the same products summed in
/// the same order.
Value matmulTransposeB(OpBuilder &b, Location loc, Value a, Value w);

/// Identity map and parallel iterators of rank `rank`.
SmallVector<utils::IteratorType> parallelIterators(unsigned rank);

/// An element-wise `linalg.generic` over `inputs` (all of `shape`, or
/// broadcast through `inputMaps` when given) producing one tensor of
/// `shape`. `body` receives the block arguments of the inputs (and the
/// output last) and returns the value to yield.
Value elementwise(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type element, ValueRange inputs,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                  ArrayRef<AffineMap> inputMaps = {});

/// Reduces `input` over its last dimension with `combine(acc, x)`, starting
/// from `init`; the result drops the last dimension.
Value reduceLastDim(
    OpBuilder &b, Location loc, Value input, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine);

/// The sum over the last dimension of `input` (reduceLastDim from 0).
Value sumLastDim(OpBuilder &b, Location loc, Value input);

/// The maximum over the last dimension of `input` (reduceLastDim from `-inf`
/// with stabilizerMax): the offset of a softmax over that dimension.
Value rowMaxima(OpBuilder &b, Location loc, Value input);

/// An `scf.forall` over the `batch * heads` (batch, head) pairs of an
/// attention, with `inits` as its shared outputs, and the pair's batch and
/// head indices (`pair / heads`, `pair % heads`), built at the start of its
/// body; `b` is left inserting before the body's terminator.
struct PairLoop {
  scf::ForallOp loop;
  Value batch, head;
};
PairLoop buildPairLoop(OpBuilder &b, Location loc, int64_t batch, int64_t heads,
                       ValueRange inits);

/// Inside each of `loops` (the loops over (batch, head) pairs of
/// tfc-blocked-attention and tfc-performer-heads), drops the unit batch and
/// head dimensions of the linalg ops, so that each works on the pair's own
/// `[S, ...]` tensors, and folds reshapes of `tensor.empty` into empties of
/// the new shape (a fill into a collapsed empty would escape
/// tfc-unshare-fills once CSE merges it).
LogicalResult dropPairDims(ArrayRef<scf::ForallOp> loops);

//===----------------------------------------------------------------------===//
// Contractions and their epilogues
//===----------------------------------------------------------------------===//
//
// What `tfc-fuse-epilogues` (on tensors), `tfc-outline-kernels` and
// `tfc-vectorize-contractions` (on buffers) agree on about a contraction
// and the element-wise op applied to its result (its epilogue).
//
// On tensors, `tfc-fuse-epilogues` rewrites
//
//   %c = <contraction> ins(%a, %b) outs(%init)          // out + a * b
//   %y = linalg.generic ins(%c, %bias) outs(%empty)     // all parallel
//
// into
//
//   %c = <contraction> {tfc.epilogue} ins(%a, %b) outs(%init)
//   %y = linalg.generic ins(%bias) outs(%c)             // reads its out
//
// with nothing between the two. The element-wise op then updates C in
// place: after bufferization both write one buffer, and that buffer is live
// while the contraction runs, so nothing the contraction reads can share
// its bytes. The pair still means what it did when the mark is ignored
// (the GPU pipelines, contractions the kernels do not handle); the
// contraction kernels apply the consumer to their accumulators after the
// last K panel instead of storing C and reading it again.
//===----------------------------------------------------------------------===//

/// The unit attribute that marks a contraction whose next linalg op is its
/// epilogue.
inline constexpr llvm::StringLiteral kEpilogueAttr = "tfc.epilogue";

/// Bits of the vector registers that the contraction kernels and the
/// vectorised rows are written for (AVX-512).
inline constexpr int64_t kVectorBits = 512;

/// True when the body of `op` is `out + in0 * in1` (in any operand order),
/// each input possibly widened by `arith.extf` first (bf16 operands).
inline bool isMulAddBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  auto add = dyn_cast_or_null<arith::AddFOp>(
      yield ? yield.getOperand(0).getDefiningOp() : nullptr);
  if (!add)
    return false;
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if ((add.getLhs() == out) == (add.getRhs() == out))
    return false;
  auto mul = dyn_cast_or_null<arith::MulFOp>(product.getDefiningOp());
  if (!mul)
    return false;
  // The factors, each the block argument itself or it widened.
  size_t widened = 0;
  auto unwiden = [&](Value factor) {
    auto ext = factor.getDefiningOp<arith::ExtFOp>();
    if (!ext)
      return factor;
    ++widened;
    return ext.getIn();
  };
  Value lhs = unwiden(mul.getLhs()), rhs = unwiden(mul.getRhs());
  if (body->getOperations().size() != 3 + widened)
    return false;
  Value in0 = body->getArgument(0), in1 = body->getArgument(1);
  return (lhs == in0 && rhs == in1) || (lhs == in1 && rhs == in0);
}

/// True when the last dimension of the memref `type` has unit stride.
inline bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 &&
         succeeded(getStridesAndOffset(type, strides, offset)) &&
         strides.back() == 1;
}

/// True when every loop of `op` is parallel.
inline bool isAllParallel(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

/// Fuses the producer of `operand` (an input of an element-wise consumer)
/// into that consumer with linalg's element-wise fusion; the fused op
/// replaces the consumer, and the producer where nothing else reads it.
LogicalResult fuseProducerIntoConsumer(RewriterBase &rewriter,
                                       OpOperand *operand);

/// True when every operation of `body` but its terminator is a scalar arith
/// or math operation without memory effects or regions on integers, floats
/// and indices, or a `linalg.index` (no integer division), so that the same
/// operation on vectors of those types computes each lane as the scalar one
/// would. A `linalg.index` becomes the vector of the lanes' positions along
/// that dimension (a causal or banded mask on the accumulators).
inline bool isVectorizableEpilogueBody(Block &body) {
  auto scalar = [](Type type) { return type.isIntOrIndexOrFloat(); };
  for (Operation &op : body.without_terminator()) {
    if (isa<linalg::IndexOp>(op))
      continue;
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
        op.getNumResults() != 1)
      return false;
    if (!llvm::all_of(op.getOperandTypes(), scalar) ||
        !llvm::all_of(op.getResultTypes(), scalar))
      return false;
    // Lanes past the edge of N compute on zeros; an integer division by
    // zero would trap there.
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op))
      return false;
  }
  return llvm::all_of(body.getTerminator()->getOperandTypes(),
                      [](Type type) { return type.isIntOrFloat(); });
}

/// Repeats the operations of `body` (one that isVectorizableEpilogueBody
/// accepts) on vectors of `lanes` elements, at `b`'s insertion point, and
/// returns the vectors of its terminator's operands. `mapping` gives the
/// vector of each block argument the body reads; values from outside the
/// body and constants are broadcast, and a `linalg.index` becomes
/// `positions(dim)`, the lanes' positions along that dimension (never
/// called when `positions` is null: the caller refused such bodies).
inline SmallVector<Value>
cloneBodyOnVectors(OpBuilder &b, Location loc, Block &body, int64_t lanes,
                   IRMapping &mapping,
                   function_ref<Value(uint64_t)> positions = nullptr) {
  auto vectorOf = [&](Type type) { return VectorType::get({lanes}, type); };
  auto vectorValue = [&](Value value) {
    if (!mapping.contains(value))
      mapping.map(value, b.create<vector::BroadcastOp>(
                             loc, vectorOf(value.getType()), value));
    return mapping.lookup(value);
  };
  for (Operation &op : body.without_terminator()) {
    if (auto position = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(position.getResult(), positions(position.getDim()));
      continue;
    }
    if (op.hasTrait<OpTrait::ConstantLike>()) {
      Operation *constant = b.clone(op);
      mapping.map(op.getResult(0), b.create<vector::BroadcastOp>(
                                       loc, vectorOf(op.getResultTypes()[0]),
                                       constant->getResult(0)));
      continue;
    }
    for (Value operand : op.getOperands())
      vectorValue(operand);
    Operation *vectorOp = b.clone(op, mapping);
    for (OpResult result : vectorOp->getResults())
      result.setType(vectorOf(result.getType()));
  }
  SmallVector<Value> results;
  for (Value yielded : body.getTerminator()->getOperands())
    results.push_back(vectorValue(yielded));
  return results;
}

/// The first operation after `op` in its block that has memory effects (a
/// linalg op on buffers, a call...), skipping views and scalar arithmetic;
/// null when there is none.
inline Operation *nextWithMemoryEffects(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isMemoryEffectFree(next))
      return next;
  return nullptr;
}

/// The epilogue of `contraction` on buffers: the first linalg op after it
/// (only operations without memory effects, and allocations, in between),
/// when it is an all-parallel `linalg.generic` that either updates the
/// contraction's output C through the identity map and reads it nowhere
/// else, or (a rounded epilogue, tfc-precision's) reads C through the
/// identity map as its last input, nowhere else, and writes another buffer
/// through the identity map. Null when `contraction` carries no
/// kEpilogueAttr or there is no such op.
inline linalg::GenericOp findEpilogue(linalg::LinalgOp contraction) {
  if (!contraction->hasAttr(kEpilogueAttr) ||
      !contraction.hasPureBufferSemantics() ||
      contraction.getNumDpsInits() != 1)
    return nullptr;
  Value c = contraction.getDpsInitOperand(0)->get();
  // A buffer allocated in between (before tfc-static-buffers makes it a
  // view) is no memory that either op touches.
  Operation *next = nextWithMemoryEffects(contraction);
  while (isa_and_nonnull<memref::AllocOp>(next))
    next = nextWithMemoryEffects(next);
  auto consumer = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!consumer || !consumer.hasPureBufferSemantics() ||
      !isAllParallel(consumer) || consumer.getNumDpsInits() != 1 ||
      !consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0))
           .isIdentity())
    return nullptr;
  bool inPlace = consumer.getDpsInitOperand(0)->get() == c;
  int64_t inputs = consumer.getNumDpsInputs();
  if (!inPlace) {
    OpOperand *last =
        inputs == 0 ? nullptr : consumer.getDpsInputOperand(inputs - 1);
    if (!last || last->get() != c ||
        !consumer.getMatchingIndexingMap(last).isIdentity())
      return nullptr;
  }
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get() == c &&
        (inPlace || input->getOperandNumber() + 1 != inputs))
      return nullptr;
  return consumer;
}

} // namespace mlir::tfc

#endif // TFC_PASSES_UTILS_H
