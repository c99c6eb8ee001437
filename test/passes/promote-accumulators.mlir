// RUN: tfc-opt %s --tfc-promote-accumulators -split-input-file | FileCheck %s

// A row sum lowered to loops: the element is loaded before the reduction
// loop, carried through iter_args, and stored after it.

// CHECK-LABEL: func.func @row_sum
// CHECK-SAME:    (%[[X:.*]]: memref<8x64xf32>, %[[S:.*]]: memref<8xf32>)
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           %[[INIT:.*]] = memref.load %[[S]][%[[I]]]
// CHECK:           %[[SUM:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT:        %[[R:.*]] = arith.addf %[[ACC]], %[[V]]
// CHECK-NEXT:        scf.yield %[[R]] : f32
// CHECK:           memref.store %[[SUM]], %[[S]][%[[I]]]
func.func @row_sum(%x: memref<8x64xf32>, %s: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %k = %c0 to %c64 step %c1 {
      %a = memref.load %s[%i] : memref<8xf32>
      %v = memref.load %x[%i, %k] : memref<8x64xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %s[%i] : memref<8xf32>
    }
  }
  return
}

// -----

// Two outputs reduced in one loop (a LayerNorm gradient's two row sums).

// CHECK-LABEL: func.func @two_sums
// CHECK:         %[[A0:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK:         %[[B0:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK:         %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[A0]], %{{.*}} = %[[B0]]) -> (f32, f32)
// CHECK:         memref.store %[[R]]#0
// CHECK:         memref.store %[[R]]#1
func.func @two_sums(%x: memref<8x64xf32>, %y: memref<8x64xf32>,
                    %s: memref<8xf32>, %t: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %k] : memref<8x64xf32>
      %w = memref.load %y[%i, %k] : memref<8x64xf32>
      %a = memref.load %s[%i] : memref<8xf32>
      %b = memref.load %t[%i] : memref<8xf32>
      %p = arith.mulf %v, %w : f32
      %ra = arith.addf %a, %v : f32
      %rb = arith.addf %b, %p : f32
      memref.store %ra, %s[%i] : memref<8xf32>
      memref.store %rb, %t[%i] : memref<8xf32>
    }
  }
  return
}

// -----

// Left alone: a store whose index changes with the loop (an element-wise
// loop), a second load of the accumulator's buffer at another place, and
// a body with a nested loop.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     iter_args
func.func @left_alone(%x: memref<64xf32>, %y: memref<64xf32>,
                      %s: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  scf.for %k = %c0 to %c64 step %c1 {
    %v = memref.load %x[%k] : memref<64xf32>
    memref.store %v, %y[%k] : memref<64xf32>
  }
  scf.for %k = %c0 to %c64 step %c1 {
    %a = memref.load %s[%c0] : memref<8xf32>
    %b = memref.load %s[%c1] : memref<8xf32>
    %r = arith.addf %a, %b : f32
    memref.store %r, %s[%c0] : memref<8xf32>
  }
  scf.for %k = %c0 to %c64 step %c1 {
    %a = memref.load %s[%c0] : memref<8xf32>
    scf.for %j = %c0 to %c2 step %c1 {
      memref.store %a, %s[%c1] : memref<8xf32>
    }
    memref.store %a, %s[%c0] : memref<8xf32>
  }
  return
}
