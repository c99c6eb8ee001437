// RUN: tfc-opt %s -split-input-file --tfc-row-attention | FileCheck %s

// Causal softmax attention with a key mask, 2 heads of 4 channels: one
// scf.forall over (batch, head, query row), rows innermost; each iteration
// reads its query row as a vector, runs over keys 0..i with the online
// softmax's maximum, normaliser and accumulator as loop-carried registers,
// skips padding keys (factor 1, weight 0) and writes its output row. No
// score tensor exists.

// CHECK-LABEL: func.func @softmax_causal
// CHECK-NOT: tfc.attention
// CHECK-NOT: tensor<2x2x8x8xf32>
// CHECK: %[[OUT:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (2, 2, 8) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x8x8xf32>)
// CHECK: %[[Q:.*]] = vector.transfer_read %arg0[%[[B]], %[[I]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x8x8xf32>, vector<4xf32>
// CHECK: %[[END:.*]] = arith.addi %[[I]], %c1
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[J:.*]] = %{{.*}} to %[[END]] step %{{.*}} iter_args({{.*}}) -> (f32, f32, vector<4xf32>)
// CHECK: %[[K:.*]] = vector.transfer_read %arg1[%[[B]], %[[J]], %{{.*}}]
// CHECK: arith.mulf %[[Q]], %[[K]] : vector<4xf32>
// CHECK: vector.reduction <add>
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.exp
// CHECK: %[[FLAG:.*]] = tensor.extract %arg3[%[[B]], %[[J]]] : tensor<2x8xf32>
// CHECK: %[[REAL:.*]] = arith.cmpf une, %[[FLAG]]
// CHECK: arith.select %[[REAL]]
// CHECK: vector.transfer_read %arg2[%[[B]], %[[J]], %{{.*}}]
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: arith.cmpf ogt, %[[LOOP]]#1
// CHECK: %[[ROW:.*]] = vector.transfer_write %{{.*}}, %{{.*}}[%c0{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<4xf32>
// CHECK: %[[COL:.*]] = arith.muli %[[H]], %c4
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[ROW]] into %[[ACC]][%[[B]], %[[I]], %[[COL]]] [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<2x8x8xf32>
// CHECK: return %[[OUT]]
func.func @softmax_causal(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                          %v: tensor<2x8x8xf32>, %m: tensor<2x8xf32>)
    -> tensor<2x8x8xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      mask(%m : tensor<2x8xf32>)
      : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %a : tensor<2x8x8xf32>
}

// -----

// Without the causal mask, every row runs over all keys, also when the
// query and key lengths differ.

// CHECK-LABEL: func.func @softmax_cross
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 4) shared_outs
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step
// CHECK-NOT: tensor.extract
// CHECK: tensor.parallel_insert_slice %{{.*}} [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<1x4x4xf32>
func.func @softmax_cross(%q: tensor<1x4x4xf32>, %k: tensor<1x8x4xf32>,
                         %v: tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  %a = tfc.attention #tfc.softmax<> heads 1 %q, %k, %v
      : tensor<1x4x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<1x4x4xf32>
  return %a : tensor<1x4x4xf32>
}

// -----

// The gradient: a loop over query rows that recomputes the log-sum-exp and
// D = dO . O (one loop over keys, rescaled online) and accumulates dQ (a
// second loop over keys), writing dQ's row and the row's two numbers into
// [B, H, S] tensors; then a loop over key rows that runs over the queries
// i >= j from the last down (i = 7 - step for 8 - j steps), reading those
// numbers, and accumulates dK and dV.

// CHECK-LABEL: func.func @softmax_causal_grad
// CHECK-NOT: tfc.attention_grad
// CHECK: %[[ROWS:.*]]:3 = scf.forall (%{{.*}}, %{{.*}}, %[[I:.*]]) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
// CHECK: scf.for {{.*}} -> (f32, f32, f32)
// CHECK: math.log
// CHECK: scf.for {{.*}} -> (vector<4xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<1x8x8xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} [1, 1, 1] [1, 1, 1] : tensor<1xf32> into tensor<1x2x8xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} [1, 1, 1] [1, 1, 1] : tensor<1xf32> into tensor<1x2x8xf32>
// CHECK: %[[KEYS:.*]]:2 = scf.forall (%[[KB:.*]], %[[KH:.*]], %[[J:.*]]) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>)
// CHECK: %[[COUNT:.*]] = arith.subi %c8{{.*}}, %[[J]]
// CHECK: scf.for %[[STEP:.*]] = %c0{{.*}} to %[[COUNT]] step {{.*}} -> (vector<4xf32>, vector<4xf32>)
// CHECK: %[[QI:.*]] = arith.subi %c7{{.*}}, %[[STEP]]
// CHECK: vector.transfer_read %arg0[%[[KB]], %[[QI]],
// CHECK: tensor.extract %[[ROWS]]#1[%[[KB]], %[[KH]], %[[QI]]]
// CHECK: tensor.extract %[[ROWS]]#2[%[[KB]], %[[KH]], %[[QI]]]
// CHECK: return %[[ROWS]]#0, %[[KEYS]]#0, %[[KEYS]]#1
func.func @softmax_causal_grad(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                               %v: tensor<1x8x8xf32>, %g: tensor<1x8x8xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
      -> tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
  return %dq, %dk, %dv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// -----

// A padding key is attended by no query: its loop over queries is empty
// (no steps).

// CHECK-LABEL: func.func @softmax_masked_grad
// CHECK: scf.forall
// CHECK: scf.forall (%[[B:.*]], %{{.*}}, %[[J:.*]]) in (1, 1, 4)
// CHECK: %[[FLAG:.*]] = tensor.extract %arg3[%[[B]], %[[J]]]
// CHECK: %[[REAL:.*]] = arith.cmpf une, %[[FLAG]]
// CHECK: %[[END:.*]] = arith.select %[[REAL]], %c4{{.*}}, %c0
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[END]]
func.func @softmax_masked_grad(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>,
                               %v: tensor<1x4x4xf32>, %m: tensor<1x4xf32>,
                               %g: tensor<1x4x4xf32>)
    -> (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) {
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<> heads 1 %q, %k, %v
      mask(%m : tensor<1x4xf32>)
      grad %g : tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
      -> tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
  return %dq, %dk, %dv : tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
}

// -----

// Left alone: Longformer and Performer attention (tfc-blocked-attention
// and tfc-lower-to-linalg lower them).

// CHECK-LABEL: func.func @longformer
// CHECK: tfc.attention #tfc.longformer
// CHECK-NOT: scf.forall
func.func @longformer(%q: tensor<1x16x4xf32>, %k: tensor<1x16x4xf32>,
                      %v: tensor<1x16x4xf32>) -> tensor<1x16x4xf32> {
  %a = tfc.attention #tfc.longformer<window = 4, dilation = 1, global = [], causal> heads 1
      %q, %k, %v
      : tensor<1x16x4xf32>, tensor<1x16x4xf32>, tensor<1x16x4xf32> -> tensor<1x16x4xf32>
  return %a : tensor<1x16x4xf32>
}

// -----

// A gradient after its forward (the same operands) reads the forward's
// output and log-sum-exp: the forward's loop also writes each row's
// log-sum-exp into a [B, H, S] tensor, and the gradient's loop over query
// rows reads it and computes D = dO . O from the forward's output row,
// with one loop over keys (dQ) instead of two. A forward with no gradient
// (the evaluation graph) writes its output alone.

// CHECK-LABEL: func.func @softmax_forward_and_grad
// CHECK: %[[FWD:.*]]:2 = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x2x8xf32>)
// CHECK: math.log
// CHECK: %[[ROWS:.*]]:3 = scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
// CHECK: %[[DOUT:.*]] = vector.transfer_read %arg3[%[[B]], %[[I]],
// CHECK: %[[LSE:.*]] = tensor.extract %[[FWD]]#1[%[[B]], %[[H]], %[[I]]]
// CHECK: %[[O:.*]] = vector.transfer_read %[[FWD]]#0[%[[B]], %[[I]],
// CHECK: arith.mulf %[[DOUT]], %[[O]]
// CHECK: vector.reduction <add>
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: scf.forall.in_parallel
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>)
// CHECK: return %[[FWD]]#0, %[[ROWS]]#0
func.func @softmax_forward_and_grad(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                                    %v: tensor<1x8x8xf32>, %g: tensor<1x8x8xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
      -> tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
  return %a, %dq, %dk, %dv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}
