// RUN: tfc-opt %s -split-input-file --tfc-lower-to-linalg -verify-diagnostics | FileCheck %s

// Transpose: a linalg.transpose into an empty tensor.

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x6xf32>
// CHECK-NOT: tfc.
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<6x4xf32>
// CHECK: linalg.transpose ins(%[[W]] : tensor<4x6xf32>) outs(%[[EMPTY]] : tensor<6x4xf32>) permutation = [1, 0]
// CHECK-NOT: tfc.
// CHECK: return
func.func @transpose(%w: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %t = tfc.transpose %w : tensor<4x6xf32> -> tensor<6x4xf32>
  return %t : tensor<6x4xf32>
}

// -----

// A linear layer's input gradient, dx = dy W, as tfc-autodiff writes it: a
// linear layer with the transposed weight. It multiplies by W itself
// (linalg.matmul); no transposed copy is made.

// CHECK-LABEL: func.func @input_grad
// CHECK-SAME: (%[[DY:.*]]: tensor<2x4x16xf32>, %[[W:.*]]: tensor<16x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %{{.*}} output_shape [8, 16]
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: linalg.matmul ins(%[[ROWS]], %[[W]] : tensor<8x16xf32>, tensor<16x8xf32>) outs(%[[ZERO]] : tensor<8x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @input_grad(%dy: tensor<2x4x16xf32>, %w: tensor<16x8xf32>) -> tensor<2x4x8xf32> {
  %t = tfc.transpose %w : tensor<16x8xf32> -> tensor<8x16xf32>
  %dx = tfc.linear %dy, %t : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
  return %dx : tensor<2x4x8xf32>
}

// -----

// Outer sum: both operands flattened to [rows, n], then one generic over
// (i, r, j) reducing over the rows r into zeros.

// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[$RHS:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @outer_sum
// CHECK-NOT: tfc.
// CHECK: %[[LHS:.*]] = tensor.expand_shape %{{.*}} output_shape [6, 5] : tensor<30xf32> into tensor<6x5xf32>
// CHECK: %[[RHS:.*]] = tensor.expand_shape %{{.*}} output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[LHS]], %[[RHS]] : tensor<6x5xf32>, tensor<6x4xf32>) outs(%[[ZERO]] : tensor<5x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: tfc.
// CHECK: return
func.func @outer_sum(%dy: tensor<2x3x5xf32>, %x: tensor<2x3x4xf32>) -> tensor<5x4xf32> {
  %g = tfc.outer_sum %dy, %x : tensor<2x3x5xf32>, tensor<2x3x4xf32> -> tensor<5x4xf32>
  return %g : tensor<5x4xf32>
}

// -----

// Sum over the leading dimensions: a linalg.reduce into zeros (here in f64).

// CHECK-LABEL: func.func @sum_leading
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x4xf64>
// CHECK-NOT: tfc.
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<4xf64>)
// CHECK: linalg.reduce ins(%[[X]] : tensor<2x3x4xf64>) outs(%[[ZERO]] : tensor<4xf64>) dimensions = [0, 1]
// CHECK: arith.addf
// CHECK-NOT: tfc.
// CHECK: return
func.func @sum_leading(%x: tensor<2x3x4xf64>) -> tensor<4xf64> {
  %s = tfc.sum_leading %x count 2 : tensor<2x3x4xf64> -> tensor<4xf64>
  return %s : tensor<4xf64>
}

// -----

// Scale: an element-wise multiplication by the constant.

// CHECK-LABEL: func.func @scale
// CHECK-NOT: tfc.
// CHECK: %[[FACTOR:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %[[FACTOR]] : f32
// CHECK-NOT: tfc.
// CHECK: return
func.func @scale(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = tfc.scale %x by 2.5 : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// Shift left: the positions after `amount`, padded with zeros at the end.

// CHECK-LABEL: func.func @shift_left
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[KEPT:.*]] = tensor.extract_slice %[[X]][0, 3, 0] [2, 5, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x5x4xf32>
// CHECK: tensor.pad %[[KEPT]] low[0, 0, 0] high[0, 3, 0]
// CHECK: tensor<2x5x4xf32> to tensor<2x8x4xf32>
// CHECK-NOT: tfc.
// CHECK: return
func.func @shift_left(%x: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %s = tfc.shift_left %x by 3 : tensor<2x8x4xf32>
  return %s : tensor<2x8x4xf32>
}

// -----

// Embedding gradient: a loop over the positions, and within it over the
// channels, adding each gradient element into the table row of its clamped id.

// CHECK-LABEL: func.func @embedding_grad
// CHECK-NOT: tfc.
// CHECK-DAG: %[[VOCAB:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[POSITIONS:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[WIDTH:.*]] = arith.constant 4 : index
// CHECK: %[[IDS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK: %[[GRAD:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<10x4xf32>)
// CHECK: %[[TABLE:.*]] = scf.for %[[P:.*]] = %{{.*}} to %[[POSITIONS]] step %{{.*}} iter_args(%[[ROWACC:.*]] = %[[ZERO]]) -> (tensor<10x4xf32>)
// CHECK: %[[ID:.*]] = tensor.extract %[[IDS]][%[[P]]] : tensor<6xi32>
// CHECK: arith.cmpi sge, %{{.*}}, %[[VOCAB]] : index
// CHECK: %[[ROW:.*]] = arith.select
// CHECK: %[[ROWS:.*]] = scf.for %[[C:.*]] = %{{.*}} to %[[WIDTH]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ROWACC]]) -> (tensor<10x4xf32>)
// CHECK: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]], %[[C]]] : tensor<10x4xf32>
// CHECK: %[[NEW:.*]] = tensor.extract %[[GRAD]][%[[P]], %[[C]]] : tensor<6x4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK: %[[UPDATED:.*]] = tensor.insert %[[SUM]] into %[[ACC]][%[[ROW]], %[[C]]] : tensor<10x4xf32>
// CHECK: scf.yield %[[UPDATED]]
// CHECK: scf.yield %[[ROWS]]
// CHECK-NOT: tfc.
// CHECK: return %[[TABLE]]
func.func @embedding_grad(%ids: tensor<2x3xi32>, %dy: tensor<2x3x4xf32>) -> tensor<10x4xf32> {
  %g = tfc.embedding_grad %ids, %dy : tensor<2x3xi32>, tensor<2x3x4xf32> -> tensor<10x4xf32>
  return %g : tensor<10x4xf32>
}

// -----

// CLS-token gradient: inserted at its position of a zero tensor.

// CHECK-LABEL: func.func @take_token_grad
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<2x4xf32>
// CHECK-NOT: tfc.
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x5x4xf32>)
// CHECK: tensor.insert_slice %[[G]] into %[[ZERO]][0, 2, 0] [2, 1, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<2x5x4xf32>
// CHECK-NOT: tfc.
// CHECK: return
func.func @take_token_grad(%dy: tensor<2x4xf32>) -> tensor<2x5x4xf32> {
  %g = tfc.take_token_grad %dy[2] : tensor<2x4xf32> -> tensor<2x5x4xf32>
  return %g : tensor<2x5x4xf32>
}

// -----

// Layer norm gradient: the statistics as in the forward, one row reduction
// giving both sums of g and g * xhat, dx element-wise, and one column
// reduction giving dgamma and dbeta.

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x8xf32>, %[[GAMMA:[a-z0-9]+]]: tensor<8xf32>
// CHECK-NOT: tfc.
// CHECK: math.sqrt
// CHECK: %[[RSTD:.*]] = arith.divf
// CHECK: %[[SUMS:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ROW]], #[[$COL]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<6xf32>, tensor<6xf32>)
// CHECK: %[[DX:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[GAMMA]], %[[SUMS]]#0, %[[SUMS]]#1 :
// CHECK: %[[PARAMS:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ROW]], #[[$COL]], #[[$COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[DX3:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 3, 8]
// CHECK-NOT: tfc.
// CHECK: return %[[DX3]], %[[PARAMS]]#0, %[[PARAMS]]#1
func.func @layer_norm_grad(%x: tensor<2x3x8xf32>, %gamma: tensor<8xf32>,
                           %dy: tensor<2x3x8xf32>)
    -> (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dg, %db = tfc.layer_norm_grad %x, %gamma, %dy : tensor<2x3x8xf32>, tensor<8xf32>
  return %dx, %dg, %db : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Activation gradients: relu passes the gradient where x > 0, gelu uses the
// derivative of the tanh form, squared relu multiplies by 2 relu(x).

// CHECK-LABEL: func.func @activation_grad
// CHECK-NOT: tfc.
// CHECK: linalg.generic
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: arith.mulf
// CHECK-NOT: tfc.
// CHECK: return
func.func @activation_grad(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %r = tfc.activation_grad relu %x, %dy : tensor<4x8xf32>
  %g = tfc.activation_grad gelu %x, %dy : tensor<4x8xf32>
  %s = tfc.activation_grad squared_relu %x, %dy : tensor<4x8xf32>
  return %r, %g, %s : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Cross-entropy gradient over batch * seq rows: row max, row sum of exp,
// then (softmax - onehot) * dloss / rows with the 0-d dloss broadcast.

// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK-SAME: %[[DLOSS:[a-z0-9]+]]: tensor<f32>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[INV:.*]] = arith.constant 0.166666672 : f32
// CHECK: %[[TARGETS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK: %[[MAX:.*]] = linalg.generic
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[$SCALAR]], {{.*}}]
// CHECK-SAME: ins(%{{.*}}, %[[MAX]], %[[SUM]], %[[TARGETS]], %[[DLOSS]] :
// CHECK: linalg.index 1
// CHECK: arith.mulf %{{.*}}, %[[INV]]
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 3, 7]
// CHECK-NOT: tfc.
// CHECK: return
func.func @cross_entropy_grad(%logits: tensor<2x3x7xf32>, %targets: tensor<2x3xi32>,
                              %dl: tensor<f32>) -> tensor<2x3x7xf32> {
  %g = tfc.cross_entropy_grad %logits, %targets, %dl : tensor<2x3x7xf32>, tensor<2x3xi32>, tensor<f32>
  return %g : tensor<2x3x7xf32>
}

// -----

// Classification gradients (f64): ce as the cross-entropy over the batch;
// bce one element-wise generic of (sigmoid(z) - y) * dloss / batch.

// CHECK-LABEL: func.func @classify_loss_grad
// CHECK-SAME: %[[Z:[a-z0-9]+]]: tensor<4x1xf64>, %[[LABELS:[a-z0-9]+]]: tensor<4xi32>, %[[DLOSS:[a-z0-9]+]]: tensor<f64>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[INV:.*]] = arith.constant 2.500000e-01 : f64
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.index 1
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[Z]], %[[LABELS]], %[[DLOSS]] : tensor<4x1xf64>, tensor<4xi32>, tensor<f64>)
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.sitofp
// CHECK: arith.mulf %{{.*}}, %[[INV]]
// CHECK-NOT: tfc.
// CHECK: return
func.func @classify_loss_grad(%logits: tensor<4x3xf64>, %z: tensor<4x1xf64>,
                              %labels: tensor<4xi32>, %dl: tensor<f64>)
    -> (tensor<4x3xf64>, tensor<4x1xf64>) {
  %ce = tfc.classify_loss_grad ce %logits, %labels, %dl : tensor<4x3xf64>, tensor<4xi32>, tensor<f64>
  %bce = tfc.classify_loss_grad bce %z, %labels, %dl : tensor<4x1xf64>, tensor<4xi32>, tensor<f64>
  return %ce, %bce : tensor<4x3xf64>, tensor<4x1xf64>
}

// -----

// Seeded dropout: the row-major linear index from linalg.index, a splitmix64
// step of (seed * golden) ^ (stream << 40) ^ index, the top 24 bits against
// ceil(rate * 2^24) (here 2^22), kept elements scaled by 1 / (1 - rate).

// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$SEED:.*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x4xf32>, %[[S:[a-z0-9]+]]: tensor<i64>
// CHECK-NOT: tfc.
// CHECK-DAG: %[[THRESHOLD:.*]] = arith.constant 4194304 : i64
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.33333337 : f32
// CHECK-DAG: %[[STREAM:.*]] = arith.constant 5497558138880 : i64
// CHECK-DAG: %[[GOLDEN:.*]] = arith.constant -7046029254386353131 : i64
// CHECK-DAG: %[[MIX1:.*]] = arith.constant -4658895280553007687 : i64
// CHECK-DAG: %[[MIX2:.*]] = arith.constant -7723592293110705685 : i64
// CHECK: linalg.generic {indexing_maps = [#[[$ID3]], #[[$SEED]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S]] : tensor<2x3x4xf32>, tensor<i64>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[SEEDV:.*]]: i64, %{{.*}}: f32):
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: linalg.index 2
// CHECK: %[[I:.*]] = arith.addi
// CHECK: %[[K0:.*]] = arith.muli %[[SEEDV]], %[[GOLDEN]] : i64
// CHECK: %[[K1:.*]] = arith.xori %[[K0]], %[[STREAM]] : i64
// CHECK: %[[K2:.*]] = arith.xori %[[K1]], %[[I]] : i64
// CHECK: arith.addi %[[K2]], %[[GOLDEN]] : i64
// CHECK: arith.shrui
// CHECK: arith.muli %{{.*}}, %[[MIX1]] : i64
// CHECK: arith.shrui
// CHECK: arith.muli %{{.*}}, %[[MIX2]] : i64
// CHECK: arith.shrui
// CHECK: %[[TOP:.*]] = arith.shrui
// CHECK: %[[KEEP:.*]] = arith.cmpi uge, %[[TOP]], %[[THRESHOLD]] : i64
// CHECK: %[[SCALED:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK: arith.select %[[KEEP]], %[[SCALED]], %{{.*}} : f32
// CHECK-NOT: tfc.
// CHECK: return
func.func @dropout(%x: tensor<2x3x4xf32>, %seed: tensor<i64>) -> tensor<2x3x4xf32> {
  %y = tfc.dropout %x rate 2.500000e-01 seed(%seed : tensor<i64>) {stream = 5 : i64} : tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// A dropout without a seed is left for tfc-strip-dropout or tfc-autodiff, so
// the pass reports it.

func.func @dropout_without_seed(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{failed to legalize operation 'tfc.dropout'}}
  %y = tfc.dropout %x rate 1.000000e-01 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
