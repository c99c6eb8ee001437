// RUN: tfc-opt %s -split-input-file --tfc-slice-inputs | FileCheck %s

// Two parameters sliced from a read-only flat buffer become two subviews of
// the buffer, each read as a tensor of its own; the whole-buffer tensor
// goes when nothing else reads it.

// CHECK-LABEL: func.func @params
// CHECK-SAME: %[[P:[a-z0-9]+]]: memref<32xf32>
// CHECK-NOT: bufferization.to_tensor %[[P]]
// CHECK: %[[S0:.*]] = memref.subview %[[P]][0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
// CHECK: %[[T0:.*]] = bufferization.to_tensor %[[S0]] restrict : memref<16xf32, strided<[1]>>
// CHECK: %[[S1:.*]] = memref.subview %[[P]][16] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1], offset: 16>>
// CHECK: %[[T1:.*]] = bufferization.to_tensor %[[S1]] restrict : memref<16xf32, strided<[1], offset: 16>>
// CHECK: tensor.expand_shape %[[T1]]
// CHECK: return %[[T0]]
func.func @params(%p: memref<32xf32>) -> (tensor<16xf32>, tensor<4x4xf32>) {
  %t = bufferization.to_tensor %p restrict : memref<32xf32>
  %a = tensor.extract_slice %t[0] [16] [1] : tensor<32xf32> to tensor<16xf32>
  %b = tensor.extract_slice %t[16] [16] [1] : tensor<32xf32> to tensor<16xf32>
  %w = tensor.expand_shape %b [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  return %a, %w : tensor<16xf32>, tensor<4x4xf32>
}

// -----

// A writable input, and one without restrict, keep their slices.

// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.subview
// CHECK: tensor.extract_slice
// CHECK: tensor.extract_slice
func.func @kept(%p: memref<32xf32>, %q: memref<32xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %t = bufferization.to_tensor %p restrict writable : memref<32xf32>
  %u = bufferization.to_tensor %q : memref<32xf32>
  %a = tensor.extract_slice %t[0] [16] [1] : tensor<32xf32> to tensor<16xf32>
  %b = tensor.extract_slice %u[0] [16] [1] : tensor<32xf32> to tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}
