// RUN: tfc-opt %s --tfc-fuse-rows -split-input-file | FileCheck %s
// RUN: tfc-opt %s --tfc-fuse-rows="tile-bytes=8192" -split-input-file | FileCheck %s --check-prefix=SMALL

// A LayerNorm-like run: row sums, a per-row scale and a normalisation that
// reads a whole scale vector become one loop over tiles of rows. 32 rows
// leave at most 4 rows per tile for the 8 tiles the threads share; with
// 8 KiB per tile and a little over 2 KiB of row-indexed data per row, 3
// rows would fit, and 2 (the largest divisor of 32 up to 3) make a tile.

#row = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @layer_norm_like
// CHECK-SAME:    (%[[X:.*]]: memref<32x256xf32>, %[[G:.*]]: memref<256xf32>, %[[Y:.*]]: memref<32x256xf32>)
// CHECK:         %[[SUM:.*]] = memref.alloc() : memref<32xf32>
// CHECK:         %[[SCALE:.*]] = memref.alloc() : memref<32xf32>
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.parallel (%[[R:.*]]) = (%{{.*}}) to (%{{.*}}) step (%[[C4]])
// CHECK:           %[[SUMT:.*]] = memref.subview %[[SUM]][%[[R]]] [4] [1]
// CHECK:           linalg.fill {{.*}} outs(%[[SUMT]]
// CHECK:           %[[XT:.*]] = memref.subview %[[X]][%[[R]], 0] [4, 256] [1, 1]
// CHECK:           linalg.generic {{.*}} ins(%[[XT]] : {{.*}}) outs(%[[SUMT]]
// CHECK:           %[[SCALET:.*]] = memref.subview %[[SCALE]][%[[R]]] [4] [1]
// CHECK:           linalg.generic {{.*}} ins(%[[SUMT]] : {{.*}}) outs(%[[SCALET]]
// CHECK:           %[[YT:.*]] = memref.subview %[[Y]][%[[R]], 0] [4, 256] [1, 1]
// CHECK:           linalg.generic {{.*}} ins(%[[XT]], %[[SCALET]], %[[G]] : {{.*}}) outs(%[[YT]]
// CHECK:           scf.reduce
// CHECK-NOT:     linalg.
// CHECK:         return
// SMALL-LABEL: func.func @layer_norm_like
// SMALL:         %[[C2:.*]] = arith.constant 2 : index
// SMALL:         scf.parallel ({{.*}}) = ({{.*}}) to ({{.*}}) step (%[[C2]])
func.func @layer_norm_like(%x: memref<32x256xf32>, %g: memref<256xf32>,
                           %y: memref<32x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<32xf32>)
  linalg.generic {indexing_maps = [#row, #sum],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x256xf32>) outs(%sum : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  %scale = memref.alloc() : memref<32xf32>
  linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum : memref<32xf32>) outs(%scale : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.rsqrt %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #sum, #col, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %scale, %g : memref<32x256xf32>, memref<32xf32>, memref<256xf32>)
      outs(%y : memref<32x256xf32>) {
  ^bb0(%in: f32, %s: f32, %w: f32, %out: f32):
    %0 = arith.mulf %in, %s : f32
    %1 = arith.mulf %0, %w : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Refused: the second op reads the first one's result transposed, so its
// row r needs every row of the first op.

#row = affine_map<(d0, d1) -> (d0, d1)>
#transposed = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @transposed_read
// CHECK-NOT:     scf.parallel
func.func @transposed_read(%x: memref<32x32xf32>, %y: memref<32x32xf32>) {
  %a = memref.alloc() : memref<32x32xf32>
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xf32>) outs(%a : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#transposed, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<32x32xf32>) outs(%y : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Refused: the second op reads the first op's result through another view
// of the same buffer (a transposed one), whose rows are not the first op's
// rows.

#row = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @other_view
// CHECK-NOT:     scf.parallel
func.func @other_view(%x: memref<32x32xf32>, %y: memref<32x32xf32>) {
  %a = memref.alloc() : memref<32x32xf32>
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xf32>) outs(%a : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  %b = memref.transpose %a (i, j) -> (j, i) : memref<32x32xf32> to memref<32x32xf32, strided<[1, 32]>>
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<32x32xf32, strided<[1, 32]>>) outs(%y : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Refused: the second op overwrites rows of a buffer that the first op read
// whole (every row of it).

#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#sum = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @write_after_whole_read
// CHECK-NOT:     scf.parallel
func.func @write_after_whole_read(%x: memref<32x32xf32>, %v: memref<32xf32>,
                                  %y: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [#row, #col, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %v : memref<32x32xf32>, memref<32xf32>)
      outs(%y : memref<32x32xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %0 = arith.mulf %in, %w : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #sum],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x32xf32>) outs(%v : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Refused: a contraction (left to the contraction kernels) ends the run,
// and so does an op that reads the row index; the ops left on either side
// are one op each.

#row = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @contraction_and_row_index
// CHECK-NOT:     scf.parallel
func.func @contraction_and_row_index(%x: memref<32x32xf32>, %w: memref<32x32xf32>,
                                     %y: memref<32x32xf32>) {
  %a = memref.alloc() : memref<32x32xf32>
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xf32>) outs(%a : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  %b = memref.alloc() : memref<32x32xf32>
  linalg.matmul ins(%a, %w : memref<32x32xf32>, memref<32x32xf32>)
                outs(%b : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<32x32xf32>) outs(%a : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %0 = arith.addf %in, %f : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<32x32xf32>) outs(%y : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Refused: the epilogue of a contraction marked tfc.epilogue, which the
// contraction kernel applies to its accumulators (a bias along N), stays
// right after the contraction; the row sum and the scale after it are the
// run. Unmarked, the same in-place op joins the run.

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#sum = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @contraction_epilogue
// CHECK:         linalg.generic {{.*}} attrs = {tfc.epilogue}
// CHECK-NEXT:    ^bb0
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : memref<64xf32>) outs(%[[C:.*]] : memref<64x64xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.addf
// CHECK:         scf.parallel
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK-LABEL: func.func @unmarked_contraction
// CHECK:         scf.parallel
// CHECK:           arith.addf
// CHECK:           arith.addf
// CHECK:           arith.mulf
func.func @contraction_epilogue(%x: memref<64x32xf32>, %w: memref<32x64xf32>,
                                %bias: memref<64xf32>, %y: memref<64x64xf32>) {
  %c = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>)
      outs(%c : memref<64x64xf32>) attrs = {tfc.epilogue} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#col, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  %s = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#row, #sum],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #sum, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : memref<64x64xf32>, memref<64xf32>)
      outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  }
  return
}

func.func @unmarked_contraction(%x: memref<64x32xf32>, %w: memref<32x64xf32>,
                                %bias: memref<64xf32>, %y: memref<64x64xf32>) {
  %c = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x64xf32>)
      outs(%c : memref<64x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#col, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  %s = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#row, #sum],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #sum, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : memref<64x64xf32>, memref<64xf32>)
      outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Refused: 4 rows are fewer than the 8 tiles the threads share.

#row = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @too_few_rows
// CHECK-NOT:     scf.parallel
func.func @too_few_rows(%x: memref<4x256xf32>, %y: memref<4x256xf32>) {
  %sum = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#row, #sum],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x256xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #sum, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<4x256xf32>, memref<4xf32>)
      outs(%y : memref<4x256xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.subf %in, %s : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// An op with memory effects that is not taken (a call) splits two runs,
// each fused on its own.

#row = affine_map<(d0, d1) -> (d0, d1)>

func.func private @opaque(memref<32x32xf32>)

// CHECK-LABEL: func.func @split_by_call
// CHECK:         scf.parallel
// CHECK:         call @opaque
// CHECK:         scf.parallel
func.func @split_by_call(%x: memref<32x32xf32>, %y: memref<32x32xf32>) {
  %a = memref.alloc() : memref<32x32xf32>
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xf32>) outs(%a : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<32x32xf32>) outs(%y : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  call @opaque(%y) : (memref<32x32xf32>) -> ()
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<32x32xf32>) outs(%a : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<32x32xf32>) outs(%x : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A fill that only the contraction after the run uses (its zero
// accumulator, which the contraction kernel folds into its first panel)
// stays where it is, outside the loop.

#row = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @fill_for_contraction
// CHECK:         linalg.fill {{.*}} outs(%[[C:.*]] : memref<32x32xf32>)
// CHECK:         scf.parallel
// CHECK-NOT:       linalg.fill
// CHECK:           scf.reduce
// CHECK:         linalg.matmul {{.*}} outs(%[[C]] : memref<32x32xf32>)
func.func @fill_for_contraction(%x: memref<32x32xf32>, %w: memref<32x32xf32>,
                                %y: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<32xf32>
  linalg.generic {indexing_maps = [#row, #sum],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x32xf32>) outs(%sum : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  %c = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  %a = memref.alloc() : memref<32x32xf32>
  linalg.generic {indexing_maps = [#row, #sum, #row],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<32x32xf32>, memref<32xf32>)
      outs(%a : memref<32x32xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.subf %in, %s : f32
    linalg.yield %0 : f32
  }
  linalg.matmul ins(%a, %w : memref<32x32xf32>, memref<32x32xf32>)
                outs(%c : memref<32x32xf32>)
  return
}

// -----

// Runs inside a loop body are fused too (the block loops of blocked
// attention): a row max and the exponentials that read it, in an scf.for
// whose iterations carry a row buffer.

#row = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @in_loop_body
// CHECK:         scf.for
// CHECK:           scf.parallel
// CHECK:             linalg.fill
// CHECK:             linalg.generic
// CHECK:             linalg.generic
// CHECK:             scf.reduce
// CHECK:         return
func.func @in_loop_body(%s: memref<4x16x64xf32>, %p: memref<16x64xf32>,
                        %m: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %block = memref.subview %s[%i, 0, 0] [1, 16, 64] [1, 1, 1]
        : memref<4x16x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
    linalg.fill ins(%ninf : f32) outs(%m : memref<16xf32>)
    linalg.generic {indexing_maps = [#row, #sum],
                    iterator_types = ["parallel", "reduction"]}
        ins(%block : memref<16x64xf32, strided<[64, 1], offset: ?>>)
        outs(%m : memref<16xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %0 = arith.maximumf %acc, %in : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#row, #sum, #row],
                    iterator_types = ["parallel", "parallel"]}
        ins(%block, %m : memref<16x64xf32, strided<[64, 1], offset: ?>>,
                         memref<16xf32>)
        outs(%p : memref<16x64xf32>) {
    ^bb0(%in: f32, %max: f32, %out: f32):
      %0 = arith.subf %in, %max : f32
      %1 = math.exp %0 : f32
      linalg.yield %1 : f32
    }
  }
  return
}

// -----

// The body of a parallel loop is left alone: its iterations already run on
// the threads.

#row = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @in_parallel_body
// CHECK:         scf.parallel
// CHECK-NOT:       scf.parallel
// CHECK:           linalg.fill
// CHECK:           linalg.generic
// CHECK:           linalg.generic
// CHECK:           scf.reduce
func.func @in_parallel_body(%s: memref<4x16x64xf32>, %p: memref<4x16x64xf32>,
                            %m: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %block = memref.subview %s[%i, 0, 0] [1, 16, 64] [1, 1, 1]
        : memref<4x16x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
    %out = memref.subview %p[%i, 0, 0] [1, 16, 64] [1, 1, 1]
        : memref<4x16x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
    %max = memref.subview %m[%i, 0] [1, 16] [1, 1]
        : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.fill ins(%ninf : f32) outs(%max : memref<16xf32, strided<[1], offset: ?>>)
    linalg.generic {indexing_maps = [#row, #sum],
                    iterator_types = ["parallel", "reduction"]}
        ins(%block : memref<16x64xf32, strided<[64, 1], offset: ?>>)
        outs(%max : memref<16xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %acc: f32):
      %0 = arith.maximumf %acc, %in : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#row, #sum, #row],
                    iterator_types = ["parallel", "parallel"]}
        ins(%block, %max : memref<16x64xf32, strided<[64, 1], offset: ?>>,
                           memref<16xf32, strided<[1], offset: ?>>)
        outs(%out : memref<16x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %mx: f32, %o: f32):
      %0 = arith.subf %in, %mx : f32
      %1 = math.exp %0 : f32
      linalg.yield %1 : f32
    }
    scf.reduce
  }
  return
}
