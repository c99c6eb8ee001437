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
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
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

// Non-causal Performer (f64): the random features are scaled once by
// Dh^(-1/4), so that both projections are plain multiply-add contractions,
// each one matrix product of the head-split rows [B S H, Dh] (batch-wide
// ops; the tensor cores' shape on the GPU), viewed back as [B, S, H, M];
// queries are stabilised by the row max of their projections; keys by
// |x'|^2 / 2 plus the max of the exponent over the whole sequence (the max
// over features less |x'|^2 / 2, reduced over positions and broadcast
// back); the key/value state is summed over all keys once (z with the
// feature dimension innermost) and read by every query; a denominator at
// most 1e-20 gives 0 instead of the quotient. No loop.

// CHECK-LABEL: func.func @performer
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x6x8xf64>, %[[W:[a-z0-9]+]]: tensor<16x4xf64>
// CHECK-NOT: tfc.
// CHECK-NOT: scf.for
// CHECK-DAG: %[[MIN:[a-z0-9_]+]] = arith.constant 9.9999999999999995E-21 : f64
// CHECK-DAG: %[[LOWEST:[a-z0-9_]+]] = arith.constant -1.7976931348623157E+308 : f64
// CHECK-DAG: %[[QUARTER:[a-z0-9_]+]] = arith.constant 2.500000e-01 : f64
// CHECK-DAG: %[[INSCALE:[a-z0-9_]+]] = arith.constant 0.70710678118654757 : f64
// CHECK: %[[SW:[0-9]+]] = linalg.generic {{.*}}ins(%[[W]] : tensor<16x4xf64>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf %{{.*}}, %[[INSCALE]]
// CHECK: %[[QPF:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<2x6x2x4xf64> into tensor<24x4xf64>
// CHECK: %[[QPM:[0-9]+]] = linalg.generic {{.*}}ins(%[[QPF]], %[[SW]] : tensor<24x4xf64>, tensor<16x4xf64>) outs(%{{.*}} : tensor<24x16xf64>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: %[[QP:.*]] = tensor.expand_shape %[[QPM]] {{\[}}[0, 1, 2], [3]] output_shape [2, 6, 2, 16] : tensor<24x16xf64> into tensor<2x6x2x16xf64>
// CHECK: %[[QMAX:[0-9]+]] = linalg.generic {{.*}}ins(%[[QP]] :
// CHECK: arith.maximumf
// CHECK: %[[PHIQ:[0-9]+]] = linalg.generic {{.*}}ins(%[[QP]], %[[QMAX]] :
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[KPF:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<2x6x2x4xf64> into tensor<24x4xf64>
// CHECK: %[[KPM:[0-9]+]] = linalg.generic {{.*}}ins(%[[KPF]], %[[SW]] : tensor<24x4xf64>, tensor<16x4xf64>) outs(%{{.*}} : tensor<24x16xf64>)
// CHECK: %[[KP:.*]] = tensor.expand_shape %[[KPM]] {{\[}}[0, 1, 2], [3]] output_shape [2, 6, 2, 16] : tensor<24x16xf64> into tensor<2x6x2x16xf64>
// CHECK: %[[HALF:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}} : tensor<2x6x2x4xf64>) outs(%{{.*}} : tensor<2x6x2xf64>)
// CHECK: arith.mulf %{{.*}}, %[[QUARTER]]
// CHECK: %[[KMAX:[0-9]+]] = linalg.generic {{.*}}ins(%[[KP]] :
// CHECK: arith.maximumf
// CHECK: %[[KROW:[0-9]+]] = linalg.generic {{.*}}ins(%[[KMAX]], %[[HALF]] :
// CHECK: arith.subf
// CHECK: %[[SEQ0:.*]] = linalg.fill ins(%[[LOWEST]] : f64) outs(%{{.*}} : tensor<2x2xf64>)
// CHECK: %[[SEQ:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[KROW]] : tensor<2x6x2xf64>) outs(%[[SEQ0]] : tensor<2x2xf64>)
// CHECK: arith.maximumf
// CHECK: %[[BCAST:[0-9]+]] = linalg.generic {{.*}}ins(%[[SEQ]] : tensor<2x2xf64>) outs(%{{.*}} : tensor<2x6x2xf64>)
// CHECK: %[[OFFSET:[0-9]+]] = linalg.generic {{.*}}ins(%[[HALF]], %[[BCAST]] :
// CHECK: arith.addf
// CHECK: %[[PHIK:[0-9]+]] = linalg.generic {{.*}}ins(%[[KP]], %[[OFFSET]] :
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[KV:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PHIK]], {{.*}}outs(%{{.*}} : tensor<2x2x16x4xf64>)
// CHECK: %[[Z:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[PHIK]] : {{.*}}outs(%{{.*}} : tensor<2x2x16xf64>)
// CHECK: %[[NUM:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIQ]], %[[KV]] : tensor<2x6x2x16xf64>, tensor<2x2x16x4xf64>)
// CHECK: %[[DEN:[0-9]+]] = linalg.generic {{.*}}ins(%[[PHIQ]], %[[Z]] : tensor<2x6x2x16xf64>, tensor<2x2x16xf64>)
// CHECK: %[[O:[0-9]+]] = linalg.generic {{.*}}ins(%[[NUM]], %[[DEN]] :
// CHECK-NEXT: ^bb0(%[[N:.*]]: f64, %[[D:.*]]: f64,
// CHECK-NEXT: %[[OK:.*]] = arith.cmpf ogt, %[[D]], %[[MIN]] : f64
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[N]], %[[D]] : f64
// CHECK-NEXT: arith.select %[[OK]], %[[Q]], %{{.*}} : f64
// CHECK: tensor.collapse_shape %[[O]] {{\[}}[0], [1], [2, 3]] : tensor<2x6x2x4xf64> into tensor<2x6x8xf64>
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

// Causal Performer by chunks: 6 positions make 2 chunks of 3 (views
// [B, NC, C, H, D]). The keys are stabilised by the running max of their
// exponent (masked keys left out): a masked max within each chunk, an
// exclusive max scan over chunks (an scf.forall over the other
// dimensions, each iteration carrying its own state through the chunks in
// an scf.for of scalars), so that row i's constant never sees a later
// key. The per-chunk key/value states (a contraction
// over the chunk, z with the feature dimension innermost) of the keys
// rescaled to the chunk's last stabiliser (the scale multiplies the values
// and weighs z's sum; no rescaled copy of the features is made) go through
// an exclusive scan over chunks of the same form, whose iteration writes
// its running state into chunk n before rescaling it by the chunk's decay
// and adding chunk n, and writes its column of chunks as one slice; the scores
// within each chunk are a contraction over features, rescaled by
// exp(min(c_j - c_i, 0)) and masked to j <= i; numerator and denominator
// add the within-chunk sums to the queries' reads of the prefix state,
// rescaled after the product.

// CHECK-LABEL: func.func @performer_causal
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x6x8xf32>, %[[W:[a-z0-9]+]]: tensor<16x4xf32>, %[[M:[a-z0-9]+]]: tensor<2x6xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[MIN:[a-z0-9_]+]] = arith.constant 9.99999968E-21 : f32
// CHECK-DAG: %[[LOWEST:[a-z0-9_]+]] = arith.constant -3.40282347E+38 : f32
// CHECK-DAG: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:[a-z0-9_]+]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:[a-z0-9_]+]] = arith.constant 2 : index
// CHECK-DAG: %[[ZERO:[a-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf
// CHECK: %[[PHIQ:[0-9]+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x2x16xf32>)
// CHECK: %[[KROW:[0-9]+]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[M]] : tensor<2x6x2xf32>, tensor<2x6x2xf32>, tensor<2x6xf32>)
// CHECK: arith.subf
// CHECK-NEXT: %[[MASKED:.*]] = arith.cmpf oeq, %{{.*}}, %[[ZERO]] : f32
// CHECK-NEXT: arith.select %[[MASKED]], %[[LOWEST]], %{{.*}} : f32
// CHECK: %[[KROWC:.*]] = tensor.expand_shape %[[KROW]] {{\[}}[0], [1, 2], [3]] output_shape [2, 2, 3, 2]
// CHECK: %[[WITHIN:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[KROWC]] : tensor<2x2x3x2xf32>)
// CHECK-DAG: %[[WI:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[WJ:.*]] = linalg.index 4 : index
// CHECK: %[[BEFORE:.*]] = arith.cmpi ule, %[[WJ]], %[[WI]] : index
// CHECK: arith.select %[[BEFORE]], %{{.*}}, %[[LOWEST]] : f32
// CHECK: arith.maximumf
// CHECK: %[[CMAX:[0-9]+]] = linalg.generic {{.*}}ins(%[[KROWC]] : tensor<2x2x3x2xf32>) outs(%{{.*}} : tensor<2x2x2xf32>)
// CHECK: %[[PMAX:[0-9]+]] = scf.forall (%{{.*}}, %{{.*}}) in (2, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<2x2x2xf32>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[LOWEST]], %{{.*}} = %{{.*}}) -> (f32, tensor<2xf32>)
// CHECK: tensor.extract %[[CMAX]]
// CHECK: arith.maximumf
// CHECK: %[[RMAX:[0-9]+]] = linalg.generic {{.*}}ins(%[[WITHIN]], %[[PMAX]] : tensor<2x2x3x2xf32>, tensor<2x2x2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK: %[[RMAXFLAT:.*]] = tensor.collapse_shape %[[RMAX]] {{\[}}[0], [1, 2], [3]] : tensor<2x2x3x2xf32> into tensor<2x6x2xf32>
// CHECK: %[[KOFF:[0-9]+]] = linalg.generic {{.*}}ins(%{{.*}}, %[[RMAXFLAT]] : tensor<2x6x2xf32>, tensor<2x6x2xf32>)
// CHECK: %[[PHIK:[0-9]+]] = linalg.generic {{.*}} ins(%{{.*}}, %[[KOFF]], %[[M]] : tensor<2x6x2x16xf32>, tensor<2x6x2xf32>, tensor<2x6xf32>)
// CHECK: math.exp
// CHECK: arith.select
// CHECK-DAG: %[[CQ:.*]] = tensor.expand_shape %[[PHIQ]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 2, 16]
// CHECK-DAG: %[[CK:.*]] = tensor.expand_shape %[[PHIK]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 2, 16]
// CHECK-DAG: %[[CV:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 2, 4]
// CHECK: %[[END:[0-9]+]] = linalg.generic {{.*}}ins(%[[RMAX]] : tensor<2x2x3x2xf32>) outs(%{{.*}} : tensor<2x2x2xf32>)
// CHECK: %[[START:[0-9]+]] = scf.forall
// CHECK: %[[QSCALE:[0-9]+]] = linalg.generic {{.*}}ins(%[[START]], %[[RMAX]] :
// CHECK: arith.subf
// CHECK-NEXT: arith.minimumf %{{.*}}, %[[ZERO]]
// CHECK-NEXT: math.exp
// CHECK: %[[KSCALE:[0-9]+]] = linalg.generic {{.*}}ins(%[[RMAX]], %[[END]] :
// CHECK: %[[DECAY:[0-9]+]] = linalg.generic {{.*}}ins(%[[START]], %[[END]] : tensor<2x2x2xf32>, tensor<2x2x2xf32>)
// CHECK-NOT: ins(%[[CQ]], %[[QSCALE]] :
// CHECK-NOT: ins(%[[CK]], %[[KSCALE]] :
// CHECK: %[[VSCALED:[0-9]+]] = linalg.generic {{.*}}ins(%[[CV]], %[[KSCALE]] : tensor<2x2x3x2x4xf32>, tensor<2x2x3x2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: %[[KV:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[CK]], %[[VSCALED]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2x16x4xf32>)
// CHECK: %[[Z:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[CK]], %[[KSCALE]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: %[[PKV:[0-9]+]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[FM:.*]], %[[FE:.*]]) in (2, 2, 16, 4) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<2x2x2x16x4xf32>)
// CHECK: %[[COLUMN:.*]]:2 = scf.for %[[N:.*]] = %[[C0]] to %[[C2]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZERO]], %[[OUTS:.*]] = %{{.*}}) -> (f32, tensor<2xf32>)
// CHECK: %[[INS:.*]] = tensor.insert %[[ACC]] into %[[OUTS]][%[[N]]] : tensor<2xf32>
// CHECK: %[[NEW:.*]] = tensor.extract %[[KV]][%[[B]], %[[N]], %[[H]], %[[FM]], %[[FE]]]
// CHECK: %[[F:.*]] = tensor.extract %[[DECAY]][%[[B]], %[[N]], %[[H]]]
// CHECK: %[[KEPT:.*]] = arith.mulf %[[ACC]], %[[F]] : f32
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[KEPT]], %[[NEW]] : f32
// CHECK: scf.yield %[[ADD]], %[[INS]]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[COLUMN]]#1 into %[[OUT]][%[[B]], 0, %[[H]], %[[FM]], %[[FE]]] [1, 2, 1, 1, 1] [1, 1, 1, 1, 1] : tensor<2xf32> into tensor<2x2x2x16x4xf32>
// CHECK: %[[PZ:[0-9]+]] = scf.forall
// CHECK: tensor.extract %[[Z]]
// CHECK: %[[S:[0-9]+]] = linalg.generic {{.*}}ins(%[[CQ]], %[[CK]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2x3x3xf32>)
// CHECK: %[[A:[0-9]+]] = linalg.generic {{.*}}ins(%[[S]], %[[RMAX]], %[[RMAX]] : tensor<2x2x2x3x3xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[CI:.*]]: f32, %[[CJ:.*]]: f32,
// CHECK-DAG: %[[I:.*]] = linalg.index 3 : index
// CHECK-DAG: %[[J:.*]] = linalg.index 4 : index
// CHECK: %[[KEEP:.*]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK: arith.subf %[[CJ]], %[[CI]] : f32
// CHECK-NEXT: arith.minimumf %{{.*}}, %[[ZERO]]
// CHECK-NEXT: math.exp
// CHECK: arith.select %[[KEEP]], %{{.*}}, %[[ZERO]] : f32
// CHECK: %[[NUM0:[0-9]+]] = linalg.generic {{.*}}ins(%[[CQ]], %[[PKV]] : {{.*}}) outs(%{{.*}} : tensor<2x2x3x2x4xf32>)
// CHECK: %[[NUM1:[0-9]+]] = linalg.generic {{.*}}ins(%[[NUM0]], %[[QSCALE]] : tensor<2x2x3x2x4xf32>, tensor<2x2x3x2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: %[[NUM:[0-9]+]] = linalg.generic {{.*}}ins(%[[A]], %[[CV]] : {{.*}}) outs(%[[NUM1]] : tensor<2x2x3x2x4xf32>)
// CHECK: %[[DEN0:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[DEN1:[0-9]+]] = linalg.generic {{.*}}ins(%[[CQ]], %[[PZ]] : {{.*}}) outs(%[[DEN0]] : tensor<2x2x3x2xf32>)
// CHECK: %[[DEN2:[0-9]+]] = linalg.generic {{.*}}ins(%[[DEN1]], %[[QSCALE]] : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: %[[DEN:[0-9]+]] = linalg.generic {{.*}}ins(%[[A]] : {{.*}}) outs(%[[DEN2]] : tensor<2x2x3x2xf32>)
// CHECK: %[[O:[0-9]+]] = linalg.generic {{.*}}ins(%[[NUM]], %[[DEN]] :
// CHECK: arith.cmpf ogt, %{{.*}}, %[[MIN]]
// CHECK-NEXT: arith.divf
// CHECK-NEXT: arith.select
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[O]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x3x2x4xf32> into tensor<2x6x2x4xf32>
// CHECK: %[[RES:.*]] = tensor.collapse_shape %[[FLAT]] {{\[}}[0], [1], [2, 3]] : tensor<2x6x2x4xf32> into tensor<2x6x8xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[RES]]
func.func @performer_causal(%x: tensor<2x6x8xf32>, %w: tensor<16x4xf32>,
                            %m: tensor<2x6xf32>) -> tensor<2x6x8xf32> {
  %a = tfc.attention #tfc.performer<features = 16, redraw = 0, causal>
      heads 2 %x, %x, %x mask(%m : tensor<2x6xf32>) features(%w : tensor<16x4xf32>)
      : tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  return %a : tensor<2x6x8xf32>
}

// -----

// Causal Performer whose length is no multiple of the chunk: 7 positions
// make 2 chunks of 4. The head-split queries, keys and values are
// zero-padded to 8 positions before the feature map, so that the features
// are computed at 8 positions and chunked as views (no padded copy of the
// features); the padding key comes after every real query, so causality
// hides it, and the result drops the padded row.

// CHECK-LABEL: func.func @performer_causal_padded
// CHECK-COUNT-3: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [2, 7, 2, 4] [1, 1, 1, 1] : tensor<2x7x2x4xf32> into tensor<2x8x2x4xf32>
// CHECK-NOT: tensor.insert_slice {{.*}} into tensor<2x8x2x16xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 2, 16] : tensor<2x8x2x16xf32> into tensor<2x2x4x2x16xf32>
// CHECK: scf.for
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x4x2x4xf32> into tensor<2x8x2x4xf32>
// CHECK: %[[CUT:.*]] = tensor.extract_slice %[[FLAT]][0, 0, 0, 0] [2, 7, 2, 4] [1, 1, 1, 1] : tensor<2x8x2x4xf32> to tensor<2x7x2x4xf32>
// CHECK: tensor.collapse_shape %[[CUT]]
func.func @performer_causal_padded(%x: tensor<2x7x8xf32>, %w: tensor<16x4xf32>)
    -> tensor<2x7x8xf32> {
  %a = tfc.attention #tfc.performer<features = 16, redraw = 0, causal>
      heads 2 %x, %x, %x features(%w : tensor<16x4xf32>)
      : tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32> -> tensor<2x7x8xf32>
  return %a : tensor<2x7x8xf32>
}
