// RUN: tfc-opt %s -split-input-file --tfc-vectorize-contractions | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-vectorize-contractions=bf16-dot=true | FileCheck %s --check-prefix=DOT

// A linear layer's matmul (y = x W^T): W carries C's innermost dimension,
// so it is packed into the shared panel; W runs along K, so the panel is
// packed by 16 x 16 tiles, 16 vector loads along K transposed by 4 x 16
// shuffles into 16 vector stores along N (the threads split the tiles);
// 8 x 2 tiles of vector<16xf32> accumulate FMAs, each first prefetching
// the next tile's 16 vectors of C for writing (C, 512 KiB, is more than
// stays in the cache next to a core); 2048 rows x 64 x 32 is big enough
// for threads. The panel is two slivers of K = 32 rows x 32 columns,
// each followed by one cache line (16 floats) of padding: 2 x 1040.

// CHECK: memref.global "private" @__tfc_panel_f32 : memref<2080xf32>
// CHECK-LABEL: func.func @linear
// CHECK: %[[PANEL:.*]] = memref.get_global @__tfc_panel_f32
// CHECK: scf.for %[[KC:.*]] = %{{.*}} to %{{.*}} step %c256
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-COUNT-16: vector.load %{{.*}} : memref<64x32xf32>, vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK: arith.muli %{{.*}}, %c1040 : index
// CHECK-COUNT-16: vector.store %{{.*}}, %[[PANEL]]
// CHECK-NOT: memref.load %{{.*}} : memref<64x32xf32>
// CHECK: scf.parallel
// CHECK: vector.create_mask
// CHECK-COUNT-16: memref.prefetch %{{.*}}[%{{.*}}, %{{.*}}], write, locality<3>, data : memref<2048x64xf32>
// CHECK-COUNT-16: vector.maskedload
// CHECK: scf.for
// CHECK-COUNT-2: vector.load %[[PANEL]]
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK-COUNT-16: vector.maskedstore
// CHECK-NOT: linalg.matmul_transpose_b
func.func @linear(%x: memref<2048x32xf32>, %w: memref<64x32xf32>,
                  %y: memref<2048x64xf32>) {
  linalg.matmul_transpose_b ins(%x, %w : memref<2048x32xf32>, memref<64x32xf32>)
                            outs(%y : memref<2048x64xf32>)
  return
}

// -----

// Attention scores in a generic: batch and head dims are outer loops;
// narrow N (20) uses single-vector tiles of 12 rows, and the rows that do
// not fill one (M = 10) run as one tile of their own height, not one row at
// a time. Too small for threads.

#q = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#k = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
// CHECK-LABEL: func.func @scores
// CHECK-NOT: scf.parallel
// CHECK: scf.if
// CHECK-COUNT-12: vector.maskedload
// CHECK: } else {
// CHECK-NOT: scf.for
// CHECK-COUNT-10: vector.maskedload
// CHECK-NOT: vector.maskedload
// CHECK: scf.for
// CHECK-NOT: linalg.generic
func.func @scores(%q: memref<2x10x2x4xf32>, %k: memref<2x20x2x4xf32>,
                  %s: memref<2x2x10x20xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #s],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "parallel", "reduction"]}
      ins(%q, %k : memref<2x10x2x4xf32>, memref<2x20x2x4xf32>)
      outs(%s : memref<2x2x10x20xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// f64 uses vector<8xf64>; when the first input carries N the operands swap.
// B runs along N, so the panel is packed by (masked) vector loads along N.

// CHECK-LABEL: func.func @swapped
// CHECK: vector.maskedload %{{.*}} : memref<16x32xf64>, vector<8xi1>, vector<8xf64> into vector<8xf64>
// CHECK: vector.fma %{{.*}} : vector<8xf64>
func.func @swapped(%b: memref<16x32xf64>, %a: memref<40x16xf64>,
                   %c: memref<40x32xf64>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, k)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%b, %a : memref<16x32xf64>, memref<40x16xf64>)
      outs(%c : memref<40x32xf64>) {
  ^bb0(%x: f64, %y: f64, %z: f64):
    %p = arith.mulf %x, %y : f64
    %r = arith.addf %p, %z : f64
    linalg.yield %r : f64
  }
  return
}

// -----

// Not contractions: a sum of squares (the body is not out + a * b), and an
// outer product (no reduction). Both stay.

// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<8x32xf32>, %r: memref<8xf32>,
                      %u: memref<8xf32>, %v: memref<32xf32>,
                      %o: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x32xf32>) outs(%r : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %p = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%u, %v : memref<8xf32>, memref<32xf32>) outs(%o : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Many independent outer iterations (batch 4 x head 4 = 16, performer-like
// chunk scores): the contraction forks once over the linearised outer
// loops instead of per outer iteration over row blocks; each iteration
// packs into a panel of its own on the stack (an alloca in an alloca
// scope; K runs along the channels, so by transposed tiles), and no
// global panel is made for it.

#q = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#k = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @outer_parallel
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.parallel (%[[IV:.*]]) = (%{{.*}}) to (%[[C16]])
// CHECK: %[[H:.*]] = arith.remui %[[IV]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %[[IV]], %{{.*}} : index
// CHECK: memref.alloca_scope
// CHECK: %[[PANEL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4128xf32>
// CHECK: vector.load %{{.*}}[%[[B]], %{{.*}}, %[[H]], %{{.*}}] : memref<4x64x4x64xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[PANEL]]
// CHECK-NOT: scf.parallel
// CHECK: vector.load %[[PANEL]]
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
func.func @outer_parallel(%q: memref<4x64x4x64xf32>, %k: memref<4x64x4x64xf32>,
                          %s: memref<4x4x64x64xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #s],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "parallel", "reduction"]}
      ins(%q, %k : memref<4x64x4x64xf32>, memref<4x64x4x64xf32>)
      outs(%s : memref<4x4x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Contractions inside a parallel loop (blocked attention's per-head
// scf.forall): each iteration runs on one thread, so the kernels neither
// fork nor use the global panel that the threads share. The loop's body
// starts with one stack panel as large as its largest contraction's
// (scores: K = 32 deep, N = 64 wide; values: N = 32 padded to 32 columns,
// K = 64 deep), and both kernels pack into it.

#rows = affine_map<(i, j, d) -> (i, d)>
#cols = affine_map<(i, j, d) -> (j, d)>
#out = affine_map<(i, j, d) -> (i, j)>
#pv_p = affine_map<(i, e, j) -> (i, j)>
#pv_v = affine_map<(i, e, j) -> (j, e)>
#pv_o = affine_map<(i, e, j) -> (i, e)>
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @in_parallel_loop
// CHECK: scf.forall
// CHECK-NEXT: %[[PANEL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2080xf32>
// CHECK-NOT: scf.parallel
// CHECK-NOT: memref.alloca_scope
// CHECK: vector.store %{{.*}}, %[[PANEL]]
// CHECK: vector.load %[[PANEL]]
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[PANEL]]
// CHECK: vector.load %[[PANEL]]
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
func.func @in_parallel_loop(%q: memref<8x64x32xf32>, %k: memref<8x64x32xf32>,
                            %o: memref<8x64x32xf32>) {
  scf.forall (%h) in (8) {
    %qh = memref.subview %q[%h, 0, 0] [1, 64, 32] [1, 1, 1]
        : memref<8x64x32xf32> to memref<64x32xf32, strided<[32, 1], offset: ?>>
    %kh = memref.subview %k[%h, 0, 0] [1, 64, 32] [1, 1, 1]
        : memref<8x64x32xf32> to memref<64x32xf32, strided<[32, 1], offset: ?>>
    %oh = memref.subview %o[%h, 0, 0] [1, 64, 32] [1, 1, 1]
        : memref<8x64x32xf32> to memref<64x32xf32, strided<[32, 1], offset: ?>>
    %s = memref.alloca() : memref<64x64xf32>
    linalg.generic {indexing_maps = [#rows, #cols, #out],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%qh, %kh : memref<64x32xf32, strided<[32, 1], offset: ?>>,
                       memref<64x32xf32, strided<[32, 1], offset: ?>>)
        outs(%s : memref<64x64xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%s, %kh : memref<64x64xf32>,
                      memref<64x32xf32, strided<[32, 1], offset: ?>>)
        outs(%oh : memref<64x32xf32, strided<[32, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    }
  }
  return
}

// -----

// A fill of zeros right before the contraction is erased: K = 32 fits one
// panel, so the accumulators start from zeros and C is never loaded.

// CHECK-LABEL: func.func @zero_filled
// CHECK-NOT: linalg.fill
// CHECK-NOT: vector.maskedload
// CHECK: vector.fma
// CHECK: vector.maskedstore
// CHECK-NOT: linalg.matmul_transpose_b
func.func @zero_filled(%x: memref<16x32xf32>, %w: memref<64x32xf32>,
                       %y: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<16x64xf32>)
  linalg.matmul_transpose_b ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>)
                            outs(%y : memref<16x64xf32>)
  return
}

// -----

// K = 300 takes two panels: the first starts from zeros, the second from
// what the first stored.

// CHECK-LABEL: func.func @zero_filled_deep
// CHECK-NOT: linalg.fill
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: scf.if %[[FIRST]]
// CHECK: } else {
// CHECK: vector.maskedload
// CHECK: vector.fma
func.func @zero_filled_deep(%x: memref<16x300xf32>, %w: memref<64x300xf32>,
                            %y: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<16x64xf32>)
  linalg.matmul_transpose_b ins(%x, %w : memref<16x300xf32>, memref<64x300xf32>)
                            outs(%y : memref<16x64xf32>)
  return
}

// -----

// Fills that must stay: of a nonzero value, and one with a store to memory
// between it and the contraction.

// CHECK-LABEL: func.func @fills_kept
// CHECK: linalg.fill
// CHECK: vector.maskedload
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: vector.maskedload
func.func @fills_kept(%x: memref<16x32xf32>, %w: memref<64x32xf32>,
                      %y: memref<16x64xf32>, %z: memref<16x64xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  linalg.fill ins(%one : f32) outs(%y : memref<16x64xf32>)
  linalg.matmul_transpose_b ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>)
                            outs(%y : memref<16x64xf32>)
  linalg.fill ins(%zero : f32) outs(%z : memref<16x64xf32>)
  memref.store %one, %z[%c0, %c0] : memref<16x64xf32>
  linalg.matmul_transpose_b ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>)
                            outs(%z : memref<16x64xf32>)
  return
}

// -----

// An epilogue (tfc-fuse-epilogues: the next linalg op updates C in place)
// in the row-block form: K = 300 takes two panels, and only the
// accumulators of the last one (kc = 256) go through the epilogue before
// they are stored; those of the first are stored as they are. The bias
// (along N) is loaded as vectors masked like C, the row scale (along M) as
// one element broadcast; the epilogue op is erased with the matmul.

#bias_n = affine_map<(m, n) -> (n)>
#scale_m = affine_map<(m, n) -> (m)>
#mn = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @epilogue_row_blocks
// CHECK-SAME: (%[[X:.*]]: memref<64x300xf32>, %[[W:.*]]: memref<40x300xf32>, %[[BIAS:.*]]: memref<40xf32>, %[[SCALE:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64x40xf32>)
// CHECK: scf.for %[[KC:.*]] = %{{.*}} to %{{.*}} step %c256
// CHECK: scf.parallel
// CHECK: %[[ACC:.*]]:16 = scf.for
// CHECK: vector.fma
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[KC]], %c256
// CHECK-NEXT: %[[OUT:.*]]:16 = scf.if %[[LAST]]
// CHECK: %[[B0:.*]] = vector.maskedload %[[BIAS]]
// CHECK: %[[S0:.*]] = memref.load %[[SCALE]]
// CHECK-NEXT: %[[SV:.*]] = vector.broadcast %[[S0]] : f32 to vector<16xf32>
// CHECK: %[[T:.*]] = arith.addf %[[ACC]]#0, %[[B0]] : vector<16xf32>
// CHECK-NEXT: %[[U:.*]] = arith.mulf %[[T]], %[[SV]] : vector<16xf32>
// CHECK-NEXT: math.tanh %[[U]] : vector<16xf32>
// CHECK: scf.yield
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[ACC]]#0, %[[ACC]]#1
// CHECK: vector.maskedstore %[[Y]][{{.*}}], %{{.*}}, %[[OUT]]#0
// CHECK-NOT: linalg.generic
func.func @epilogue_row_blocks(%x: memref<64x300xf32>, %w: memref<40x300xf32>,
                               %bias: memref<40xf32>, %scale: memref<64xf32>,
                               %y: memref<64x40xf32>) {
  linalg.matmul_transpose_b {tfc.epilogue}
      ins(%x, %w : memref<64x300xf32>, memref<40x300xf32>)
      outs(%y : memref<64x40xf32>)
  linalg.generic {indexing_maps = [#bias_n, #scale_m, #mn],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias, %scale : memref<40xf32>, memref<64xf32>)
      outs(%y : memref<64x40xf32>) {
  ^bb0(%b: f32, %s: f32, %c: f32):
    %t = arith.addf %c, %b : f32
    %u = arith.mulf %t, %s : f32
    %v = math.tanh %u : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// A rounded epilogue (tfc-precision: the bias add reads C as its last
// input and writes C's bf16 copy to a buffer of its own): K = 300 takes
// two panels; the first panel's sums are stored to C, the last panel's
// accumulators go through the epilogue and are stored, rounded, to the
// epilogue's output and not to C.

#rb_bias = affine_map<(m, n) -> (n)>
#rb_mn = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @rounded_epilogue
// CHECK-SAME: (%[[X:.*]]: memref<64x300xf32>, %[[W:.*]]: memref<40x300xf32>, %[[BIAS:.*]]: memref<40xf32>, %[[C:.*]]: memref<64x40xf32>, %[[Y:.*]]: memref<64x40xbf16>)
// CHECK: scf.for %[[KC:.*]] = %{{.*}} to %{{.*}} step %c256
// CHECK: %[[ACC:.*]]:16 = scf.for
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[KC]], %c256
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK: %[[B0:.*]] = vector.maskedload %[[BIAS]]
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[ACC]]#0, %[[B0]] : vector<16xf32>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[T]] : vector<16xf32> to vector<16xbf16>
// CHECK: vector.maskedstore %[[Y]][{{.*}}], %{{.*}}, %[[R]] : memref<64x40xbf16>, vector<16xi1>, vector<16xbf16>
// CHECK-NOT: vector.maskedstore %[[C]]
// CHECK: } else {
// CHECK-NEXT: vector.maskedstore %[[C]][{{.*}}], %{{.*}}, %[[ACC]]#0 : memref<64x40xf32>
// CHECK-NOT: linalg.generic
func.func @rounded_epilogue(%x: memref<64x300xf32>, %w: memref<40x300xf32>,
                            %bias: memref<40xf32>, %c: memref<64x40xf32>,
                            %y: memref<64x40xbf16>) {
  linalg.matmul_transpose_b {tfc.epilogue}
      ins(%x, %w : memref<64x300xf32>, memref<40x300xf32>)
      outs(%c : memref<64x40xf32>)
  linalg.generic {indexing_maps = [#rb_bias, #rb_mn, #rb_mn],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<40xf32>, memref<64x40xf32>)
      outs(%y : memref<64x40xbf16>) {
  ^bb0(%b: f32, %cv: f32, %out: bf16):
    %t = arith.addf %cv, %b : f32
    %r = arith.truncf %t : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// An epilogue in the parallel-outer form (8 batches, a stack panel each):
// K fits one panel, so the epilogue (residual add and ReLU, its constant
// broadcast) applies to every tile's accumulators right after its K loop,
// before the store, with no branch.

#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bkn = affine_map<(b, m, n, k) -> (b, k, n)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(b, m, n) -> (b, m, n)>
// CHECK-LABEL: func.func @epilogue_parallel_outer
// CHECK-SAME: %[[RES:[^:]*]]: memref<8x16x32xf32>, %[[Y:[^:]*]]: memref<8x16x32xf32>)
// CHECK: scf.parallel
// CHECK: memref.alloca_scope
// CHECK: memref.alloca
// CHECK-NOT: scf.if
// CHECK: %[[ACC:.*]]:16 = scf.for
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NOT: scf.if
// CHECK: %[[R0:.*]] = vector.maskedload %[[RES]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ZV:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[ACC]]#0, %[[R0]] : vector<16xf32>
// CHECK-NEXT: %[[V:.*]] = arith.maximumf %[[T]], %[[ZV]] : vector<16xf32>
// CHECK: vector.maskedstore %[[Y]][{{.*}}], %{{.*}}, %[[V]]
// CHECK-NOT: linalg.generic
func.func @epilogue_parallel_outer(%a: memref<8x16x16xf32>, %b: memref<8x16x32xf32>,
                                   %res: memref<8x16x32xf32>, %y: memref<8x16x32xf32>) {
  linalg.generic {indexing_maps = [#bmk, #bkn, #bmn],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16x16xf32>, memref<8x16x32xf32>)
      outs(%y : memref<8x16x32xf32>) attrs = {tfc.epilogue} {
  ^bb0(%u: f32, %v: f32, %c: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%res : memref<8x16x32xf32>) outs(%y : memref<8x16x32xf32>) {
  ^bb0(%r: f32, %c: f32):
    %zero = arith.constant 0.0 : f32
    %t = arith.addf %c, %r : f32
    %v = arith.maximumf %t, %zero : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// An epilogue that reads positions (blocked attention's causal mask on a
// [T, T] score block): `linalg.index` of M is the tile row's index
// broadcast, `linalg.index` of N the vector's first column plus the lanes'
// offsets 0..15, so each lane compares its own column with its row.

#qi = affine_map<(i, j, d) -> (i, d)>
#kj = affine_map<(i, j, d) -> (j, d)>
#ij = affine_map<(i, j, d) -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @epilogue_positions
// CHECK-SAME: %[[S:[^:]*]]: memref<32x32xf32>)
// CHECK: %[[ACC:.*]]:16 = scf.for
// CHECK: vector.fma
// CHECK: %[[ROW:.*]] = vector.broadcast %{{.*}} : index to vector<16xindex>
// CHECK-NEXT: %[[COL:.*]] = vector.broadcast %{{.*}} : index to vector<16xindex>
// CHECK-NEXT: %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xindex>
// CHECK-NEXT: %[[J:.*]] = arith.addi %[[COL]], %[[LANES]] : vector<16xindex>
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi sle, %[[J]], %[[ROW]] : vector<16xindex>
// CHECK: %[[M:.*]] = arith.select %[[KEEP]], %[[ACC]]#0, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.maskedstore %[[S]][{{.*}}], %{{.*}}, %[[M]]
// CHECK-NOT: linalg.generic
func.func @epilogue_positions(%q: memref<32x16xf32>, %k: memref<32x16xf32>,
                              %s: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [#qi, #kj, #ij],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<32x16xf32>, memref<32x16xf32>)
      outs(%s : memref<32x32xf32>) attrs = {tfc.epilogue} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%s : memref<32x32xf32>) {
  ^bb0(%c: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sle, %j, %i : index
    %m = arith.select %keep, %c, %ninf : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A projection of bf16 operands into float32 (`--precision=bf16`): the
// panel is bf16, and W, which runs along K, is packed by tiles of 16
// columns x 16 pairs of k, each pair one 32-bit element of the transpose;
// the K loop steps by two k, loading the panel as vector<32xbf16> and x's
// pair (x runs along K) as one vector<2xbf16> broadcast as a 32-bit word.
// Without bf16-dot, each pair multiplies as two float32 FMAs of the
// widened halves, the odd k (the high half) first; with it, one vdpbf16ps,
// the broadcast pair its last operand (the one LLVM folds a load into).

#x = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (j, k)>
#y = affine_map<(i, j, k) -> (i, j)>
// CHECK: memref.global "private" @__tfc_panel_bf16 : memref<{{[0-9]+}}xbf16>
// CHECK-LABEL: func.func @linear_bf16
// CHECK: %[[PANEL:.*]] = memref.get_global @__tfc_panel_bf16
// CHECK-COUNT-16: vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// CHECK-COUNT-16: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// CHECK: vector.load %[[PANEL]][%{{.*}}] : memref<{{[0-9]+}}xbf16>, vector<32xbf16>
// CHECK: vector.load %{{.*}} : memref<64x64xbf16>, vector<2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK: arith.andi
// CHECK: vector.fma
// CHECK: arith.shli
// CHECK: vector.fma
// CHECK-NOT: llvm.call_intrinsic
// CHECK-NOT: linalg.generic
// DOT-LABEL: func.func @linear_bf16
// DOT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// DOT: %[[PAIRS:.*]] = vector.broadcast %{{.*}} : i32 to vector<16xi32>
// DOT: %[[A:.*]] = vector.bitcast %[[PAIRS]] : vector<16xi32> to vector<32xbf16>
// DOT: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.*}}, %{{.*}}, %[[A]]) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// DOT-NOT: vector.fma
func.func @linear_bf16(%x: memref<64x64xbf16>, %w: memref<48x64xbf16>,
                       %out: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x64xbf16>, memref<48x64xbf16>)
      outs(%out : memref<64x48xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A weight gradient of bf16 operands (dW = x^T dy, summed over the rows):
// dy runs along N, so rows k and k + 1 are loaded as whole vectors and
// interleaved as 16-bit integers into pairs; N = 40 leaves 8 columns
// packed one element at a time and zeros up to the panel's width. x runs
// along M: each row block first copies its 8 rows of x for the K panel
// into a row panel on its thread's stack, each pair of k two vector loads
// of the 8 rows interleaved into 8 pairs, so that a pair is one load from
// there in every tile of the block.

#xt = affine_map<(i, j, t) -> (t, i)>
#dy = affine_map<(i, j, t) -> (t, j)>
#dw = affine_map<(i, j, t) -> (i, j)>
// CHECK-LABEL: func.func @weight_gradient_bf16
// CHECK: vector.load %{{.*}} : memref<32x40xbf16>, vector<16xbf16>
// CHECK: vector.load %{{.*}} : memref<32x40xbf16>, vector<16xbf16>
// CHECK: vector.shuffle {{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xi16>, vector<16xi16>
// CHECK: memref.load %{{.*}} : memref<32x40xbf16>
// CHECK: memref.store %{{.*}} : memref<{{[0-9]+}}xbf16>
// CHECK: memref.alloca_scope
// CHECK: %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2048xbf16>
// CHECK: vector.load %{{.*}} : memref<32x24xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} : memref<32x24xbf16>, vector<8xbf16>
// CHECK: vector.shuffle {{.*}} [0, 8, 1, 9, {{.*}}] : vector<8xi16>, vector<8xi16>
// CHECK: vector.store %{{.*}}, %[[ROWS]][%{{.*}}] : memref<2048xbf16>, vector<16xbf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// CHECK: vector.load %[[ROWS]][%{{.*}}] : memref<2048xbf16>, vector<2xbf16>
// CHECK-NOT: vector.maskedload %{{.*}} : memref<32x40xbf16>
// CHECK-NOT: vector.from_elements
// CHECK-NOT: linalg.generic
func.func @weight_gradient_bf16(%x: memref<32x24xbf16>, %dy: memref<32x40xbf16>,
                                %dw: memref<24x40xf32>) {
  linalg.generic {indexing_maps = [#xt, #dy, #dw],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<32x24xbf16>, memref<32x40xbf16>)
      outs(%dw : memref<24x40xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A weight gradient over more tokens than one K panel (512 = 2 x 256):
// while it packs rows k and k + 1 of dy, the pack prefetches the same rows
// of the next panel (the last row past K), one prefetch per 64-byte line
// (32 bf16), so that dy comes from memory while this panel's tiles run.
// A panel of dy over 256 KiB (N = 1024: 512 KiB) is not prefetched: with
// the next one it would not fit in the cache next to the core.

#xt3 = affine_map<(i, j, t) -> (t, i)>
#dy3 = affine_map<(i, j, t) -> (t, j)>
#dw3 = affine_map<(i, j, t) -> (i, j)>
// CHECK-LABEL: func.func @weight_gradient_bf16_prefetch
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %c64 step %c32
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c256
// CHECK: %[[ROW:.*]] = arith.minsi %[[NEXT]], %c511
// CHECK: memref.prefetch %{{.*}}[%[[ROW]], %[[N]]], read, locality<3>, data : memref<512x64xbf16>
// CHECK: %[[NEXT1:.*]] = arith.addi %{{.*}}, %c257
// CHECK: %[[ROW1:.*]] = arith.minsi %[[NEXT1]], %c511
// CHECK: memref.prefetch %{{.*}}[%[[ROW1]], %[[N]]], read, locality<3>, data : memref<512x64xbf16>
// CHECK: vector.load %{{.*}} : memref<512x64xbf16>, vector<16xbf16>
// CHECK-LABEL: func.func @weight_gradient_bf16_wide
// CHECK-NOT: memref.prefetch %{{.*}} : memref<512x1024xbf16>
// CHECK: return
func.func @weight_gradient_bf16_prefetch(%x: memref<512x24xbf16>,
                                         %dy: memref<512x64xbf16>,
                                         %dw: memref<24x64xf32>) {
  linalg.generic {indexing_maps = [#xt3, #dy3, #dw3],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<512x24xbf16>, memref<512x64xbf16>)
      outs(%dw : memref<24x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

func.func @weight_gradient_bf16_wide(%x: memref<512x24xbf16>,
                                     %dy: memref<512x1024xbf16>,
                                     %dw: memref<24x1024xf32>) {
  linalg.generic {indexing_maps = [#xt3, #dy3, #dw3],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<512x24xbf16>, memref<512x1024xbf16>)
      outs(%dw : memref<24x1024xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same weight gradient with M = 20, which the row blocks of 8 do not
// divide: the two whole blocks copy their rows of x by vector loads of 8,
// the last block's 4 rows by vector loads of 4.

#xt2 = affine_map<(i, j, t) -> (t, i)>
#dy2 = affine_map<(i, j, t) -> (t, j)>
#dw2 = affine_map<(i, j, t) -> (i, j)>
// CHECK-LABEL: func.func @weight_gradient_bf16_partial_block
// CHECK: memref.alloca_scope
// CHECK: %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2048xbf16>
// CHECK: scf.if
// CHECK: vector.load %{{.*}} : memref<32x20xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} : memref<32x20xbf16>, vector<8xbf16>
// CHECK: vector.shuffle {{.*}} [0, 8, 1, 9, {{.*}}] : vector<8xi16>, vector<8xi16>
// CHECK: vector.store %{{.*}}, %[[ROWS]][%{{.*}}] : memref<2048xbf16>, vector<16xbf16>
// CHECK: } else {
// CHECK: vector.load %{{.*}} : memref<32x20xbf16>, vector<4xbf16>
// CHECK: vector.load %{{.*}} : memref<32x20xbf16>, vector<4xbf16>
// CHECK: vector.shuffle {{.*}} [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xi16>, vector<4xi16>
// CHECK: vector.store %{{.*}}, %[[ROWS]][%{{.*}}] : memref<2048xbf16>, vector<8xbf16>
// CHECK-NOT: memref.load %{{.*}} : memref<32x20xbf16>
func.func @weight_gradient_bf16_partial_block(%x: memref<32x20xbf16>,
                                              %dy: memref<32x40xbf16>,
                                              %dw: memref<20x40xf32>) {
  linalg.generic {indexing_maps = [#xt2, #dy2, #dw2],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<32x20xbf16>, memref<32x40xbf16>)
      outs(%dw : memref<20x40xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Attention scores of a 16-wide head in bf16, S = Q K^T for a block of
// 128 queries and 128 keys: K runs along the head's 16 k, 8 pairs, too
// shallow for the 16 x 16 tiles of pairs. Each group of 8 keys is 8
// loads of vector<16xbf16> (8 pairs), an 8 x 8 transpose of 32-bit pairs
// (3 x 8 shuffles), and the two groups' rows are joined into 8 whole
// vectors of 16 keys; nothing is packed one element at a time. With one
// such tile row, the threads split its columns. S, 64 KiB, stays in the
// cache next to a core: no prefetches.

#qs = affine_map<(i, j, d) -> (i, d)>
#ks = affine_map<(i, j, d) -> (j, d)>
#ss = affine_map<(i, j, d) -> (i, j)>
// CHECK-LABEL: func.func @scores_bf16_narrow_head
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-NOT: vector.load
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c128)
// CHECK-COUNT-8: vector.load %{{.*}} : memref<128x16xbf16>, vector<16xbf16>
// CHECK-COUNT-24: vector.shuffle {{.*}} : vector<8xi32>, vector<8xi32>
// CHECK-COUNT-8: vector.load %{{.*}} : memref<128x16xbf16>, vector<16xbf16>
// CHECK-COUNT-24: vector.shuffle {{.*}} : vector<8xi32>, vector<8xi32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>, vector<8xi32>
// CHECK: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK-NOT: memref.load %{{.*}} : memref<128x16xbf16>
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// CHECK-NOT: memref.prefetch
// CHECK-NOT: linalg.generic
func.func @scores_bf16_narrow_head(%q: memref<128x16xbf16>,
                                   %k: memref<128x16xbf16>,
                                   %scores: memref<128x128xf32>) {
  linalg.generic {indexing_maps = [#qs, #ks, #ss],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<128x16xbf16>, memref<128x16xbf16>)
      outs(%scores : memref<128x128xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// bf16 operands with an odd K: no pairs, the op stays a linalg.generic.

#xo = affine_map<(i, j, k) -> (i, k)>
#wo = affine_map<(i, j, k) -> (k, j)>
#yo = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @odd_k_bf16
// CHECK: linalg.generic
func.func @odd_k_bf16(%x: memref<16x33xbf16>, %w: memref<33x32xbf16>,
                      %out: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [#xo, #wo, #yo],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x33xbf16>, memref<33x32xbf16>)
      outs(%out : memref<16x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
