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
include "dialect/TfcInterfaces.td"

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

def Tfc_EmbeddingOp : Tfc_Op<"embedding", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
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
    [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, SameOperandsAndResultType]> {
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
    [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
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

def Tfc_RotaryOp : Tfc_Op<"rotary", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, SameOperandsAndResultType]> {
  let summary = "Rotary position embedding of queries or keys";
  let description = [{
    `x` is `[batch, seq, heads * head_dim]` with even `head_dim`; rotates each
    channel pair `(i, i + head_dim/2)` of every head by `p * base^(-2i/head_dim)`
    (RoFormer, GPT-NeoX half-split layout). With `inverse`, rotates by the
    opposite angle (the transpose, used by the gradient).
  }];
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$heads,
                       DefaultValuedAttr<F64Attr, "10000.0">:$base,
                       UnitAttr:$inverse);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `heads` $heads (`inverse` $inverse^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense layers, norms, activations
//===----------------------------------------------------------------------===//

def Tfc_LinearOp : Tfc_Op<"linear", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
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
    [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>, AllTypesMatch<["gamma", "beta"]>]> {
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

def Tfc_ActivationOp : Tfc_Op<"activation", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, SameOperandsAndResultType]> {
  let summary = "Element-wise relu, gelu (tanh form) or squared relu";
  let arguments = (ins Tfc_ActivationKind:$kind, Tfc_FloatTensor:$input);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def Tfc_DropoutOp : Tfc_Op<"dropout", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Inverted dropout with probability `rate` (identity in eval)";
  let description = [{
    Zeroes each element with probability `rate` and scales the others by
    `1 / (1 - rate)`. The decision for element `i` is a counter-based hash of
    (`seed`, `stream`, `i`), so the gradient (the same op on the output
    gradient) and a resumed run see the same mask. Without `seed` the op is
    the model's declaration of dropout; evaluation removes it
    (`tfc-strip-dropout`) and training gives it the step's seed
    (`tfc-autodiff`).
  }];
  let arguments = (ins Tfc_FloatTensor:$input, F64Attr:$rate,
                       Optional<0DTensorOf<[I64]>>:$seed,
                       DefaultValuedAttr<I64Attr, "0">:$stream);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `rate` $rate (`seed` `(` $seed^ `:` type($seed) `)`)? attr-dict
    `:` type($input)
  }];
  let hasVerifier = 1;
}

def Tfc_AddOp : Tfc_Op<"add", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "Residual addition";
  let arguments = (ins Tfc_FloatTensor:$lhs, Tfc_FloatTensor:$rhs);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Attention and Primer's depth-wise convolution
//===----------------------------------------------------------------------===//

def Tfc_AttentionOp : Tfc_Op<"attention", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, AttrSizedOperandSegments]> {
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

def Tfc_DepthwiseConvOp : Tfc_Op<"dconv", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
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

def Tfc_ShiftRightOp : Tfc_Op<"shift_right", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure, SameOperandsAndResultType]> {
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

def Tfc_ShortenOp : Tfc_Op<"shorten", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
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

def Tfc_UpsampleOp : Tfc_Op<"upsample", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
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

def Tfc_TakeTokenOp : Tfc_Op<"take_token", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
  let summary = "Selects one position of `[batch, seq, d]`: the CLS token";
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$position);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `[` $position `]` attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_CrossEntropyOp : Tfc_Op<"cross_entropy", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
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

def Tfc_ClassifyLossOp : Tfc_Op<"classify_loss", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
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

//===----------------------------------------------------------------------===//
// Gradient building blocks (built by the VJPs, lowered like the forward ops)
//===----------------------------------------------------------------------===//

def Tfc_TransposeOp : Tfc_Op<"transpose", [Pure]> {
  let summary = "Transposes a 2-D tensor";
  let arguments = (ins Tfc_FloatTensor:$input);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfc_OuterSumOp : Tfc_Op<"outer_sum", [Pure]> {
  let summary = "Sum over the leading dimensions of outer products";
  let description = [{
    `lhs` is `[..., m]`, `rhs` is `[..., n]` with the same leading
    dimensions; the result `[m, n]` is `sum_r lhs[r, i] * rhs[r, j]` over all
    leading positions `r`: the weight gradient of `tfc.linear`
    (`lhs` = output gradient, `rhs` = input).
  }];
  let arguments = (ins Tfc_FloatTensor:$lhs, Tfc_FloatTensor:$rhs);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_SumLeadingOp : Tfc_Op<"sum_leading", [Pure]> {
  let summary = "Sums over the first `count` dimensions";
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$count);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `count` $count attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_ScaleOp : Tfc_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "Multiplies every element by a constant";
  let arguments = (ins Tfc_FloatTensor:$input, F64Attr:$factor);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($input)";
}

def Tfc_ShiftLeftOp : Tfc_Op<"shift_left", [Pure, SameOperandsAndResultType]> {
  let summary = "Shifts `[batch, seq, d]` left along seq by `amount`, zero fill";
  let description = [{ The transpose of `tfc.shift_right`. }];
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$amount);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input `by` $amount attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tfc_EmbeddingGradOp : Tfc_Op<"embedding_grad", [Pure]> {
  let summary = "Gradient of an embedding table: scatter-add of rows";
  let description = [{
    `ids` `[batch, seq]`, `grad` `[batch, seq, d]`; the result `[vocab, d]`
    has `sum` of `grad[b, s]` over the positions whose id is the row (ids
    outside the table count for row 0, as the forward reads row 0).
  }];
  let arguments = (ins Tfc_IdTensor:$ids, Tfc_FloatTensor:$grad);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $grad attr-dict `:` type($ids) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_LayerNormGradOp : Tfc_Op<"layer_norm_grad", [Pure,
    AllTypesMatch<["input", "input_grad", "grad"]>,
    AllTypesMatch<["gamma", "gamma_grad", "beta_grad"]>]> {
  let summary = "Gradients of layer normalisation";
  let description = [{
    Recomputes the statistics of `input` and returns the gradients of the
    input, of `gamma` and of `beta` given the output gradient `grad`.
  }];
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$gamma,
                       Tfc_FloatTensor:$grad,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Tfc_FloatTensor:$input_grad,
                      Tfc_FloatTensor:$gamma_grad,
                      Tfc_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $input `,` $gamma `,` $grad attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Tfc_ActivationGradOp : Tfc_Op<"activation_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "`grad * f'(input)` for the activation `kind`";
  let arguments = (ins Tfc_ActivationKind:$kind, Tfc_FloatTensor:$input,
                       Tfc_FloatTensor:$grad);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$kind $input `,` $grad attr-dict `:` type($input)";
}

def Tfc_TakeTokenGradOp : Tfc_Op<"take_token_grad", [DeclareOpInterfaceMethods<Tfc_VJPOpInterface>, Pure]> {
  let summary = "Places `[batch, d]` at one position of a zero `[batch, seq, d]`";
  let description = [{
    The gradient of `tfc.take_token`, and in the forward graph the global
    query of a Longformer, which its attention reads only at the global
    rows (each row's projection placed at its position).
  }];
  let arguments = (ins Tfc_FloatTensor:$grad, I64Attr:$position);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `[` $position `]` attr-dict `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_CrossEntropyGradOp : Tfc_Op<"cross_entropy_grad", [Pure,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of the mean next-token cross-entropy";
  let description = [{
    `(softmax(logits) - onehot(targets)) * grad / (batch * seq)`, with `grad`
    the scalar gradient of the loss.
  }];
  let arguments = (ins Tfc_FloatTensor:$logits, Tfc_IdTensor:$targets,
                       Tfc_Scalar:$grad);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets `,` $grad attr-dict `:` type($logits) `,` type($targets)
    `,` type($grad)
  }];
  let hasVerifier = 1;
}

def Tfc_ClassifyLossGradOp : Tfc_Op<"classify_loss_grad", [Pure,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of the mean classification loss";
  let arguments = (ins Tfc_ClassifyLossKind:$kind, Tfc_FloatTensor:$logits,
                       Tfc_IdTensor:$labels, Tfc_Scalar:$grad);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $logits `,` $labels `,` $grad attr-dict `:` type($logits) `,`
    type($labels) `,` type($grad)
  }];
  let hasVerifier = 1;
}

def Tfc_AttentionGradOp : Tfc_Op<"attention_grad", [Pure, AttrSizedOperandSegments,
    AllTypesMatch<["query", "grad"]>]> {
  let summary = "Gradients of tfc.attention";
  let description = [{
    The operands of the `tfc.attention` it differentiates, plus the output
    gradient `grad`; recomputes the attention weights and returns the
    gradients of query, key and value, and, for a `#tfc.longformer` with
    global tokens, of the three global projections (`global_grads`).
  }];
  let arguments = (ins
      AnyAttrOf<[Tfc_SoftmaxAttr, Tfc_PerformerAttr, Tfc_LongformerAttr]>:$kind,
      I64Attr:$heads,
      Tfc_FloatTensor:$query, Tfc_FloatTensor:$key, Tfc_FloatTensor:$value,
      Optional<Tfc_FloatTensor>:$mask, Optional<Tfc_FloatTensor>:$features,
      Optional<Tfc_FloatTensor>:$global_query,
      Optional<Tfc_FloatTensor>:$global_key,
      Optional<Tfc_FloatTensor>:$global_value,
      Tfc_FloatTensor:$grad);
  let results = (outs Tfc_FloatTensor:$query_grad, Tfc_FloatTensor:$key_grad,
                      Tfc_FloatTensor:$value_grad,
                      Variadic<Tfc_FloatTensor>:$global_grads);
  let assemblyFormat = [{
    $kind `heads` $heads $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`features` `(` $features^ `:` type($features) `)`)?
    (`global` `(` $global_query^ `,` $global_key `,` $global_value `:`
        type($global_query) `,` type($global_key) `,` type($global_value) `)`)?
    `grad` $grad attr-dict `:` type($query) `,` type($key) `,` type($value)
    `->` type(results)
  }];
  let hasVerifier = 1;
}

def Tfc_DepthwiseConvGradOp : Tfc_Op<"dconv_grad", [Pure,
    AllTypesMatch<["input", "input_grad", "grad"]>,
    AllTypesMatch<["weight", "weight_grad"]>]> {
  let summary = "Gradients of tfc.dconv: input, weight and bias";
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$weight,
                       Tfc_FloatTensor:$grad);
  let results = (outs Tfc_FloatTensor:$input_grad,
                      Tfc_FloatTensor:$weight_grad,
                      Tfc_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $weight `,` $grad attr-dict `:` type($input) `,` type($weight)
    `->` type($bias_grad)
  }];
  let hasVerifier = 1;
}

def Tfc_ShortenGradOp : Tfc_Op<"shorten_grad", [Pure]> {
  let summary = "Gradients of tfc.shorten: input and weights";
  let arguments = (ins Tfc_ShortenKind:$kind, Tfc_FloatTensor:$input,
                       I64Attr:$factor, Variadic<Tfc_FloatTensor>:$weights,
                       Tfc_FloatTensor:$grad, OptionalAttr<I64Attr>:$heads);
  let results = (outs Tfc_FloatTensor:$input_grad,
                      Variadic<Tfc_FloatTensor>:$weight_grads);
  let assemblyFormat = [{
    $kind $input `by` $factor (`weights` `(` $weights^ `:` type($weights) `)`)?
    `grad` $grad attr-dict `:` type($input) `,` type($grad) `->` type(results)
  }];
  let hasVerifier = 1;
}

def Tfc_UpsampleGradOp : Tfc_Op<"upsample_grad", [Pure,
    AllTypesMatch<["residual", "grad"]>]> {
  let summary = "Gradients of tfc.upsample: input, residual and weights";
  let description = [{
    `residual_grad` is zero for `naive` and `linear`, whose result does not
    depend on the residual's values.
  }];
  let arguments = (ins Tfc_UpsampleKind:$kind, Tfc_FloatTensor:$input,
                       Tfc_FloatTensor:$residual, I64Attr:$factor,
                       Variadic<Tfc_FloatTensor>:$weights,
                       Tfc_FloatTensor:$grad, OptionalAttr<I64Attr>:$heads);
  let results = (outs Tfc_FloatTensor:$input_grad,
                      Tfc_FloatTensor:$residual_grad,
                      Variadic<Tfc_FloatTensor>:$weight_grads);
  let assemblyFormat = [{
    $kind $input `by` $factor `residual` $residual
    (`weights` `(` $weights^ `:` type($weights) `)`)?
    `grad` $grad attr-dict `:` type($input) `,` type($residual) `->` type(results)
  }];
  let hasVerifier = 1;
}

#endif // TFC_OPS_TD
