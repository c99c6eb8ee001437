// RUN: tfc-opt %s -split-input-file --tfc-gpu-gather-pads | FileCheck %s

// A causal convolution's input padded by 2 rows in front: one generic over
// the padded shape that reads the source at the row less 2, clamped to
// [0, 1023], and selects 0 where that row is outside the source; the other
// dimensions index the source as they are.
// CHECK-LABEL: func.func @front_pad
// CHECK-NOT: tensor.pad
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8x1026x256xf32>
// CHECK: linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<8x1026x256xf32>)
// CHECK-DAG: %[[B:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[S:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[C:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[SHIFTED:.*]] = arith.subi %[[S]], %c2 : index
// CHECK-DAG: %[[AFTER:.*]] = arith.cmpi sge, %[[SHIFTED]], %c0 : index
// CHECK-DAG: %[[BEFORE:.*]] = arith.cmpi sle, %[[SHIFTED]], %c1023 : index
// CHECK-DAG: %[[INSIDE:.*]] = arith.andi %[[AFTER]], %[[BEFORE]] : i1
// CHECK-DAG: %[[LOW:.*]] = arith.maxsi %[[SHIFTED]], %c0 : index
// CHECK-DAG: %[[ROW:.*]] = arith.minsi %[[LOW]], %c1023 : index
// CHECK: %[[READ:.*]] = tensor.extract %arg0[%[[B]], %[[ROW]], %[[C]]] : tensor<8x1024x256xf32>
// CHECK: %[[VALUE:.*]] = arith.select %[[INSIDE]], %[[READ]], %{{.*}} : f32
// CHECK: linalg.yield %[[VALUE]] : f32
func.func @front_pad(%x: tensor<8x1024x256xf32>) -> tensor<8x1026x256xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 2, 0] high[0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<8x1024x256xf32> to tensor<8x1026x256xf32>
  return %padded : tensor<8x1026x256xf32>
}

// -----

// Padding after the source (the convolution's gradient): the same, the
// shift 0.
// CHECK-LABEL: func.func @back_pad
// CHECK-NOT: tensor.pad
// CHECK: arith.subi %{{.*}}, %c0
// CHECK: arith.cmpi sle, %{{.*}}, %c3 : index
// CHECK: tensor.extract %arg0
// CHECK: arith.select
func.func @back_pad(%x: tensor<4x8xf32>) -> tensor<6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x8xf32>
  return %padded : tensor<6x8xf32>
}

// -----

// A pad of dynamic amount stays a pad.
// CHECK-LABEL: func.func @dynamic_pad
// CHECK: tensor.pad
func.func @dynamic_pad(%x: tensor<4xf32>, %n: index) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[%n] high[0] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<?xf32>
  return %padded : tensor<?xf32>
}
