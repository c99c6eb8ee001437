// RUN: tfc-opt %s -split-input-file --tfc-autodiff | FileCheck %s

// A linear layer and the LM loss: the weight gradient is an outer sum of the
// output gradient and the input, the bias gradient a sum over positions.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[TOK:.*]]: tensor<2x4xi32>, %[[TGT:.*]]: tensor<2x4xi32>, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<i64> {tfc.arg = "seed"})
// CHECK-SAME: -> (tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>)
// CHECK-SAME: tfc.param_grads = ["embed.weight", "head.weight", "head.bias"]
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DLOGITS:.*]] = tfc.cross_entropy_grad %{{.*}}, %[[TGT]], %[[ONE]]
// CHECK: %[[WT:.*]] = tfc.transpose %{{.*}} : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK: %[[DX:.*]] = tfc.linear %[[DLOGITS]], %[[WT]] : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
// CHECK: %[[DW:.*]] = tfc.outer_sum %[[DLOGITS]], %{{.*}} : tensor<2x4x16xf32>, tensor<2x4x8xf32> -> tensor<16x8xf32>
// CHECK: %[[DB:.*]] = tfc.sum_leading %[[DLOGITS]] count 2 : tensor<2x4x16xf32> -> tensor<16xf32>
// CHECK: %[[DTABLE:.*]] = tfc.embedding_grad %[[TOK]], %[[DX]]
// CHECK: return %{{.*}}, %[[DTABLE]], %[[DW]], %[[DB]]
func.func @forward(%tokens: tensor<2x4xi32>, %targets: tensor<2x4xi32>, %mask: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<2x4x16xf32>) {
  %e = tfc.param "embed.weight" init "normal:0.02" : tensor<16x8xf32>
  %x = tfc.embedding %e[%tokens] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %w = tfc.param "head.weight" init "normal:0.02" : tensor<16x8xf32>
  %b = tfc.param "head.bias" init "zeros" : tensor<16xf32>
  %l = tfc.linear %x, %w bias(%b : tensor<16xf32>) : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %loss = tfc.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<2x4x16xf32>
}

// -----

// A value used twice (a residual connection) receives the sum of both
// gradients; dropout gets the step's seed and its gradient the same mask.

// CHECK-LABEL: func.func @train_step
// CHECK: tfc.dropout %{{.*}} rate {{.*}} seed(%[[SEED:.*]] : tensor<i64>) :
// CHECK: %[[D:.*]] = tfc.dropout %{{.*}} rate {{.*}} seed(%[[SEED]] : tensor<i64>) :
// CHECK: %[[G:.*]] = tfc.activation_grad gelu %{{.*}}, %[[D]]
// CHECK: tfc.add %{{.*}}, %[[G]]
func.func @forward(%tokens: tensor<2x4xi32>, %targets: tensor<2x4xi32>, %mask: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<2x4x8xf32>) {
  %e = tfc.param "embed.weight" init "normal:0.02" : tensor<8x8xf32>
  %x = tfc.embedding %e[%tokens] : tensor<8x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %a = tfc.activation gelu %x : tensor<2x4x8xf32>
  %d = tfc.dropout %a rate 0.1 : tensor<2x4x8xf32>
  %r = tfc.add %x, %d : tensor<2x4x8xf32>
  %loss = tfc.cross_entropy %r, %targets : tensor<2x4x8xf32>, tensor<2x4xi32> -> tensor<f32>
  return %loss, %r : tensor<f32>, tensor<2x4x8xf32>
}

// -----

// Buffers (Performer features) get no gradient result.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tfc.param_grads = ["embed.weight"]
// CHECK: tfc.attention_grad #tfc.performer
func.func @forward(%tokens: tensor<2x4xi32>, %targets: tensor<2x4xi32>, %mask: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<2x4x8xf32>) {
  %e = tfc.param "embed.weight" init "normal:0.02" : tensor<8x8xf32>
  %f = tfc.param "features" init "features:4:4" kind buffer : tensor<4x4xf32>
  %x = tfc.embedding %e[%tokens] : tensor<8x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %a = tfc.attention #tfc.performer<features = 4, redraw = 0, causal> heads 2 %x, %x, %x features(%f : tensor<4x4xf32>)
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %loss = tfc.cross_entropy %a, %targets : tensor<2x4x8xf32>, tensor<2x4xi32> -> tensor<f32>
  return %loss, %a : tensor<f32>, tensor<2x4x8xf32>
}
