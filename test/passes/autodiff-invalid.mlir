// RUN: tfc-opt %s -split-input-file --tfc-autodiff -verify-diagnostics


func.func @forward(%tokens: tensor<2x4xi32>, %targets: tensor<2x4xi32>, %mask: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<2x4x8xf32>) {
  %e = tfc.param "embed.weight" init "normal:0.02" : tensor<8x8xf32>
  %x = tfc.embedding %e[%tokens] : tensor<8x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %p = tfc.param "pos" init "zeros" : tensor<6x8xf32>
  // expected-error @+1 {{gradient needs a table of exactly as many positions as the sequence}}
  %l = tfc.learned_positions %x, %p : tensor<2x4x8xf32>, tensor<6x8xf32>
  %loss = tfc.cross_entropy %l, %targets : tensor<2x4x8xf32>, tensor<2x4xi32> -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<2x4x8xf32>
}

// -----

// expected-error @+1 {{tfc-autodiff: no @forward function}}
module {
  func.func @other() {
    return
  }
}
