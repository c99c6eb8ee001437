// RUN: tfc-opt %s -split-input-file --tfc-gpu-map-kernels | FileCheck %s

// A parallel nest: one thread per iteration, the two dimensions linearised
// row-major (the inner one from the remainder), guarded against the
// threads past the end (a block of 256 threads for its 32 iterations, so
// that it can be grouped with others of 256); the argument sizes and the
// written arguments are recorded.
// CHECK-LABEL: func.func @parallel_2d
// CHECK-SAME: tfc.gpu.arg_bytes = array<i64: 128>, tfc.gpu.written = array<i64: 0>
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]],
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[ID]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.divui %[[ID]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x8xf32>
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
func.func @parallel_2d(%out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %one, %out[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// More iterations than one block: blocks of 256 threads.
// CHECK-LABEL: func.func @parallel_many
// CHECK-DAG: %[[GRID:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[THREADS]],
func.func @parallel_many(%out: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    memref.store %one, %out[%i] : memref<1000xf32>
    scf.reduce
  }
  return
}

// -----

// A serial loop (a sum into one scalar) runs in a kernel of one thread.
// CHECK-LABEL: func.func @serial_loop
// CHECK-SAME: tfc.gpu.written = array<i64: 1>
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[ONE]],
// CHECK-NEXT: arith.constant
// CHECK: scf.for
// CHECK: memref.store
// CHECK: gpu.terminator
func.func @serial_loop(%in: memref<16xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %in[%i] : memref<16xf32>
    %acc = memref.load %out[] : memref<f32>
    %sum = arith.addf %acc, %x : f32
    memref.store %sum, %out[] : memref<f32>
  }
  return
}

// -----

// A scalar read on the host (the optimizer's step) and the arithmetic on
// it move into the kernel that uses them: the host reads no device memory.
// CHECK-LABEL: func.func @scalar_read
// CHECK-NOT: memref.load
// CHECK: gpu.launch
// CHECK: %[[STEP:.*]] = memref.load %arg0[] : memref<i64>
// CHECK: %[[F:.*]] = arith.sitofp %[[STEP]] : i64 to f32
// CHECK: arith.mulf %{{.*}}, %[[F]] : f32
func.func @scalar_read(%step: memref<i64>, %params: memref<300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  %s = memref.load %step[] : memref<i64>
  %f = arith.sitofp %s : i64 to f32
  scf.parallel (%i) = (%c0) to (%c300) step (%c1) {
    %p = memref.load %params[%i] : memref<300xf32>
    %q = arith.mulf %p, %f : f32
    memref.store %q, %params[%i] : memref<300xf32>
    scf.reduce
  }
  return
}

// -----

// A loop over blocks stays on the host and launches a kernel per block;
// the block's view, at an offset only the loop knows, moves into the
// kernel, which receives the static buffer and the offset.
// CHECK-LABEL: func.func @block_loop
// CHECK-NOT: memref.subview
// CHECK: scf.for %[[B:.*]] = 
// CHECK: gpu.launch
// CHECK: memref.subview %arg0[%[[B]]] [16] [1]
func.func @block_loop(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.for %b = %c0 to %c64 step %c16 {
    %block = memref.subview %x[%b] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
      memref.store %one, %block[%i] : memref<16xf32, strided<[1], offset: ?>>
      scf.reduce
    }
  }
  return
}
