// RUN: tfc-opt %s -split-input-file --tfc-gpu-split-reductions | FileCheck %s

// The squared norm of a gradient of 6,449,664 floats (config B's vanilla
// parameters): 7,904 partial sums (its largest divisor up to 8,192), sum p
// reading the elements p, p + 7904, ... (the gradient viewed as
// [816, 7904], column p), then the partial sums added into the output in
// order, the output first as in the original body.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ONE:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @grad_norm
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<7904xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIAL]] : memref<7904xf32>)
// CHECK: %[[VIEW:.*]] = memref.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [816, 7904] : memref<6449664xf32> into memref<816x7904xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "reduction"]} ins(%[[VIEW]] : memref<816x7904xf32>) outs(%[[PARTIAL]] : memref<7904xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {indexing_maps = [#[[ALL]], #[[ONE]]], iterator_types = ["reduction"]} ins(%[[PARTIAL]] : memref<7904xf32>) outs(%arg1 : memref<f32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[OUT]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
func.func @grad_norm(%g: memref<6449664xf32>, %norm: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%g : memref<6449664xf32>) outs(%norm : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named sum over two dimensions (a loss over batch x sequence): the
// longer one is split, 2,048 partial sums of 16 terms, the other stays a
// reduction of each partial sum; the term comes first in the final sum as
// in the original.
// CHECK-DAG: #[[IN2:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @loss_sum
// CHECK: memref.alloc() : memref<2048xf32>
// CHECK: memref.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [2, 2048, 8]
// CHECK: linalg.generic {indexing_maps = [#[[IN2]], #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[P2:.*]]: f32, %[[OUT2:.*]]: f32):
// CHECK-NEXT: arith.addf %[[P2]], %[[OUT2]] : f32
func.func @loss_sum(%x: memref<4096x8xf32>, %y: memref<f32>) {
  linalg.reduce ins(%x : memref<4096x8xf32>) outs(%y : memref<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A bias gradient after tfc-gpu-parallel-dims-first, 256 columns summed
// over 4,096 rows: 128 partial sums of each column (32,768 threads, 32 rows
// each), [128, 256], then each column's partial sums added in order.
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-DAG: #[[PARTS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[WRITE:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @bias_grad
// CHECK: %[[P3:.*]] = memref.alloc() : memref<128x256xf32>
// CHECK: %[[V3:.*]] = memref.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [32, 128, 256]
// CHECK: linalg.generic {indexing_maps = [#[[ROWS]], #[[PARTS]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V3]] : memref<32x128x256xf32>) outs(%[[P3]] : memref<128x256xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[READ]], #[[WRITE]]], iterator_types = ["parallel", "reduction"]} ins(%[[P3]] : memref<128x256xf32>) outs(%arg1 : memref<256xf32>)
func.func @bias_grad(%dy: memref<4096x256xf32>, %db: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(c, r) -> (r, c)>, affine_map<(c, r) -> (c)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%dy : memref<4096x256xf32>) outs(%db : memref<256xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A LayerNorm's two parameter gradients in one op, 256 columns summed over
// 8 x 512 positions: the longer dimension (512) is split into 128 partial
// sums of each column (32,768 threads), both outputs alike; the final op
// adds each output's partial sums into it.
// CHECK-DAG: #[[LNIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d0, d1)>
// CHECK-DAG: #[[LNPART:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @norm_grads
// CHECK: %[[W:.*]] = memref.alloc() : memref<128x256xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<128x256xf32>
// CHECK: %[[DY:.*]] = memref.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [8, 4, 128, 256]
// CHECK: %[[XH:.*]] = memref.expand_shape %arg1 {{\[\[}}0], [1, 2], [3]] output_shape [8, 4, 128, 256]
// CHECK: linalg.generic {indexing_maps = [#[[LNIN]], #[[LNIN]], #[[LNPART]], #[[LNPART]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[DY]], %[[XH]] : {{.*}}) outs(%[[W]], %[[B]] : memref<128x256xf32>, memref<128x256xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[B]] : memref<128x256xf32>, memref<128x256xf32>) outs(%arg2, %arg3 : memref<256xf32>, memref<256xf32>)
// CHECK-NEXT: ^bb0(%[[PW:.*]]: f32, %[[PB:.*]]: f32, %[[OW:.*]]: f32, %[[OB:.*]]: f32):
// CHECK-NEXT: %[[SW:.*]] = arith.addf %[[OW]], %[[PW]] : f32
// CHECK-NEXT: %[[SB:.*]] = arith.addf %[[PB]], %[[OB]] : f32
// CHECK-NEXT: linalg.yield %[[SW]], %[[SB]]
func.func @norm_grads(%dy: memref<8x512x256xf32>, %xhat: memref<8x512x256xf32>,
                      %dw: memref<256xf32>, %db: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(c, b, s) -> (b, s, c)>, affine_map<(c, b, s) -> (b, s, c)>,
                                   affine_map<(c, b, s) -> (c)>, affine_map<(c, b, s) -> (c)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%dy, %xhat : memref<8x512x256xf32>, memref<8x512x256xf32>) outs(%dw, %db : memref<256xf32>, memref<256xf32>) {
  ^bb0(%g: f32, %x: f32, %w: f32, %bias: f32):
    %t = arith.mulf %g, %x : f32
    %sw = arith.addf %w, %t : f32
    %sb = arith.addf %g, %bias : f32
    linalg.yield %sw, %sb : f32, f32
  }
  return
}

// -----

// Left alone: a maximum (not a sum), a sum of fewer than 1,024 terms,
// row sums of 32 terms, a body that reads its position, and a sum inside
// a loop.
// CHECK-LABEL: func.func @not_split
// CHECK-NOT: memref.alloc
// CHECK-COUNT-5: linalg.
// CHECK-NOT: memref.alloc
func.func @not_split(%big: memref<8192xf32>, %small: memref<512xf32>, %m: memref<64x32xf32>,
                     %row: memref<64xf32>, %out: memref<f32>) {
  linalg.reduce ins(%big : memref<8192xf32>) outs(%out : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.reduce ins(%small : memref<512xf32>) outs(%out : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%m : memref<64x32xf32>) outs(%row : memref<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%big : memref<8192xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %t = arith.mulf %x, %f : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  }
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %c2 step %c1 {
    linalg.reduce ins(%big : memref<8192xf32>) outs(%out : memref<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
  }
  return
}

// -----

// A weight gradient X^T dY (4,096 rows into 256 x 256 outputs), which
// tfc-gpu-tile-contractions would run on 4,096 threads of 4 x 4 outputs:
// split into 16 partial sums of 256 rows each (65,536 threads), rows
// p, p + 16, ..., then the partial sums added to the output in order.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d1)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d2)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<16x256x256xf32>
// CHECK: memref.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [256, 16, 256]
// CHECK: memref.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [256, 16, 256]
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[DY]], #[[P]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PARTIAL]] : memref<16x256x256xf32>) outs(%arg2 : memref<256x256xf32>)
func.func @weight_gradient(%x: memref<4096x256xf32>, %dy: memref<4096x256xf32>,
                           %dw: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                   affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<4096x256xf32>, memref<4096x256xf32>)
      outs(%dw : memref<256x256xf32>) {
  ^bb0(%a: f32, %g: f32, %acc: f32):
    %m = arith.mulf %a, %g : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A projection with enough threads (4,096 x 256 outputs, 65,536 threads of
// 4 x 4) is not split.
// CHECK-LABEL: func.func @projection
// CHECK-NOT: memref.alloc
// CHECK: linalg.matmul
func.func @projection(%x: memref<4096x256xf32>, %w: memref<256x256xf32>,
                      %y: memref<4096x256xf32>) {
  linalg.matmul ins(%x, %w : memref<4096x256xf32>, memref<256x256xf32>)
                outs(%y : memref<4096x256xf32>)
  return
}
