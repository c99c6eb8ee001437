// RUN: tfc-opt %s -split-input-file --tfc-performer-heads | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-performer-heads | FileCheck %s --check-prefix=PAIRS

// No op of any case runs over a [B, S, H, ...] tensor of the split heads.
// PAIRS-NOT: tensor<2x8x2x

// Causal FAVOR+, batch 2, 2 heads of 4 channels, 6 features: one scf.forall
// over the 4 (batch, head) pairs. Each iteration slices its pair's
// [1, 8, 4] query, key and value columns (batch p / 2, columns 4 (p % 2)),
// runs the pair's attention lowered in place on tensors without batch or
// head dimensions (features [8, 6], chunks [2, 4, 6]), and writes its
// [8, 4] output at the pair's place.

// CHECK-LABEL: func.func @causal
// CHECK-NOT: tfc.attention
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x8x8xf32>
// CHECK: %[[LOOP:.*]] = scf.forall (%[[P:.*]]) in (4) shared_outs(%[[OUT:.*]] = %[[EMPTY]]) -> (tensor<2x8x8xf32>)
// CHECK: %[[B:.*]] = arith.divui %[[P]], %[[TWO:.*]] : index
// CHECK: %[[H:.*]] = arith.remui %[[P]], %[[TWO]] : index
// CHECK: %[[COL:.*]] = arith.muli %[[H]], %{{.*}} : index
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], 0, %[[COL]]] [1, 8, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<8x4xf32>
// CHECK: tensor.extract_slice %arg1[%[[B]], 0, %[[COL]]] [1, 8, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<8x4xf32>
// CHECK: tensor.extract_slice %arg2[%[[B]], 0, %[[COL]]] [1, 8, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<8x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[Q]], %{{.*}} : tensor<8x4xf32>, tensor<6x4xf32>) outs(%{{.*}} : tensor<8x6xf32>)
// CHECK: math.exp
// CHECK: scf.for
// CHECK: tensor<2x4x6xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[B]], 0, %[[COL]]] [1, 8, 4] [1, 1, 1] : tensor<8x4xf32> into tensor<2x8x8xf32>
// CHECK: return %[[LOOP]]
func.func @causal(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                  %v: tensor<2x8x8xf32>, %f: tensor<6x4xf32>)
    -> tensor<2x8x8xf32> {
  %a = tfc.attention #tfc.performer<features = 6, redraw = 0, causal> heads 2 %q, %k, %v
      features(%f : tensor<6x4xf32>)
      : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %a : tensor<2x8x8xf32>
}

// -----

// The gradient of non-causal FAVOR+ with a key mask: one loop with three
// outputs (dQ, dK, dV), the output gradient sliced like the query, and the
// mask by its batch row only.

// CHECK-LABEL: func.func @gradient
// CHECK-NOT: tfc.attention_grad
// CHECK: %[[LOOP:.*]]:3 = scf.forall (%[[P:.*]]) in (4) shared_outs(%[[DQ:.*]] = %{{.*}}, %[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}}) -> (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
// CHECK: %[[B:.*]] = arith.divui %[[P]]
// CHECK: %[[COL:.*]] = arith.muli
// CHECK: tensor.extract_slice %arg5[%[[B]], 0, %[[COL]]] [1, 8, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<8x4xf32>
// CHECK: tensor.extract_slice %arg3[%[[B]], 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[DQ]][%[[B]], 0, %[[COL]]] [1, 8, 4]
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[DK]][%[[B]], 0, %[[COL]]] [1, 8, 4]
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[DV]][%[[B]], 0, %[[COL]]] [1, 8, 4]
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2
func.func @gradient(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                    %v: tensor<2x8x8xf32>, %m: tensor<2x8xf32>,
                    %f: tensor<6x4xf32>, %g: tensor<2x8x8xf32>)
    -> (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) {
  %dq, %dk, %dv = tfc.attention_grad #tfc.performer<features = 6, redraw = 0> heads 2
      %q, %k, %v mask(%m : tensor<2x8xf32>) features(%f : tensor<6x4xf32>) grad %g
      : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>
      -> tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>
  return %dq, %dk, %dv : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>
}

// -----

// Left alone: softmax attention (tfc-blocked-attention's), and a Performer
// of one batch and one head, which has no pairs to share.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.forall
// CHECK: tfc.attention #tfc.softmax
// CHECK: tfc.attention #tfc.performer
func.func @left_alone(%x: tensor<2x8x8xf32>, %y: tensor<1x8x4xf32>,
                      %f: tensor<6x4xf32>) -> (tensor<2x8x8xf32>, tensor<1x8x4xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %x, %x, %x
      : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  %b = tfc.attention #tfc.performer<features = 6, redraw = 0, causal> heads 1 %y, %y, %y
      features(%f : tensor<6x4xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<1x8x4xf32>
  return %a, %b : tensor<2x8x8xf32>, tensor<1x8x4xf32>
}
