// RUN: tfc-opt %s -split-input-file --tfc-lower-to-linalg | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-lower-to-linalg --cse | FileCheck %s --check-prefix=SHARED
// RUN: tfc-opt %s -split-input-file --tfc-lower-to-linalg="recompute-attention" --cse | FileCheck %s --check-prefix=RECOMPUTE

// Softmax attention gradients, causal, with a padding mask: the attention
// weights P are recomputed exactly as in the forward (scores, causal and
// padding mask, softmax), then dV = P^T dO, dP = dO V^T,
// dS = scale * P * (dP - rowsum(dP * P)), dQ = dS K and dK = dS^T Q.

// CHECK-LABEL: func.func @softmax_causal_masked
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[M:[a-z0-9]+]]: tensor<2x4xf32>, %[[G:[a-z0-9]+]]: tensor<2x4x8xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[SCALE:[a-z0-9_]+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[QH:[a-z0-9_]+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK-DAG: %[[KH:[a-z0-9_]+]] = tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK-DAG: %[[VH:[a-z0-9_]+]] = tensor.expand_shape %[[V]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK-DAG: %[[GH:[a-z0-9_]+]] = tensor.expand_shape %[[G]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK: %[[SCORES:[0-9]+]] = linalg.generic {{.*}}ins(%[[QH]], %[[KH]] : tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x2x4x4xf32>)
// CHECK: linalg.generic {{.*}}ins(%[[SCORES]], %[[M]] : tensor<2x2x4x4xf32>, tensor<2x4xf32>)
// CHECK: arith.cmpi sle
// CHECK: arith.cmpf une
// CHECK: math.exp
// CHECK: %[[P:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<2x2x4x4xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x2x4x4xf32>)
// CHECK: arith.divf
// CHECK: %[[DV:[0-9]+]] = linalg.generic {{.*}}ins(%[[P]], %[[GH]] : tensor<2x2x4x4xf32>, tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x4x2x4xf32>)
// CHECK: %[[DP:[0-9]+]] = linalg.generic {{.*}}ins(%[[GH]], %[[VH]] : tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x2x4x4xf32>)
// CHECK: %[[ROW:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}}ins(%[[P]], %[[DP]] : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) outs(%{{.*}} : tensor<2x2x4xf32>)
// CHECK: %[[DS:[0-9]+]] = linalg.generic {{.*}}ins(%[[P]], %[[DP]], %[[ROW]] :
// CHECK: %[[CENTRED:.*]] = arith.subf
// CHECK: %[[WEIGHTED:.*]] = arith.mulf %{{.*}}, %[[CENTRED]]
// CHECK: arith.mulf %[[WEIGHTED]], %[[SCALE]]
// CHECK: %[[DQ:[0-9]+]] = linalg.generic {{.*}}ins(%[[DS]], %[[KH]] : tensor<2x2x4x4xf32>, tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x4x2x4xf32>)
// CHECK: %[[DK:[0-9]+]] = linalg.generic {{.*}}ins(%[[DS]], %[[QH]] : tensor<2x2x4x4xf32>, tensor<2x4x2x4xf32>) outs(%{{.*}} : tensor<2x4x2x4xf32>)
// CHECK-DAG: %[[RQ:.*]] = tensor.collapse_shape %[[DQ]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK-DAG: %[[RK:.*]] = tensor.collapse_shape %[[DK]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK-DAG: %[[RV:.*]] = tensor.collapse_shape %[[DV]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[RQ]], %[[RK]], %[[RV]]
func.func @softmax_causal_masked(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>,
                                 %v: tensor<2x4x8xf32>, %m: tensor<2x4xf32>,
                                 %g: tensor<2x4x8xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      mask(%m : tensor<2x4xf32>) grad %g
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
      -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return %dq, %dk, %dv : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Longformer with global tokens [5, 0]: the output gradient of the global
// rows is zeroed for the local (band + global columns) attention, whose
// gradients go to query, key and value. Each global row is then
// differentiated as a one-row attention through the global projections:
// its query gradient is inserted into that row of d(global_query), and its
// key and value gradients accumulate into d(global_key) and
// d(global_value) over the global rows.

// CHECK-LABEL: func.func @longformer
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[GQ:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[GK:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[GV:[a-z0-9]+]]: tensor<1x8x8xf32>, %[[G:[a-z0-9]+]]: tensor<1x8x8xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[ZERO:[a-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[FLAGS:[a-z0-9_]+]] = arith.constant dense<[true, false, false, false, false, true, false, false]> : tensor<8xi1>
// CHECK-DAG: %[[GH:[a-z0-9_]+]] = tensor.expand_shape %[[G]]
// CHECK: %[[LOCALG:[0-9]+]] = linalg.generic {{.*}}ins(%[[GH]], %[[FLAGS]] : tensor<1x8x2x4xf32>, tensor<8xi1>) outs(%{{.*}} : tensor<1x8x2x4xf32>)
// CHECK: ^bb0(%[[GIN:.*]]: f32, %[[ISGLOBAL:.*]]: i1, %{{.*}}: f32):
// CHECK: arith.select %[[ISGLOBAL]], %[[ZERO]], %[[GIN]] : f32
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[FLAGS]] : tensor<1x2x8x8xf32>, tensor<8xi1>)
// CHECK: arith.remsi
// CHECK: arith.ori
// CHECK: %[[LDV:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[LOCALG]] : tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x8x2x4xf32>)
// CHECK: linalg.generic {{.*}}ins(%[[LOCALG]], %{{.*}} : tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x2x8x8xf32>)
// CHECK: %[[LDQ:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x8x2x4xf32>)
// CHECK: %[[LDK:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x8x2x4xf32>)
// CHECK-DAG: %[[RQ:.*]] = tensor.collapse_shape %[[LDQ]]
// CHECK-DAG: %[[RK:.*]] = tensor.collapse_shape %[[LDK]]
// CHECK-DAG: %[[RV:.*]] = tensor.collapse_shape %[[LDV]]
// CHECK-DAG: %[[GQH:[a-z0-9_]+]] = tensor.expand_shape %[[GQ]]
// CHECK-DAG: %[[GKH:[a-z0-9_]+]] = tensor.expand_shape %[[GK]]
// CHECK-DAG: %[[GVH:[a-z0-9_]+]] = tensor.expand_shape %[[GV]]
// CHECK: %[[Q0:.*]] = tensor.extract_slice %[[GQH]][0, 0, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1]
// CHECK: %[[G0:.*]] = tensor.extract_slice %[[GH]][0, 0, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}}ins(%[[Q0]], %[[GKH]] : tensor<1x1x2x4xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x2x1x8xf32>)
// CHECK: %[[DGV0:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[G0]] : tensor<1x2x1x8xf32>, tensor<1x1x2x4xf32>) outs(%{{.*}} : tensor<1x8x2x4xf32>)
// CHECK: linalg.generic {{.*}}ins(%[[G0]], %[[GVH]] : tensor<1x1x2x4xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x2x1x8xf32>)
// CHECK: %[[DGQ0:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[GKH]] : tensor<1x2x1x8xf32>, tensor<1x8x2x4xf32>) outs(%{{.*}} : tensor<1x1x2x4xf32>)
// CHECK: %[[DGK0:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[Q0]] : tensor<1x2x1x8xf32>, tensor<1x1x2x4xf32>) outs(%{{.*}} : tensor<1x8x2x4xf32>)
// CHECK: %[[INS0:.*]] = tensor.insert_slice %[[DGQ0]] into %{{.*}}[0, 0, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[GQH]][0, 5, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1]
// CHECK: %[[DGV:[0-9]+]] = linalg.generic {{.*}}outs(%[[DGV0]] : tensor<1x8x2x4xf32>)
// CHECK: %[[DGQ5:[0-9]+]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<1x1x2x4xf32>)
// CHECK: %[[DGK:[0-9]+]] = linalg.generic {{.*}}outs(%[[DGK0]] : tensor<1x8x2x4xf32>)
// CHECK: %[[DGQ:.*]] = tensor.insert_slice %[[DGQ5]] into %[[INS0]][0, 5, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1]
// CHECK-DAG: %[[RGQ:.*]] = tensor.collapse_shape %[[DGQ]]
// CHECK-DAG: %[[RGK:.*]] = tensor.collapse_shape %[[DGK]]
// CHECK-DAG: %[[RGV:.*]] = tensor.collapse_shape %[[DGV]]
// CHECK-NOT: tfc.
// CHECK: return %[[RQ]], %[[RK]], %[[RV]], %[[RGQ]], %[[RGK]], %[[RGV]]
func.func @longformer(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                      %v: tensor<1x8x8xf32>, %gq: tensor<1x8x8xf32>,
                      %gk: tensor<1x8x8xf32>, %gv: tensor<1x8x8xf32>,
                      %g: tensor<1x8x8xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>,
        tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %r:6 = tfc.attention_grad
      #tfc.longformer<window = 4, dilation = 2, global = [5, 0]> heads 2
      %q, %k, %v
      global(%gq, %gk, %gv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>)
      grad %g
      : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
      -> tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>,
         tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5
      : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>,
        tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// -----

// Non-causal Performer (f64): no loop. The features are recomputed as in
// the forward (projections by the features scaled by Dh^(-1/4), keys
// stabilised by the max over the sequence); the state kv, z is recomputed
// over all keys; dNum = dO / den, dDen = -sum dO * num / den^2, both 0
// where den <= 1e-20 (the forward gives 0 there); the query features'
// gradient reads the state, the keys' reads the state gradient summed over
// all queries. Through the feature map, dE = dPhi * phi, the stabilisers
// held constant (the output does not depend on them): queries
// dx = dE (s W), the |x'|^2 / 2 terms cancelling; keys
// dx = dE (s W) - s^2 * x * sum dE.

// CHECK-LABEL: func.func @performer
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x6x8xf64>, %[[W:[a-z0-9]+]]: tensor<16x4xf64>, %[[G:[a-z0-9]+]]: tensor<2x6x8xf64>
// CHECK-NOT: tfc.
// CHECK-NOT: scf.for
// CHECK-DAG: %[[NEGSQ:[a-z0-9_]+]] = arith.constant -5.000000e-01 : f64
// CHECK-DAG: %[[MIN:[a-z0-9_]+]] = arith.constant 9.9999999999999995E-21 : f64
// CHECK-DAG: %[[INSCALE:[a-z0-9_]+]] = arith.constant 0.70710678118654757 : f64
// CHECK-DAG: %[[GH:[a-z0-9_]+]] = tensor.expand_shape %[[G]]
// CHECK: %[[SW:[0-9]+]] = linalg.generic {{.*}}ins(%[[W]] : tensor<16x4xf64>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf %{{.*}}, %[[INSCALE]]
// CHECK: %[[QPF:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<2x6x2x4xf64> into tensor<24x4xf64>
// CHECK: %[[QPM:[0-9]+]] = linalg.generic {{.*}}ins(%[[QPF]], %[[SW]] : tensor<24x4xf64>, tensor<16x4xf64>) outs(%{{.*}} : tensor<24x16xf64>)
// CHECK: %[[QP:.*]] = tensor.expand_shape %[[QPM]] {{\[}}[0, 1, 2], [3]] output_shape [2, 6, 2, 16] : tensor<24x16xf64> into tensor<2x6x2x16xf64>
// CHECK: %[[QMAX:[0-9]+]] = linalg.generic {{.*}}ins(%[[QP]] : tensor<2x6x2x16xf64>) outs(%{{.*}} : tensor<2x6x2xf64>)
// CHECK: arith.maximumf
// CHECK: %[[PHIQ:[0-9]+]] = linalg.generic {{.*}}ins(%[[QP]], %[[QMAX]] : tensor<2x6x2x16xf64>, tensor<2x6x2xf64>)
// CHECK: math.exp
// CHECK: %[[KPF:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<2x6x2x4xf64> into tensor<24x4xf64>
// CHECK: %[[KPM:[0-9]+]] = linalg.generic {{.*}}ins(%[[KPF]], %[[SW]] : tensor<24x4xf64>, tensor<16x4xf64>) outs(%{{.*}} : tensor<24x16xf64>)
// CHECK: %[[KP:.*]] = tensor.expand_shape %[[KPM]] {{\[}}[0, 1, 2], [3]] output_shape [2, 6, 2, 16] : tensor<24x16xf64> into tensor<2x6x2x16xf64>
// CHECK: %[[KSEQ:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x6x2xf64>) outs(%{{.*}} : tensor<2x2xf64>)
// CHECK: %[[PHIK:[0-9]+]] = linalg.generic {{.*}}ins(%[[KP]], %{{.*}} : tensor<2x6x2x16xf64>, tensor<2x6x2xf64>) outs(%{{.*}} : tensor<2x6x2x16xf64>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[KV:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIK]], %{{.*}} : tensor<2x6x2x16xf64>, tensor<2x6x2x4xf64>) outs(%{{.*}} : tensor<2x2x16x4xf64>)
// CHECK: %[[Z:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIK]] : tensor<2x6x2x16xf64>) outs(%{{.*}} : tensor<2x2x16xf64>)
// CHECK: %[[NUM:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIQ]], %[[KV]] :
// CHECK: %[[DEN:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIQ]], %[[Z]] :
// CHECK: %[[DNUM:[0-9]+]] = linalg.generic {{.*}}ins(%[[GH]], %[[DEN]] : tensor<2x6x2x4xf64>, tensor<2x6x2xf64>)
// CHECK: arith.divf
// CHECK-NEXT: arith.cmpf ogt, %{{.*}}, %[[MIN]]
// CHECK-NEXT: arith.select
// CHECK: %[[DDEN:[0-9]+]] = linalg.generic {{.*}}ins(%[[GH]], %[[NUM]], %[[DEN]] :
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK-NEXT: arith.cmpf ogt, %{{.*}}, %[[MIN]]
// CHECK-NEXT: arith.select
// CHECK: %[[DPHIQ0:[0-9]+]] = linalg.generic {{.*}}ins(%[[DDEN]], %[[Z]] :
// CHECK: %[[DPHIQ:[0-9]+]] = linalg.generic {{.*}}ins(%[[DNUM]], %[[KV]] : tensor<2x6x2x4xf64>, tensor<2x2x16x4xf64>) outs(%[[DPHIQ0]] : tensor<2x6x2x16xf64>)
// CHECK: %[[DKV:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIQ]], %[[DNUM]] : tensor<2x6x2x16xf64>, tensor<2x6x2x4xf64>) outs(%{{.*}} : tensor<2x2x16x4xf64>)
// CHECK: %[[DZ:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIQ]], %[[DDEN]] : tensor<2x6x2x16xf64>, tensor<2x6x2xf64>) outs(%{{.*}} : tensor<2x2x16xf64>)
// CHECK: %[[DPHIK0:[0-9]+]] = linalg.generic {{.*}}ins(%[[DZ]] : tensor<2x2x16xf64>) outs(%{{.*}} : tensor<2x6x2x16xf64>)
// CHECK: %[[DPHIK:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[DKV]] : tensor<2x6x2x4xf64>, tensor<2x2x16x4xf64>) outs(%[[DPHIK0]] : tensor<2x6x2x16xf64>)
// CHECK: %[[DV:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIK]], %[[DKV]] : tensor<2x6x2x16xf64>, tensor<2x2x16x4xf64>) outs(%{{.*}} : tensor<2x6x2x4xf64>)
// CHECK: %[[DEQ:[0-9]+]] = linalg.generic {{.*}}ins(%[[DPHIQ]], %[[PHIQ]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK: %[[DQ0:.*]] = linalg.fill
// CHECK-NEXT: %[[DQ:[0-9]+]] = linalg.generic {{.*}}ins(%[[DEQ]], %[[SW]] : tensor<2x6x2x16xf64>, tensor<16x4xf64>) outs(%[[DQ0]] : tensor<2x6x2x4xf64>)
// CHECK: %[[DEK:[0-9]+]] = linalg.generic {{.*}}ins(%[[DPHIK]], %[[PHIK]] :
// CHECK-NOT: arith.cmpf oeq
// CHECK: %[[SUMK:[0-9]+]] = linalg.generic {{.*}}ins(%[[DEK]] :
// CHECK: %[[NORMK:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[SUMK]] :
// CHECK: arith.mulf %{{.*}}, %[[NEGSQ]]
// CHECK: %[[DK:[0-9]+]] = linalg.generic {{.*}}ins(%[[DEK]], %[[SW]] : tensor<2x6x2x16xf64>, tensor<16x4xf64>) outs(%[[NORMK]] : tensor<2x6x2x4xf64>)
// CHECK-DAG: %[[RQ:.*]] = tensor.collapse_shape %[[DQ]]
// CHECK-DAG: %[[RK:.*]] = tensor.collapse_shape %[[DK]]
// CHECK-DAG: %[[RV:.*]] = tensor.collapse_shape %[[DV]]
// CHECK-NOT: tfc.
// CHECK: return %[[RQ]], %[[RK]], %[[RV]]
func.func @performer(%x: tensor<2x6x8xf64>, %w: tensor<16x4xf64>,
                     %g: tensor<2x6x8xf64>)
    -> (tensor<2x6x8xf64>, tensor<2x6x8xf64>, tensor<2x6x8xf64>) {
  %dq, %dk, %dv = tfc.attention_grad
      #tfc.performer<features = 16, redraw = 1000, orthogonal> heads 2
      %x, %x, %x features(%w : tensor<16x4xf64>) grad %g
      : tensor<2x6x8xf64>, tensor<2x6x8xf64>, tensor<2x6x8xf64>
      -> tensor<2x6x8xf64>, tensor<2x6x8xf64>, tensor<2x6x8xf64>
  return %dq, %dk, %dv : tensor<2x6x8xf64>, tensor<2x6x8xf64>, tensor<2x6x8xf64>
}

// -----

// Causal Performer with a padding mask, by chunks (2 chunks of 3): the
// forward's keys' running maxima, rescaling constants, chunk states,
// decayed exclusive prefix scans and masked scores A are recomputed, then
// num and den. From dNum and dDen: dS = (dNum v^T + dDen) rescaled by
// exp(min(c_j - c_i, 0)) and masked to j <= i; with the query scale g
// applied to dNum and dDen (never to the M-wide features), dPhiQ =
// (g dDen) z + (g dNum) kv^T + dS phiK; the per-chunk state gradients
// (phiQ^T (g dNum), phiQ^T (g dDen)) go through reverse exclusive scans
// with the forward's decay (chunk n gets the decayed sums over the chunks
// after it, the scf.for running n = NC - 1 - t); with the key scale a,
// dPhiK = a dZs + (a v) dS^T + dS^T phiQ (the rescaled values a v being
// the forward's, built once) and dV = a (phiK dS) + A^T dNum.

// CHECK-LABEL: func.func @performer_causal
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x6x8xf32>, %[[W:[a-z0-9]+]]: tensor<16x4xf32>, %[[M:[a-z0-9]+]]: tensor<2x6xf32>, %[[G:[a-z0-9]+]]: tensor<2x6x8xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[LAST:[a-z0-9_]+]] = arith.constant 1 : index
// CHECK-DAG: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:[a-z0-9_]+]] = arith.constant 2 : index
// CHECK: %[[PHIK:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %{{.*}}, %[[M]] : tensor<2x6x2x16xf32>, tensor<2x6x2xf32>, tensor<2x6xf32>)
// CHECK-DAG: %[[CQ:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 2, 16]
// CHECK-DAG: %[[CK:.*]] = tensor.expand_shape %[[PHIK]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 2, 16]
// CHECK-DAG: %[[CV:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 2, 4]
// CHECK: %[[START:[0-9]+]] = scf.forall
// CHECK: %[[QSCALE:[0-9]+]] = linalg.generic {{.*}}ins(%[[START]], %[[RMAX:[0-9]+]] :
// CHECK: %[[KSCALE:[0-9]+]] = linalg.generic {{.*}}ins(%[[RMAX]], %{{.*}} :
// CHECK: %[[DECAY:[0-9]+]] = linalg.generic {{.*}}ins(%[[START]], %{{.*}} : tensor<2x2x2xf32>, tensor<2x2x2xf32>)
// CHECK-NOT: ins(%[[CQ]], %[[QSCALE]] :
// CHECK-NOT: ins(%[[CK]], %[[KSCALE]] :
// CHECK: %[[VS0:[0-9]+]] = linalg.generic {{.*}}ins(%[[CV]], %[[KSCALE]] :
// CHECK: linalg.generic {{.*}}ins(%[[CK]], %[[VS0]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2x16x4xf32>)
// CHECK: linalg.generic {{.*}}ins(%[[CK]], %[[KSCALE]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2x16xf32>)
// CHECK: %[[KV:[0-9]+]] = scf.forall
// CHECK: %[[Z:[0-9]+]] = scf.forall
// CHECK: %[[S:[0-9]+]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<2x2x2x3x3xf32>)
// CHECK: %[[A:[0-9]+]] = linalg.generic {{.*}}ins(%[[S]], %[[RMAX]], %[[RMAX]] : tensor<2x2x2x3x3xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>)
// CHECK: linalg.index 3
// CHECK: %[[NUM0:[0-9]+]] = linalg.generic {{.*}}ins(%[[CQ]], %[[KV]] :
// CHECK: %[[NUM1:[0-9]+]] = linalg.generic {{.*}}ins(%[[NUM0]], %[[QSCALE]] :
// CHECK: %[[NUM:[0-9]+]] = linalg.generic {{.*}}ins(%[[A]], %[[CV]] : {{.*}}) outs(%[[NUM1]] : tensor<2x2x3x2x4xf32>)
// CHECK: %[[DEN0:[0-9]+]] = linalg.generic {{.*}}ins(%[[CQ]], %[[Z]] :
// CHECK: %[[DEN1:[0-9]+]] = linalg.generic {{.*}}ins(%[[DEN0]], %[[QSCALE]] :
// CHECK: %[[DEN:[0-9]+]] = linalg.generic {{.*}}ins(%[[A]] : {{.*}}) outs(%[[DEN1]] : tensor<2x2x3x2xf32>)
// CHECK: %[[DNUM:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[DEN]] : tensor<2x2x3x2x4xf32>, tensor<2x2x3x2xf32>)
// CHECK: %[[DDEN:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[NUM]], %[[DEN]] :
// CHECK: %[[DA0:[0-9]+]] = linalg.generic {{.*}}ins(%[[DNUM]], %[[CV]] : tensor<2x2x3x2x4xf32>, tensor<2x2x3x2x4xf32>) outs(%{{.*}} : tensor<2x2x2x3x3xf32>)
// CHECK: %[[DA:[0-9]+]] = linalg.generic {{.*}}ins(%[[DA0]], %[[DDEN]] :
// CHECK: %[[DS:[0-9]+]] = linalg.generic {{.*}}ins(%[[DA]], %[[RMAX]], %[[RMAX]] :
// CHECK: arith.cmpi ule
// CHECK: math.exp
// CHECK: %[[GDNUM:[0-9]+]] = linalg.generic {{.*}}ins(%[[DNUM]], %[[QSCALE]] : tensor<2x2x3x2x4xf32>, tensor<2x2x3x2xf32>)
// CHECK: %[[GDDEN:[0-9]+]] = linalg.generic {{.*}}ins(%[[DDEN]], %[[QSCALE]] : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>)
// CHECK: %[[DQ0:[0-9]+]] = linalg.generic {{.*}}ins(%[[GDDEN]], %[[Z]] :
// CHECK: %[[DQ1:[0-9]+]] = linalg.generic {{.*}}ins(%[[GDNUM]], %[[KV]] : {{.*}}) outs(%[[DQ0]] :
// CHECK: %[[DQ:[0-9]+]] = linalg.generic {{.*}}ins(%[[DS]], %[[CK]] : {{.*}}) outs(%[[DQ1]] :
// CHECK: %[[DKV:[0-9]+]] = linalg.generic {{.*}}ins(%[[CQ]], %[[GDNUM]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2x16x4xf32>)
// CHECK: %[[DZ:[0-9]+]] = linalg.generic {{.*}}ins(%[[CQ]], %[[GDDEN]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2x16xf32>)
// CHECK: %[[DSUM:[0-9]+]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[FM:.*]], %[[FE:.*]]) in (2, 2, 16, 4)
// CHECK: scf.for %[[T:.*]] = %[[C0]] to %[[C2]]
// CHECK: %[[N:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK: tensor.insert %{{.*}} into %{{.*}}[%[[N]]] : tensor<2xf32>
// CHECK: tensor.extract %[[DKV]][%[[B]], %[[N]], %[[H]], %[[FM]], %[[FE]]]
// CHECK: tensor.extract %[[DECAY]][%[[B]], %[[N]], %[[H]]]
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: %[[DZS:[0-9]+]] = scf.forall
// CHECK: tensor.extract %[[DZ]]
// CHECK-NOT: ins(%[[CV]], %[[KSCALE]] :
// CHECK: %[[DK0:[0-9]+]] = linalg.generic {{.*}}ins(%[[KSCALE]], %[[DZS]] :
// CHECK: %[[DK1:[0-9]+]] = linalg.generic {{.*}}ins(%[[VS0]], %[[DSUM]] : {{.*}}) outs(%[[DK0]] :
// CHECK: %[[DK:[0-9]+]] = linalg.generic {{.*}}ins(%[[DS]], %[[CQ]] : {{.*}}) outs(%[[DK1]] :
// CHECK: %[[DV0:[0-9]+]] = linalg.generic {{.*}}ins(%[[CK]], %[[DSUM]] :
// CHECK: %[[DV1:[0-9]+]] = linalg.generic {{.*}}ins(%[[DV0]], %[[KSCALE]] :
// CHECK: %[[DV:[0-9]+]] = linalg.generic {{.*}}ins(%[[A]], %[[DNUM]] : {{.*}}) outs(%[[DV1]] :
// CHECK-DAG: tensor.collapse_shape %[[DQ]] {{\[}}[0], [1, 2], [3], [4]]
// CHECK-DAG: tensor.collapse_shape %[[DK]] {{\[}}[0], [1, 2], [3], [4]]
// CHECK-DAG: tensor.collapse_shape %[[DV]] {{\[}}[0], [1, 2], [3], [4]]
// CHECK-NOT: tfc.
// CHECK: return
func.func @performer_causal(%x: tensor<2x6x8xf32>, %w: tensor<16x4xf32>,
                            %m: tensor<2x6xf32>, %g: tensor<2x6x8xf32>)
    -> (tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>) {
  %dq, %dk, %dv = tfc.attention_grad
      #tfc.performer<features = 16, redraw = 0, causal> heads 2 %x, %x, %x
      mask(%m : tensor<2x6xf32>) features(%w : tensor<16x4xf32>) grad %g
      : tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>
      -> tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>
  return %dq, %dk, %dv : tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>
}

// -----

// The gradient of a causal Performer whose 7 positions make 2 chunks of 4:
// the head-split queries, keys, values, output gradient and key mask are
// padded to 8 positions (zeros) before the features are built, as the
// forward pads them, and the three gradients drop the padded row.

// CHECK-LABEL: func.func @performer_causal_padded
// CHECK-COUNT-4: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [2, 7, 2, 4] [1, 1, 1, 1] : tensor<2x7x2x4xf32> into tensor<2x8x2x4xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [2, 7] [1, 1] : tensor<2x7xf32> into tensor<2x8xf32>
// CHECK-NOT: tensor.insert_slice {{.*}} into tensor<2x8x2x16xf32>
// CHECK: scf.for
// CHECK-COUNT-3: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 7, 2, 4] [1, 1, 1, 1] : tensor<2x8x2x4xf32> to tensor<2x7x2x4xf32>
// CHECK: return
func.func @performer_causal_padded(%x: tensor<2x7x8xf32>, %w: tensor<16x4xf32>,
                                   %m: tensor<2x7xf32>, %g: tensor<2x7x8xf32>)
    -> (tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>) {
  %dq, %dk, %dv = tfc.attention_grad
      #tfc.performer<features = 16, redraw = 0, causal> heads 2 %x, %x, %x
      mask(%m : tensor<2x7xf32>) features(%w : tensor<16x4xf32>) grad %g
      : tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>
      -> tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>
  return %dq, %dk, %dv : tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>
}

// -----

// A causal Performer's forward and gradient in one function, after CSE. By
// default the gradient rebuilds the features with the forward's own ops, so
// CSE leaves one projection of the queries and one of the keys (each one
// matrix product of the [B S H, Dh] rows, batch-wide), shared by
// both (the forward's features live until the gradient reads them). With
// recompute-attention the gradient projects through the transposed feature
// matrix: two more projections, which CSE keeps apart, and everything the
// gradient derives from them is its own.

// SHARED-LABEL: func.func @performer_forward_and_grad
// SHARED-COUNT-2: linalg.generic {{.*}}tensor<24x4xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<24x16xf32>)
// SHARED-NOT: linalg.transpose
// SHARED-NOT: tensor<16x4xf32>) outs(%{{.*}} : tensor<24x16xf32>)
// SHARED: return

// RECOMPUTE-LABEL: func.func @performer_forward_and_grad
// RECOMPUTE-COUNT-2: linalg.generic {{.*}}tensor<24x4xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<24x16xf32>)
// RECOMPUTE: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<16x4xf32>) outs(%{{.*}} : tensor<4x16xf32>) permutation = [1, 0]
// RECOMPUTE-COUNT-2: linalg.generic {{.*}}ins(%{{.*}}, %[[T]] : tensor<24x4xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<24x16xf32>)
// RECOMPUTE-NOT: tensor<16x4xf32>) outs(%{{.*}} : tensor<24x16xf32>)
// RECOMPUTE: return
func.func @performer_forward_and_grad(%q: tensor<2x6x8xf32>,
                                      %k: tensor<2x6x8xf32>,
                                      %v: tensor<2x6x8xf32>,
                                      %w: tensor<16x4xf32>,
                                      %g: tensor<2x6x8xf32>)
    -> (tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>,
        tensor<2x6x8xf32>) {
  %a = tfc.attention #tfc.performer<features = 16, redraw = 0, causal>
      heads 2 %q, %k, %v features(%w : tensor<16x4xf32>)
      : tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  %dq, %dk, %dv = tfc.attention_grad
      #tfc.performer<features = 16, redraw = 0, causal> heads 2 %q, %k, %v
      features(%w : tensor<16x4xf32>) grad %g
      : tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>
      -> tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>
  return %a, %dq, %dk, %dv
      : tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>
}
