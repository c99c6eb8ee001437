// RUN: tfc-opt %s -split-input-file --tfc-lower-to-linalg | FileCheck %s

// Softmax attention, causal, with a padding mask: scores contracted over the
// head dimension, scaled and masked to -inf (j > i or mask == 0), softmax
// over the keys, then the weighted sum of the values.

// CHECK-LABEL: func.func @softmax_causal_masked
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[M:[a-z0-9]+]]: tensor<2x4xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[NEGINF:[a-z0-9_]+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:[a-z0-9_]+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[QH:[a-z0-9_]+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK-DAG: %[[KH:[a-z0-9_]+]] = tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK-DAG: %[[VH:[a-z0-9_]+]] = tensor.expand_shape %[[V]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK: %[[SCORES:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}}ins(%[[QH]], %[[KH]] : tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x2x4x4xf32>)
// CHECK: linalg.generic {{.*}}ins(%[[SCORES]], %[[M]] : tensor<2x2x4x4xf32>, tensor<2x4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sle, %[[J]], %[[I]]
// CHECK: %[[REAL:.*]] = arith.cmpf une
// CHECK: %[[ALLOWED:.*]] = arith.andi %[[CAUSAL]], %[[REAL]]
// CHECK: arith.select %[[ALLOWED]], %{{.*}}, %[[NEGINF]]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: %[[OUT:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[VH]] : tensor<2x2x4x4xf32>, tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x4x2x4xf32>)
// CHECK: %[[RES:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[RES]]
func.func @softmax_causal_masked(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>,
                                 %v: tensor<2x4x8xf32>, %m: tensor<2x4xf32>)
    -> tensor<2x4x8xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      mask(%m : tensor<2x4xf32>)
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %a : tensor<2x4x8xf32>
}

// -----

// Longformer: local rows see the dilated band |j - i| <= (w / 2) * r with
// (j - i) % r == 0, plus the global columns (a constant i1 vector); each
// global row is then recomputed as full attention through the global
// projections and inserted over the local result.

// CHECK-LABEL: func.func @longformer
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[GQ:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[GK:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[GV:[a-z0-9]+]]: tensor<1x8x8xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[DIL:[a-z0-9_]+]] = arith.constant 2 : index
// CHECK-DAG: %[[REACH:[a-z0-9_]+]] = arith.constant 4 : index
// CHECK-DAG: %[[NREACH:[a-z0-9_-]+]] = arith.constant -4 : index
// CHECK-DAG: %[[COLS:[a-z0-9_]+]] = arith.constant dense<[true, false, false, false, false, true, false, false]> : tensor<8xi1>
// CHECK: %[[SCORES:[0-9]+]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<1x2x8x8xf32>)
// CHECK: linalg.generic {{.*}}ins(%[[SCORES]], %[[COLS]] : tensor<1x2x8x8xf32>, tensor<8xi1>)
// CHECK: ^bb0(%{{.*}}: f32, %[[GLOBAL:.*]]: i1, %{{.*}}: f32):
// CHECK: %[[OFFSET:.*]] = arith.subi
// CHECK: arith.cmpi sge, %[[OFFSET]], %[[NREACH]]
// CHECK: arith.cmpi sle, %[[OFFSET]], %[[REACH]]
// CHECK: arith.remsi %[[OFFSET]], %[[DIL]]
// CHECK: %[[BAND:.*]] = arith.andi
// CHECK: arith.ori %[[BAND]], %[[GLOBAL]]
// CHECK: math.exp
// CHECK: %[[LOCAL:[0-9]+]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<1x8x2x4xf32>)
// CHECK-DAG: %[[GKH:[a-z0-9_]+]] = tensor.expand_shape %[[GK]]
// CHECK-DAG: %[[GVH:[a-z0-9_]+]] = tensor.expand_shape %[[GV]]
// CHECK: %[[ROW0:.*]] = tensor.extract_slice %[[GQ]][0, 0, 0] [1, 1, 8] [1, 1, 1]
// CHECK: %[[ROW0H:.*]] = tensor.expand_shape %[[ROW0]]
// CHECK: linalg.generic {{.*}}ins(%[[ROW0H]], %[[GKH]] : tensor<1x1x2x4xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x2x1x8xf32>)
// CHECK: %[[OUT0:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[GVH]] : tensor<1x2x1x8xf32>, tensor<1x8x2x4xf32>)
// CHECK: %[[INS0:.*]] = tensor.insert_slice %[[OUT0]] into %[[LOCAL]][0, 0, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[GQ]][0, 5, 0] [1, 1, 8] [1, 1, 1]
// CHECK: %[[INS5:.*]] = tensor.insert_slice %{{.*}} into %[[INS0]][0, 5, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1]
// CHECK: %[[RES:.*]] = tensor.collapse_shape %[[INS5]] {{\[}}[0], [1], [2, 3]] : tensor<1x8x2x4xf32> into tensor<1x8x8xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[RES]]
func.func @longformer(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                      %v: tensor<1x8x8xf32>, %gq: tensor<1x8x8xf32>,
                      %gk: tensor<1x8x8xf32>, %gv: tensor<1x8x8xf32>)
    -> tensor<1x8x8xf32> {
  %a = tfc.attention #tfc.longformer<window = 4, dilation = 2, global = [5, 0]>
      heads 2 %q, %k, %v
      global(%gq, %gk, %gv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>)
      : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return %a : tensor<1x8x8xf32>
}

// -----

// Non-causal Performer (f64): random features of queries (stabilised by the
// row max) and keys, the key/value state summed over all keys once, and the
// normalised read-out. No loop.

// CHECK-LABEL: func.func @performer
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x6x8xf64>, %[[W:[a-z0-9]+]]: tensor<16x4xf64>
// CHECK-NOT: tfc.
// CHECK-NOT: scf.for
// CHECK-DAG: %[[EPS:[a-z0-9_]+]] = arith.constant 9.9999999999999995E-7 : f64
// CHECK-DAG: %[[INSCALE:[a-z0-9_]+]] = arith.constant 0.70710678118654757 : f64
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[W]] : tensor<2x6x2x4xf64>, tensor<16x4xf64>) outs(%{{.*}} : tensor<2x6x2x16xf64>)
// CHECK: arith.mulf %{{.*}}, %[[INSCALE]]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[W]] : tensor<2x6x2x4xf64>, tensor<16x4xf64>) outs(%{{.*}} : tensor<2x6x2x16xf64>)
// CHECK: math.exp
// CHECK: %[[KV:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<2x2x16x4xf64>)
// CHECK: %[[Z:[0-9]+]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<2x2x16xf64>)
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[KV]] : tensor<2x6x2x16xf64>, tensor<2x2x16x4xf64>)
// CHECK: %[[DEN0:.*]] = linalg.fill ins(%[[EPS]] : f64)
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[Z]] : tensor<2x6x2x16xf64>, tensor<2x2x16xf64>) outs(%[[DEN0]] : tensor<2x6x2xf64>)
// CHECK: arith.divf
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<2x6x2x4xf64> into tensor<2x6x8xf64>
// CHECK-NOT: tfc.
// CHECK: return
func.func @performer(%x: tensor<2x6x8xf64>, %w: tensor<16x4xf64>)
    -> tensor<2x6x8xf64> {
  %a = tfc.attention #tfc.performer<features = 16, redraw = 1000, orthogonal>
      heads 2 %x, %x, %x features(%w : tensor<16x4xf64>)
      : tensor<2x6x8xf64>, tensor<2x6x8xf64>, tensor<2x6x8xf64> -> tensor<2x6x8xf64>
  return %a : tensor<2x6x8xf64>
}

// -----

// Causal Performer: an scf.for over positions carries the prefix-sum state
// (kv [B, H, M, Dh], z [B, H, M]) and the result; each step adds key i
// (features already multiplied by the padding mask), reads output row i
// into its slice of the result and inserts it.

// CHECK-LABEL: func.func @performer_causal
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x6x8xf32>, %[[W:[a-z0-9]+]]: tensor<16x4xf32>, %[[M:[a-z0-9]+]]: tensor<2x6xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:[a-z0-9_]+]] = arith.constant 1 : index
// CHECK-DAG: %[[C6:[a-z0-9_]+]] = arith.constant 6 : index
// CHECK: arith.maximumf
// CHECK: %[[PHIQ:[0-9]+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x2x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[PHIK:[0-9]+]] = linalg.generic {{.*}} ins(%{{.*}}, %[[M]] : tensor<2x6x2x16xf32>, tensor<2x6xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %[[KV0:[0-9]+]] = linalg.fill {{.*}} -> tensor<2x2x16x4xf32>
// CHECK: %[[Z0:[0-9]+]] = linalg.fill {{.*}} -> tensor<2x2x16xf32>
// CHECK: %[[R0:[0-9]+]] = tensor.empty() : tensor<2x6x2x4xf32>
// CHECK: %[[LOOP:[0-9]+]]:3 = scf.for %[[I:.*]] = %[[C0]] to %[[C6]] step %[[C1]]
// CHECK-SAME: iter_args(%[[KV:.*]] = %[[KV0]], %[[Z:.*]] = %[[Z0]], %[[R:.*]] = %[[R0]])
// CHECK-SAME: -> (tensor<2x2x16x4xf32>, tensor<2x2x16xf32>, tensor<2x6x2x4xf32>)
// CHECK: %[[KROW:.*]] = tensor.extract_slice %[[PHIK]][0, %[[I]], 0, 0] [2, 1, 2, 16] [1, 1, 1, 1]
// CHECK: %[[VROW:.*]] = tensor.extract_slice %{{.*}}[0, %[[I]], 0, 0] [2, 1, 2, 4] [1, 1, 1, 1]
// CHECK: %[[NKV:.*]] = linalg.generic {{.*}}ins(%[[KROW]], %[[VROW]] : tensor<2x1x2x16xf32>, tensor<2x1x2x4xf32>) outs(%[[KV]] : tensor<2x2x16x4xf32>)
// CHECK: %[[NZ:.*]] = linalg.generic {{.*}}ins(%[[KROW]] : tensor<2x1x2x16xf32>) outs(%[[Z]] : tensor<2x2x16xf32>)
// CHECK: %[[QROW:.*]] = tensor.extract_slice %[[PHIQ]][0, %[[I]], 0, 0] [2, 1, 2, 16] [1, 1, 1, 1]
// CHECK: %[[DEST:.*]] = tensor.extract_slice %[[R]][0, %[[I]], 0, 0] [2, 1, 2, 4] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}}ins(%[[QROW]], %[[NKV]] :
// CHECK: linalg.generic {{.*}}ins(%[[QROW]], %[[NZ]] :
// CHECK: %[[ROW:.*]] = linalg.generic {{.*}}outs(%[[DEST]] : tensor<2x1x2x4xf32>)
// CHECK: arith.divf
// CHECK: %[[NR:.*]] = tensor.insert_slice %[[ROW]] into %[[R]][0, %[[I]], 0, 0] [2, 1, 2, 4] [1, 1, 1, 1]
// CHECK: scf.yield %[[NKV]], %[[NZ]], %[[NR]]
// CHECK: %[[RES:.*]] = tensor.collapse_shape %[[LOOP]]#2 {{\[}}[0], [1], [2, 3]] : tensor<2x6x2x4xf32> into tensor<2x6x8xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[RES]]
func.func @performer_causal(%x: tensor<2x6x8xf32>, %w: tensor<16x4xf32>,
                            %m: tensor<2x6xf32>) -> tensor<2x6x8xf32> {
  %a = tfc.attention #tfc.performer<features = 16, redraw = 0, causal>
      heads 2 %x, %x, %x mask(%m : tensor<2x6xf32>) features(%w : tensor<16x4xf32>)
      : tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  return %a : tensor<2x6x8xf32>
}
