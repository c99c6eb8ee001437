//===- TfcOps.td - Operations of the tfc dialect -----------*- tablegen -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_OPS_TD
#define TFC_OPS_TD

include "dialect/TfcDialect.td"
include "dialect/TfcAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Tfc_FloatTensor : RankedTensorOf<[F32, F64]>;
def Tfc_IdTensor : RankedTensorOf<[I32]>;
def Tfc_Scalar : 0DTensorOf<[F32, F64]>;


//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Tfc_ParamOp : Tfc_Op<"param", [Pure]> {
  let summary = "A named model tensor";
  let description = [{
    A tensor of the model's state, named as in a PyTorch state dict. `param`
    tensors are trained; `buffer` tensors (Performer's random features) are
    saved in checkpoints but not trained. `init` says how the runtime
    initialises it: `normal:<std>`, `uniform:<a>`, `zeros`, `ones`, or
    `features:<rows>:<cols>` (FAVOR+ orthogonal random features).

    ```mlir
    %w = tfc.param "layers.0.attn.q_proj.weight" init "normal:0.02"
        : tensor<128x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$tensor_name, StrAttr:$init,
                       DefaultValuedAttr<Tfc_ParamKind,
                           "::mlir::tfc::ParamKind::param">:$kind);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $tensor_name `init` $init (`kind` $kind^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Embeddings and positions
//===----------------------------------------------------------------------===//

def Tfc_EmbeddingOp : Tfc_Op<"embedding", [Pure]> {
  let summary = "Table lookup: rows of `table` selected by `ids`";
  let description = [{
    `table` is `[vocab, d]`, `ids` is `[batch, seq]`; the result is
    `[batch, seq, d]`. Ids outside `[0, vocab)` read row 0.
  }];
  let arguments = (ins Tfc_FloatTensor:$table, Tfc_IdTensor:$ids);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` type($table) `,` type($ids) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_SinusoidalPositionsOp : Tfc_Op<"sinusoidal_positions",
    [Pure, SameOperandsAndResultType]> {
  let summary = "Adds the fixed sinusoidal position encoding";
  let description = [{
    `x` is `[batch, seq, d]` with even `d`; adds `sin(p / 10000^(2i/d))` at
    channel `2i` and the cosine at `2i+1` (Vaswani et al.).
  }];
  let arguments = (ins Tfc_FloatTensor:$input);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tfc_LearnedPositionsOp : Tfc_Op<"learned_positions",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Adds a learned position table";
  let description = [{
    `x` is `[batch, seq, d]`, `table` is `[max_positions, d]` with
    `max_positions >= seq`; adds `table[p]` at position `p`.
  }];
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$table);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $table attr-dict `:` type($input) `,` type($table)
  }];
  let hasVerifier = 1;
}

def Tfc_RotaryOp : Tfc_Op<"rotary", [Pure, SameOperandsAndResultType]> {
  let summary = "Rotary position embedding of queries or keys";
  let description = [{
    `x` is `[batch, seq, heads * head_dim]` with even `head_dim`; rotates each
    channel pair `(i, i + head_dim/2)` of every head by `p * base^(-2i/head_dim)`
    (RoFormer, GPT-NeoX half-split layout).
  }];
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$heads,
                       DefaultValuedAttr<F64Attr, "10000.0">:$base);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input `heads` $heads attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense layers, norms, activations
//===----------------------------------------------------------------------===//

def Tfc_LinearOp : Tfc_Op<"linear", [Pure]> {
  let summary = "y = x W^T + b, over the last dimension";
  let description = [{
    `weight` is `[out, in]` as in `nn.Linear`; `bias`, when given, is `[out]`.
    `x` is `[..., in]`, the result `[..., out]`.
  }];
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$weight,
                       Optional<Tfc_FloatTensor>:$bias);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict
    `:` type($input) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_LayerNormOp : Tfc_Op<"layer_norm",
    [Pure, AllTypesMatch<["input", "result"]>, AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "Layer normalisation over the last dimension";
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$gamma,
                       Tfc_FloatTensor:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Tfc_ActivationOp : Tfc_Op<"activation", [Pure, SameOperandsAndResultType]> {
  let summary = "Element-wise relu, gelu (tanh form) or squared relu";
  let arguments = (ins Tfc_ActivationKind:$kind, Tfc_FloatTensor:$input);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def Tfc_DropoutOp : Tfc_Op<"dropout", [SameOperandsAndResultType]> {
  let summary = "Inverted dropout with probability `rate` (identity in eval)";
  let arguments = (ins Tfc_FloatTensor:$input, F64Attr:$rate);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input `rate` $rate attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tfc_AddOp : Tfc_Op<"add", [Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "Residual addition";
  let arguments = (ins Tfc_FloatTensor:$lhs, Tfc_FloatTensor:$rhs);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Attention and Primer's depth-wise convolution
//===----------------------------------------------------------------------===//

def Tfc_AttentionOp : Tfc_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "Multi-head attention of the given kind";
  let description = [{
    `query` is `[batch, sq, d]`, `key` and `value` are `[batch, sk, d]`, with
    `heads` dividing `d`; the result is `[batch, sq, d]` (heads concatenated,
    before the output projection). `kind` is one of `#tfc.softmax`,
    `#tfc.performer` or `#tfc.longformer`.

    Optional operands:
    - `mask`: `[batch, sk]`, 1 for real tokens and 0 for padding keys.
    - `features`: `[m, d / heads]`, the Performer random features; required
      for and only for `#tfc.performer`.
    - `global`: the global-attention query, key and value projections
      (`[batch, sq, d]`, `[batch, sk, d]`, `[batch, sk, d]`) of a
      `#tfc.longformer` with global tokens; required then, rejected otherwise.

    ```mlir
    %a = tfc.attention #tfc.softmax<causal> heads 8 %q, %k, %v
        : tensor<2x64x128xf32>, tensor<2x64x128xf32>, tensor<2x64x128xf32>
        -> tensor<2x64x128xf32>
    ```
  }];
  let arguments = (ins
      AnyAttrOf<[Tfc_SoftmaxAttr, Tfc_PerformerAttr, Tfc_LongformerAttr]>:$kind,
      I64Attr:$heads,
      Tfc_FloatTensor:$query, Tfc_FloatTensor:$key, Tfc_FloatTensor:$value,
      Optional<Tfc_FloatTensor>:$mask, Optional<Tfc_FloatTensor>:$features,
      Optional<Tfc_FloatTensor>:$global_query,
      Optional<Tfc_FloatTensor>:$global_key,
      Optional<Tfc_FloatTensor>:$global_value);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $kind `heads` $heads $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`features` `(` $features^ `:` type($features) `)`)?
    (`global` `(` $global_query^ `,` $global_key `,` $global_value `:`
        type($global_query) `,` type($global_key) `,` type($global_value) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_DepthwiseConvOp : Tfc_Op<"dconv", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Primer's causal depth-wise convolution along the sequence";
  let description = [{
    `x` is `[batch, seq, heads * head_dim]`; `weight` is
    `[kernel, heads, head_dim]` (one filter per head and channel, as the
    official Primer), `bias` `[heads, head_dim]`. Output position `p` sums
    `weight[j] * x[p - j]` for `j < kernel` (zero before the start).
  }];
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$weight,
                       Optional<Tfc_FloatTensor>:$bias);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict
    `:` type($input) `,` type($weight)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Hourglass resampling
//===----------------------------------------------------------------------===//

def Tfc_ShiftRightOp : Tfc_Op<"shift_right", [Pure, SameOperandsAndResultType]> {
  let summary = "Shifts `[batch, seq, d]` right along seq by `amount`, zero fill";
  let description = [{
    The hourglass shift by `k - 1` before shortening by `k`, so that a
    shortened position never sees tokens after the first one it covers.
  }];
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$amount);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input `by` $amount attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tfc_ShortenOp : Tfc_Op<"shorten", [Pure]> {
  let summary = "Hourglass shortening of `[batch, seq, d]` by `factor`";
  let description = [{
    The result is `[batch, seq / factor, d]`.
    - `avg`: mean of each group of `factor` positions; no weights.
    - `linear`: the group's `factor * d` values through a linear layer;
      weights `[d, factor * d]` and bias `[d]`.
    - `attention`: the average-pooled queries attend over the group's
      positions (keys and values) with `heads` heads, plus the pooled value:
      weights q, k, v, o projections `[d, d]` each.
  }];
  let arguments = (ins Tfc_ShortenKind:$kind, Tfc_FloatTensor:$input,
                       I64Attr:$factor, Variadic<Tfc_FloatTensor>:$weights,
                       OptionalAttr<I64Attr>:$heads);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $input `by` $factor (`weights` `(` $weights^ `:` type($weights) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_UpsampleOp : Tfc_Op<"upsample", [Pure]> {
  let summary = "Hourglass up-sampling of `[batch, seq / factor, d]` by `factor`";
  let description = [{
    The result is `[batch, seq, d]`, the shape of `residual` (the activations
    from before shortening).
    - `naive`: each position repeated `factor` times; no weights.
    - `linear`: each position through a linear layer to `factor * d` values;
      weights `[factor * d, d]` and bias `[factor * d]`.
    - `attention`: the residual's positions attend (causally, within the
      shortened sequence) to the shortened keys and values, added to the naive
      up-sampling; weights q, k, v, o projections `[d, d]`, `heads` heads.
  }];
  let arguments = (ins Tfc_UpsampleKind:$kind, Tfc_FloatTensor:$input,
                       Tfc_FloatTensor:$residual, I64Attr:$factor,
                       Variadic<Tfc_FloatTensor>:$weights,
                       OptionalAttr<I64Attr>:$heads);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $input `by` $factor `residual` $residual
    (`weights` `(` $weights^ `:` type($weights) `)`)?
    attr-dict `:` type($input) `,` type($residual) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Heads and losses
//===----------------------------------------------------------------------===//

def Tfc_TakeTokenOp : Tfc_Op<"take_token", [Pure]> {
  let summary = "Selects one position of `[batch, seq, d]`: the CLS token";
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$position);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `[` $position `]` attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_CrossEntropyOp : Tfc_Op<"cross_entropy", [Pure]> {
  let summary = "Mean next-token cross-entropy";
  let description = [{
    `logits` `[batch, seq, vocab]`, `targets` `[batch, seq]`; the mean over all
    positions of `logsumexp(logits) - logits[target]`, in nats.
  }];
  let arguments = (ins Tfc_FloatTensor:$logits, Tfc_IdTensor:$targets);
  let results = (outs Tfc_Scalar:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` type($logits) `,` type($targets) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_ClassifyLossOp : Tfc_Op<"classify_loss", [Pure]> {
  let summary = "Mean classification loss over the batch";
  let description = [{
    `ce`: `logits` `[batch, classes]`, softmax cross-entropy.
    `bce`: `logits` `[batch, 1]`, sigmoid binary cross-entropy with labels
    0 or 1. `labels` is `[batch]`.
  }];
  let arguments = (ins Tfc_ClassifyLossKind:$kind, Tfc_FloatTensor:$logits,
                       Tfc_IdTensor:$labels);
  let results = (outs Tfc_Scalar:$result);
  let assemblyFormat = [{
    $kind $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TFC_OPS_TD
