//===- TfcToLinalg.h - tfc ops to linalg on tensors -------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The patterns that lower the tfc dialect to linalg, tensor, arith and math
/// on tensors, one set per source file of this folder. tfc-lower-to-linalg
/// (LowerToLinalg.cpp) applies them all as a partial dialect conversion in
/// which every tfc operation but `tfc.param` is illegal.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_TFCTOLINALG_TFCTOLINALG_H
#define TFC_CONVERSION_TFCTOLINALG_TFCTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc {

/// Embedding, positions, linear, layer norm, activation, add, take_token,
/// losses (LowerDenseOps.cpp).
void populateDenseLoweringPatterns(RewritePatternSet &patterns);
/// tfc.attention of every kind (LowerAttention.cpp).
void populateAttentionLoweringPatterns(RewritePatternSet &patterns);
/// tfc.attention_grad of every kind (LowerAttentionGrad.cpp).
/// With `recompute`, the gradient of Performer attention recomputes the
/// forward's features, chunk states and scores in a form CSE does not merge
/// with the forward's (see tfc-lower-to-linalg).
void populateAttentionGradLoweringPatterns(RewritePatternSet &patterns,
                                           bool recompute = false);
/// Rotary positions, depth-wise conv, shift, shortening and up-sampling
/// (LowerSequenceOps.cpp).
void populateSequenceLoweringPatterns(RewritePatternSet &patterns);
/// Gradients of depth-wise conv, shortening and up-sampling
/// (LowerSequenceGrad.cpp).
void populateSequenceGradLoweringPatterns(RewritePatternSet &patterns);
/// Gradient building blocks and seeded dropout (LowerGradOps.cpp).
void populateGradLoweringPatterns(RewritePatternSet &patterns);

/// Every pattern set above: the whole lowering of the tfc dialect.
void populateTfcToLinalgPatterns(RewritePatternSet &patterns,
                                 bool recomputeAttention = false);

} // namespace mlir::tfc

#endif // TFC_CONVERSION_TFCTOLINALG_TFCTOLINALG_H
