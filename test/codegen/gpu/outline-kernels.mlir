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
