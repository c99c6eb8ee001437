//===- FakeModelClassify.cpp - A stand-in for a generated classifier ------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Test only: a two-class "classifier" whose logits are the learned bias
/// `classifier.bias` (zeros at init, so every row predicts class 0 with loss
/// ln 2). It checks what the runtime passes (CLS first with mask 1, PAD
/// exactly where the mask is 0, ids inside the vocabulary, labels 0 or 1)
/// and writes NaN logits for a row that breaks it.
///
//===----------------------------------------------------------------------===//

#include "runtime/ModelABI.h"

#include <cmath>

extern "C" {

const char tfc_model_manifest[] =
    "tfc-manifest 1\n"
    "model fake-classify\n"
    "task classify\n"
    "vocab 12\n"
    "classes 2\n"
    "batch 4\n"
    "seq_len 6\n"
    "d_model 4\n"
    "layers 1\n"
    "heads 1\n"
    "params 64\n"
    "flops_per_token 96\n"
    "activation_bytes 0\n"
    "min_freq 1\n"
    "tensor classifier.bias 0 param zeros 1 2\n"
    "tensor embed.weight 2 param normal:0.02 2 12 4\n"
    "tensor norm.weight 50 param ones 1 4\n"
    "end\n";

void tfc_forward(float *params, int32_t *tokens, int32_t *targets, float *mask,
                 float *logits, float *loss) {
  const int B = 4, S = 6, V = 12, C = 2;
  double sum = 0;
  for (int b = 0; b < B; ++b) {
    bool ok = tokens[b * S] == 2 && mask[b * S] == 1.0f && targets[b] >= 0 &&
              targets[b] < C;
    for (int s = 0; s < S; ++s) {
      int id = tokens[b * S + s];
      ok &= id >= 0 && id < V && (mask[b * S + s] == 0.0f) == (id == 0);
    }
    for (int c = 0; c < C; ++c)
      logits[b * C + c] = ok ? params[c] : NAN;
    if (ok)
      sum += std::log(std::exp(params[0]) + std::exp(params[1])) -
             params[targets[b]];
  }
  *loss = float(sum / B);
}
}
