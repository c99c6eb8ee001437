// RUN: tfc-opt %s -split-input-file --tfc-parallel-outer-loops | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-parallel-outer-loops=min-work=1 | FileCheck %s --check-prefix=ALL

// The outer loop of a big nest stays parallel; the nested one becomes
// scf.for loops.

// CHECK-LABEL: func.func @nest
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c64)
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
func.func @nest(%m: memref<64x32x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.parallel (%j, %k) = (%c0, %c0) to (%c32, %c16) step (%c1, %c1) {
      memref.store %one, %m[%i, %j, %k] : memref<64x32x16xf32>
    }
  }
  return
}

// -----

// A small nest (64 x 32 iterations, below the default 8192) runs on one
// thread; with min-work=1 it forks.

// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// ALL-LABEL: func.func @small
// ALL: scf.parallel
func.func @small(%m: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c32) step (%c1, %c1) {
    memref.store %one, %m[%i, %j] : memref<64x32xf32>
  }
  return
}

// -----

// Loops that hold vector code (the contraction kernels) count as enough
// work whatever their bounds.

// CHECK-LABEL: func.func @vector_kernel
// CHECK: scf.parallel
func.func @vector_kernel(%m: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = arith.constant dense<1.0> : vector<16xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    vector.store %v, %m[%i, %c0] : memref<4x16xf32>, vector<16xf32>
  }
  return
}

// -----

// Of a 4-d nest only the leading dimensions that make 16 iterations
// (8 x 8) stay parallel; the inner two become scf.for.

// CHECK-LABEL: func.func @prefix
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c8, %c8)
// CHECK: scf.for %{{.*}} = %c0 to %c64
// CHECK: scf.for %{{.*}} = %c0 to %c64
// CHECK-NOT: scf.parallel
func.func @prefix(%m: memref<8x8x64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%a, %b, %i, %j) = (%c0, %c0, %c0, %c0) to (%c8, %c8, %c64, %c64)
      step (%c1, %c1, %c1, %c1) {
    memref.store %one, %m[%a, %b, %i, %j] : memref<8x8x64x64xf32>
  }
  return
}

// -----

// A parallel loop that becomes sequential whole (too little work) takes its
// stack buffers along: a parallel body is an allocation scope, an scf.for
// body is not, so the alloca moves before the loop and serves every
// iteration instead of growing the stack at each.

// CHECK-LABEL: func.func @stack_buffers
// CHECK: %[[BUF:.*]] = memref.alloca() : memref<16xf32>
// CHECK-NEXT: scf.for
// CHECK-NOT: memref.alloca
// CHECK: memref.store %{{.*}}, %[[BUF]]
// ALL-LABEL: func.func @stack_buffers
// ALL: scf.parallel
// ALL-NEXT: memref.alloca() : memref<16xf32>
func.func @stack_buffers(%m: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %buf = memref.alloca() : memref<16xf32>
    scf.for %j = %c0 to %c16 step %c1 {
      memref.store %one, %buf[%j] : memref<16xf32>
    }
    %x = memref.load %buf[%c0] : memref<16xf32>
    memref.store %x, %m[%i, %c0] : memref<4x16xf32>
  }
  return
}
