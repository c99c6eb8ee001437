// RUN: tfc-opt %s -split-input-file --tfc-vectorize-short-rows | FileCheck %s

// Blocked attention's rescaling of its running output: acc[t, e] *= c[t]
// over a [128, 32] block. The row of 32 runs by two vectors of 16; c is
// loaded once per row and broadcast; the output is read (the body uses it)
// and stored at the same place. On one thread: 4096 elements.

// CHECK-LABEL: func.func @rescale
// CHECK-SAME: (%[[C:.*]]: memref<128xf32>, %[[ACC:.*]]: memref<128x32xf32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %[[STEP:.*]] {
// CHECK: %[[S:.*]] = memref.load %[[C]][%[[T]]] : memref<128xf32>
// CHECK: %[[CV:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK: %[[AV:.*]] = vector.load %[[ACC]][%[[T]], %[[E]]] : memref<128x32xf32>, vector<16xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[AV]], %[[CV]] : vector<16xf32>
// CHECK: vector.store %[[P]], %[[ACC]][%[[T]], %[[E]]] : memref<128x32xf32>, vector<16xf32>
// CHECK-NOT: scf.parallel
#map_row = affine_map<(t, e) -> (t)>
#map_id = affine_map<(t, e) -> (t, e)>
func.func @rescale(%c: memref<128xf32>, %acc: memref<128x32xf32>) {
  linalg.generic {indexing_maps = [#map_row, #map_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<128xf32>) outs(%acc : memref<128x32xf32>) {
  ^bb0(%s: f32, %a: f32):
    %p = arith.mulf %a, %s : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// The row runs along a strided view (a head of [S, H, Dh]): its last
// dimension has unit stride, which is all the vectors need. The output
// is written only, so it is not loaded; a constant from the body becomes
// a vector. 512 x 4 x 32 elements outside any parallel loop: the outer
// loops are parallel.

// CHECK-LABEL: func.func @divide_strided
// CHECK-SAME: (%[[X:.*]]: memref<512x4x32xf32>, %[[L:.*]]: memref<4x512xf32>, %[[Y:.*]]: memref<512x4x32xf32, strided<[256, 32, 1]>>)
// CHECK: scf.parallel (%[[S:.*]], %[[H:.*]]) =
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[S]], %[[H]], %[[E]]]
// CHECK: %[[LS:.*]] = memref.load %[[L]][%[[H]], %[[S]]]
// CHECK: %[[LV:.*]] = vector.broadcast %[[LS]]
// CHECK-NOT: vector.load %[[Y]]
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ZERO:.*]] = vector.broadcast %[[Z]] : f32 to vector<16xf32>
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[LV]], %[[ZERO]] : vector<16xf32>
// CHECK: %[[Q:.*]] = arith.divf %[[XV]], %[[LV]] : vector<16xf32>
// CHECK: %[[R:.*]] = arith.select %[[POS]], %[[Q]], %[[ZERO]] : vector<16xi1>, vector<16xf32>
// CHECK: vector.store %[[R]], %[[Y]][%[[S]], %[[H]], %[[E]]]
#m3 = affine_map<(s, h, e) -> (s, h, e)>
#m3_row = affine_map<(s, h, e) -> (h, s)>
func.func @divide_strided(%x: memref<512x4x32xf32>, %l: memref<4x512xf32>,
                          %y: memref<512x4x32xf32, strided<[256, 32, 1]>>) {
  linalg.generic {indexing_maps = [#m3, #m3_row, #m3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %l : memref<512x4x32xf32>, memref<4x512xf32>)
      outs(%y : memref<512x4x32xf32, strided<[256, 32, 1]>>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %positive = arith.cmpf ogt, %b, %zero : f32
    %q = arith.divf %a, %b : f32
    %r = arith.select %positive, %q, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Inside a parallel loop (an attention pair's iteration) the outer loops
// stay on the thread of the iteration, whatever their size. f64: vectors
// of 8.

// CHECK-LABEL: func.func @in_parallel_f64
// CHECK: scf.forall
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[EIGHT:.*]] {
// CHECK: vector.load {{.*}} vector<8xf64>
#m2 = affine_map<(t, e) -> (t, e)>
func.func @in_parallel_f64(%x: memref<4x256x16xf64>) {
  scf.forall (%i) in (4) {
    %v = memref.subview %x[%i, 0, 0] [1, 256, 16] [1, 1, 1]
        : memref<4x256x16xf64> to memref<256x16xf64, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#m2],
                    iterator_types = ["parallel", "parallel"]}
        outs(%v : memref<256x16xf64, strided<[16, 1], offset: ?>>) {
    ^bb0(%o: f64):
      %t = math.tanh %o : f64
      linalg.yield %t : f64
    }
  }
  return
}

// -----

// The gradient's D[s, h] = sum_e dO[s, h, e] * O[s, h, e]: the row is
// reduced. Two vectors of partial sums along the row, from zeros, then one
// reduction across the lanes into the output, which is read once per row.
// The combiner's flags go with it.

// CHECK-LABEL: func.func @row_dot
// CHECK-SAME: (%[[DO:.*]]: memref<64x2x32xf32>, %[[O:.*]]: memref<64x2x32xf32>, %[[D:.*]]: memref<2x64xf32>)
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[ZEROS]]) -> (vector<16xf32>) {
// CHECK: %[[X:.*]] = vector.load %[[DO]][%[[S]], %[[H]], %[[E]]]
// CHECK: %[[Y:.*]] = vector.load %[[O]][%[[S]], %[[H]], %[[E]]]
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : vector<16xf32>
// CHECK: %[[N:.*]] = arith.addf %[[A]], %[[P]] fastmath<reassoc> : vector<16xf32>
// CHECK: scf.yield %[[N]] : vector<16xf32>
// CHECK: %[[OLD:.*]] = memref.load %[[D]][%[[H]], %[[S]]]
// CHECK: %[[T:.*]] = vector.reduction <add>, %[[SUM]], %[[OLD]] fastmath<reassoc> : vector<16xf32> into f32
// CHECK: memref.store %[[T]], %[[D]][%[[H]], %[[S]]]
#d_in = affine_map<(s, h, e) -> (s, h, e)>
#d_out = affine_map<(s, h, e) -> (h, s)>
func.func @row_dot(%do: memref<64x2x32xf32>, %o: memref<64x2x32xf32>,
                   %d: memref<2x64xf32>) {
  linalg.generic {indexing_maps = [#d_in, #d_in, #d_out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%do, %o : memref<64x2x32xf32>, memref<64x2x32xf32>)
      outs(%d : memref<2x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %acc, %p fastmath<reassoc> : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A row maximum starts from -inf and reduces with maximumf.

// CHECK-LABEL: func.func @row_max
// CHECK: arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: vector.reduction <maximumf>
#x_id = affine_map<(t, e) -> (t, e)>
#x_row = affine_map<(t, e) -> (t)>
func.func @row_max(%x: memref<8x32xf32>, %m: memref<8xf32>) {
  linalg.generic {indexing_maps = [#x_id, #x_row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x32xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.maximumf %acc, %v : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// The bf16 copies of attention's operands: a [128, 16] block of a head,
// rounded from float32, and a [128, 128] block of probabilities. A vector
// holds as many elements as fill a register of the widest operand, 16
// floats (not 32 bf16, which a row of 16 would not fill), and a rounding
// runs as vectors at any row length: LLVM 19 vectorises it at most 8
// lanes wide, and often not at all.

// CHECK-LABEL: func.func @round_to_bf16
// CHECK-NOT: linalg.generic
// CHECK: vector.load %{{.*}} : memref<128x16xf32, strided<[128, 1], offset: ?>>, vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %{{.*}} : memref<128x16xbf16>, vector<16xbf16>
// CHECK: vector.load %{{.*}} : memref<128x128xf32>, vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %{{.*}} : memref<128x128xbf16>, vector<16xbf16>
// CHECK-NOT: linalg.generic
#b_id = affine_map<(t, e) -> (t, e)>
func.func @round_to_bf16(%head: memref<128x16xf32, strided<[128, 1], offset: ?>>,
                         %head16: memref<128x16xbf16>,
                         %probs: memref<128x128xf32>,
                         %probs16: memref<128x128xbf16>) {
  linalg.generic {indexing_maps = [#b_id, #b_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%head : memref<128x16xf32, strided<[128, 1], offset: ?>>)
      outs(%head16 : memref<128x16xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.generic {indexing_maps = [#b_id, #b_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%probs : memref<128x128xf32>) outs(%probs16 : memref<128x128xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// The same roundings as tfc-collapse-dims leaves them, one loop over
// contiguous buffers. Outside parallel loops and long enough for threads
// (65,536 elements), each thread takes chunks of 4,096; a short one
// (2,048) and one inside a parallel loop of blocks run on one thread. A
// one-loop op that does not round is left to LLVM.

// CHECK-LABEL: func.func @round_one_loop
// CHECK: %[[CHUNKS:.*]] = arith.constant 16 : index
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK: %[[CHUNK:.*]] = arith.constant 4096 : index
// CHECK: %[[BEGIN:.*]] = arith.muli %[[C]], %[[CHUNK]]
// CHECK: %[[END:.*]] = arith.addi %[[BEGIN]], %{{.*}}
// CHECK: scf.for %[[E:.*]] = %[[BEGIN]] to %[[END]] step
// CHECK: vector.load %{{.*}}[%[[E]]] : memref<65536xf32>, vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %{{.*}}[%[[E]]] : memref<65536xbf16>, vector<16xbf16>
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<2048xf32>, vector<16xf32>
// CHECK: scf.forall
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<16384xf32, strided<[1], offset: ?>>, vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: vector.
#o_id = affine_map<(e) -> (e)>
func.func @round_one_loop(%x: memref<65536xf32>, %x16: memref<65536xbf16>,
                          %y: memref<2048xf32>, %y16: memref<2048xbf16>,
                          %blocks: memref<4x16384xf32>,
                          %block16: memref<16384xbf16>) {
  linalg.generic {indexing_maps = [#o_id, #o_id],
                  iterator_types = ["parallel"]}
      ins(%x : memref<65536xf32>) outs(%x16 : memref<65536xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.generic {indexing_maps = [#o_id, #o_id],
                  iterator_types = ["parallel"]}
      ins(%y : memref<2048xf32>) outs(%y16 : memref<2048xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  }
  scf.forall (%i) in (4) {
    %block = memref.subview %blocks[%i, 0] [1, 16384] [1, 1]
        : memref<4x16384xf32> to memref<16384xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#o_id, #o_id],
                    iterator_types = ["parallel"]}
        ins(%block : memref<16384xf32, strided<[1], offset: ?>>)
        outs(%block16 : memref<16384xbf16>) {
    ^bb0(%a: f32, %b: bf16):
      %t = arith.truncf %a : f32 to bf16
      linalg.yield %t : bf16
    }
  }
  linalg.generic {indexing_maps = [#o_id, #o_id],
                  iterator_types = ["parallel"]}
      ins(%x : memref<65536xf32>) outs(%x : memref<65536xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Left alone: a row longer than 64 (LLVM vectorises it along the row), a
// row that is not a multiple of the lanes, an input that runs along the
// row with a stride, a body that reads loop indices, a reduction over an
// outer loop, one whose output is read besides the combining add, and an
// i1 operand.

// CHECK-LABEL: func.func @refused
// CHECK-NOT: vector.
// CHECK-COUNT-7: linalg.generic
// CHECK-NOT: vector.
#r_row = affine_map<(t, e) -> (t)>
#r_id = affine_map<(t, e) -> (t, e)>
#r_tr = affine_map<(t, e) -> (e, t)>
#r_col = affine_map<(t, e) -> (e)>
func.func @refused(%c: memref<8xf32>, %long: memref<8x128xf32>,
                   %odd: memref<8x24xf32>, %square: memref<32x32xf32>,
                   %sums: memref<8xf32>, %flags: memref<8x32xi1>,
                   %acc: memref<8x32xf32>, %columns: memref<32xf32>) {
  linalg.generic {indexing_maps = [#r_row, #r_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8xf32>) outs(%long : memref<8x128xf32>) {
  ^bb0(%s: f32, %a: f32):
    %p = arith.mulf %a, %s : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#r_row, #r_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8xf32>) outs(%odd : memref<8x24xf32>) {
  ^bb0(%s: f32, %a: f32):
    %p = arith.mulf %a, %s : f32
    linalg.yield %p : f32
  }
  %left = memref.subview %square[0, 0] [32, 8] [1, 1]
      : memref<32x32xf32> to memref<32x8xf32, strided<[32, 1]>>
  linalg.generic {indexing_maps = [#r_tr, #r_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%left : memref<32x8xf32, strided<[32, 1]>>)
      outs(%acc : memref<8x32xf32>) {
  ^bb0(%s: f32, %a: f32):
    %p = arith.addf %a, %s : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#r_id],
                  iterator_types = ["parallel", "parallel"]}
      outs(%acc : memref<8x32xf32>) {
  ^bb0(%a: f32):
    %e = linalg.index 1 : index
    %i = arith.index_cast %e : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [#r_id, #r_col],
                  iterator_types = ["reduction", "parallel"]}
      ins(%acc : memref<8x32xf32>) outs(%columns : memref<32xf32>) {
  ^bb0(%a: f32, %s: f32):
    %p = arith.addf %a, %s : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#r_id, #r_row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%acc : memref<8x32xf32>) outs(%sums : memref<8xf32>) {
  ^bb0(%a: f32, %s: f32):
    %p = arith.mulf %a, %s : f32
    %q = arith.addf %p, %s : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#r_id, #r_id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%flags : memref<8x32xi1>) outs(%acc : memref<8x32xf32>) {
  ^bb0(%f: i1, %a: f32):
    %zero = arith.constant 0.0 : f32
    %p = arith.select %f, %a, %zero : f32
    linalg.yield %p : f32
  }
  return
}
