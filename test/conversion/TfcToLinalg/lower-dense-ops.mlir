// RUN: tfc-opt %s --tfc-lower-to-linalg -split-input-file | FileCheck %s

// The dense patterns of tfc-lower-to-linalg (LowerDenseOps.cpp).

// A linear layer: the leading dimensions become rows of one
// `matmul_transpose_b` against the [out, in] weight, then the bias.

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %{{.*}} output_shape [8, 8]
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[MM:.*]] = linalg.matmul_transpose_b ins(%[[ROWS]], %[[W]] : tensor<8x8xf32>, tensor<16x8xf32>) outs(%[[ZERO]] : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %[[B]] : tensor<8x16xf32>, tensor<16xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 4, 16]
func.func @linear(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %y = tfc.linear %x, %w bias(%b : tensor<16xf32>) : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----

// Layer norm over the last dimension (16): the mean (sum * 1/16), the
// centred rows, the inverse standard deviation 1 / sqrt(var + eps), then
// gain and bias.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x16xf32>, %[[G:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK-DAG: %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-DAG: %[[INV_N:.*]] = arith.constant 6.250000e-02 : f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf %{{.*}}, %[[INV_N]]
// CHECK: arith.subf
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf %[[IN:[a-z_0-9]+]], %[[IN]] : f32
// CHECK: arith.addf %{{.*}}, %[[EPS]]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[G]], %[[B]] :
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 4, 16]
func.func @layer_norm(%x: tensor<2x4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %ln = tfc.layer_norm %x, %g, %b {eps = 1.0e-6 : f64} : tensor<2x4x16xf32>, tensor<16xf32>
  return %ln : tensor<2x4x16xf32>
}

// -----

// Primer's squared ReLU: max(x, 0)^2, element-wise. Unlike a softmax's
// offset, its maximum keeps NaN and signed zeros ordered (no flags).

// CHECK-LABEL: func.func @squared_relu
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: %[[R:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.mulf %[[R]], %[[R]] : f32
func.func @squared_relu(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %a = tfc.activation squared_relu %x : tensor<2x4x16xf32>
  return %a : tensor<2x4x16xf32>
}

// -----

// An embedding lookup: one gather per output element; an id outside
// [0, 256) reads row 0 instead of memory outside the table.

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TABLE:.*]]: tensor<256x8xf32>, %[[IDS:.*]]: tensor<2x4xi32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: linalg.generic {{.*}} ins(%[[IDS]] : tensor<2x4xi32>)
// CHECK: %[[ID:.*]] = arith.index_cast
// CHECK: %[[LOW:.*]] = arith.cmpi slt, %[[ID]], %[[C0]]
// CHECK: %[[HIGH:.*]] = arith.cmpi sge, %[[ID]], %[[C256]]
// CHECK: %[[BAD:.*]] = arith.ori %[[LOW]], %[[HIGH]]
// CHECK: %[[ROW:.*]] = arith.select %[[BAD]], %[[C0]], %[[ID]]
// CHECK: %[[COL:.*]] = linalg.index 2
// CHECK: tensor.extract %[[TABLE]][%[[ROW]], %[[COL]]]
func.func @embedding(%table: tensor<256x8xf32>, %ids: tensor<2x4xi32>) -> tensor<2x4x8xf32> {
  %x = tfc.embedding %table[%ids] : tensor<256x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  return %x : tensor<2x4x8xf32>
}

// -----

// Sinusoidal positions: the [seq, d_model] table (exp of the channel's
// frequency, then sin on even channels and cos on odd ones) is computed
// once, then added to every sequence of the batch through a broadcast.

// CHECK-DAG: #[[TABLE:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @sinusoidal_positions
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[ENC:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: math.exp
// CHECK-DAG: math.cos
// CHECK-DAG: math.sin
// CHECK: arith.select
// CHECK: linalg.generic {indexing_maps = [#[[ALL]], #[[TABLE]], #[[ALL]]]{{.*}} ins(%[[X]], %[[ENC]] : tensor<2x4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
func.func @sinusoidal_positions(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %y = tfc.sinusoidal_positions %x : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
