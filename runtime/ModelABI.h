//===- ModelABI.h - The contract between generated code and libtfcrt -*- C++ -*-===//
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
///   batch <B>            seq_len <S>           d_model <D>
///   layers <L>           heads <H>
///   params <total number of f32 in the flat buffer>
///   flops_per_token <forward FLOPs per token>
///   activation_bytes <bytes of the generated code's working memory>
///   tensor <name> <offset> <kind> <init> <rank> <d0> ... <dr-1>
///       kind: param (trained) | buffer (not trained, saved in checkpoints)
///       init: normal:<std> | zeros | ones | uniform:<a> | features:<M>:<d>
///   end
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
///   logits  lm: [B, S, V]; classify: [B, C]   (written)
///   loss    [1] mean loss over the batch (lm: over B*S tokens)   (written)
void tfc_forward(float *params, int32_t *tokens, int32_t *targets, float *mask,
                 float *logits, float *loss);
}

#endif // TFC_RUNTIME_MODELABI_H
