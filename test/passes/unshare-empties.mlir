// RUN: tfc-opt %s -split-input-file --tfc-unshare-empties | FileCheck %s

// One tensor.empty (as CSE leaves it) is the destination of two kernels:
// each gets a tensor.empty of its own, right before it, and the shared one
// goes.

#map = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @shared
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<8xf32>
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[X:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8xf32>) outs(%[[E0]] : tensor<8xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%[[E1]] : tensor<8xf32>)
// CHECK-NOT: tensor.empty
// CHECK: return %[[X]], %[[Y]]
func.func @shared(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %x = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %x, %y : tensor<8xf32>, tensor<8xf32>
}

// -----

// A tensor.empty with dynamic sizes is cloned with the same sizes, also
// into a nested region; one with a single use stays where it is.

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: %[[N:[a-z0-9]+]]: index
// CHECK: %[[ONE:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[E0:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK-NEXT: tensor.cast %[[E0]]
// CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[ONE]])
// CHECK-NEXT: %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK-NEXT: tensor.cast %[[E1]]
// CHECK-NOT: tensor.empty
func.func @dynamic(%n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%n) : tensor<?xf32>
  %one = tensor.empty() : tensor<4xf32>
  %a = tensor.cast %e : tensor<?xf32> to tensor<4xf32>
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%t = %one) -> tensor<4xf32> {
    %b = tensor.cast %e : tensor<?xf32> to tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
