// RUN: tfc-opt %s --tfc-strip-dropout -split-input-file | FileCheck %s

// An evaluation-only build: a dropout without a seed is the identity, so
// its uses take its input and the op goes.

// CHECK-LABEL: func.func @unseeded
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: tfc.dropout
// CHECK: %[[Y:.*]] = tfc.add %[[X]], %[[X]]
// CHECK: return %[[Y]]
func.func @unseeded(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %d = tfc.dropout %x rate 1.000000e-01 : tensor<2x3xf32>
  %y = tfc.add %d, %d : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A seeded dropout (one of a training step) is left alone.

// CHECK-LABEL: func.func @seeded
// CHECK: %[[Y:.*]] = tfc.dropout %{{.*}} rate 2.500000e-01 seed(%{{.*}} : tensor<i64>)
// CHECK: return %[[Y]]
func.func @seeded(%x: tensor<2x3xf32>, %seed: tensor<i64>) -> tensor<2x3xf32> {
  %y = tfc.dropout %x rate 2.500000e-01 seed(%seed : tensor<i64>) {stream = 1 : i64} : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
