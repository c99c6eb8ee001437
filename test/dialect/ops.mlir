// RUN: tfc-opt %s -split-input-file | FileCheck %s
// RUN: tfc-opt %s -split-input-file -mlir-print-op-generic | tfc-opt -split-input-file | FileCheck %s

// Round trip of every tfc operation and attribute through the custom
// assembly format and the generic form.

// CHECK-LABEL: func @params
func.func @params() -> (tensor<16x8xf32>, tensor<8xf32>, tensor<4x2xf32>) {
  // CHECK: tfc.param "layers.0.attn.q_proj.weight" init "normal:0.02" : tensor<16x8xf32>
  %w = tfc.param "layers.0.attn.q_proj.weight" init "normal:0.02" : tensor<16x8xf32>
  // CHECK: tfc.param "norm.bias" init "zeros" : tensor<8xf32>
  %b = tfc.param "norm.bias" init "zeros" : tensor<8xf32>
  // CHECK: tfc.param "layers.0.attn.features" init "features:4:2" kind buffer : tensor<4x2xf32>
  %f = tfc.param "layers.0.attn.features" init "features:4:2" kind buffer : tensor<4x2xf32>
  return %w, %b, %f : tensor<16x8xf32>, tensor<8xf32>, tensor<4x2xf32>
}

// -----

// CHECK-LABEL: func @embed_and_positions
func.func @embed_and_positions(%table: tensor<256x8xf32>, %ids: tensor<2x4xi32>,
                               %pos: tensor<16x8xf32>) -> tensor<2x4x8xf32> {
  // CHECK: tfc.embedding %{{.*}}[%{{.*}}] : tensor<256x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %x = tfc.embedding %table[%ids] : tensor<256x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  // CHECK: tfc.sinusoidal_positions %{{.*}} : tensor<2x4x8xf32>
  %s = tfc.sinusoidal_positions %x : tensor<2x4x8xf32>
  // CHECK: tfc.learned_positions %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<16x8xf32>
  %l = tfc.learned_positions %s, %pos : tensor<2x4x8xf32>, tensor<16x8xf32>
  // CHECK: tfc.rotary %{{.*}} heads 2 : tensor<2x4x8xf32>
  %r = tfc.rotary %l heads 2 : tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func @dense
func.func @dense(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>,
                 %g: tensor<16xf32>) -> tensor<2x4x16xf32> {
  // CHECK: tfc.linear %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<16xf32>) : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %y = tfc.linear %x, %w bias(%b : tensor<16xf32>) : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  // CHECK: tfc.linear %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %n = tfc.linear %x, %w : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  // CHECK: tfc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = {{.*}} : f64} : tensor<2x4x16xf32>, tensor<16xf32>
  %ln = tfc.layer_norm %y, %g, %b {eps = 1.0e-6 : f64} : tensor<2x4x16xf32>, tensor<16xf32>
  // CHECK: tfc.activation relu
  %a0 = tfc.activation relu %ln : tensor<2x4x16xf32>
  // CHECK: tfc.activation gelu
  %a1 = tfc.activation gelu %a0 : tensor<2x4x16xf32>
  // CHECK: tfc.activation squared_relu
  %a2 = tfc.activation squared_relu %a1 : tensor<2x4x16xf32>
  // CHECK: tfc.dropout %{{.*}} rate 1.000000e-01 : tensor<2x4x16xf32>
  %d = tfc.dropout %a2 rate 0.1 : tensor<2x4x16xf32>
  // CHECK: tfc.add %{{.*}}, %{{.*}} : tensor<2x4x16xf32>
  %s = tfc.add %d, %n : tensor<2x4x16xf32>
  return %s : tensor<2x4x16xf32>
}

// -----

// CHECK-LABEL: func @attention_kinds
func.func @attention_kinds(%q: tensor<2x8x16xf32>, %m: tensor<2x8xf32>,
                           %f: tensor<32x4xf32>) -> tensor<2x8x16xf32> {
  // CHECK: tfc.attention #tfc.softmax<causal> heads 4
  %a = tfc.attention #tfc.softmax<causal> heads 4 %q, %q, %q
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  // CHECK: tfc.attention #tfc.softmax<> heads 4 {{.*}} mask(%{{.*}} : tensor<2x8xf32>)
  %b = tfc.attention #tfc.softmax<> heads 4 %a, %a, %a mask(%m : tensor<2x8xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  // CHECK: tfc.attention #tfc.performer<features = 32, redraw = 1000, orthogonal, causal> heads 4 {{.*}} features(%{{.*}} : tensor<32x4xf32>)
  %c = tfc.attention #tfc.performer<features = 32, redraw = 1000, orthogonal, causal> heads 4
      %b, %b, %b features(%f : tensor<32x4xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  // CHECK: tfc.attention #tfc.longformer<window = 4, dilation = 2, global = [0], causal> heads 4 {{.*}} global(
  %d = tfc.attention #tfc.longformer<window = 4, dilation = 2, global = [0], causal> heads 4
      %c, %c, %c global(%c, %c, %c : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  // CHECK: tfc.attention #tfc.longformer<window = 4, dilation = 1, global = []> heads 4
  %e = tfc.attention #tfc.longformer<window = 4> heads 4 %d, %d, %d
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %e : tensor<2x8x16xf32>
}

// -----

// CHECK-LABEL: func @primer_dconv
func.func @primer_dconv(%x: tensor<2x8x16xf32>, %w: tensor<3x4x4xf32>,
                        %b: tensor<4x4xf32>) -> tensor<2x8x16xf32> {
  // CHECK: tfc.dconv %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<4x4xf32>) : tensor<2x8x16xf32>, tensor<3x4x4xf32>
  %y = tfc.dconv %x, %w bias(%b : tensor<4x4xf32>) : tensor<2x8x16xf32>, tensor<3x4x4xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// CHECK-LABEL: func @hourglass
func.func @hourglass(%x: tensor<2x8x4xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>,
                     %p: tensor<4x4xf32>, %uw: tensor<8x4xf32>, %ub: tensor<8xf32>)
    -> tensor<2x8x4xf32> {
  // CHECK: tfc.shift_right %{{.*}} by 1 : tensor<2x8x4xf32>
  %s = tfc.shift_right %x by 1 : tensor<2x8x4xf32>
  // CHECK: tfc.shorten avg %{{.*}} by 2 : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %a = tfc.shorten avg %s by 2 : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  // CHECK: tfc.shorten linear %{{.*}} by 2 weights(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4xf32>)
  %l = tfc.shorten linear %s by 2 weights(%w, %b : tensor<4x8xf32>, tensor<4xf32>)
      : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  // CHECK: tfc.shorten attention %{{.*}} by 2 weights({{.*}}) {heads = 2 : i64}
  %t = tfc.shorten attention %s by 2 weights(%p, %p, %p, %p
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {heads = 2 : i64}
      : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  // CHECK: tfc.upsample naive %{{.*}} by 2 residual %{{.*}} : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  %u0 = tfc.upsample naive %a by 2 residual %x : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  // CHECK: tfc.upsample linear %{{.*}} by 2 residual %{{.*}} weights(
  %u1 = tfc.upsample linear %l by 2 residual %x weights(%uw, %ub : tensor<8x4xf32>, tensor<8xf32>)
      : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  // CHECK: tfc.upsample attention %{{.*}} by 2 residual %{{.*}} weights({{.*}}) {heads = 2 : i64}
  %u2 = tfc.upsample attention %t by 2 residual %x weights(%p, %p, %p, %p
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {heads = 2 : i64}
      : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  %r = tfc.add %u0, %u1 : tensor<2x8x4xf32>
  %r2 = tfc.add %r, %u2 : tensor<2x8x4xf32>
  return %r2 : tensor<2x8x4xf32>
}

// -----

// CHECK-LABEL: func @heads_and_losses
func.func @heads_and_losses(%x: tensor<2x8x4xf32>, %logits: tensor<2x8x16xf32>,
                            %targets: tensor<2x8xi32>, %c: tensor<2x3xf32>,
                            %one: tensor<2x1xf32>, %labels: tensor<2xi32>)
    -> (tensor<2x4xf32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK: tfc.take_token %{{.*}}[0] : tensor<2x8x4xf32> -> tensor<2x4xf32>
  %cls = tfc.take_token %x[0] : tensor<2x8x4xf32> -> tensor<2x4xf32>
  // CHECK: tfc.cross_entropy %{{.*}}, %{{.*}} : tensor<2x8x16xf32>, tensor<2x8xi32> -> tensor<f32>
  %lm = tfc.cross_entropy %logits, %targets : tensor<2x8x16xf32>, tensor<2x8xi32> -> tensor<f32>
  // CHECK: tfc.classify_loss ce %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  %ce = tfc.classify_loss ce %c, %labels : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  // CHECK: tfc.classify_loss bce %{{.*}}, %{{.*}} : tensor<2x1xf32>, tensor<2xi32> -> tensor<f32>
  %bce = tfc.classify_loss bce %one, %labels : tensor<2x1xf32>, tensor<2xi32> -> tensor<f32>
  return %cls, %lm, %ce, %bce : tensor<2x4xf32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Float64 builds (gradient checks) use the same ops.
// CHECK-LABEL: func @float64
func.func @float64(%x: tensor<2x4xf64>, %w: tensor<3x4xf64>) -> tensor<2x3xf64> {
  // CHECK: tfc.linear {{.*}} : tensor<2x4xf64>, tensor<3x4xf64> -> tensor<2x3xf64>
  %y = tfc.linear %x, %w : tensor<2x4xf64>, tensor<3x4xf64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}
