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

// -----

// Loop nests with the same body over different buffers share one kernel;
// one that differs (another constant) gets its own.

// CHECK-LABEL: func.func private @twice_kernel_0(%{{.*}}: memref<8xf32>)
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK-LABEL: func.func private @twice_kernel_1(%{{.*}}: memref<8xf32>)
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK-NOT: func.func private @twice_kernel_2
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>)
// CHECK: call @twice_kernel_0(%[[A]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @twice_kernel_0(%[[B]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @twice_kernel_1(%[[B]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: return
func.func @twice(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %b[%i] : memref<8xf32>
  }
  return
}

// -----

// The same body over a buffer used twice and over two buffers are different
// kernels (one argument against two).

// CHECK-LABEL: func.func private @alias_kernel_0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK-LABEL: func.func private @alias_kernel_1(%{{.*}}: memref<8xf32>)
// CHECK-LABEL: func.func @alias(
// CHECK: call @alias_kernel_0(
// CHECK-NEXT: call @alias_kernel_1(
func.func @alias(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// The loop nests of one training step, counted over tfc_train_step and
// tfc_optimizer_step (two and one here), are recorded in the manifest as
// kernels_per_step, before its `end`.

// CHECK-LABEL: llvm.mlir.global external constant @tfc_model_manifest
// CHECK-SAME: "tfc-manifest 1\0Aparams 8\0Akernels_per_step 3\0Aend\0A\00"
llvm.mlir.global external constant @tfc_model_manifest("tfc-manifest 1\0Aparams 8\0Aend\0A\00") {addr_space = 0 : i32}
func.func @tfc_train_step(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.addf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  return
}
func.func @tfc_optimizer_step(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.subf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  return
}
