// RUN: tfc-opt %s --tfc-collapse-dims -split-input-file | FileCheck %s

// In a parallel loop's body (a tfc-fuse-rows tile), an element-wise op over
// [1, 1, 8, 256, 32] merges its trailing contiguous loops; the scale,
// broadcast along them, is read as before; the leading unit loops stay.

// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[SCALE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @in_parallel_body
// CHECK-SAME:    (%[[A:.*]]: memref<1x1x8x256x32xf32, {{.*}}>, %[[S:.*]]: memref<1x1x8xf32, {{.*}}>, %[[B:.*]]: memref<1x1x8x256x32xf32, {{.*}}>)
// CHECK:         scf.parallel
// CHECK:           %[[CA:.*]] = memref.collapse_shape %[[A]] {{\[}}[0], [1], [2], [3, 4]]
// CHECK:           %[[CB:.*]] = memref.collapse_shape %[[B]] {{\[}}[0], [1], [2], [3, 4]]
// CHECK:           linalg.generic {indexing_maps = [#[[FULL]], #[[SCALE]], #[[FULL]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[CA]], %[[S]] : memref<1x1x8x8192xf32, {{.*}}>, memref<1x1x8xf32, {{.*}}>) outs(%[[CB]] : memref<1x1x8x8192xf32, {{.*}}>)
// CHECK-NEXT:      ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT:        arith.mulf %[[O]], %[[Y]]
#m5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#m3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func @in_parallel_body(
    %a: memref<1x1x8x256x32xf32, strided<[524288, 65536, 8192, 32, 1], offset: ?>>,
    %s: memref<1x1x8xf32, strided<[64, 8, 1], offset: ?>>,
    %b: memref<1x1x8x256x32xf32, strided<[65536, 65536, 8192, 32, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    linalg.generic {indexing_maps = [#m5, #m3, #m5],
                    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
        ins(%a, %s : memref<1x1x8x256x32xf32, strided<[524288, 65536, 8192, 32, 1], offset: ?>>,
                     memref<1x1x8xf32, strided<[64, 8, 1], offset: ?>>)
        outs(%b : memref<1x1x8x256x32xf32, strided<[65536, 65536, 8192, 32, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %1 = arith.mulf %o, %y : f32
      %2 = arith.addf %1, %x : f32
      linalg.yield %2 : f32
    }
    scf.reduce
  }
  return
}

// -----

// Outside parallel loops the loops in front keep at least 16 iterations
// for the threads: [2, 8, 256, 32] -> [2, 8, 8192]. A copy merges too.

// CHECK-LABEL: func.func @top_level
// CHECK:         memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<2x8x256x32xf32> into memref<2x8x8192xf32>
// CHECK:         linalg.copy ins(%{{.*}} : memref<2x8x8192xf32>) outs(%{{.*}} : memref<2x8x8192xf32>)
func.func @top_level(%a: memref<2x8x256x32xf32>, %b: memref<2x8x256x32xf32>) {
  linalg.copy ins(%a : memref<2x8x256x32xf32>) outs(%b : memref<2x8x256x32xf32>)
  return
}

// -----

// Left alone: an operand that is not contiguous over the trailing loops (a
// transposed view), a body that reads a loop index, a reduction, and the
// epilogue of a contraction (the contraction kernel applies it to C's
// tiles, in C's loops).

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     memref.collapse_shape
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%a: memref<32x16x32xf32>, %b: memref<32x16x32xf32>,
                      %t: memref<32x32x16xf32>, %r: memref<32x16xf32>,
                      %x: memref<64x32xf32>, %w: memref<32x32xf32>,
                      %y: memref<64x32xf32>) {
  linalg.generic {indexing_maps = [#tr3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : memref<32x32x16xf32>) outs(%b : memref<32x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%b : memref<32x16x32xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 2 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<32x16x32xf32>) outs(%r : memref<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    linalg.matmul {tfc.epilogue} ins(%x, %w : memref<64x32xf32>, memref<32x32xf32>)
                  outs(%y : memref<64x32xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        outs(%y : memref<64x32xf32>) {
    ^bb0(%out: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %out, %z : f32
      linalg.yield %m : f32
    }
    scf.reduce
  }
  return
}
