// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-gpu-emulate-launches | FileCheck %s

// A launch becomes a parallel loop over its blocks holding a loop over its
// threads; the ids come from the loops, the sizes from the launch.
// CHECK-LABEL: func.func @kernel
// CHECK-DAG: %[[GRID:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[BX:.*]]) = (%[[ZERO]]) to (%[[GRID]]) step (%{{.*}})
// CHECK-NEXT: scf.for %[[TX:.*]] = %[[ZERO]] to %[[THREADS]] step %{{.*}}
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[BX]], %[[THREADS]] : index
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

// Threads that wait for each other cannot run one at a time.
func.func @barrier(%out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  // expected-error @below {{'gpu.launch' op synchronises its threads and cannot be emulated one thread at a time}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %one, %out[%tx] : memref<256xf32>
    gpu.barrier
    gpu.terminator
  }
  return
}
