// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-gpu-emulate-launches | FileCheck %s

// A launch becomes a parallel loop over its blocks holding a loop over its
// threads; the ids come from the loops, the sizes from the launch; what
// depends on the block only is computed once per block.
// CHECK-LABEL: func.func @kernel
// CHECK-DAG: %[[GRID:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[BX:.*]]) = (%[[ZERO]]) to (%[[GRID]]) step (%{{.*}})
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[BX]], %[[THREADS]] : index
// CHECK: scf.for %[[TX:.*]] = %[[ZERO]] to %[[THREADS]] step %{{.*}}
// CHECK-NEXT: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%[[ID]]] : memref<1024xf32>
// CHECK-NOT: gpu.
func.func @kernel(%out: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %id = arith.addi %base, %tx : index
    memref.store %one, %out[%id] : memref<1024xf32>
    gpu.terminator
  }
  return
}

// -----

// A barrier between the body's own operations: every thread runs the part
// before it, then every thread the part after it, in a loop over the
// threads per part; the constants come once per block, and the device
// fences go (threads that run one after another see each other's writes).
// CHECK-LABEL: func.func @phases
// CHECK: scf.parallel (%[[BX:.*]]) =
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 255 : index
// CHECK: scf.for %[[T1:.*]] =
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%[[T1]]] : memref<256xf32>
// CHECK-NEXT: }
// CHECK: scf.for %[[T2:.*]] =
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[T2]]
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.load %arg0[%[[LAST]]] : memref<256xf32>
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.reduce
func.func @phases(%out: memref<256xf32>, %sum: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %one = arith.constant 1.0 : f32
    %last = arith.constant 255 : index
    memref.store %one, %out[%tx] : memref<256xf32>
    llvm.call_intrinsic "llvm.nvvm.membar.gl"() : () -> ()
    gpu.barrier
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %v = memref.load %out[%last] : memref<256xf32>
      memref.store %v, %sum[] : memref<f32>
    }
    gpu.terminator
  }
  return
}

// -----

// A thread's value used across a barrier would need every thread's copy.
func.func @value_across_barrier(%out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  // expected-error @below {{'gpu.launch' op synchronises its threads and cannot be emulated one thread at a time}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %next = arith.addi %tx, %c1 : index
    gpu.barrier
    memref.store %one, %out[%next] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Barriers inside a branch on the block id (a member of a grouped launch):
// the branch is taken once per block, its parts run in loops over the
// threads inside it.
// CHECK-LABEL: func.func @branch_on_block
// CHECK: scf.parallel (%[[BX:.*]]) =
// CHECK: %[[MEMBER:.*]] = arith.cmpi ult, %[[BX]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[MEMBER]] {
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK: } else {
// CHECK-NEXT: scf.for
func.func @branch_on_block(%out: memref<512xf32>, %copy: memref<512xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %first = arith.cmpi ult, %bx, %c1 : index
    scf.if %first {
      memref.store %one, %out[%tx] : memref<512xf32>
      gpu.barrier
      %v = memref.load %out[%c1] : memref<512xf32>
      memref.store %v, %copy[%tx] : memref<512xf32>
    } else {
      memref.store %one, %copy[%c256] : memref<512xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier inside a branch that threads of one block take differently
// cannot be run by parts.
func.func @branch_on_thread(%out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  // expected-error @below {{'gpu.launch' op synchronises its threads and cannot be emulated one thread at a time}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %one, %out[%tx] : memref<256xf32>
    %low = arith.cmpi ult, %tx, %c128 : index
    scf.if %low {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}
