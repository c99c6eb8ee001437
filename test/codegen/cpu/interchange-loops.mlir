// RUN: tfc-opt %s --tfc-interchange-loops -split-input-file | FileCheck %s

// The weight gradient of a depth-wise convolution of width 3: loops
// (j, c, b, s) with b and s reductions; every operand's last index is c,
// which moves innermost: (j, b, s, c). The body is unchanged.

// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2 - d0 + 2, d3)>
// CHECK-DAG: #[[DW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @dconv_weight_grad
// CHECK: linalg.generic {indexing_maps = [#[[DY]], #[[X]], #[[DW]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:   arith.addf %[[O]], %[[P]] : f32
func.func @dconv_weight_grad(%dy: memref<2x8x32xf32>, %x: memref<2x10x32xf32>,
                             %dw: memref<3x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(j, c, b, s) -> (b, s, c)>,
                                   affine_map<(j, c, b, s) -> (b, s + 2 - j, c)>,
                                   affine_map<(j, c, b, s) -> (j, c)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%dy, %x : memref<2x8x32xf32>, memref<2x10x32xf32>)
      outs(%dw : memref<3x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A column sum (a bias gradient): (c, r) -> (r, c).

// CHECK-LABEL: func.func @column_sum
// CHECK: iterator_types = ["reduction", "parallel"]
func.func @column_sum(%dy: memref<64x32xf32>, %db: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(c, r) -> (r, c)>,
                                   affine_map<(c, r) -> (c)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%dy : memref<64x32xf32>) outs(%db : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left alone: a row sum (the input's last index is the reduction), a
// matmul (its operands' last indices differ), an op already in order, and
// a column sum of a buffer strided in its last dimension.

// CHECK-LABEL: func.func @left_alone
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: iterator_types = ["reduction", "parallel"]
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @left_alone(%x: memref<64x32xf32>, %sum: memref<64xf32>,
                      %w: memref<32x16xf32>, %y: memref<64x16xf32>,
                      %db: memref<32xf32>,
                      %s: memref<64x32xf32, strided<[64, 2]>>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>,
                                   affine_map<(r, c) -> (r)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x32xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                   affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x16xf32>)
      outs(%y : memref<64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>,
                                   affine_map<(r, c) -> (c)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x32xf32>) outs(%db : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(c, r) -> (r, c)>,
                                   affine_map<(c, r) -> (c)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<64x32xf32, strided<[64, 2]>>) outs(%db : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}
