// RUN: tfc-opt %s -split-input-file --tfc-parallel-column-sums | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-parallel-column-sums=min-work=1 | FileCheck %s --check-prefix=SMALL

// A bias gradient over 8 x 512 rows of 1024 columns: eight blocks of 128
// columns, each summing its columns of every row.

// CHECK-LABEL: func.func @bias_grad
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[N:.*]] = arith.constant 1024 : index
// CHECK-DAG: %[[BLOCK:.*]] = arith.constant 128 : index
// CHECK: scf.parallel (%[[J:.*]]) = (%[[C0]]) to (%[[N]]) step (%[[BLOCK]])
// CHECK:   %[[DY:.*]] = memref.subview %{{.*}}[0, 0, %[[J]]] [8, 512, 128] [1, 1, 1] : memref<8x512x1024xf32> to memref<8x512x128xf32, strided<[524288, 1024, 1], offset: ?>>
// CHECK:   %[[DB:.*]] = memref.subview %{{.*}}[%[[J]]] [128] [1] : memref<1024xf32> to memref<128xf32, strided<[1], offset: ?>>
// CHECK:   linalg.reduce ins(%[[DY]] : {{.*}}) outs(%[[DB]] : {{.*}}) dimensions = [0, 1]
// CHECK-NOT: linalg.reduce
func.func @bias_grad(%dy: memref<8x512x1024xf32>, %db: memref<1024xf32>) {
  linalg.reduce ins(%dy : memref<8x512x1024xf32>) outs(%db : memref<1024xf32>)
      dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A LayerNorm's scale and shift gradients: two outputs, and a per-row
// scale (`rstd`) that every column reads whole. 256 columns make four
// blocks of 64 (256 bytes of each row).

// CHECK-LABEL: func.func @layer_norm_grads
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%[[C256]]) step (%[[C64]])
// CHECK-DAG: %[[DY:.*]] = memref.subview %[[ARG0:.*]][0, %[[J]]] [4096, 64] [1, 1]
// CHECK-DAG: %[[X:.*]] = memref.subview %{{.*}}[0, %[[J]]] [4096, 64] [1, 1]
// CHECK-DAG: %[[DG:.*]] = memref.subview %{{.*}}[%[[J]]] [64] [1]
// CHECK-DAG: %[[DB:.*]] = memref.subview %{{.*}}[%[[J]]] [64] [1]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[DY]], %[[X]], %{{.*}} : memref<4096x64xf32, strided<[256, 1], offset: ?>>, memref<4096x64xf32, strided<[256, 1], offset: ?>>, memref<4096xf32>)
// CHECK-SAME: outs(%[[DG]], %[[DB]] :
func.func @layer_norm_grads(%dy: memref<4096x256xf32>, %x: memref<4096x256xf32>,
                            %rstd: memref<4096xf32>, %dgamma: memref<256xf32>,
                            %dbeta: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>,
                                   affine_map<(r, c) -> (r, c)>,
                                   affine_map<(r, c) -> (r)>,
                                   affine_map<(r, c) -> (c)>,
                                   affine_map<(r, c) -> (c)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%dy, %x, %rstd : memref<4096x256xf32>, memref<4096x256xf32>, memref<4096xf32>)
      outs(%dgamma, %dbeta : memref<256xf32>, memref<256xf32>) {
  ^bb0(%g: f32, %v: f32, %s: f32, %og: f32, %ob: f32):
    %n = arith.mulf %v, %s : f32
    %p = arith.mulf %g, %n : f32
    %sg = arith.addf %og, %p : f32
    %sb = arith.addf %ob, %g : f32
    linalg.yield %sg, %sb : f32, f32
  }
  return
}

// -----

// Below min-work (64 x 256 elements) the sum stays whole; with min-work=1
// it is split. 48 columns, which 64 does not divide, make three blocks of
// 16.

// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// SMALL-LABEL: func.func @small
// SMALL: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c48) step (%c16)
// SMALL: linalg.reduce ins(%{{.*}} : memref<64x16xf32, strided<[48, 1], offset: ?>>)
func.func @small(%dy: memref<64x48xf32>, %db: memref<48xf32>) {
  linalg.reduce ins(%dy : memref<64x48xf32>) outs(%db : memref<48xf32>)
      dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Left alone, even with min-work=1: a row sum (the innermost loop is the
// reduction), a matmul (a parallel loop before the reduction), a column
// sum inside a parallel loop, one whose body reads a loop index, one whose
// input is transposed (the columns are not its last dimension), one on
// tensors, and one whose 16 columns make a single block.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: memref.subview
// CHECK: return
// SMALL-LABEL: func.func @left_alone
// SMALL-NOT: memref.subview
// SMALL: return
func.func @left_alone(%x: memref<4096x256xf32>, %rows: memref<4096xf32>,
                      %w: memref<256x256xf32>, %y: memref<4096x256xf32>,
                      %cols: memref<256xf32>, %xt: memref<256x4096xf32>,
                      %t: tensor<4096x256xf32>, %tc: tensor<256xf32>,
                      %narrow: memref<4096x16xf32>, %nc: memref<16xf32>)
    -> tensor<256xf32> {
  linalg.reduce ins(%x : memref<4096x256xf32>) outs(%rows : memref<4096xf32>)
      dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.matmul ins(%x, %w : memref<4096x256xf32>, memref<256x256xf32>)
                outs(%y : memref<4096x256xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    linalg.reduce ins(%x : memref<4096x256xf32>) outs(%cols : memref<256xf32>)
        dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    scf.reduce
  }
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>,
                                   affine_map<(r, c) -> (c)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4096x256xf32>) outs(%cols : memref<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to f32
    %p = arith.mulf %in, %cf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (c, r)>,
                                   affine_map<(r, c) -> (c)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%xt : memref<256x4096xf32>) outs(%cols : memref<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %r = linalg.reduce ins(%t : tensor<4096x256xf32>) outs(%tc : tensor<256xf32>)
      dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%narrow : memref<4096x16xf32>) outs(%nc : memref<16xf32>)
      dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<256xf32>
}
