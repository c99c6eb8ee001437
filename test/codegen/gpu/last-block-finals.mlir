// RUN: tfc-opt %s -split-input-file --tfc-gpu-last-block-finals | FileCheck %s

// A sum split in two: 2 blocks of 4 threads write 8 partial sums, then one
// thread adds them up. The thread runs at the end of the partials' kernel,
// in the block that counts itself the second done (the count before it
// 1), after a device fence and a barrier; it fences again, runs the sum
// with ids 0 and sizes 1, and sets the counter back to 0.
// CHECK: memref.global "private" @tfc_blocks_done : memref<1xi32> = dense<0>
// CHECK-LABEL: func.func @split_sum
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %[[TY:.*]], %[[TZ:.*]]) in
// CHECK: memref.store %{{.*}}, %arg1
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.membar.gl"() : () -> ()
// CHECK-NEXT: gpu.barrier
// CHECK: %[[X0:.*]] = arith.cmpi eq, %[[TX]], %[[ZERO:.*]] : index
// CHECK: %[[Y0:.*]] = arith.cmpi eq, %[[TY]], %[[ZERO]] : index
// CHECK: %[[XY0:.*]] = arith.andi %[[X0]], %[[Y0]] : i1
// CHECK: %[[Z0:.*]] = arith.cmpi eq, %[[TZ]], %[[ZERO]] : index
// CHECK: %[[FIRST:.*]] = arith.andi %[[XY0]], %[[Z0]] : i1
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[DONE:.*]] = memref.get_global @tfc_blocks_done : memref<1xi32>
// CHECK: %[[BEFORE:.*]] = memref.atomic_rmw addi %{{.*}}, %[[DONE]][%[[ZERO]]] : (i32, memref<1xi32>) -> i32
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[BEFORE]], %[[C1]] : i32
// CHECK: scf.if %[[LAST]] {
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.membar.gl"() : () -> ()
// CHECK: scf.for
// CHECK: memref.load %arg1
// CHECK: memref.store %{{.*}}, %arg2[]
// CHECK: memref.store %{{.*}}, %[[DONE]][%[[ZERO]]] : memref<1xi32>
// CHECK-NOT: gpu.launch
func.func @split_sum(%x: memref<8xf32>, %partial: memref<8xf32>, %sum: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %b, %sx : index
    %j = arith.addi %i, %t : index
    %e = memref.load %x[%j] : memref<8xf32>
    %s = arith.mulf %e, %e : f32
    memref.store %s, %partial[%j] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %total = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %p = memref.load %partial[%k] : memref<8xf32>
      %next = arith.addf %acc, %p : f32
      scf.yield %next : f32
    }
    memref.store %total, %sum[] : memref<f32>
    gpu.terminator
  }
  return
}

// -----

// A kernel of two threads after the partials is not a final: two launches.
// CHECK-LABEL: func.func @two_threads
// CHECK: gpu.launch
// CHECK-NOT: membar
// CHECK: gpu.launch
func.func @two_threads(%partial: memref<8xf32>, %sum: memref<2xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %b, %sx : index
    %j = arith.addi %i, %t : index
    memref.store %one, %partial[%j] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
    %p = memref.load %partial[%t] : memref<8xf32>
    memref.store %p, %sum[%t] : memref<2xf32>
    gpu.terminator
  }
  return
}

// -----

// The host writes memory between the two: they stay apart.
// CHECK-LABEL: func.func @host_write_between
// CHECK: gpu.launch
// CHECK: memref.store
// CHECK-NOT: membar
// CHECK: gpu.launch
func.func @host_write_between(%partial: memref<8xf32>, %scale: memref<f32>, %sum: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %b, %sx : index
    %j = arith.addi %i, %t : index
    memref.store %one, %partial[%j] : memref<8xf32>
    gpu.terminator
  }
  memref.store %one, %scale[] : memref<f32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %p = memref.load %partial[%c0] : memref<8xf32>
    %s = memref.load %scale[] : memref<f32>
    %r = arith.mulf %p, %s : f32
    memref.store %r, %sum[] : memref<f32>
    gpu.terminator
  }
  return
}

// -----

// Two one-thread kernels in a row after the partials: both run in the
// partials' last block to finish, one after the other, before the counter
// is set back to 0.
// CHECK: memref.global "private" @tfc_blocks_done
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @two_finals
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2,
// CHECK: memref.atomic_rmw
// CHECK-NOT: gpu.launch
// CHECK: memref.store %{{.*}}, %arg1[]
// CHECK-NEXT: memref.load %arg1[]
// CHECK-NEXT: memref.store %{{.*}}, %arg2[]
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: memref.store %{{.*}} : memref<1xi32>
// CHECK-NOT: gpu.launch
func.func @two_finals(%partial: memref<8xf32>, %first: memref<f32>, %second: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %b, %sx : index
    %j = arith.addi %i, %t : index
    memref.store %one, %partial[%j] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %p = memref.load %partial[%c0] : memref<8xf32>
    memref.store %p, %first[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %p = memref.load %first[] : memref<f32>
    memref.store %p, %second[] : memref<f32>
    gpu.terminator
  }
  return
}
