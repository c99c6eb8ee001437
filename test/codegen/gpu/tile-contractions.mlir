// RUN: tfc-opt %s -split-input-file --tfc-gpu-tile-contractions=shared-memory=0 | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-gpu-tile-contractions | FileCheck %s --check-prefix=SHARED

// A projection [64, 32] x [32, 256]: tiles of 4 rows x 4 columns, the
// columns 32 apart (16 row threads x 64 column threads = 1,024 threads in
// 4 blocks of 256); 4 + 4 loads and 16 multiply-adds per k step, the
// accumulators loaded from the output and carried through the k loop.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK: arith.cmpi ult, %{{.*}}, %c1024{{.*}}
// CHECK-COUNT-16: memref.load %arg2
// CHECK: scf.for %[[K:.*]] = %c0{{.*}} to %c32{{.*}} step %c1{{.*}} iter_args(
// CHECK-COUNT-4: memref.load %arg0[%{{.*}}, %[[K]]]
// CHECK-COUNT-4: memref.load %arg1[%[[K]], %{{.*}}]
// CHECK-NOT: memref.load
// CHECK-COUNT-16: arith.addf
// CHECK: scf.yield
// CHECK-COUNT-16: memref.store
// CHECK: gpu.terminator
//
// With shared memory (the default): one block of 256 threads per 64 x 64
// tile (4 blocks), the k loop in steps of 16; per step each thread copies
// 4 elements of each operand's tile into shared memory, the block waits,
// each thread reads 4 + 4 of them per k for 16 multiply-adds, and waits
// again before the next copy.
// SHARED-LABEL: func.func @matmul
// SHARED: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[AS:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>)
// SHARED-COUNT-16: memref.load %arg2
// SHARED: scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c16{{.*}} iter_args(
// SHARED-COUNT-4: memref.store %{{.*}}, %[[AS]]
// SHARED-COUNT-4: memref.store %{{.*}}, %[[BS]]
// SHARED-NEXT: gpu.barrier
// SHARED-COUNT-4: memref.load %[[AS]]
// SHARED-COUNT-4: memref.load %[[BS]]
// SHARED-COUNT-16: arith.addf
// SHARED: gpu.barrier
// SHARED-NEXT: scf.yield
// SHARED-COUNT-16: memref.store %{{.*}}, %arg2
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x256xf32>,
                  %c: memref<64x256xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x256xf32>)
                outs(%c : memref<64x256xf32>)
  return
}

// -----

// Batched attention scores of blocked attention, P . V with 32 columns:
// one column per thread, 8 rows; the batch index of a thread is its
// quotient by the row and column threads. Rows past the edge (12 rows)
// read the last row and are not stored.
// CHECK-LABEL: func.func @batched_narrow
// CHECK: gpu.launch
// CHECK: arith.cmpi ult, %{{.*}}, %c192{{.*}}
// CHECK: arith.minui %{{.*}}, %c11{{.*}}
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args(
// CHECK-COUNT-8: arith.mulf
// CHECK: scf.yield
// CHECK: arith.cmpi ult, %{{.*}}, %c12{{.*}}
// CHECK: arith.cmpi ult, %{{.*}}, %c32{{.*}}
// CHECK-COUNT-8: memref.store
// Fewer than 64 columns: no shared memory.
// SHARED-LABEL: func.func @batched_narrow
// SHARED-NOT: workgroup
// SHARED: return
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bkn = affine_map<(b, m, n, k) -> (b, k, n)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batched_narrow(%p: memref<3x12x16xf32>, %v: memref<3x16x32xf32>,
                          %o: memref<3x12x32xf32>) {
  linalg.generic {indexing_maps = [#bmk, #bkn, #bmn],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<3x12x16xf32>, memref<3x16x32xf32>)
      outs(%o : memref<3x12x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A weight gradient X^T dY whose operands both read k first (the rows of
// the batch): the row operand is indexed [k, m].
// CHECK-LABEL: func.func @weight_gradient
// CHECK: scf.for %[[K2:.*]] = %c0{{.*}} to %c128{{.*}} step %c1{{.*}} iter_args(
// CHECK: memref.load %arg0[%[[K2]], %{{.*}}]
// CHECK: memref.load %arg1[%[[K2]], %{{.*}}]
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @weight_gradient(%x: memref<128x16xf64>, %dy: memref<128x128xf64>,
                           %dw: memref<16x128xf64>) {
  linalg.generic {indexing_maps = [#km, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<128x16xf64>, memref<128x128xf64>)
      outs(%dw : memref<16x128xf64>) {
  ^bb0(%a: f64, %g: f64, %acc: f64):
    %m = arith.mulf %a, %g : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// Not contractions this pass tiles: a row sum (one parallel dimension),
// an elementwise op, and a contraction of dynamic shape.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.matmul
#row = affine_map<(m, k) -> (m, k)>
#rowout = affine_map<(m, k) -> (m)>
#id = affine_map<(m, n) -> (m, n)>
func.func @left_alone(%x: memref<64x32xf32>, %s: memref<64xf32>,
                      %a: memref<?x32xf32>, %b: memref<32x256xf32>,
                      %c: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#row, #rowout],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x32xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x32xf32>) outs(%x : memref<64x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  }
  linalg.matmul ins(%a, %b : memref<?x32xf32>, memref<32x256xf32>)
                outs(%c : memref<?x256xf32>)
  return
}

// -----

// Attention's P V in [batch, query, head, channel] order: the rows are the
// queries (read by P alone), not the heads, which both operands read; the
// batch and heads are batch dimensions. 32 channels: 8 rows of one column
// per thread.
// CHECK-LABEL: func.func @attention_pv
// CHECK: gpu.launch
// CHECK: scf.for %[[KEY:.*]] = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args(
// CHECK-COUNT-8: memref.load %arg0[%{{.*}}, %{{.*}}, %[[KEY]], %{{.*}}]
// CHECK: memref.load %arg1[%{{.*}}, %[[KEY]], %{{.*}}, %{{.*}}]
// CHECK-COUNT-8: arith.mulf
// CHECK: scf.yield
// CHECK-COUNT-8: memref.store
#p_bhkq = affine_map<(b, q, h, d, k) -> (b, h, k, q)>
#v_bkhd = affine_map<(b, q, h, d, k) -> (b, k, h, d)>
#o_bqhd = affine_map<(b, q, h, d, k) -> (b, q, h, d)>
func.func @attention_pv(%p: memref<2x4x16x64xf32>, %v: memref<2x16x4x32xf32>,
                        %o: memref<2x64x4x32xf32>) {
  linalg.generic {indexing_maps = [#p_bhkq, #v_bkhd, #o_bqhd],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<2x4x16x64xf32>, memref<2x16x4x32xf32>)
      outs(%o : memref<2x64x4x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
