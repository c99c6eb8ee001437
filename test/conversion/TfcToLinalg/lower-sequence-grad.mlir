// RUN: tfc-opt %s -split-input-file --tfc-lower-to-linalg | FileCheck %s

// Depth-wise convolution gradients: dx reads dy ahead (padded behind by
// kernel - 1) against the taps; dw reduces dy against x padded in front over
// batch and positions; dbias sums dy over batch and positions.

// CHECK-DAG: #[[$AHEAD:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 + d3, d2)>
// CHECK-DAG: #[[$TAPS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[$DY:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>
// CHECK-DAG: #[[$BEHIND:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3 - d0 + 2, d1)>
// CHECK-LABEL: func.func @dconv_grad
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x6xf32>, %[[W:[a-z0-9]+]]: tensor<3x2x3xf32>, %[[DY:[a-z0-9]+]]: tensor<2x8x6xf32>
// CHECK-NOT: tfc.
// CHECK: %[[TAP:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2]] : tensor<3x2x3xf32> into tensor<3x6xf32>
// CHECK: %[[DYPAD:.*]] = tensor.pad %[[DY]] low[0, 0, 0] high[0, 2, 0]
// CHECK: tensor<2x8x6xf32> to tensor<2x10x6xf32>
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[$AHEAD]], #[[$TAPS]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[DYPAD]], %[[TAP]] : tensor<2x10x6xf32>, tensor<3x6xf32>) outs(%{{.*}} : tensor<2x8x6xf32>)
// CHECK: %[[XPAD:.*]] = tensor.pad %[[X]] low[0, 2, 0] high[0, 0, 0]
// CHECK: %[[DWFLAT:.*]] = linalg.generic {indexing_maps = [#[[$DY]], #[[$BEHIND]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[DY]], %[[XPAD]] : tensor<2x8x6xf32>, tensor<2x10x6xf32>) outs(%{{.*}} : tensor<3x6xf32>)
// CHECK: %[[DW:.*]] = tensor.expand_shape %[[DWFLAT]] {{\[}}[0], [1, 2]] output_shape [3, 2, 3]
// CHECK: %[[DBFLAT:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[DY]] : tensor<2x8x6xf32>) outs(%{{.*}} : tensor<6xf32>)
// CHECK: %[[DB:.*]] = tensor.expand_shape %[[DBFLAT]] {{\[}}[0, 1]] output_shape [2, 3]
// CHECK-NOT: tfc.
// CHECK: return %[[DX]], %[[DW]], %[[DB]]
func.func @dconv_grad(%x: tensor<2x8x6xf32>, %w: tensor<3x2x3xf32>, %dy: tensor<2x8x6xf32>)
    -> (tensor<2x8x6xf32>, tensor<3x2x3xf32>, tensor<2x3xf32>) {
  %g:3 = tfc.dconv_grad %x, %w, %dy : tensor<2x8x6xf32>, tensor<3x2x3xf32> -> tensor<2x3xf32>
  return %g#0, %g#1, %g#2 : tensor<2x8x6xf32>, tensor<3x2x3xf32>, tensor<2x3xf32>
}

// -----

// Average shortening gradient: each group's gradient repeated over its
// positions, scaled by 1 / factor.

// CHECK-DAG: #[[$REPEAT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @shorten_grad_avg
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[DY:[a-z0-9]+]]: tensor<2x2x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[REP:.*]] = linalg.generic {indexing_maps = [#[[$REPEAT]], {{.*}}]
// CHECK-SAME: ins(%[[DY]] : tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x2x4x4xf32>)
// CHECK: %[[SPREAD:.*]] = tensor.collapse_shape %[[REP]] {{\[}}[0], [1, 2], [3]] : tensor<2x2x4x4xf32> into tensor<2x8x4xf32>
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[SPREAD]] : tensor<2x8x4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[QUARTER]] : f32
// CHECK-NOT: tfc.
// CHECK: return %[[DX]]
func.func @shorten_grad_avg(%x: tensor<2x8x4xf32>, %dy: tensor<2x2x4xf32>) -> tensor<2x8x4xf32> {
  %g = tfc.shorten_grad avg %x by 4 grad %dy : tensor<2x8x4xf32>, tensor<2x2x4xf32> -> tensor<2x8x4xf32>
  return %g : tensor<2x8x4xf32>
}

// -----

// Linear shortening gradients: dy W gives the gradient of the grouped rows,
// reshaped back to positions; dW = dy^T rows; db sums dy.

// CHECK-LABEL: func.func @shorten_grad_linear
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<4x8xf32>, %[[B:[a-z0-9]+]]: tensor<4xf32>, %[[DY:[a-z0-9]+]]: tensor<2x4x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[GROUPS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3]] output_shape [2, 4, 2, 4]
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[GROUPS]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK: %[[DYROWS:.*]] = tensor.collapse_shape %[[DY]] {{\[}}[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
// CHECK: %[[DROWS:.*]] = linalg.matmul ins(%[[DYROWS]], %[[W]] : tensor<8x4xf32>, tensor<4x8xf32>)
// CHECK: tensor.expand_shape %[[DROWS]] {{\[}}[0, 1], [2]] output_shape [2, 4, 8]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4]
// CHECK: %[[DX:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : tensor<2x4x2x4xf32> into tensor<2x8x4xf32>
// CHECK: %[[INROWS:.*]] = tensor.collapse_shape %[[ROWS]] {{\[}}[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: %[[DW:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %[[INROWS]] : tensor<8x4xf32>, tensor<8x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[DY]] : tensor<2x4x4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NOT: tfc.
// CHECK: return %[[DX]], %[[DW]], %[[DB]]
func.func @shorten_grad_linear(%x: tensor<2x8x4xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>,
                               %dy: tensor<2x4x4xf32>) -> (tensor<2x8x4xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %g:3 = tfc.shorten_grad linear %x by 2 weights(%w, %b : tensor<4x8xf32>, tensor<4xf32>) grad %dy
      : tensor<2x8x4xf32>, tensor<2x4x4xf32> -> tensor<2x8x4xf32>, tensor<4x8xf32>, tensor<4xf32>
  return %g#0, %g#1, %g#2 : tensor<2x8x4xf32>, tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Attention shortening gradients: the forward recomputed (pooled queries,
// keys and values of each group, softmax), then back through the output
// projection, A V, the softmax and Q . K, the projections, and the pooling,
// which receives both the residual gradient and the queries' gradient.

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d2, d4)>
// CHECK-DAG: #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2, d3)>
// CHECK-DAG: #[[$P_BY_J:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[$ROW_BY_J:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @shorten_grad_attention
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[WQ:[a-z0-9]+]]: tensor<4x4xf32>, %[[WK:[a-z0-9]+]]: tensor<4x4xf32>, %[[WV:[a-z0-9]+]]: tensor<4x4xf32>, %[[WO:[a-z0-9]+]]: tensor<4x4xf32>, %[[DY:[a-z0-9]+]]: tensor<2x4x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[SCALE:.*]] = arith.constant 0.707106769 : f32
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[POOLED:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[HALF]]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WQ]] : tensor<8x4xf32>, tensor<4x4xf32>)
// CHECK: %[[QH:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 2]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WK]] : tensor<16x4xf32>
// CHECK: %[[KG:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3, 4]] output_shape [2, 4, 2, 2, 2]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WV]] : tensor<16x4xf32>
// CHECK: %[[VG:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3, 4]] output_shape [2, 4, 2, 2, 2]
// CHECK: %[[SCORES:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], {{.*}}]
// CHECK-SAME: ins(%[[QH]], %[[KG]] : tensor<2x4x2x2xf32>, tensor<2x4x2x2x2xf32>)
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: %[[PROBS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4x2x2xf32>)
// CHECK: arith.divf
// CHECK: %[[ATT:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], {{.*}}]
// CHECK-SAME: ins(%[[PROBS]], %[[VG]] : tensor<2x4x2x2xf32>, tensor<2x4x2x2x2xf32>)
// CHECK: %[[DWO:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %[[WO]] : tensor<8x4xf32>, tensor<4x4xf32>)
// CHECK: %[[DO:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 2]
// CHECK: %[[DPROBS:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], {{.*}}]
// CHECK-SAME: ins(%[[DO]], %[[VG]] :
// CHECK: %[[DV:.*]] = linalg.generic {indexing_maps = [#[[$P_BY_J]], #[[$ROW_BY_J]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[PROBS]], %[[DO]] :
// CHECK: %[[ROWDOT:.*]] = linalg.generic {{.*}} ins(%[[PROBS]], %[[DPROBS]] : {{.*}}) outs(%{{.*}} : tensor<2x4x2xf32>)
// CHECK: %[[DS:.*]] = linalg.generic {{.*}} ins(%[[PROBS]], %[[DPROBS]], %[[ROWDOT]] :
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: %[[DQ:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], {{.*}}]
// CHECK-SAME: ins(%[[DS]], %[[KG]] :
// CHECK: %[[DK:.*]] = linalg.generic {indexing_maps = [#[[$P_BY_J]], #[[$ROW_BY_J]], {{.*}}]
// CHECK-SAME: ins(%[[DS]], %[[QH]] :
// CHECK: %[[DWQ:.*]] = linalg.matmul_transpose_a
// CHECK: %[[DWK:.*]] = linalg.matmul_transpose_a
// CHECK: %[[DWV:.*]] = linalg.matmul_transpose_a
// CHECK: linalg.matmul ins(%{{.*}}, %[[WQ]] : tensor<8x4xf32>, tensor<4x4xf32>)
// CHECK: %[[DPOOLED:.*]] = linalg.generic {{.*}} ins(%[[DY]], %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[DPOOLED]] : tensor<2x4x4xf32>) outs(%{{.*}} : tensor<2x4x2x4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[HALF]]
// CHECK: linalg.matmul ins(%{{.*}}, %[[WK]] : tensor<16x4xf32>, tensor<4x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %[[WV]] : tensor<16x4xf32>, tensor<4x4xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK-NOT: tfc.
// CHECK: return %[[DX]], %[[DWQ]], %[[DWK]], %[[DWV]], %[[DWO]]
func.func @shorten_grad_attention(%x: tensor<2x8x4xf32>, %wq: tensor<4x4xf32>, %wk: tensor<4x4xf32>,
                                  %wv: tensor<4x4xf32>, %wo: tensor<4x4xf32>, %dy: tensor<2x4x4xf32>)
    -> (tensor<2x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %g:5 = tfc.shorten_grad attention %x by 2 weights(%wq, %wk, %wv, %wo
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) grad %dy {heads = 2 : i64}
      : tensor<2x8x4xf32>, tensor<2x4x4xf32>
      -> tensor<2x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  return %g#0, %g#1, %g#2, %g#3, %g#4
      : tensor<2x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Naive up-sampling gradients (here in f64): each shortened position sums
// the gradients of its copies; the residual gets zeros.

// CHECK-DAG: #[[$GROUP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$SHORT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @upsample_grad_naive
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2x4x4xf64>, %[[R:[a-z0-9]+]]: tensor<2x8x4xf64>, %[[DY:[a-z0-9]+]]: tensor<2x8x4xf64>
// CHECK-NOT: tfc.
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: %[[GROUPS:.*]] = tensor.expand_shape %[[DY]] {{\[}}[0], [1, 2], [3]] output_shape [2, 4, 2, 4]
// CHECK: %[[DS:.*]] = linalg.generic {indexing_maps = [#[[$GROUP]], #[[$SHORT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[GROUPS]] : tensor<2x4x2x4xf64>) outs(%{{.*}} : tensor<2x4x4xf64>)
// CHECK: %[[DR:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<2x8x4xf64>)
// CHECK-NOT: tfc.
// CHECK: return %[[DS]], %[[DR]]
func.func @upsample_grad_naive(%s: tensor<2x4x4xf64>, %r: tensor<2x8x4xf64>, %dy: tensor<2x8x4xf64>)
    -> (tensor<2x4x4xf64>, tensor<2x8x4xf64>) {
  %g:2 = tfc.upsample_grad naive %s by 2 residual %r grad %dy
      : tensor<2x4x4xf64>, tensor<2x8x4xf64> -> tensor<2x4x4xf64>, tensor<2x8x4xf64>
  return %g#0, %g#1 : tensor<2x4x4xf64>, tensor<2x8x4xf64>
}

// -----

// Linear up-sampling gradients: dy regrouped into [batch, groups,
// factor * width] rows; ds = rows W, dW = rows^T s, db sums the rows; the
// residual gets zeros.

// CHECK-LABEL: func.func @upsample_grad_linear
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2x4x4xf32>, %[[R:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>, %[[DY:[a-z0-9]+]]: tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[GROUPS:.*]] = tensor.expand_shape %[[DY]] {{\[}}[0], [1, 2], [3]] output_shape [2, 4, 2, 4]
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[GROUPS]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %[[W]] : tensor<8x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: %[[DS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 4, 4]
// CHECK: %[[DR:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x8x4xf32>)
// CHECK: %[[SROWS:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
// CHECK: %[[DW:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %[[SROWS]] : tensor<8x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[ROWS]] : tensor<2x4x8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NOT: tfc.
// CHECK: return %[[DS]], %[[DR]], %[[DW]], %[[DB]]
func.func @upsample_grad_linear(%s: tensor<2x4x4xf32>, %r: tensor<2x8x4xf32>, %w: tensor<8x4xf32>,
                                %b: tensor<8xf32>, %dy: tensor<2x8x4xf32>)
    -> (tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<8x4xf32>, tensor<8xf32>) {
  %g:4 = tfc.upsample_grad linear %s by 2 residual %r weights(%w, %b : tensor<8x4xf32>, tensor<8xf32>) grad %dy
      : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<8x4xf32>, tensor<8xf32>
  return %g#0, %g#1, %g#2, %g#3 : tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<8x4xf32>, tensor<8xf32>
}

// -----

// Attention up-sampling gradients: the masked forward recomputed, then back
// through the output projection, A V (dV reduces over full-resolution
// positions), the softmax and Q . K; the residual's gradient comes through
// Wq, the shortened input's from the naive copies and through Wk and Wv.

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
// CHECK-DAG: #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
// CHECK-DAG: #[[$P_T:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d1)>
// CHECK-LABEL: func.func @upsample_grad_attention
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2x4x4xf32>, %[[R:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[WQ:[a-z0-9]+]]: tensor<4x4xf32>, %[[WK:[a-z0-9]+]]: tensor<4x4xf32>, %[[WV:[a-z0-9]+]]: tensor<4x4xf32>, %[[WO:[a-z0-9]+]]: tensor<4x4xf32>, %[[DY:[a-z0-9]+]]: tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.707106769 : f32
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[FACTOR:.*]] = arith.constant 2 : index
// CHECK: %[[RROWS:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]]
// CHECK: linalg.matmul_transpose_b ins(%[[RROWS]], %[[WQ]] : tensor<16x4xf32>
// CHECK: %[[QH:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 2, 2]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WK]] : tensor<8x4xf32>
// CHECK: %[[KH:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 2]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WV]] : tensor<8x4xf32>
// CHECK: %[[VH:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 2]
// CHECK: %[[SCORES:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], {{.*}}]
// CHECK-SAME: ins(%[[QH]], %[[KH]] :
// CHECK: linalg.generic {{.*}} ins(%[[SCORES]] : tensor<2x8x2x4xf32>)
// CHECK: %[[POS:.*]] = linalg.index 1 : index
// CHECK: %[[GROUP:.*]] = linalg.index 3 : index
// CHECK: %[[START:.*]] = arith.muli %[[GROUP]], %[[FACTOR]] : index
// CHECK: %[[SEEN:.*]] = arith.cmpi sle, %[[START]], %[[POS]] : index
// CHECK: arith.select %[[SEEN]], %{{.*}}, %[[NEG_INF]] : f32
// CHECK: math.exp
// CHECK: %[[PROBS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8x2x4xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], {{.*}}]
// CHECK-SAME: ins(%[[PROBS]], %[[VH]] :
// CHECK: %[[DWO:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<16x4xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %[[WO]] : tensor<16x4xf32>, tensor<4x4xf32>)
// CHECK: %[[DO:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 2, 2]
// CHECK: %[[DPROBS:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], {{.*}}]
// CHECK-SAME: ins(%[[DO]], %[[VH]] :
// CHECK: %[[DV:.*]] = linalg.generic {indexing_maps = [#[[$P_T]], #[[$V]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PROBS]], %[[DO]] : tensor<2x8x2x4xf32>, tensor<2x8x2x2xf32>) outs(%{{.*}} : tensor<2x4x2x2xf32>)
// CHECK: %[[DS:.*]] = linalg.generic {{.*}} ins(%[[PROBS]], %[[DPROBS]], %{{.*}} :
// CHECK: arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: %[[DQ:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], {{.*}}]
// CHECK-SAME: ins(%[[DS]], %[[KH]] :
// CHECK: %[[DK:.*]] = linalg.generic {indexing_maps = [#[[$P_T]], #[[$V]], {{.*}}]
// CHECK-SAME: ins(%[[DS]], %[[QH]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[WQ]] : tensor<16x4xf32>, tensor<4x4xf32>)
// CHECK: %[[DR:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 8, 4]
// CHECK: %[[DYG:.*]] = tensor.expand_shape %[[DY]] {{\[}}[0], [1, 2], [3]] output_shape [2, 4, 2, 4]
// CHECK: %[[COPIES:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[DYG]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[WK]] : tensor<8x4xf32>, tensor<4x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %[[WV]] : tensor<8x4xf32>, tensor<4x4xf32>)
// CHECK: %[[DSHORT:.*]] = linalg.generic {{.*}} ins(%[[COPIES]], %{{.*}}, %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK: %[[DWQ:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<16x4xf32>, tensor<16x4xf32>)
// CHECK: %[[DWK:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: %[[DWV:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-NOT: tfc.
// CHECK: return %[[DSHORT]], %[[DR]], %[[DWQ]], %[[DWK]], %[[DWV]], %[[DWO]]
func.func @upsample_grad_attention(%s: tensor<2x4x4xf32>, %r: tensor<2x8x4xf32>, %wq: tensor<4x4xf32>,
                                   %wk: tensor<4x4xf32>, %wv: tensor<4x4xf32>, %wo: tensor<4x4xf32>,
                                   %dy: tensor<2x8x4xf32>)
    -> (tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %g:6 = tfc.upsample_grad attention %s by 2 residual %r weights(%wq, %wk, %wv, %wo
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) grad %dy {heads = 2 : i64}
      : tensor<2x4x4xf32>, tensor<2x8x4xf32>
      -> tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  return %g#0, %g#1, %g#2, %g#3, %g#4, %g#5
      : tensor<2x4x4xf32>, tensor<2x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
