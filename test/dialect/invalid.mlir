// RUN: tfc-opt %s -split-input-file -verify-diagnostics

func.func @param_empty_name() -> tensor<4xf32> {
  // expected-error @+1 {{'tensor_name' must not be empty}}
  %0 = tfc.param "" init "zeros" : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @param_bad_init() -> tensor<4xf32> {
  // expected-error @+1 {{'init' must be one of zeros, ones, normal:<std>, uniform:<a>, features:<rows>:<cols>; got 'xavier'}}
  %0 = tfc.param "w" init "xavier" : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @param_bad_std() -> tensor<4xf32> {
  // expected-error @+1 {{'init' must be 'normal:<positive number>', got 'normal:-1'}}
  %0 = tfc.param "w" init "normal:-1" : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @param_features_not_buffer() -> tensor<4x2xf32> {
  // expected-error @+1 {{'init' features is only valid for a buffer}}
  %0 = tfc.param "f" init "features:4:2" : tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @param_features_shape() -> tensor<4x3xf32> {
  // expected-error @+1 {{'init' features:4:2 needs shape [4, 2], got [4, 3]}}
  %0 = tfc.param "f" init "features:4:2" kind buffer : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @param_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{result must have a static shape}}
  %0 = tfc.param "w" init "zeros" : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @embedding_table_rank(%t: tensor<16xf32>, %ids: tensor<2x4xi32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'table' must have rank 2, got [16]}}
  %0 = tfc.embedding %t[%ids] : tensor<16xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @embedding_result(%t: tensor<16x8xf32>, %ids: tensor<2x4xi32>) -> tensor<2x4x9xf32> {
  // expected-error @+1 {{'result' must have shape [2, 4, 8], got [2, 4, 9]}}
  %0 = tfc.embedding %t[%ids] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x9xf32>
  return %0 : tensor<2x4x9xf32>
}

// -----

func.func @embedding_element(%t: tensor<16x8xf64>, %ids: tensor<2x4xi32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{float operands and results must share one element type, got 'f64' and 'f32'}}
  %0 = tfc.embedding %t[%ids] : tensor<16x8xf64>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @sinusoidal_odd(%x: tensor<2x4x7xf32>) -> tensor<2x4x7xf32> {
  // expected-error @+1 {{'input' width must be even, got 7}}
  %0 = tfc.sinusoidal_positions %x : tensor<2x4x7xf32>
  return %0 : tensor<2x4x7xf32>
}

// -----

func.func @learned_too_short(%x: tensor<2x8x4xf32>, %t: tensor<4x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'table' has 4 positions, fewer than the sequence length 8}}
  %0 = tfc.learned_positions %x, %t : tensor<2x8x4xf32>, tensor<4x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @learned_width(%x: tensor<2x8x4xf32>, %t: tensor<8x6xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'table' width 6 must equal the input width 4}}
  %0 = tfc.learned_positions %x, %t : tensor<2x8x4xf32>, tensor<8x6xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_heads(%x: tensor<2x8x12xf32>) -> tensor<2x8x12xf32> {
  // expected-error @+1 {{'heads' (5) must be positive and divide the width 12}}
  %0 = tfc.rotary %x heads 5 : tensor<2x8x12xf32>
  return %0 : tensor<2x8x12xf32>
}

// -----

func.func @rotary_odd_head(%x: tensor<2x8x12xf32>) -> tensor<2x8x12xf32> {
  // expected-error @+1 {{head width 3 must be even for rotary positions}}
  %0 = tfc.rotary %x heads 4 : tensor<2x8x12xf32>
  return %0 : tensor<2x8x12xf32>
}

// -----

func.func @linear_in(%x: tensor<2x8xf32>, %w: tensor<4x6xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'weight' is [out, in] = [4, 6] but the input's last dimension is 8}}
  %0 = tfc.linear %x, %w : tensor<2x8xf32>, tensor<4x6xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'bias' must have shape [4], got [8]}}
  %0 = tfc.linear %x, %w bias(%b : tensor<8xf32>) : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_result(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'result' must have shape [2, 4], got [2, 5]}}
  %0 = tfc.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @layer_norm_gamma(%x: tensor<2x8xf32>, %g: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'gamma' must have shape [8], got [4]}}
  %0 = tfc.layer_norm %x, %g, %g : tensor<2x8xf32>, tensor<4xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'eps' must be positive}}
  %0 = tfc.layer_norm %x, %g, %g {eps = 0.0 : f64} : tensor<2x8xf32>, tensor<8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @activation_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [relu, gelu, squared_relu]}}
  %0 = tfc.activation swish %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_rate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'rate' must be in [0, 1), got 1}}
  %0 = tfc.dropout %x rate 1.0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @attention_rank(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'query' must have rank 3, got [8, 16]}}
  %0 = tfc.attention #tfc.softmax<> heads 4 %q, %q, %q
      : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @attention_heads(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'heads' (3) must be positive and divide the width 16}}
  %0 = tfc.attention #tfc.softmax<> heads 3 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @attention_value(%q: tensor<2x8x16xf32>, %v: tensor<2x4x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'value' must have shape [2, 8, 16], got [2, 4, 16]}}
  %0 = tfc.attention #tfc.softmax<> heads 4 %q, %q, %v
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x4x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @attention_causal_lengths(%q: tensor<2x4x16xf32>, %k: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{causal attention needs as many queries as keys, got 4 and 8}}
  %0 = tfc.attention #tfc.softmax<causal> heads 4 %q, %k, %k
      : tensor<2x4x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

func.func @attention_mask(%q: tensor<2x8x16xf32>, %m: tensor<2x4xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mask' must have shape [2, 8], got [2, 4]}}
  %0 = tfc.attention #tfc.softmax<> heads 4 %q, %q, %q mask(%m : tensor<2x4xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @performer_missing_features(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'features' operand is required by #tfc.performer}}
  %0 = tfc.attention #tfc.performer<features = 32, redraw = 0> heads 4 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @performer_features_shape(%q: tensor<2x8x16xf32>, %f: tensor<16x4xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'features' must have shape [32, 4], got [16, 4]}}
  %0 = tfc.attention #tfc.performer<features = 32, redraw = 0> heads 4 %q, %q, %q features(%f : tensor<16x4xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @features_without_performer(%q: tensor<2x8x16xf32>, %f: tensor<16x4xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'features' operand is only valid with #tfc.performer}}
  %0 = tfc.attention #tfc.softmax<> heads 4 %q, %q, %q features(%f : tensor<16x4xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @performer_zero_features(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{performer 'features' must be positive, got 0}}
  %0 = tfc.attention #tfc.performer<features = 0, redraw = 0> heads 4 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @performer_unknown_field(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{unknown field 'kernel'}}
  %0 = tfc.attention #tfc.performer<features = 8, kernel = 2> heads 4 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @longformer_window(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{#tfc.longformer 'window' 16 is larger than the sequence length 8}}
  %0 = tfc.attention #tfc.longformer<window = 16> heads 4 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @longformer_dilation(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{longformer 'dilation' must be positive, got 0}}
  %0 = tfc.attention #tfc.longformer<window = 4, dilation = 0> heads 4 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @longformer_global_position(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{#tfc.longformer 'global' position 9 is outside the sequence of 8}}
  %0 = tfc.attention #tfc.longformer<window = 4, global = [9]> heads 4 %q, %q, %q
      global(%q, %q, %q : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @longformer_missing_global(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'global' projections are required by #tfc.longformer with global tokens}}
  %0 = tfc.attention #tfc.longformer<window = 4, global = [0]> heads 4 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @longformer_extra_global(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'global' projections given but #tfc.longformer has no global tokens}}
  %0 = tfc.attention #tfc.longformer<window = 4> heads 4 %q, %q, %q
      global(%q, %q, %q : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @global_without_longformer(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'global' projections are only valid with #tfc.longformer}}
  %0 = tfc.attention #tfc.softmax<> heads 4 %q, %q, %q
      global(%q, %q, %q : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @dconv_width(%x: tensor<2x8x16xf32>, %w: tensor<3x4x3xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'weight' is [kernel, heads, head_dim] = [3, 4, 3] but heads * head_dim must equal the width 16}}
  %0 = tfc.dconv %x, %w : tensor<2x8x16xf32>, tensor<3x4x3xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @dconv_bias(%x: tensor<2x8x16xf32>, %w: tensor<3x4x4xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'bias' must have shape [4, 4], got [16]}}
  %0 = tfc.dconv %x, %w bias(%b : tensor<16xf32>) : tensor<2x8x16xf32>, tensor<3x4x4xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @shift_amount(%x: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'amount' must be in [0, 8), got 8}}
  %0 = tfc.shift_right %x by 8 : tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @shorten_divisible(%x: tensor<2x8x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error @+1 {{sequence length 8 is not divisible by 'factor' 3}}
  %0 = tfc.shorten avg %x by 3 : tensor<2x8x4xf32> -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

func.func @shorten_result(%x: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'result' must have shape [2, 4, 4], got [2, 8, 4]}}
  %0 = tfc.shorten avg %x by 2 : tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @shorten_linear_weights(%x: tensor<2x8x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{kind 'linear' takes 2 weights, got 1}}
  %0 = tfc.shorten linear %x by 2 weights(%w : tensor<4x4xf32>) : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @shorten_linear_shape(%x: tensor<2x8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'weights #0' must have shape [4, 8], got [4, 4]}}
  %0 = tfc.shorten linear %x by 2 weights(%w, %b : tensor<4x4xf32>, tensor<4xf32>) : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @shorten_attention_heads(%x: tensor<2x8x4xf32>, %p: tensor<4x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'heads' is required with kind attention}}
  %0 = tfc.shorten attention %x by 2 weights(%p, %p, %p, %p : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
      : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @shorten_avg_heads(%x: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'heads' is only valid with kind attention}}
  %0 = tfc.shorten avg %x by 2 {heads = 2 : i64} : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @upsample_input(%s: tensor<2x3x4xf32>, %r: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'input' must have shape [2, 4, 4], got [2, 3, 4]}}
  %0 = tfc.upsample naive %s by 2 residual %r : tensor<2x3x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @upsample_factor(%s: tensor<2x4x4xf32>, %r: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'factor' must be positive, got 0}}
  %0 = tfc.upsample naive %s by 0 residual %r : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @upsample_linear_shape(%s: tensor<2x4x4xf32>, %r: tensor<2x8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<8xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'weights #0' must have shape [8, 4], got [4, 4]}}
  %0 = tfc.upsample linear %s by 2 residual %r weights(%w, %b : tensor<4x4xf32>, tensor<8xf32>)
      : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @take_token_position(%x: tensor<2x8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'position' must be in [0, 8), got 8}}
  %0 = tfc.take_token %x[8] : tensor<2x8x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @cross_entropy_targets(%l: tensor<2x8x16xf32>, %t: tensor<2x4xi32>) -> tensor<f32> {
  // expected-error @+1 {{'targets' must have shape [2, 8], got [2, 4]}}
  %0 = tfc.cross_entropy %l, %t : tensor<2x8x16xf32>, tensor<2x4xi32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @bce_width(%l: tensor<2x2xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  // expected-error @+1 {{'logits' must be [batch, 1] for bce, got [2, 2]}}
  %0 = tfc.classify_loss bce %l, %y : tensor<2x2xf32>, tensor<2xi32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @ce_width(%l: tensor<2x1xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  // expected-error @+1 {{'logits' must have at least 2 classes for ce, got [2, 1]}}
  %0 = tfc.classify_loss ce %l, %y : tensor<2x1xf32>, tensor<2xi32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @labels_shape(%l: tensor<2x3xf32>, %y: tensor<3xi32>) -> tensor<f32> {
  // expected-error @+1 {{'labels' must have shape [2], got [3]}}
  %0 = tfc.classify_loss ce %l, %y : tensor<2x3xf32>, tensor<3xi32> -> tensor<f32>
  return %0 : tensor<f32>
}
