// RUN: tfc-opt %s -split-input-file --tfc-gpu-parallel-dims-first | FileCheck %s

// A bias gradient, a sum over the rows into one value per column: the
// column (parallel) dimension comes first, the rows' sum second.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @bias_grad
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
func.func @bias_grad(%dy: memref<64x32xf32>, %db: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (c)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<64x32xf32>) outs(%db : memref<32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named reduction over the outer dimension is generalised first.
// CHECK-LABEL: func.func @reduce_outer
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
func.func @reduce_outer(%x: memref<64x32xf32>, %y: memref<32xf32>) {
  linalg.reduce ins(%x : memref<64x32xf32>) outs(%y : memref<32xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Parallel dimensions first already: left as they are.
// CHECK-LABEL: func.func @row_sum
// CHECK: linalg.reduce
func.func @row_sum(%x: memref<64x32xf32>, %y: memref<64xf32>) {
  linalg.reduce ins(%x : memref<64x32xf32>) outs(%y : memref<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}
