// RUN: tfc-opt %s -split-input-file --tfc-gpu-group-launches | FileCheck %s

// Three kernels that write three buffers from one input (the query, key
// and value projections): one launch of 2 + 4 + 1 blocks, block ids 0-1
// running the first body, 2-5 the second with its block id less 2, 6 the
// third with its block id less 6; each body sees its own grid size.
// CHECK-LABEL: func.func @independent
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[SEVEN:.*]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[B]], %[[C2]]
// CHECK: scf.if %[[FIRST]] {
// CHECK: arith.constant 2 : index
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: } else {
// CHECK: %[[C6:.*]] = arith.constant 6 : index
// CHECK: %[[SECOND:.*]] = arith.cmpi ult, %[[B]], %[[C6]]
// CHECK: scf.if %[[SECOND]] {
// CHECK: %[[OWN:.*]] = arith.subi %[[B]], %{{.*}} : index
// CHECK: arith.constant 4 : index
// CHECK: memref.store %{{.*}}, %arg2[%[[OWN]]
// CHECK: } else {
// CHECK: arith.subi %[[B]]
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: } {tfc.grouped_launches = 3 : i64}
// CHECK-NOT: gpu.launch
func.func @independent(%x: memref<8xf32>, %q: memref<8xf32>, %k: memref<16xf32>, %v: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %b, %sx : index
    %j = arith.addi %i, %t : index
    %e = memref.load %x[%j] : memref<8xf32>
    %g = arith.index_cast %gx : index to i64
    %f = arith.sitofp %g : i64 to f32
    %r = arith.mulf %e, %f : f32
    memref.store %r, %q[%j] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %b, %sx : index
    %j = arith.addi %i, %t : index
    %g = arith.index_cast %gx : index to i64
    %f = arith.sitofp %g : i64 to f32
    memref.store %f, %k[%b] : memref<16xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %v[%b] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// The second kernel reads what the first writes: two launches. The third
// writes another static slice of the second's output buffer, apart from
// the one the second writes: it joins the second. The fourth writes a
// slice that overlaps: a launch of its own.
// CHECK-LABEL: func.func @dependent
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1,
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2
// CHECK: } {tfc.grouped_launches = 2 : i64}
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1,
// CHECK-NOT: grouped_launches
// CHECK: return
func.func @dependent(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %low = memref.subview %z[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %high = memref.subview %z[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  %mid = memref.subview %z[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %y[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %y[%t] : memref<8xf32>
    memref.store %e, %low[%t] : memref<8xf32, strided<[1]>>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %high[%t] : memref<8xf32, strided<[1], offset: 8>>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %mid[%t] : memref<8xf32, strided<[1], offset: 4>>
    gpu.terminator
  }
  return
}

// -----

// Kernels with shared memory of different types (tensor-core kernels of
// different tiles): one byte buffer as large as the larger member's, which
// each member views as its own tiles, 16-byte aligned one after another.
// CHECK-LABEL: func.func @shared_memory
// CHECK: gpu.launch {{.*}} workgroup(%[[BYTES:.*]] : memref<2048xi8, #gpu.address_space<workgroup>>)
// CHECK: scf.if
// CHECK: memref.view %[[BYTES]][%{{.*}}][] : memref<2048xi8, #gpu.address_space<workgroup>> to memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: } else {
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[BYTES]][%[[C0]]][] : memref<2048xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: memref.view %[[BYTES]][%[[C256]]][] : memref<2048xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
// CHECK: } {tfc.grouped_launches = 2 : i64}
func.func @shared_memory(%x: memref<512xf32>, %y: memref<512xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<16x32xf32, #gpu.address_space<workgroup>>) {
    %e = memref.load %x[%t] : memref<512xf32>
    memref.store %e, %tile[%c0, %t] : memref<16x32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %f = memref.load %tile[%c0, %t] : memref<16x32xf32, #gpu.address_space<workgroup>>
    memref.store %f, %y[%t] : memref<512xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>,
                       %s : memref<8xf32, #gpu.address_space<workgroup>>) {
    %e = memref.load %x[%t] : memref<512xf32>
    memref.store %e, %a[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %f = memref.load %a[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %f, %z[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A kernel of another block size between two that can be grouped: when
// the first does not depend on it nor it on the first, the group steps
// over it (the first kernel moves down to the second's place). In the
// second function the kernel in between reads what the first writes:
// nothing is grouped.
// CHECK-LABEL: func.func @step_over
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c64,
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2,
// CHECK: } {tfc.grouped_launches = 2 : i64}
// CHECK-LABEL: func.func @no_step_over
// CHECK-NOT: grouped_launches
func.func @step_over(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>, %w: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %y[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%b] : memref<8xf32>
    memref.store %e, %w[%b] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %z[%t] : memref<8xf32>
    gpu.terminator
  }
  return
}
func.func @no_step_over(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>, %w: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %y[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %e = memref.load %y[%b] : memref<8xf32>
    memref.store %e, %w[%b] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %z[%t] : memref<8xf32>
    gpu.terminator
  }
  return
}

// -----

// Kernels of 4 and 8 threads alternate (tensor-core kernels of 128 threads
// between element-wise ones of 256): one group is gathered per block size,
// each stepping over the other's launches, which it commutes with. The
// fifth kernel, of 8 threads, reads what the first writes: it closes the
// group of 4 threads (the first and third kernels, one launch at the
// third's place) and joins that of 8 threads (one launch of three at its
// place, after the first). The last kernel, of 4 threads, is a launch of
// its own.
// CHECK-LABEL: func.func @alternating_blocks
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c4
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: } {tfc.grouped_launches = 2 : i64}
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c8
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: memref.store %{{.*}}, %arg4
// CHECK: memref.load %arg1
// CHECK: memref.store %{{.*}}, %arg5
// CHECK: } {tfc.grouped_launches = 3 : i64}
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c4
// CHECK: memref.store %{{.*}}, %arg6
// CHECK-NOT: grouped_launches
// CHECK: return
func.func @alternating_blocks(%x: memref<8xf32>, %a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>,
                              %d: memref<8xf32>, %e: memref<8xf32>, %f: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %sx : index
    %j = arith.addi %i, %t : index
    %v = memref.load %x[%j] : memref<8xf32>
    memref.store %v, %a[%j] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<8xf32>
    memref.store %v, %b[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %sx : index
    %j = arith.addi %i, %t : index
    %v = memref.load %x[%j] : memref<8xf32>
    memref.store %v, %c[%j] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<8xf32>
    memref.store %v, %d[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%t] : memref<8xf32>
    memref.store %v, %e[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %sx : index
    %j = arith.addi %i, %t : index
    %v = memref.load %x[%j] : memref<8xf32>
    memref.store %v, %f[%j] : memref<8xf32>
    gpu.terminator
  }
  return
}

// -----

// Kernels with dynamic shared memory (the warpgroup mma's tiles) group
// with each other, the group taking the most that a member takes, but
// not with a kernel of the same block size without it, which the group
// steps over (the group is built at its last member).
// CHECK-LABEL: func.func @dynamic_shared
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, {{.*}}) threads({{.*}}) in ({{.*}}) {
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: %[[LARGE:.*]] = arith.constant 99328 : i32
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c3, {{.*}}) threads({{.*}}) in ({{.*}}) dynamic_shared_memory_size %[[LARGE]] {
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: } else {
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: } {tfc.grouped_launches = 2 : i64}
// CHECK-NOT: gpu.launch
func.func @dynamic_shared(%x: memref<8xf32>, %q: memref<8xf32>, %k: memref<8xf32>, %v: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %small = arith.constant 66560 : i32
  %large = arith.constant 99328 : i32
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %small {
    %s = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %q[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %v[%t] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %large {
    %s = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %e = memref.load %x[%t] : memref<8xf32>
    memref.store %e, %k[%t] : memref<8xf32>
    gpu.terminator
  }
  return
}
