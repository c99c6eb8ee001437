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
/// Training (FakeModelTrain.h): the analytic gradient of the mean
/// cross-entropy with respect to the bias, and Adam.
///
//===----------------------------------------------------------------------===//

#include "FakeModelTrain.h"
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
    "lr 0.05\n"
    "train_steps 20\n"
    "eval_every 5\n"
    "eval_batches 0\n"
    "checkpoint_every 5\n"
    "patience 0\n"
    "seed 3\n"
    "redraw 0\n"
    "val_fraction 0.25\n"
    "data_train -\n"
    "data_val -\n"
    "data_test -\n"
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

void tfc_train_step(float *params, int32_t *tokens, int32_t *targets,
                    float *mask, int64_t *seed, float *grads, float *loss) {
  const int B = 4, S = 6, V = 12, C = 2, P = 64;
  bool makeNan = fake::trainStepHooks();
  for (int i = 0; i < P; ++i)
    grads[i] = 0;
  double lse = std::log(std::exp(params[0]) + std::exp(params[1]));
  double sum = 0;
  bool ok = true;
  for (int b = 0; b < B; ++b) {
    ok &= tokens[b * S] == 2 && mask[b * S] == 1.0f && targets[b] >= 0 &&
          targets[b] < C;
    for (int s = 0; s < S; ++s) {
      int id = tokens[b * S + s];
      ok &= id >= 0 && id < V && (mask[b * S + s] == 0.0f) == (id == 0);
    }
    if (!ok)
      break;
    sum += lse - params[targets[b]];
    for (int c = 0; c < C; ++c)
      grads[c] += float((std::exp(params[c] - lse) - (c == targets[b])) / B);
  }
  *loss = ok && !makeNan ? float(sum / B) : NAN;
}

void tfc_optimizer_step(float *params, float *grads, float *adam_m,
                        float *adam_v, int64_t *step, float *schedule,
                        float *params_out, float *adam_m_out, float *adam_v_out,
                        float *stats) {
  fake::adam(64, params_out, grads, adam_m_out, adam_v_out, *step,
             fake::rate(*step, schedule), stats);
}
}
