//===- ModelABI.h - The contract between generated code and libtfcrt -*- C++
//-*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Symbols that the object file emitted by `tfc compile` defines, and that the
/// runtime (libtfcrt, which holds `main`) calls. All shapes are static: they
/// come from the spec (training.batch, training.seq_len) and are recorded in
/// the manifest.
///
/// The manifest is a text block, one record per line, fields separated by a
/// single space:
///
///   tfc-manifest 1
///   model <name>
///   task lm|classify
///   vocab <V>            classes <C>           (classify only)
///   outputs <O>          logits per position (lm) or per row (classify)
///   batch <B>            seq_len <S>           d_model <D>
///   layers <L>           heads <H>
///   params <total number of f32 in the flat buffer>
///   flops_per_token <forward FLOPs per token>
///   activation_bytes <bytes of tfc_forward's working memory>
///   train_activation_bytes <bytes of the training entry points' working
///                  memory>         optional (absent: no training functions)
///   arena_bytes <bytes of all working memory together>   optional: the
///                  entry points share one arena, so this is about the
///                  larger of the two above, not their sum
///   thread_heap_bytes <bytes>      optional: the heap buffers of one
///                  iteration of a parallel loop, which each worker thread
///                  holds while it runs one (besides the arenas)
///   kernels_per_step <n>           optional: the loop nests (kernels) that
///                  tfc_train_step and tfc_optimizer_step run
///   precision f32|bf16             optional (default f32): bf16, the
///                  contractions' operands are rounded to bf16
///                  (docs/precision.md)
///   cpu_features <feature>...      optional: CPU features whose
///                  instructions the code runs, checked at start-up
///                  (avx512bf16: vdpbf16ps)
///   min_freq <n>                   optional, classify: word vocabulary
///                                  keeps words seen >= n times (default 1)
///   split <train> <val>            optional, lm: byte split fractions of
///                                  the data file (default 0.9 0.05)
///   tensor <name> <offset> <kind> <init> <rank> <d0> ... <dr-1>
///       kind: param (trained) | buffer (not trained, saved in checkpoints)
///       init: normal:<std> | zeros | ones | uniform:<a> | features:<M>:<d>
///   end
///
/// Rules the runtime checks (runtime/Manifest.cpp), each failure reported as
/// `tfc: manifest:<line>: <reason>`:
///   - the first record is `tfc-manifest 1`; records other than `tensor`
///     appear at most once; `end` is required. Records this runtime does not
///     know are ignored (the compiler may record more configuration).
///   - `model task batch seq_len d_model layers heads params` are required;
///     `flops_per_token`, `activation_bytes` and `train_activation_bytes`
///     default to 0 (not known).
///     `vocab` is required for classify (the word vocabulary size including
///     PAD, UNK, CLS, so >= 4) and defaults to 256 (bytes) for lm.
///     `classes` (number of labels) is required for classify and ignored for
///     lm. `outputs` defaults to V (lm, where it must equal V) or C
///     (classify); a classifier with C = 2 may have 1 output (one logit,
///     sigmoid / binary cross-entropy).
///   - tensor offsets and sizes count floats; every tensor lies inside
///     [0, params) and no two overlap; rank 0 is a scalar; dimensions >= 1.
///     Floats outside every tensor are zero and are not saved.
///   - features:<M>:<d> needs an element count that is a multiple of M*d:
///     the tensor holds that many independent M x d matrices (e.g. one per
///     layer or head group, shape [k, M, d]); see runtime/Params.h.
///
/// What the runtime passes to tfc_forward:
///   lm        tokens = bytes of a window, targets = the next bytes, mask
///             all 1 (evaluation: sequential windows; training: random).
///   classify  tokens[b, 0] = CLS (id 2), then word ids (UNK = 1), then PAD
///             (id 0) exactly where mask is 0; targets[b] in [0, C). A
///             batch that runs out of lines is filled with empty texts (CLS
///             then PAD) whose results the runtime ignores.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MODELABI_H
#define TFC_RUNTIME_MODELABI_H

#include <cstdint>

extern "C" {

/// NUL-terminated manifest text, see above.
extern const char tfc_model_manifest[];

/// Forward pass with loss. Pointers are to contiguous row-major buffers:
///   params  [params]           the flat parameter buffer (manifest offsets)
///   tokens  [B, S] int32       input ids
///   targets lm: [B, S] int32 next-token ids; classify: [B] int32 labels
///   mask    [B, S] float       1 for real tokens, 0 for padding (lm: all 1)
///   logits  lm: [B, S, V]; classify: [B, O], O = outputs   (written)
///   loss    [1] mean loss over the batch (lm: over B*S tokens)   (written)
void tfc_forward(float *params, int32_t *tokens, int32_t *targets, float *mask,
                 float *logits, float *loss);

/// The runtime references the two training functions weakly: an executable
/// compiled with `tfc compile --train=false` links without them, and its
/// `train` command says so.
///
/// One training step's loss and gradients (dropout active), same inputs as
/// tfc_forward plus:
///   seed   [1] int64   the step's dropout seed (counter-based: the same seed
///                      gives the same masks, so a resumed run is identical)
///   grads  [params]    the gradient of the mean loss with respect to every
///                      tensor of the flat buffer (0 for buffers)   (written)
///   loss   [1]                                                      (written)
void tfc_train_step(float *params, int32_t *tokens, int32_t *targets,
                    float *mask, int64_t *seed, float *grads, float *loss);

/// The optimizer update of the spec's [training] section (Adam or AdamW,
/// the learning-rate schedule, clipping by global norm), over the flat
/// buffers. `step` is the 1-based number of this update. The *_out buffers
/// may be the same memory as the corresponding inputs (updates are
/// element-wise after the gradient norm is taken).
///   schedule [3] float  the base learning rate, the run's total number of
///                       steps (where linear and cosine decay reach 0) and
///                       its linear warm-up steps (0: none); the manifest's
///                       `lr`, `train_steps` and `warmup` by default
///   stats    [2] float  gradient global norm (before clipping), learning
///                       rate used                                 (written)
void tfc_optimizer_step(float *params, float *grads, float *adam_m,
                        float *adam_v, int64_t *step, float *schedule,
                        float *params_out, float *adam_m_out, float *adam_v_out,
                        float *stats);
}

#endif // TFC_RUNTIME_MODELABI_H
