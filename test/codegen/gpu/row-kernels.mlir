// RUN: tfc-opt %s -split-input-file --tfc-gpu-row-kernels | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-gpu-row-kernels=lanes=1 | FileCheck %s --check-prefix=ONE

// A LayerNorm over 64 rows of 256 (mean, centred rows, variance, inverse
// deviation, normalisation) is one kernel of 8 rows per block of 256
// threads, a warp per row. Each sum is a loop over the lane's 8 columns
// and a butterfly of 5 shuffles; the first lane stores the row's values,
// and the ops after a sum read it from the register, not from memory.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NOT: linalg.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK: %[[ROW:.*]] = arith.addi
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK: %[[COL:.*]] = arith.addi %[[LANE]]
// CHECK: memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK: arith.addf %[[ACC]]
// CHECK: gpu.shuffle xor %[[SUM]], %c16_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
// CHECK: %[[LAST:.*]], %{{.*}} = gpu.shuffle xor %{{.*}}, %c1_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
// CHECK: %[[ROWSUM:.*]] = arith.addf %{{.*}}, %[[LAST]]
// CHECK: %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[ROWSUM]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %[[TOTAL]], %[[SUMS:.*]][%[[ROW]]]
// CHECK: %[[MEAN:.*]] = arith.mulf %[[TOTAL]]
// CHECK: scf.for
// CHECK: arith.subf %{{.*}}, %[[MEAN]]
// CHECK: scf.for {{.*}} iter_args
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: math.sqrt
// CHECK: %[[RSTD:.*]] = arith.divf
// CHECK: scf.for
// CHECK-NOT: memref.load %{{.*}}[%[[ROW]]] :
// CHECK: arith.mulf %{{.*}}, %[[RSTD]]
// CHECK: memref.store {{.*}} : memref<64x256xbf16>
// CHECK: } {tfc.row_kernel = array<i64: 64, 256, 32>}
// ONE-LABEL: func.func @layer_norm
// ONE-NOT: linalg.
// ONE: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256
// ONE-NOT: gpu.shuffle
// ONE: } {tfc.row_kernel = array<i64: 64, 256, 1>}
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> (d0, d1)>
#one = affine_map<(d0) -> (d0)>
func.func @layer_norm(%x: memref<64x256xf32>, %gamma: memref<256xf32>,
                      %beta: memref<256xf32>, %y: memref<64x256xbf16>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 3.906250e-03 : f32
  %eps = arith.constant 1.0e-05 : f32
  %one = arith.constant 1.0 : f32
  %sum = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x256xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %mean = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
      ins(%sum : memref<64xf32>) outs(%mean : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %inv : f32
    linalg.yield %m : f32
  }
  %centred = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [#all, #row, #all], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : memref<64x256xf32>, memref<64xf32>) outs(%centred : memref<64x256xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %c = arith.subf %in, %m : f32
    linalg.yield %c : f32
  }
  %var = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%var : memref<64xf32>)
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%centred : memref<64x256xf32>) outs(%var : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  %rstd = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
      ins(%var : memref<64xf32>) outs(%rstd : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %inv : f32
    %ve = arith.addf %v, %eps : f32
    %sd = math.sqrt %ve : f32
    %r = arith.divf %one, %sd : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#all, #row, #col, #col, #all], iterator_types = ["parallel", "parallel"]}
      ins(%centred, %rstd, %gamma, %beta : memref<64x256xf32>, memref<64xf32>, memref<256xf32>, memref<256xf32>)
      outs(%y : memref<64x256xbf16>) {
  ^bb0(%c: f32, %r: f32, %g: f32, %b: f32, %out: bf16):
    %n = arith.mulf %c, %r : f32
    %sc = arith.mulf %n, %g : f32
    %o = arith.addf %sc, %b : f32
    %t = arith.truncf %o : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// A row maximum over rows of 48 (a cross-entropy's over a vocabulary of
// 48): 16 lanes per row (the largest power of two that divides 48), 16
// rows per block, each lane's maximum starting from -inf, 4 shuffles;
// rows given as [3, 40] (120 rows, not a multiple of 16) are delinearised
// and the last block's extra rows skip the work.
// CHECK-LABEL: func.func @row_max
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK: %[[ROW:.*]] = arith.addi
// CHECK: arith.cmpi ult, %[[ROW]], %c120
// CHECK-DAG: %[[B:.*]] = arith.divui %[[ROW]], %c40
// CHECK-DAG: %[[S:.*]] = arith.remui %[[ROW]], %c40
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} to %c3{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[NINF]])
// CHECK: memref.load %arg0[%[[B]], %[[S]], %{{.*}}] : memref<3x40x48xf32>
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32, %c32_i32
// CHECK-COUNT-3: gpu.shuffle xor
// CHECK: } {tfc.row_kernel = array<i64: 120, 48, 16>}
func.func @row_max(%x: memref<3x40x48xf32>, %m: memref<3x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<3x40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<3x40x48xf32>) outs(%m : memref<3x40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The op after the row sum reads the sums of the next row: the rows are
// not independent, so the chain stops before it and it stays as it is.
// CHECK-LABEL: func.func @next_row
// CHECK: gpu.launch
// CHECK: } {tfc.row_kernel = array<i64: 64, 256, 32>}
// CHECK: linalg.generic
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
func.func @next_row(%x: memref<64x256xf32>, %sum: memref<65xf32>, %y: memref<64x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %view = memref.subview %sum[0] [64] [1] : memref<65xf32> to memref<64xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x256xf32>) outs(%view : memref<64xf32, strided<[1]>>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#all, affine_map<(d0, d1) -> (d0 + 1)>, #all], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<64x256xf32>, memref<65xf32>) outs(%y : memref<64x256xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.subf %in, %s : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A long sum over few rows (4 rows of 4,096) is left to
// tfc-gpu-split-reductions.
// CHECK-LABEL: func.func @few_long_rows
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
func.func @few_long_rows(%x: memref<4x4096xf32>, %sum: memref<4xf32>) {
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x4096xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sum into float64 cannot be shuffled (32-bit values only): no kernel
// with 32 lanes; one thread per row takes it.
// CHECK-LABEL: func.func @f64_sum
// CHECK-NOT: gpu.launch
// ONE-LABEL: func.func @f64_sum
// ONE: gpu.launch
// ONE: } {tfc.row_kernel = array<i64: 64, 256, 1>}
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
func.func @f64_sum(%x: memref<64x256xf64>, %sum: memref<64xf64>) {
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x256xf64>) outs(%sum : memref<64xf64>) {
  ^bb0(%in: f64, %acc: f64):
    %s = arith.addf %acc, %in : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// A column sum between the row ops (a LayerNorm gradient's scale and shift
// gradients, between its input gradient and the residual's): the chain
// steps over it, since the op after it neither reads what it writes nor
// writes what it reads, and the kernel runs before it, with the
// allocation that the later op needs moved up. The op after that reads
// the column sum's output, so it cannot run before it and stays.
// CHECK-LABEL: func.func @step_over_column_sum
// CHECK: %[[NEXT:.*]] = memref.alloc() : memref<2048x256xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[NEXT]]
// CHECK: } {tfc.row_kernel = array<i64: 2048, 256, 32>}
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<2048x256xf32>) outs(%arg2 : memref<256xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg5 : memref<2048xf32>)
// CHECK: linalg.generic {{.*}} outs(%arg4 : memref<2048x256xf32>)
// CHECK-NOT: gpu.launch
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
func.func @step_over_column_sum(%x: memref<2048x256xf32>, %sum: memref<2048xf32>,
                                %cols: memref<256xf32>, %res: memref<2048x256xf32>,
                                %out: memref<2048x256xf32>,
                                %other: memref<2048xf32>) {
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2048x256xf32>) outs(%sum : memref<2048xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2048x256xf32>) outs(%cols : memref<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%other : memref<2048xf32>)
  %next = memref.alloc() : memref<2048x256xf32>
  linalg.generic {indexing_maps = [#all, #row, #all, #all], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %res : memref<2048x256xf32>, memref<2048xf32>, memref<2048x256xf32>)
      outs(%next : memref<2048x256xf32>) {
  ^bb0(%in: f32, %s: f32, %r: f32, %o: f32):
    %d = arith.subf %in, %s : f32
    %e = arith.addf %d, %r : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#all, affine_map<(d0, d1) -> (d1)>, #all], iterator_types = ["parallel", "parallel"]}
      ins(%next, %cols : memref<2048x256xf32>, memref<256xf32>) outs(%out : memref<2048x256xf32>) {
  ^bb0(%in: f32, %c: f32, %o: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  }
  return
}
