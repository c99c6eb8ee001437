// RUN: tfc-opt %s -split-input-file -allow-unregistered-dialect --tfc-materialize-insert-chains | FileCheck %s

// Disjoint slices of a zero-filled tensor, materialized in a buffer: the
// buffer is filled first and the slices' views are made next to the fill
// (so that they dominate the sources' computations, for
// eliminate-empty-tensors); each slice is written into its view right
// after its source is computed, `restrict` since the views are disjoint.

// CHECK-LABEL: func.func @pack(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>, %[[OUT:.*]]: memref<16xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[OUT]] : memref<16xf32>)
// CHECK-NEXT: %[[VA:.*]] = memref.subview %[[OUT]][0] [4] [1]
// CHECK-NEXT: %[[VB:.*]] = memref.subview %[[OUT]][8] [4] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in restrict writable %[[VA]] : (tensor<4xf32>, memref<4xf32, strided<[1]>>) -> ()
// CHECK: %[[B:.*]] = linalg.generic
// CHECK: bufferization.materialize_in_destination %[[B]] in restrict writable %[[VB]] : (tensor<4xf32>, memref<4xf32, strided<[1], offset: 8>>) -> ()
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: tensor.empty
// CHECK: return
#id = affine_map<(d0) -> (d0)>
func.func @pack(%a: tensor<4xf32>, %out: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %0 = tensor.insert_slice %a into %z[0] [4] [1] : tensor<4xf32> into tensor<16xf32>
  %1 = tensor.insert_slice %b into %0[8] [4] [1] : tensor<4xf32> into tensor<16xf32>
  bufferization.materialize_in_destination %1 in restrict writable %out : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

// Rank-reducing inserts into a 2-d buffer.

// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[R:.*]]: tensor<3xf32>, %[[OUT:.*]]: memref<2x3xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<2x3xf32>)
// CHECK: %[[V0:.*]] = memref.subview %[[OUT]][0, 0] [1, 3] [1, 1] : memref<2x3xf32> to memref<3xf32, strided<[1]>>
// CHECK-NEXT: %[[V1:.*]] = memref.subview %[[OUT]][1, 0] [1, 3] [1, 1] : memref<2x3xf32> to memref<3xf32, strided<[1], offset: 3>>
// CHECK-NEXT: bufferization.materialize_in_destination %[[R]] in restrict writable %[[V0]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[R]] in restrict writable %[[V1]]
// CHECK-NEXT: return
func.func @rows(%r: tensor<3xf32>, %out: memref<2x3xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = tensor.insert_slice %r into %z[0, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<2x3xf32>
  %1 = tensor.insert_slice %r into %0[1, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<2x3xf32>
  bufferization.materialize_in_destination %1 in restrict writable %out : (tensor<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// Overlapping slices keep their order, at the place of the original
// materialization, without `restrict`.

// CHECK-LABEL: func.func @overlap(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[OUT:.*]]: memref<8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<8xf32>)
// CHECK-NEXT: %[[VA:.*]] = memref.subview %[[OUT]][0] [4] [1]
// CHECK-NEXT: %[[VB:.*]] = memref.subview %[[OUT]][2] [4] [1]
// CHECK-NEXT: "test.before"
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in writable %[[VA]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[B]] in writable %[[VB]]
// CHECK-NEXT: return
func.func @overlap(%a: tensor<4xf32>, %b: tensor<4xf32>, %out: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %0 = tensor.insert_slice %a into %z[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %1 = tensor.insert_slice %b into %0[2] [4] [1] : tensor<4xf32> into tensor<8xf32>
  "test.before"() : () -> ()
  bufferization.materialize_in_destination %1 in restrict writable %out : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// Dynamic offsets: the slices may overlap, so they are written in order
// where the chain was materialized.

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>, %[[I:.*]]: index, %[[OUT:.*]]: memref<8xf32>
// CHECK: linalg.fill
// CHECK-NEXT: %[[V0:.*]] = memref.subview %[[OUT]][0] [4] [1]
// CHECK-NEXT: %[[V1:.*]] = memref.subview %[[OUT]][%[[I]]] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in writable %[[V0]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in writable %[[V1]]
// CHECK-NEXT: return
func.func @dynamic(%a: tensor<4xf32>, %i: index, %out: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %0 = tensor.insert_slice %a into %z[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %1 = tensor.insert_slice %a into %0[%i] [4] [1] : tensor<4xf32> into tensor<8xf32>
  bufferization.materialize_in_destination %1 in restrict writable %out : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// A 1-d chain into any other tensor (the optimizer's new parameters, an
// update of the trained prefix of the old ones): the slices are written as
// above, and the base's elements around them are copied from it.

// CHECK-LABEL: func.func @into_tensor(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>, %[[T:.*]]: tensor<12xf32>, %[[OUT:.*]]: memref<12xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[VA:.*]] = memref.subview %[[OUT]][2] [4] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in restrict writable %[[VA]]
// CHECK-NEXT: %[[HEAD:.*]] = tensor.extract_slice %[[T]][0] [2] [1]
// CHECK-NEXT: %[[VH:.*]] = memref.subview %[[OUT]][0] [2] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[HEAD]] in restrict writable %[[VH]]
// CHECK-NEXT: %[[TAIL:.*]] = tensor.extract_slice %[[T]][6] [6] [1]
// CHECK-NEXT: %[[VT:.*]] = memref.subview %[[OUT]][6] [6] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[TAIL]] in restrict writable %[[VT]]
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @into_tensor(%a: tensor<4xf32>, %t: tensor<12xf32>, %out: memref<12xf32>) {
  %0 = tensor.insert_slice %a into %t[2] [4] [1] : tensor<4xf32> into tensor<12xf32>
  bufferization.materialize_in_destination %0 in restrict writable %out : (tensor<12xf32>, memref<12xf32>) -> ()
  return
}

// -----

// Without `restrict` the buffer may be the memory of another argument (the
// optimizer's new parameters are its old ones): the slice and the copies
// around it are written where the chain was materialized, without
// `restrict`, so that nothing is computed in the buffer before then.

// CHECK-LABEL: func.func @may_alias(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>, %[[T:.*]]: tensor<8xf32>, %[[OUT:.*]]: memref<8xf32>
// CHECK: %[[VA:.*]] = memref.subview %[[OUT]][0] [4] [1]
// CHECK-NEXT: "test.before"
// CHECK-NEXT: %[[TAIL:.*]] = tensor.extract_slice %[[T]][4] [4] [1]
// CHECK-NEXT: %[[VT:.*]] = memref.subview %[[OUT]][4] [4] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[TAIL]] in writable %[[VT]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in writable %[[VA]]
// CHECK-NEXT: return
func.func @may_alias(%a: tensor<4xf32>, %t: tensor<8xf32>, %out: memref<8xf32>) {
  %0 = tensor.insert_slice %a into %t[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  "test.before"() : () -> ()
  bufferization.materialize_in_destination %0 in writable %out : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// Left alone: a 2-d chain into a tensor that is not a fresh fill, an
// intermediate link has another use, or the buffer is used elsewhere.

// CHECK-LABEL: func.func @not_fresh(
// CHECK: tensor.insert_slice
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable
func.func @not_fresh(%a: tensor<1x4xf32>, %t: tensor<2x4xf32>, %out: memref<2x4xf32>) {
  %0 = tensor.insert_slice %a into %t[0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<2x4xf32>
  bufferization.materialize_in_destination %0 in restrict writable %out : (tensor<2x4xf32>, memref<2x4xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @shared_link(
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable
func.func @shared_link(%a: tensor<4xf32>, %out: memref<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %0 = tensor.insert_slice %a into %z[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %1 = tensor.insert_slice %a into %0[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  bufferization.materialize_in_destination %1 in restrict writable %out : (tensor<8xf32>, memref<8xf32>) -> ()
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @buffer_used_elsewhere(
// CHECK: tensor.insert_slice
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable
func.func @buffer_used_elsewhere(%a: tensor<4xf32>, %out: memref<8xf32>) -> memref<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %0 = tensor.insert_slice %a into %z[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  bufferization.materialize_in_destination %0 in restrict writable %out : (tensor<8xf32>, memref<8xf32>) -> ()
  return %out : memref<8xf32>
}
