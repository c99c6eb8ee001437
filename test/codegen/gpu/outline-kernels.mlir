// RUN: tfc-opt %s -split-input-file --tfc-gpu-outline-kernels | FileCheck %s

// Two launches of the same work on buffers of one type share a kernel; a
// third, different one gets its own. Constants become immediates. Kernels live in one module, named by
// their number, and the constant global one reads is copied into it.
// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @layers
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k0 blocks in ({{.*}}) threads in ({{.*}}) args(%arg0 : memref<64xf32>)
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k0 blocks in ({{.*}}) threads in ({{.*}}) args(%arg1 : memref<64xf32>)
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k1
// CHECK: gpu.module @tfc_kernels
// CHECK-DAG: gpu.func @tfc_k0(%{{.*}}: memref<64xf32> {llvm.align = 16 : i64}) kernel
// CHECK-DAG: gpu.func @tfc_k1(
// CHECK-DAG: memref.global "private" constant @scale
// CHECK-NOT: gpu.func
memref.global "private" constant @scale : memref<f32> = dense<2.0>
func.func @layers(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %one, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %one, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %g = memref.get_global @scale : memref<f32>
    %s = memref.load %g[] : memref<f32>
    %x = memref.load %a[%tx] : memref<64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Every buffer argument's pointer is declared 16-byte aligned: it is the
// aligned pointer of the buffer it views (a device allocation or an arena)
// plus the 64-byte multiples of memref.view shifts, and the kernel adds its
// type's static offset itself, so LLVM knows each access's alignment from
// both (16 bytes at offset 4 floats, 4 at offset 3).
// CHECK-LABEL: func.func @aligned
// CHECK: gpu.func @tfc_k0(
// CHECK-SAME: %{{.*}}: memref<8xf32, strided<[1], offset: 4>> {llvm.align = 16 : i64}
// CHECK-SAME: %{{.*}}: memref<8xf32, strided<[1], offset: 3>> {llvm.align = 16 : i64}
// CHECK-SAME: %{{.*}}: memref<64xf32> {llvm.align = 16 : i64}
func.func @aligned(%a: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %at4 = memref.subview %a[4] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1], offset: 4>>
  %at3 = memref.subview %a[3] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1], offset: 3>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %x = memref.load %at4[%tx] : memref<8xf32, strided<[1], offset: 4>>
    %y = memref.load %at3[%tx] : memref<8xf32, strided<[1], offset: 3>>
    %s = arith.addf %x, %y : f32
    memref.store %s, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// The manifest's kernels_per_step counts the launches one step makes: a
// launch in host loops once per iteration, the loops' bounds evaluated
// from constants and induction variables (a causal triangle of blocks:
// 1 + 2 + 3 + 4, then one launch after it: 11 in tfc_train_step); a
// launch under a loop whose bound is not known counts once (1 in
// tfc_optimizer_step).
// CHECK-LABEL: llvm.mlir.global external constant @tfc_model_manifest
// CHECK-SAME: "tfc-manifest 1\0Akernels_per_step 12\0Aend\0A\00"
llvm.mlir.global external constant @tfc_model_manifest("tfc-manifest 1\0Aend\0A\00") {addr_space = 0 : i32}
func.func @tfc_train_step(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %n = arith.addi %i, %c1 : index
    scf.for %j = %c0 to %n step %c1 {
      gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
        memref.store %one, %a[%tx] : memref<64xf32>
        gpu.terminator
      }
    }
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %one, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
func.func @tfc_optimizer_step(%a: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      memref.store %one, %a[%tx] : memref<64xf32>
      gpu.terminator
    }
  }
  return
}
