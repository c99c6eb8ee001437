// RUN: tfc-opt %s --tfc-flatten-params -split-input-file -verify-diagnostics | FileCheck %s

// Every tfc.param becomes a slice of one leading flat argument, reshaped.
// Offsets follow first appearance, each aligned to 16 elements: "w"
// (12 elements) at 0, "b" (5) at 16, 32 in all. A parameter used by two
// functions has one offset. The gradients named by `tfc.param_grads` are
// packed into one flat buffer laid out like the parameters, zero elsewhere.

// CHECK: module attributes {tfc.flops = 0 : i64, tfc.manifest = [{init = "normal:0.02", kind = "param", name = "w", offset = 0 : i64, shape = array<i64: 4, 3>}, {init = "zeros", kind = "param", name = "b", offset = 16 : i64, shape = array<i64: 5>}], tfc.param_count = 32 : i64}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[P:.*]]: tensor<32xf32> {tfc.arg = "params"}, %{{.*}}: tensor<2x3xf32>)
// CHECK-NOT: tfc.param
// CHECK: %[[W:.*]] = tensor.extract_slice %[[P]][0] [12] [1]
// CHECK: %[[W2:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1]] output_shape [4, 3]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[P]][16] [5] [1]
// CHECK: return %[[W2]], %[[B]]
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[P:.*]]: tensor<32xf32> {tfc.arg = "params"}, %{{.*}}: tensor<2x3xf32>) -> (tensor<f32>, tensor<32xf32>)
// CHECK-NOT: tfc.param_grads
// CHECK: %[[B:.*]] = tensor.extract_slice %[[P]][16] [5] [1]
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[G:.*]] = tensor.insert_slice %[[B]] into %[[ZERO]][16] [5] [1]
// CHECK: return %{{.*}}, %[[G]]
module {
  func.func @forward(%x: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<5xf32>) {
    %w = tfc.param "w" init "normal:0.02" : tensor<4x3xf32>
    %b = tfc.param "b" init "zeros" : tensor<5xf32>
    return %w, %b : tensor<4x3xf32>, tensor<5xf32>
  }
  func.func @train_step(%x: tensor<2x3xf32>) -> (tensor<f32>, tensor<5xf32>) attributes {tfc.param_grads = ["b"]} {
    %b = tfc.param "b" init "zeros" : tensor<5xf32>
    %loss = tensor.empty() : tensor<f32>
    return %loss, %b : tensor<f32>, tensor<5xf32>
  }
}

// -----

module {
  func.func @mixed() -> (tensor<4xf32>, tensor<4xf64>) {
    %a = tfc.param "a" init "zeros" : tensor<4xf32>
    // expected-error @+1 {{all parameters must share one element type}}
    %b = tfc.param "b" init "zeros" : tensor<4xf64>
    return %a, %b : tensor<4xf32>, tensor<4xf64>
  }
}

// -----

module {
  // expected-error @+1 {{gradient of unknown parameter 'c'}}
  func.func @train_step() -> (tensor<f32>, tensor<4xf32>) attributes {tfc.param_grads = ["c"]} {
    %a = tfc.param "a" init "zeros" : tensor<4xf32>
    %loss = tensor.empty() : tensor<f32>
    return %loss, %a : tensor<f32>, tensor<4xf32>
  }
}

// -----

module {
  // expected-error @+1 {{'tfc.param_grads' names 2 gradients but the function returns 1}}
  func.func @train_step() -> (tensor<f32>, tensor<4xf32>) attributes {tfc.param_grads = ["a", "a"]} {
    %a = tfc.param "a" init "zeros" : tensor<4xf32>
    %loss = tensor.empty() : tensor<f32>
    return %loss, %a : tensor<f32>, tensor<4xf32>
  }
}

// -----

// tfc.flops counts the forward's matmuls. Non-causal FAVOR+ (q [2, 8, 8],
// 2 heads, 6 features): the feature maps of q and k, 2 * 2 * 16 * 8 * 6
// = 3072, and the two contractions with v, as much again: 6144.

// CHECK: module attributes {tfc.flops = 6144 : i64
module {
  func.func @forward(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                     %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
    %f = tfc.param "f" init "zeros" : tensor<6x4xf32>
    %a = tfc.attention #tfc.performer<features = 6, redraw = 0> heads 2 %q, %k, %v
        features(%f : tensor<6x4xf32>)
        : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
    return %a : tensor<2x8x8xf32>
  }
}

// -----

// Causal FAVOR+ adds each chunk's scores over its own keys and their
// product with the values: 8 positions in 2 chunks of 4, per position
// 2 * 4 * (6 features * 2 heads + 8 value columns), times 2 sequences:
// 6144 + 2560.

// CHECK: module attributes {tfc.flops = 8704 : i64
module {
  func.func @forward(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                     %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
    %f = tfc.param "f" init "zeros" : tensor<6x4xf32>
    %a = tfc.attention #tfc.performer<features = 6, redraw = 0, causal> heads 2 %q, %k, %v
        features(%f : tensor<6x4xf32>)
        : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
    return %a : tensor<2x8x8xf32>
  }
}

// -----

// Softmax attention counts the scores and their product with the values
// over every (query, key) pair (the unused parameter makes the pass record
// the count): q [2, 8, 8], 2 * 2 * 2 sequences * 64
// pairs * 8 columns = 4096.

// CHECK: module attributes {tfc.flops = 4096 : i64
module {
  func.func @forward(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                     %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
    %f = tfc.param "f" init "zeros" : tensor<4xf32>
    %a = tfc.attention #tfc.softmax<> heads 2 %q, %k, %v
        : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
    return %a : tensor<2x8x8xf32>
  }
}

// -----

// Causal: only the pairs j <= i, 1 + 2 + ... + 8 = 36 of the 64: 2304.

// CHECK: module attributes {tfc.flops = 2304 : i64
module {
  func.func @forward(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                     %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
    %f = tfc.param "f" init "zeros" : tensor<4xf32>
    %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
        : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
    return %a : tensor<2x8x8xf32>
  }
}

// -----

// Longformer, window 4, global [0], 8 positions (the picture in
// LowerAttention.cpp): the global row sees 8 keys, the local rows their
// band |j - i| <= 2 plus column 0: 8 + 4 + 5 + 6 + 6 + 6 + 5 + 4 = 44
// pairs, 2 * 2 * 2 * 44 * 8 = 2816.

// CHECK: module attributes {tfc.flops = 2816 : i64
module {
  func.func @forward(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                     %v: tensor<2x8x8xf32>, %gq: tensor<2x8x8xf32>,
                     %gk: tensor<2x8x8xf32>, %gv: tensor<2x8x8xf32>)
      -> tensor<2x8x8xf32> {
    %f = tfc.param "f" init "zeros" : tensor<4xf32>
    %a = tfc.attention #tfc.longformer<window = 4, dilation = 1, global = [0]> heads 2
        %q, %k, %v
        global(%gq, %gk, %gv : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
        : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
    return %a : tensor<2x8x8xf32>
  }
}

// -----

// Causal Longformer, window 3, dilation 2, global [5]: local row i sees
// i, i - 2, i - 4 (those >= 0) and column 5 when 5 <= i and not already in
// its window; the global row 5 sees keys 0..5. Rows 0..7: 1 + 1 + 2 + 2 +
// 3 + 6 + (3 + 1) + 3 = 22 pairs, 2 * 2 * 2 * 22 * 8 = 1408.

// CHECK: module attributes {tfc.flops = 1408 : i64
module {
  func.func @forward(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                     %v: tensor<2x8x8xf32>, %gq: tensor<2x8x8xf32>,
                     %gk: tensor<2x8x8xf32>, %gv: tensor<2x8x8xf32>)
      -> tensor<2x8x8xf32> {
    %f = tfc.param "f" init "zeros" : tensor<4xf32>
    %a = tfc.attention #tfc.longformer<window = 3, dilation = 2, global = [5], causal> heads 2
        %q, %k, %v
        global(%gq, %gk, %gv : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
        : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
    return %a : tensor<2x8x8xf32>
  }
}

// -----

// A count that overflows 64 bits (2 * 2 * 2^20 sequences * 2^44 pairs *
// 2^10 columns = 2^76) is not recorded: no tfc.flops, and a warning.

// CHECK: module attributes {tfc.manifest = [{init = "zeros", kind = "param", name = "f"
module {
  // expected-warning @+1 {{the forward's FLOP count overflows 64 bits; the manifest records none}}
  func.func @forward(%q: tensor<1048576x4194304x1024xf32>,
                     %k: tensor<1048576x4194304x1024xf32>,
                     %v: tensor<1048576x4194304x1024xf32>)
      -> tensor<1048576x4194304x1024xf32> {
    %f = tfc.param "f" init "zeros" : tensor<4xf32>
    %a = tfc.attention #tfc.softmax<> heads 2 %q, %k, %v
        : tensor<1048576x4194304x1024xf32>, tensor<1048576x4194304x1024xf32>,
          tensor<1048576x4194304x1024xf32> -> tensor<1048576x4194304x1024xf32>
    return %a : tensor<1048576x4194304x1024xf32>
  }
}
