// RUN: tfc-opt %s -split-input-file --tfc-outline-kernels | FileCheck %s

// Each top-level loop nest becomes a private noinline kernel; constants are
// cloned into it and buffers become arguments.

// CHECK-LABEL: func.func private @step_kernel_0(%{{.*}}: memref<8xf32>)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: scf.for
// CHECK: func.func @step(%[[BUF:.*]]: memref<8xf32>)
// CHECK: call @step_kernel_0(%[[BUF]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: return
func.func @step(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  return
}
