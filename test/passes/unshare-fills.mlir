// RUN: tfc-opt %s -split-input-file --tfc-unshare-fills | FileCheck %s

// One zero fill (as CSE leaves it) initialises two accumulators: each gets
// a tensor.empty and a fill of its own, right before it, and the shared
// fill goes, so that bufferization fills each buffer in place instead of
// copying.

#id = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (j, k)>
#o = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @shared
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<8x4xf32>, %[[B:[a-z0-9]+]]: tensor<8x4xf32>, %[[W:[a-z0-9]+]]: tensor<16x4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[F0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E0]] : tensor<8x16xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}}ins(%[[A]], %[[W]] : {{.*}}) outs(%[[F0]] : tensor<8x16xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E1]] : tensor<8x16xf32>)
// CHECK: %[[Q:.*]] = linalg.generic {{.*}}ins(%[[B]], %[[W]] : {{.*}}) outs(%[[F1]] : tensor<8x16xf32>)
// CHECK: return %[[P]], %[[Q]]
func.func @shared(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>, %w: tensor<16x4xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %p = linalg.generic {indexing_maps = [#id, #w, #o],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%f : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %q = linalg.generic {indexing_maps = [#id, #w, #o],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%b, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%f : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %p, %q : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A fill with a single use, and one into a tensor that is not a
// tensor.empty, stay as they are.

// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @left_alone(%t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.fill ins(%one : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  return %f, %g, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A fill that one op updates in place and another only reads: the update
// gets its own fill, the read keeps the original.

#id1 = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @read_and_update
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[OWN:.*]] = linalg.fill
// CHECK: %[[U:.*]] = linalg.generic {{.*}}ins(%{{.*}} : tensor<4xf32>) outs(%[[OWN]] : tensor<4xf32>)
// CHECK: return %[[U]], %[[F]]
func.func @read_and_update(%t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %u = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t : tensor<4xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %u, %f : tensor<4xf32>, tensor<4xf32>
}
