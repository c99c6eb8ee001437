// RUN: tfc-opt %s -split-input-file --tfc-lower-to-linalg | FileCheck %s

// Rotary positions: a cos/sin table over [seq, head_dim / 2] from the folded
// inverse frequencies, then one generic over [batch, seq, heads, 2, half]
// reading both halves of each head.

// CHECK-DAG: #[[$FIRST:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, d4)>
// CHECK-DAG: #[[$SECOND:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 1, d4)>
// CHECK-DAG: #[[$TABLE:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
// CHECK-LABEL: func.func @rotary
// CHECK-NOT: tfc.
// CHECK: %[[FREQ:.*]] = arith.constant dense<[1.000000e+00, 0.00999999977]> : tensor<2xf32>
// CHECK: %[[TABLES:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[FREQ]] : tensor<2xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK: linalg.index 0
// CHECK: math.cos
// CHECK: math.sin
// CHECK: %[[HALVES:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] output_shape [2, 4, 2, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[$FIRST]], #[[$SECOND]], #[[$TABLE]], #[[$TABLE]], {{.*}}]
// CHECK-SAME: ins(%[[HALVES]], %[[HALVES]], %[[TABLES]]#0, %[[TABLES]]#1
// CHECK: arith.select
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : tensor<2x4x2x2x2xf32> into tensor<2x4x8xf32>
// CHECK-NOT: tfc.
// CHECK: return
func.func @rotary(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %r = tfc.rotary %x heads 2 : tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// Depth-wise convolution: the input padded with kernel - 1 zero positions in
// front, reduced over the kernel position into the broadcast bias.

// CHECK-DAG: #[[$SHIFTED:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 - d3 + 2, d2)>
// CHECK-DAG: #[[$TAPS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-LABEL: func.func @dconv
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x16xf32>, %[[W:[a-z0-9]+]]: tensor<3x4x4xf32>, %[[B:[a-z0-9]+]]: tensor<4x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 2, 0] high[0, 0, 0]
// CHECK: tensor<2x8x16xf32> to tensor<2x10x16xf32>
// CHECK: %[[TAP:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2]] : tensor<3x4x4xf32> into tensor<3x16xf32>
// CHECK: %[[BIAS:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$SHIFTED]], #[[$TAPS]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PAD]], %[[TAP]] : tensor<2x10x16xf32>, tensor<3x16xf32>) outs(%[[INIT]] : tensor<2x8x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: tfc.
// CHECK: return
func.func @dconv(%x: tensor<2x8x16xf32>, %w: tensor<3x4x4xf32>,
                 %b: tensor<4x4xf32>) -> tensor<2x8x16xf32> {
  %y = tfc.dconv %x, %w bias(%b : tensor<4x4xf32>) : tensor<2x8x16xf32>, tensor<3x4x4xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// Without a bias the accumulator starts at zero (here in f64).

// CHECK-LABEL: func.func @dconv_no_bias
// CHECK-NOT: tfc.
// CHECK: tensor.pad %{{.*}} low[0, 3, 0] high[0, 0, 0]
// CHECK: tensor<1x5x6xf64> to tensor<1x8x6xf64>
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<1x5x6xf64>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[ZERO]] : tensor<1x5x6xf64>)
// CHECK-NOT: tfc.
// CHECK: return
func.func @dconv_no_bias(%x: tensor<1x5x6xf64>, %w: tensor<4x2x3xf64>) -> tensor<1x5x6xf64> {
  %y = tfc.dconv %x, %w : tensor<1x5x6xf64>, tensor<4x2x3xf64>
  return %y : tensor<1x5x6xf64>
}

// -----

// Shift right: the first seq - amount positions, padded in front.

// CHECK-LABEL: func.func @shift_right
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[KEPT:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [2, 5, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x5x4xf32>
// CHECK: %[[PAD:.*]] = tensor.pad %[[KEPT]] low[0, 3, 0] high[0, 0, 0]
// CHECK: tensor<2x5x4xf32> to tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[PAD]]
func.func @shift_right(%x: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %s = tfc.shift_right %x by 3 : tensor<2x8x4xf32>
  return %s : tensor<2x8x4xf32>
}

// -----

// Average shortening: a sum over the group position, scaled by 1 / factor.

// CHECK-DAG: #[[$GROUP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-LABEL: func.func @shorten_avg
// CHECK-NOT: tfc.
// CHECK: %[[GROUPS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3]] output_shape [2, 2, 4, 4] : tensor<2x8x4xf32> into tensor<2x2x4x4xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$GROUP]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[GROUPS]] : tensor<2x2x4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x2x4xf32>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: tfc.
// CHECK: return
func.func @shorten_avg(%x: tensor<2x8x4xf32>) -> tensor<2x2x4xf32> {
  %a = tfc.shorten avg %x by 4 : tensor<2x8x4xf32> -> tensor<2x2x4xf32>
  return %a : tensor<2x2x4xf32>
}

// -----

// Linear shortening: each group's positions side by side, through the
// [width, factor * width] weight, plus the bias.

// CHECK-LABEL: func.func @shorten_linear
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<4x8xf32>, %[[B:[a-z0-9]+]]: tensor<4xf32>
// CHECK-NOT: tfc.
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3]] output_shape [2, 4, 2, 4]
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: linalg.matmul_transpose_b ins(%[[ROWS]], %[[W]] : tensor<8x8xf32>, tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<4xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
// CHECK-NOT: tfc.
// CHECK: return
func.func @shorten_linear(%x: tensor<2x8x4xf32>, %w: tensor<4x8xf32>,
                          %b: tensor<4xf32>) -> tensor<2x4x4xf32> {
  %l = tfc.shorten linear %x by 2 weights(%w, %b : tensor<4x8xf32>, tensor<4xf32>)
      : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return %l : tensor<2x4x4xf32>
}

// -----

// Attention shortening: pooled queries against the keys of their own group
// ([batch, groups, factor, heads, head_dim]), a softmax over the group, the
// output projection added to the pooled input.

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d2, d4)>
// CHECK-DAG: #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2, d3)>
// CHECK-LABEL: func.func @shorten_attention
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[WQ:[a-z0-9]+]]: tensor<4x4xf32>, %[[WK:[a-z0-9]+]]: tensor<4x4xf32>, %[[WV:[a-z0-9]+]]: tensor<4x4xf32>, %[[WO:[a-z0-9]+]]: tensor<4x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[SCALE:.*]] = arith.constant 0.707106769 : f32
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: %[[POOLED:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x4x4xf32>)
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WQ]]
// CHECK: %[[QH:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 2]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WK]] : tensor<16x4xf32>
// CHECK: %[[KG:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3, 4]] output_shape [2, 4, 2, 2, 2]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WV]] : tensor<16x4xf32>
// CHECK: %[[VG:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3, 4]] output_shape [2, 4, 2, 2, 2]
// CHECK: %[[SCORES:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[QH]], %[[KG]] : tensor<2x4x2x2xf32>, tensor<2x4x2x2x2xf32>)
// CHECK: arith.maximumf
// CHECK: arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], {{.*}}]
// CHECK-SAME: tensor<2x4x2x2x2xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x2xf32> into tensor<2x4x4xf32>
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WO]]
// CHECK: linalg.generic {{.*}} ins(%[[POOLED]], %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK: arith.addf
// CHECK-NOT: tfc.
// CHECK: return
func.func @shorten_attention(%x: tensor<2x8x4xf32>, %wq: tensor<4x4xf32>,
                             %wk: tensor<4x4xf32>, %wv: tensor<4x4xf32>,
                             %wo: tensor<4x4xf32>) -> tensor<2x4x4xf32> {
  %t = tfc.shorten attention %x by 2 weights(%wq, %wk, %wv, %wo
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {heads = 2 : i64}
      : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return %t : tensor<2x4x4xf32>
}

// -----

// Naive up-sampling: broadcast to [batch, groups, factor, width], collapsed.

// CHECK-DAG: #[[$REPEAT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @upsample_naive
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2x4x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[REP:.*]] = linalg.generic {indexing_maps = [#[[$REPEAT]], {{.*}}]
// CHECK-SAME: ins(%[[S]] : tensor<2x4x4xf32>) outs(%{{.*}} : tensor<2x4x2x4xf32>)
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[REP]] {{\[}}[0], [1, 2], [3]] : tensor<2x4x2x4xf32> into tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[OUT]]
func.func @upsample_naive(%s: tensor<2x4x4xf32>, %r: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %u = tfc.upsample naive %s by 2 residual %r : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %u : tensor<2x8x4xf32>
}

// -----

// Linear up-sampling: [factor * width, width] weight, then the wide rows
// split into factor positions.

// CHECK-LABEL: func.func @upsample_linear
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2x4x4xf32>, %[[R:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>
// CHECK-NOT: tfc.
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
// CHECK: linalg.matmul_transpose_b ins(%[[ROWS]], %[[W]] : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<8xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 4, 8]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : tensor<2x4x2x4xf32> into tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK: return %[[OUT]]
func.func @upsample_linear(%s: tensor<2x4x4xf32>, %r: tensor<2x8x4xf32>,
                           %w: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<2x8x4xf32> {
  %u = tfc.upsample linear %s by 2 residual %r weights(%w, %b : tensor<8x4xf32>, tensor<8xf32>)
      : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %u : tensor<2x8x4xf32>
}

// -----

// Attention up-sampling: residual queries against all shortened keys, masked
// to shortened positions i with i * factor <= p, added to the naive
// up-sampling.

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
// CHECK-DAG: #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
// CHECK-LABEL: func.func @upsample_attention
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2x4x4xf32>, %[[R:[a-z0-9]+]]: tensor<2x8x4xf32>, %[[WQ:[a-z0-9]+]]: tensor<4x4xf32>, %[[WK:[a-z0-9]+]]: tensor<4x4xf32>, %[[WV:[a-z0-9]+]]: tensor<4x4xf32>, %[[WO:[a-z0-9]+]]: tensor<4x4xf32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[FACTOR:.*]] = arith.constant 2 : index
// CHECK: %[[RROWS:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]]
// CHECK: linalg.matmul_transpose_b ins(%[[RROWS]], %[[WQ]] : tensor<16x4xf32>
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WK]] : tensor<8x4xf32>
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WV]] : tensor<8x4xf32>
// CHECK: %[[SCORES:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<2x8x2x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SCORES]] : tensor<2x8x2x4xf32>)
// CHECK: %[[P:.*]] = linalg.index 1 : index
// CHECK: %[[I:.*]] = linalg.index 3 : index
// CHECK: %[[START:.*]] = arith.muli %[[I]], %[[FACTOR]] : index
// CHECK: %[[SEEN:.*]] = arith.cmpi sle, %[[START]], %[[P]] : index
// CHECK: arith.select %[[SEEN]], %{{.*}}, %[[NEG_INF]] : f32
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], {{.*}}]
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %[[WO]]
// CHECK: %[[NAIVE:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : tensor<2x4x2x4xf32> into tensor<2x8x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[NAIVE]], %{{.*}} : tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK: arith.addf
// CHECK-NOT: tfc.
// CHECK: return
func.func @upsample_attention(%s: tensor<2x4x4xf32>, %r: tensor<2x8x4xf32>,
                              %wq: tensor<4x4xf32>, %wk: tensor<4x4xf32>,
                              %wv: tensor<4x4xf32>, %wo: tensor<4x4xf32>) -> tensor<2x8x4xf32> {
  %u = tfc.upsample attention %s by 2 residual %r weights(%wq, %wk, %wv, %wo
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {heads = 2 : i64}
      : tensor<2x4x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return %u : tensor<2x8x4xf32>
}

// -----

// Inverse rotary positions: the same tables (base 100 here), with the angle
// negated in the combination of the halves: x[e] cos + x[e + half] sin for
// the first half, x[e + half] cos - x[e] sin for the second.

// CHECK-LABEL: func.func @rotary_inverse
// CHECK-NOT: tfc.
// CHECK: %[[FREQ:.*]] = arith.constant dense<[1.000000e+00, 1.000000e-01]> : tensor<2xf32>
// CHECK: %[[TABLES:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[FREQ]] : tensor<2xf32>)
// CHECK: math.cos
// CHECK: math.sin
// CHECK: %[[HALVES:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] output_shape [2, 4, 2, 2, 2]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[HALVES]], %[[HALVES]], %[[TABLES]]#0, %[[TABLES]]#1
// CHECK: ^bb0(%[[FIRST:[a-z0-9_]+]]: f32, %[[SECOND:[a-z0-9_]+]]: f32, %[[COS:[a-z0-9_]+]]: f32, %[[SIN:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32):
// CHECK-DAG: %[[FC:.*]] = arith.mulf %[[FIRST]], %[[COS]] : f32
// CHECK-DAG: %[[SS:.*]] = arith.mulf %[[SECOND]], %[[SIN]] : f32
// CHECK-DAG: %[[SC:.*]] = arith.mulf %[[SECOND]], %[[COS]] : f32
// CHECK-DAG: %[[FS:.*]] = arith.mulf %[[FIRST]], %[[SIN]] : f32
// CHECK-DAG: %[[FIRST_OUT:.*]] = arith.addf %[[FC]], %[[SS]] : f32
// CHECK-DAG: %[[SECOND_OUT:.*]] = arith.subf %[[SC]], %[[FS]] : f32
// CHECK: arith.select %{{.*}}, %[[FIRST_OUT]], %[[SECOND_OUT]] : f32
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : tensor<2x4x2x2x2xf32> into tensor<2x4x8xf32>
// CHECK-NOT: tfc.
// CHECK: return
func.func @rotary_inverse(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %r = tfc.rotary %x heads 2 inverse {base = 100.0 : f64} : tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}
