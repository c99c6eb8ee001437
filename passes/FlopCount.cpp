//===- FlopCount.cpp - Multiply-add FLOPs of a forward graph --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "passes/FlopCount.h"
#include "passes/AttentionBuilders.h"
#include "passes/Utils.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tfc;

/// The product of `factors`, nullopt when it overflows.
static std::optional<int64_t> product(std::initializer_list<int64_t> factors) {
  std::optional<int64_t> result = 1;
  for (int64_t factor : factors)
    if (result)
      result = llvm::checkedMul(*result, factor);
  return result;
}

/// `a + b`, nullopt when either is absent or the sum overflows.
static std::optional<int64_t> sum(std::optional<int64_t> a,
                                  std::optional<int64_t> b) {
  if (!a || !b)
    return std::nullopt;
  return llvm::checkedAdd(*a, *b);
}

/// The pairs of a local (not global) Longformer row `i`: its sliding window
/// within the keys, and the global columns outside the window.
static int64_t longformerLocalPairs(LongformerAttr kind, int64_t i,
                                    int64_t keys, ArrayRef<int64_t> globals) {
  bool causal = kind.getCausal();
  int64_t dilation = kind.getDilation();
  // Window offsets `t * dilation` from the query, t in [first, last].
  int64_t first = -kind.getStepsBack(), last = kind.getStepsAhead();
  // Keys 0 <= i + t * dilation < keys.
  int64_t lo = std::max(first, -llvm::divideFloorSigned(i, dilation));
  int64_t hi = std::min(last, llvm::divideFloorSigned(keys - 1 - i, dilation));
  int64_t pairs = std::max<int64_t>(0, hi - lo + 1);
  for (int64_t g : globals) {
    if (g >= keys || (causal && g > i))
      continue;
    int64_t offset = g - i;
    bool inWindow = offset % dilation == 0 && offset / dilation >= first &&
                    offset / dilation <= last;
    pairs += inWindow ? 0 : 1;
  }
  return pairs;
}

std::optional<int64_t> mlir::tfc::attendedPairs(Attribute kind, int64_t queries,
                                                int64_t keys) {
  auto causalKeys = [&](int64_t i) { return std::min(i + 1, keys); };
  auto longformer = dyn_cast<LongformerAttr>(kind);
  if (!longformer && !cast<SoftmaxAttr>(kind).getCausal())
    return product({queries, keys});
  // At most `keys` pairs a row: the sum below stays under queries * keys.
  if (!product({queries, keys}))
    return std::nullopt;
  int64_t pairs = 0;
  if (!longformer) {
    for (int64_t i = 0; i < queries; ++i)
      pairs += causalKeys(i);
    return pairs;
  }
  SmallVector<int64_t> globals = longformer.getGlobalPositions();
  for (int64_t i = 0; i < queries; ++i) {
    if (llvm::is_contained(globals, i))
      pairs += longformer.getCausal() ? causalKeys(i) : keys;
    else
      pairs += longformerLocalPairs(longformer, i, keys, globals);
  }
  return pairs;
}

/// Multiply-add FLOPs of one `tfc.attention`.
static std::optional<int64_t> attentionFlops(AttentionOp attention) {
  ArrayRef<int64_t> q = shapeOf(attention.getQuery());
  int64_t keys = shapeOf(attention.getKey())[1];
  auto performer = dyn_cast<PerformerAttr>(attention.getKind());
  if (!performer) {
    // The scores and their product with the values, over the (query, key)
    // pairs that the mask lets through.
    std::optional<int64_t> pairs =
        attendedPairs(attention.getKind(), q[1], keys);
    return pairs ? product({2, 2, q[0], *pairs, q[2]}) : std::nullopt;
  }
  // Feature maps of q and k, then the two contractions with v.
  int64_t m = performer.getFeatures();
  std::optional<int64_t> flops = sum(product({2, 2, q[0], q[1], m, q[2]}),
                                     product({2, 2, q[0], q[1], m, q[2]}));
  if (!performer.getCausal())
    return flops;
  // Causal: each chunk's scores over its own keys and their product with
  // the values, `[C, M] x [M, C]` and `[C, C] x [C, Dh]` per chunk and head,
  // over the padded length.
  attention::Chunking chunks = attention::performerChunking(q[1]);
  std::optional<int64_t> perPosition =
      sum(product({m, static_cast<int64_t>(attention.getHeads())}), q[2]);
  if (!perPosition)
    return std::nullopt;
  return sum(flops,
             product({2, q[0], chunks.padded(), chunks.size, *perPosition}));
}

ForwardFlopCount::ForwardFlopCount(Operation *op) : total(0) {
  op->walk([&](Operation *inner) {
    if (auto linear = dyn_cast<LinearOp>(inner)) {
      std::optional<int64_t> flops =
          product({2, shapeOf(linear.getWeight())[0]});
      for (int64_t extent : shapeOf(linear.getInput()))
        flops = flops ? llvm::checkedMul(*flops, extent) : std::nullopt;
      total = sum(total, flops);
    } else if (auto attention = dyn_cast<AttentionOp>(inner)) {
      total = sum(total, attentionFlops(attention));
    }
  });
}
