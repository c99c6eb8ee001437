// RUN: tfc-opt %s -split-input-file --tfc-gpu-parallel-scatter="max-table-rows=128" | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-gpu-parallel-scatter | FileCheck %s --check-prefix=ROWS

// CHECK lines: tables of more rows than max-table-rows (a thread per
// channel). ROWS lines: the default, 1,024 rows at most (a thread per
// element of a table of 256 rows).

// The embedding gradient as LowerGradOps writes it, on buffers: the loop
// over the 64 channels becomes an scf.parallel around the loop over the
// 4,096 positions, which reads the position's token, clamps it and adds
// the position's gradient into the table, in the order of the positions.
// The table's users read the table itself.
// CHECK-LABEL: func.func @embedding_grad
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<256x64xf32>
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[ID:.*]] = memref.load %arg0[%[[T]]] : memref<4096xi32>
// CHECK: %[[ROW:.*]] = arith.select
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[TABLE]][%[[ROW]], %[[C]]]
// CHECK-NEXT: %[[G:.*]] = memref.load %arg1[%[[T]], %[[C]]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[G]]
// CHECK-NEXT: memref.store %[[SUM]], %[[TABLE]][%[[ROW]], %[[C]]]
// CHECK-NOT: scf.for
// CHECK: memref.copy %[[TABLE]], %arg2

// A thread per element (row, channel) of the 256 x 64 table: each runs
// over every position and adds the terms of the positions whose token's
// row is its own, in the order of the positions.
// ROWS-LABEL: func.func @embedding_grad
// ROWS: %[[TABLE:.*]] = memref.alloc() : memref<256x64xf32>
// ROWS: %[[ROWS:.*]] = arith.constant 256 : index
// ROWS: scf.parallel (%[[R:.*]], %[[C:.*]]) = (%{{.*}}, %{{.*}}) to (%[[ROWS]], %c64) step (%{{.*}}, %{{.*}}) {
// ROWS-NEXT: scf.for %[[T:.*]] = %{{.*}} to %c4096 step %{{.*}} {
// ROWS-NEXT: %[[ID:.*]] = memref.load %arg0[%[[T]]] : memref<4096xi32>
// ROWS: %[[ROW:.*]] = arith.select
// ROWS-NEXT: %[[OWN:.*]] = arith.cmpi eq, %[[ROW]], %[[R]]
// ROWS-NEXT: scf.if %[[OWN]] {
// ROWS-NEXT: %[[OLD:.*]] = memref.load %[[TABLE]][%[[ROW]], %[[C]]]
// ROWS-NEXT: %[[G:.*]] = memref.load %arg1[%[[T]], %[[C]]]
// ROWS-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[G]]
// ROWS-NEXT: memref.store %[[SUM]], %[[TABLE]][%[[ROW]], %[[C]]]
// ROWS-NEXT: }
// ROWS-NEXT: }
// ROWS-NEXT: scf.reduce
// ROWS: memref.copy %[[TABLE]], %arg2
func.func @embedding_grad(%ids: memref<4096xi32>, %grad: memref<4096x64xf32>, %out: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  %table = memref.alloc() : memref<256x64xf32>
  linalg.fill ins(%zero : f32) outs(%table : memref<256x64xf32>)
  %r = scf.for %t = %c0 to %c4096 step %c1 iter_args(%acc = %table) -> (memref<256x64xf32>) {
    %id = memref.load %ids[%t] : memref<4096xi32>
    %i = arith.index_cast %id : i32 to index
    %lt = arith.cmpi slt, %i, %c0 : index
    %ge = arith.cmpi sge, %i, %c256 : index
    %bad = arith.ori %lt, %ge : i1
    %row = arith.select %bad, %c0, %i : index
    %s = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc2 = %acc) -> (memref<256x64xf32>) {
      %old = memref.load %acc2[%row, %c] : memref<256x64xf32>
      %g = memref.load %grad[%t, %c] : memref<4096x64xf32>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %acc2[%row, %c] : memref<256x64xf32>
      scf.yield %acc2 : memref<256x64xf32>
    }
    scf.yield %s : memref<256x64xf32>
  }
  memref.copy %r, %out : memref<256x64xf32> to memref<256x64xf32>
  return
}

// -----

// Left alone: a store whose last index is not the channel (channels would
// write each other's elements), a nest into a buffer it did not allocate
// (a function argument, which another name could alias), and one into a
// buffer that a view names before the nest.
// CHECK-LABEL: func.func @not_scatter
// CHECK-NOT: scf.parallel
// ROWS-LABEL: func.func @not_scatter
// ROWS-NOT: scf.parallel
func.func @not_scatter(%ids: memref<4096xindex>, %grad: memref<4096x64xf32>, %arg: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %table = memref.alloc() : memref<256x64xf32>
  %r = scf.for %t = %c0 to %c4096 step %c1 iter_args(%acc = %table) -> (memref<256x64xf32>) {
    %row = memref.load %ids[%t] : memref<4096xindex>
    %s = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc2 = %acc) -> (memref<256x64xf32>) {
      %old = memref.load %acc2[%row, %c] : memref<256x64xf32>
      %g = memref.load %grad[%t, %c] : memref<4096x64xf32>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %acc2[%c, %row] : memref<256x64xf32>
      scf.yield %acc2 : memref<256x64xf32>
    }
    scf.yield %s : memref<256x64xf32>
  }
  %r2 = scf.for %t = %c0 to %c4096 step %c1 iter_args(%acc = %arg) -> (memref<256x64xf32>) {
    %row = memref.load %ids[%t] : memref<4096xindex>
    %s = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc2 = %acc) -> (memref<256x64xf32>) {
      %old = memref.load %acc2[%row, %c] : memref<256x64xf32>
      %g = memref.load %grad[%t, %c] : memref<4096x64xf32>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %acc2[%row, %c] : memref<256x64xf32>
      scf.yield %acc2 : memref<256x64xf32>
    }
    scf.yield %s : memref<256x64xf32>
  }
  %viewed = memref.alloc() : memref<256x64xf32>
  %alias = memref.subview %viewed[0, 0] [256, 64] [1, 1] : memref<256x64xf32> to memref<256x64xf32, strided<[64, 1]>>
  %r3 = scf.for %t = %c0 to %c4096 step %c1 iter_args(%acc = %viewed) -> (memref<256x64xf32>) {
    %row = memref.load %ids[%t] : memref<4096xindex>
    %s = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc2 = %acc) -> (memref<256x64xf32>) {
      %old = memref.load %acc2[%row, %c] : memref<256x64xf32>
      %g = memref.load %alias[%t, %c] : memref<256x64xf32, strided<[64, 1]>>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %acc2[%row, %c] : memref<256x64xf32>
      scf.yield %acc2 : memref<256x64xf32>
    }
    scf.yield %s : memref<256x64xf32>
  }
  return
}

// -----

// The in-place form: the table (written before the nest, as the logits'
// weight gradient writes a tied embedding's) is stored into with no
// iter_args. It becomes the same scf.parallel over the channels.
// CHECK-LABEL: func.func @embedding_grad_in_place
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<256x64xf32>
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[ROW:.*]] = arith.select
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[TABLE]][%[[ROW]], %[[C]]]
// CHECK-NEXT: %[[G:.*]] = memref.load %arg1[%[[T]], %[[C]]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[G]]
// CHECK-NEXT: memref.store %[[SUM]], %[[TABLE]][%[[ROW]], %[[C]]]
// CHECK-NOT: scf.for
// CHECK: memref.copy %[[TABLE]], %arg2
// ROWS-LABEL: func.func @embedding_grad_in_place
// ROWS: %[[TABLE:.*]] = memref.alloc() : memref<256x64xf32>
// ROWS: scf.parallel (%[[R:.*]], %[[C:.*]]) =
// ROWS: %[[ROW:.*]] = arith.select
// ROWS-NEXT: %[[OWN:.*]] = arith.cmpi eq, %[[ROW]], %[[R]]
// ROWS-NEXT: scf.if %[[OWN]] {
// ROWS-NEXT: memref.load %[[TABLE]][%[[ROW]], %[[C]]]
func.func @embedding_grad_in_place(%ids: memref<4096xi32>, %grad: memref<4096x64xf32>, %out: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  %table = memref.alloc() : memref<256x64xf32>
  linalg.fill ins(%zero : f32) outs(%table : memref<256x64xf32>)
  scf.for %t = %c0 to %c4096 step %c1 {
    %id = memref.load %ids[%t] : memref<4096xi32>
    %i = arith.index_cast %id : i32 to index
    %lt = arith.cmpi slt, %i, %c0 : index
    %ge = arith.cmpi sge, %i, %c256 : index
    %bad = arith.ori %lt, %ge : i1
    %row = arith.select %bad, %c0, %i : index
    scf.for %c = %c0 to %c64 step %c1 {
      %old = memref.load %table[%row, %c] : memref<256x64xf32>
      %g = memref.load %grad[%t, %c] : memref<4096x64xf32>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %table[%row, %c] : memref<256x64xf32>
    }
  }
  memref.copy %table, %out : memref<256x64xf32> to memref<256x64xf32>
  return
}

// -----

// Left alone in the in-place form: a nest into a function argument, and
// one whose inner body reads the table through a view (another channel's
// element could be read).
// CHECK-LABEL: func.func @not_scatter_in_place
// CHECK-NOT: scf.parallel
// ROWS-LABEL: func.func @not_scatter_in_place
// ROWS-NOT: scf.parallel
func.func @not_scatter_in_place(%ids: memref<4096xindex>, %grad: memref<4096x64xf32>, %arg: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  scf.for %t = %c0 to %c4096 step %c1 {
    %row = memref.load %ids[%t] : memref<4096xindex>
    scf.for %c = %c0 to %c64 step %c1 {
      %old = memref.load %arg[%row, %c] : memref<256x64xf32>
      %g = memref.load %grad[%t, %c] : memref<4096x64xf32>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %arg[%row, %c] : memref<256x64xf32>
    }
  }
  %table = memref.alloc() : memref<256x64xf32>
  %flat = memref.collapse_shape %table [[0, 1]] : memref<256x64xf32> into memref<16384xf32>
  scf.for %t = %c0 to %c4096 step %c1 {
    %row = memref.load %ids[%t] : memref<4096xindex>
    scf.for %c = %c0 to %c64 step %c1 {
      %old = memref.load %table[%row, %c] : memref<256x64xf32>
      %other = memref.load %flat[%t] : memref<16384xf32>
      %sum = arith.addf %old, %other : f32
      memref.store %sum, %table[%row, %c] : memref<256x64xf32>
    }
  }
  return
}

// -----

// A word vocabulary's table (2,048 rows, more than max-table-rows) keeps a
// thread per channel under the default too; so does a nest that adds into
// two rows of its table per position (no row of its own per thread).
// CHECK-LABEL: func.func @many_rows
// ROWS-LABEL: func.func @many_rows
// ROWS: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c64) step
// ROWS-NOT: scf.if
// ROWS-LABEL: func.func @two_rows
// ROWS: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c64) step
// ROWS-NOT: scf.if
func.func @many_rows(%ids: memref<4096xindex>, %grad: memref<4096x64xf32>, %out: memref<2048x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %table = memref.alloc() : memref<2048x64xf32>
  %r = scf.for %t = %c0 to %c4096 step %c1 iter_args(%acc = %table) -> (memref<2048x64xf32>) {
    %row = memref.load %ids[%t] : memref<4096xindex>
    %s = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc2 = %acc) -> (memref<2048x64xf32>) {
      %old = memref.load %acc2[%row, %c] : memref<2048x64xf32>
      %g = memref.load %grad[%t, %c] : memref<4096x64xf32>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %acc2[%row, %c] : memref<2048x64xf32>
      scf.yield %acc2 : memref<2048x64xf32>
    }
    scf.yield %s : memref<2048x64xf32>
  }
  memref.copy %r, %out : memref<2048x64xf32> to memref<2048x64xf32>
  return
}

func.func @two_rows(%ids: memref<4096xindex>, %grad: memref<4096x64xf32>, %out: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %table = memref.alloc() : memref<256x64xf32>
  %r = scf.for %t = %c0 to %c4096 step %c1 iter_args(%acc = %table) -> (memref<256x64xf32>) {
    %row = memref.load %ids[%t] : memref<4096xindex>
    %next = arith.addi %row, %c1 : index
    %s = scf.for %c = %c0 to %c64 step %c1 iter_args(%acc2 = %acc) -> (memref<256x64xf32>) {
      %old = memref.load %acc2[%row, %c] : memref<256x64xf32>
      %g = memref.load %grad[%t, %c] : memref<4096x64xf32>
      %sum = arith.addf %old, %g : f32
      memref.store %sum, %acc2[%next, %c] : memref<256x64xf32>
      scf.yield %acc2 : memref<256x64xf32>
    }
    scf.yield %s : memref<256x64xf32>
  }
  memref.copy %r, %out : memref<256x64xf32> to memref<256x64xf32>
  return
}
