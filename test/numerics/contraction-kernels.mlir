// The register-tiled kernels of tfc-vectorize-contractions compute what the
// contraction defines: each case runs a contraction through the pass and
// the same contraction as plain loops (a body the pass does not take:
// c - (-a) * b), and prints the largest difference. The inputs are
// multiples of 0.5 in [-2, 2], so every product and partial sum is exact
// in float32 and float64 and the kernels' fused multiply-adds must give
// the loops' result to the bit: every difference is 0.
//
// 1. A linear layer, C = X W^T, W packed by transposing 16 x 16 tiles in
//    registers: M = 100, N = 40, K = 300, so two K panels (256 and 44
//    deep), edge columns (40 = 2 x 16 + 8) and edge panel rows (44 =
//    2 x 16 + 12) packed one element at a time, edge rows (100 = 12 x 8
//    + 4); big enough for threads, which split the packing too.
// 2. C = X B with B along N (no transposing): K = 512, two full panels.
// 3. float64 C = X W^T: 8 x 8 tiles, M = 20, N = 17, K = 19.
// 4. Attention scores S = Q K^T over batch 4 x 2 heads (8 outer
//    iterations, each with its own panel on the stack): 33 queries, 40
//    keys, 16 channels.
// 5. Case 1 with a rounded epilogue (tfc-precision's form: a bias add and
//    a squared ReLU reading C as the last input and writing a bf16 buffer
//    of their own): the last K panel's tiles store the rounded results
//    there, which must equal the plain loops' (the contraction's loops,
//    then the epilogue's), widened back to float32.
// The parallel loops run on 2 OpenMP threads, as in the executables.

// RUN: tfc-opt %s --tfc-vectorize-contractions --tfc-expand-bf16 \
// RUN: | mlir-opt --convert-linalg-to-loops --convert-scf-to-openmp \
// RUN:     --canonicalize --convert-scf-to-cf --convert-vector-to-llvm \
// RUN:     --expand-strided-metadata --lower-affine \
// RUN:     --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --convert-openmp-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | env OMP_NUM_THREADS=2 mlir-cpu-runner -e main \
// RUN:     -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_libs,%openmp_lib \
// RUN: | FileCheck %s

// CHECK-COUNT-5: [0]
// CHECK-NOT: [

#map2 = affine_map<(i, j) -> (i, j)>
#mnk_a = affine_map<(m, n, k) -> (m, k)>
#mnk_bt = affine_map<(m, n, k) -> (n, k)>
#mnk_b = affine_map<(m, n, k) -> (k, n)>
#mnk_c = affine_map<(m, n, k) -> (m, n)>
#q = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#k = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#bias = affine_map<(i, j) -> (j)>

func.func private @printMemrefF32(memref<*xf32>)

/// x[i, j] = ((7 i + 3 j + seed) mod 9 - 4) / 2.
func.func @fill2(%x: memref<?x?xf32>, %seed: index) {
  linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel", "parallel"]}
      outs(%x : memref<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %c9 = arith.constant 9 : index
    %c4 = arith.constant 4 : index
    %a = arith.muli %i, %c7 : index
    %b = arith.muli %j, %c3 : index
    %ab = arith.addi %a, %b : index
    %abs = arith.addi %ab, %seed : index
    %r = arith.remui %abs, %c9 : index
    %v = arith.subi %r, %c4 : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f32
    %half = arith.constant 0.5 : f32
    %y = arith.mulf %vf, %half : f32
    linalg.yield %y : f32
  }
  return
}

/// The largest |a - b| over two buffers of the same size, printed.
func.func @printMaxDifference(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %zero = arith.constant 0.0 : f32
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = memref.load %b[%i] : memref<?xf32>
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %nm = arith.maximumf %m, %ad : f32
    scf.yield %nm : f32
  }
  %out = memref.alloc() : memref<f32>
  memref.store %max, %out[] : memref<f32>
  %u = memref.cast %out : memref<f32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %out : memref<f32>
  return
}

func.func @linearKernel(%x: memref<100x300xf32>, %w: memref<40x300xf32>,
                        %c: memref<100x40xf32>) {
  linalg.generic {indexing_maps = [#mnk_a, #mnk_bt, #mnk_c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<100x300xf32>, memref<40x300xf32>)
      outs(%c : memref<100x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

func.func @linearLoops(%x: memref<100x300xf32>, %w: memref<40x300xf32>,
                       %c: memref<100x40xf32>) {
  linalg.generic {indexing_maps = [#mnk_a, #mnk_bt, #mnk_c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<100x300xf32>, memref<40x300xf32>)
      outs(%c : memref<100x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %na = arith.negf %a : f32
    %p = arith.mulf %na, %b : f32
    %r = arith.subf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

func.func @plainKernel(%x: memref<24x512xf32>, %w: memref<512x48xf32>,
                       %c: memref<24x48xf32>) {
  linalg.generic {indexing_maps = [#mnk_a, #mnk_b, #mnk_c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<24x512xf32>, memref<512x48xf32>)
      outs(%c : memref<24x48xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

func.func @plainLoops(%x: memref<24x512xf32>, %w: memref<512x48xf32>,
                      %c: memref<24x48xf32>) {
  linalg.generic {indexing_maps = [#mnk_a, #mnk_b, #mnk_c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<24x512xf32>, memref<512x48xf32>)
      outs(%c : memref<24x48xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %na = arith.negf %a : f32
    %p = arith.mulf %na, %b : f32
    %r = arith.subf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

func.func @linear64Kernel(%x: memref<20x19xf64>, %w: memref<17x19xf64>,
                          %c: memref<20x17xf64>) {
  linalg.generic {indexing_maps = [#mnk_a, #mnk_bt, #mnk_c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<20x19xf64>, memref<17x19xf64>)
      outs(%c : memref<20x17xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %o, %p : f64
    linalg.yield %r : f64
  }
  return
}

func.func @linear64Loops(%x: memref<20x19xf64>, %w: memref<17x19xf64>,
                         %c: memref<20x17xf64>) {
  linalg.generic {indexing_maps = [#mnk_a, #mnk_bt, #mnk_c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<20x19xf64>, memref<17x19xf64>)
      outs(%c : memref<20x17xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %na = arith.negf %a : f64
    %p = arith.mulf %na, %b : f64
    %r = arith.subf %o, %p : f64
    linalg.yield %r : f64
  }
  return
}

func.func @scoresKernel(%q: memref<4x33x2x16xf32>, %k: memref<4x40x2x16xf32>,
                        %s: memref<4x2x33x40xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #s],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "parallel", "reduction"]}
      ins(%q, %k : memref<4x33x2x16xf32>, memref<4x40x2x16xf32>)
      outs(%s : memref<4x2x33x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

func.func @scoresLoops(%q: memref<4x33x2x16xf32>, %k: memref<4x40x2x16xf32>,
                       %s: memref<4x2x33x40xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #s],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "parallel", "reduction"]}
      ins(%q, %k : memref<4x33x2x16xf32>, memref<4x40x2x16xf32>)
      outs(%s : memref<4x2x33x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %na = arith.negf %a : f32
    %p = arith.mulf %na, %b : f32
    %r = arith.subf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

/// A flat buffer of `n` floats and its [rows, cols] view, filled.
func.func @input(%n: index, %rows: index, %cols: index, %seed: index)
    -> (memref<?xf32>, memref<?x?xf32>) {
  %flat = memref.alloc(%n) : memref<?xf32>
  %view = memref.reinterpret_cast %flat to offset: [0], sizes: [%rows, %cols],
      strides: [%cols, 1] : memref<?xf32> to memref<?x?xf32>
  call @fill2(%view, %seed) : (memref<?x?xf32>, index) -> ()
  return %flat, %view : memref<?xf32>, memref<?x?xf32>
}

/// Case 1's contraction and a rounded epilogue: bias add, squared ReLU,
/// rounded to bf16 into %y. With `tfc.epilogue`, the kernel applies it.
func.func @roundedKernel(%x: memref<100x300xf32>, %w: memref<40x300xf32>,
                         %b: memref<40xf32>, %c: memref<100x40xf32>,
                         %y: memref<100x40xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#mnk_a, #mnk_bt, #mnk_c],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<100x300xf32>, memref<40x300xf32>)
      outs(%c : memref<100x40xf32>) attrs = {tfc.epilogue} {
  ^bb0(%a: f32, %bw: f32, %o: f32):
    %p = arith.mulf %a, %bw : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#bias, #map2, #map2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b, %c : memref<40xf32>, memref<100x40xf32>)
      outs(%y : memref<100x40xbf16>) {
  ^bb0(%bv: f32, %cv: f32, %o: bf16):
    %t = arith.addf %cv, %bv : f32
    %m = arith.maximumf %t, %zero : f32
    %q = arith.mulf %m, %m : f32
    %r = arith.truncf %q : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

/// The same as plain loops: the contraction's body is one the kernels do
/// not take, and without the mark the epilogue is a loop nest of its own.
func.func @roundedLoops(%x: memref<100x300xf32>, %w: memref<40x300xf32>,
                        %b: memref<40xf32>, %c: memref<100x40xf32>,
                        %y: memref<100x40xbf16>) {
  %zero = arith.constant 0.0 : f32
  call @linearLoops(%x, %w, %c)
      : (memref<100x300xf32>, memref<40x300xf32>, memref<100x40xf32>) -> ()
  linalg.generic {indexing_maps = [#bias, #map2, #map2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b, %c : memref<40xf32>, memref<100x40xf32>)
      outs(%y : memref<100x40xbf16>) {
  ^bb0(%bv: f32, %cv: f32, %o: bf16):
    %t = arith.addf %cv, %bv : f32
    %m = arith.maximumf %t, %zero : f32
    %q = arith.mulf %m, %m : f32
    %r = arith.truncf %q : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

/// `y` widened to float32 into `f`.
func.func @widen(%y: memref<100x40xbf16>, %f: memref<100x40xf32>) {
  linalg.generic {indexing_maps = [#map2, #map2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<100x40xbf16>) outs(%f : memref<100x40xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32

  // 1. C = X W^T, X [100, 300], W [40, 300].
  %n1x = arith.constant 30000 : index
  %n1w = arith.constant 12000 : index
  %n1c = arith.constant 4000 : index
  %r100 = arith.constant 100 : index
  %r40 = arith.constant 40 : index
  %r300 = arith.constant 300 : index
  %x1f, %x1v = call @input(%n1x, %r100, %r300, %c0)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %w1f, %w1v = call @input(%n1w, %r40, %r300, %c1)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %x1 = memref.reinterpret_cast %x1f to offset: [0], sizes: [100, 300],
      strides: [300, 1] : memref<?xf32> to memref<100x300xf32>
  %w1 = memref.reinterpret_cast %w1f to offset: [0], sizes: [40, 300],
      strides: [300, 1] : memref<?xf32> to memref<40x300xf32>
  %k1 = memref.alloc() : memref<100x40xf32>
  %l1 = memref.alloc() : memref<100x40xf32>
  linalg.fill ins(%zero : f32) outs(%k1 : memref<100x40xf32>)
  linalg.fill ins(%zero : f32) outs(%l1 : memref<100x40xf32>)
  call @linearKernel(%x1, %w1, %k1)
      : (memref<100x300xf32>, memref<40x300xf32>, memref<100x40xf32>) -> ()
  call @linearLoops(%x1, %w1, %l1)
      : (memref<100x300xf32>, memref<40x300xf32>, memref<100x40xf32>) -> ()
  %k1f = memref.reinterpret_cast %k1 to offset: [0], sizes: [4000],
      strides: [1] : memref<100x40xf32> to memref<?xf32>
  %l1f = memref.reinterpret_cast %l1 to offset: [0], sizes: [4000],
      strides: [1] : memref<100x40xf32> to memref<?xf32>
  call @printMaxDifference(%k1f, %l1f) : (memref<?xf32>, memref<?xf32>) -> ()

  // 2. C = X B, X [24, 512], B [512, 48].
  %n2x = arith.constant 12288 : index
  %n2b = arith.constant 24576 : index
  %r24 = arith.constant 24 : index
  %r512 = arith.constant 512 : index
  %r48 = arith.constant 48 : index
  %x2f, %x2v = call @input(%n2x, %r24, %r512, %c2)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %b2f, %b2v = call @input(%n2b, %r512, %r48, %c1)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %x2 = memref.reinterpret_cast %x2f to offset: [0], sizes: [24, 512],
      strides: [512, 1] : memref<?xf32> to memref<24x512xf32>
  %b2 = memref.reinterpret_cast %b2f to offset: [0], sizes: [512, 48],
      strides: [48, 1] : memref<?xf32> to memref<512x48xf32>
  %k2 = memref.alloc() : memref<24x48xf32>
  %l2 = memref.alloc() : memref<24x48xf32>
  linalg.fill ins(%zero : f32) outs(%k2 : memref<24x48xf32>)
  linalg.fill ins(%zero : f32) outs(%l2 : memref<24x48xf32>)
  call @plainKernel(%x2, %b2, %k2)
      : (memref<24x512xf32>, memref<512x48xf32>, memref<24x48xf32>) -> ()
  call @plainLoops(%x2, %b2, %l2)
      : (memref<24x512xf32>, memref<512x48xf32>, memref<24x48xf32>) -> ()
  %k2f = memref.reinterpret_cast %k2 to offset: [0], sizes: [1152],
      strides: [1] : memref<24x48xf32> to memref<?xf32>
  %l2f = memref.reinterpret_cast %l2 to offset: [0], sizes: [1152],
      strides: [1] : memref<24x48xf32> to memref<?xf32>
  call @printMaxDifference(%k2f, %l2f) : (memref<?xf32>, memref<?xf32>) -> ()

  // 3. float64 C = X W^T, X [20, 19], W [17, 19], from float32 inputs.
  %n3x = arith.constant 380 : index
  %n3w = arith.constant 323 : index
  %r20 = arith.constant 20 : index
  %r19 = arith.constant 19 : index
  %r17 = arith.constant 17 : index
  %x3f, %x3v = call @input(%n3x, %r20, %r19, %c1)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %w3f, %w3v = call @input(%n3w, %r17, %r19, %c2)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %x3 = memref.alloc() : memref<20x19xf64>
  %w3 = memref.alloc() : memref<17x19xf64>
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]}
      ins(%x3v : memref<?x?xf32>) outs(%x3 : memref<20x19xf64>) {
  ^bb0(%a: f32, %o: f64):
    %e = arith.extf %a : f32 to f64
    linalg.yield %e : f64
  }
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]}
      ins(%w3v : memref<?x?xf32>) outs(%w3 : memref<17x19xf64>) {
  ^bb0(%a: f32, %o: f64):
    %e = arith.extf %a : f32 to f64
    linalg.yield %e : f64
  }
  %zero64 = arith.constant 0.0 : f64
  %k3 = memref.alloc() : memref<20x17xf64>
  %l3 = memref.alloc() : memref<20x17xf64>
  linalg.fill ins(%zero64 : f64) outs(%k3 : memref<20x17xf64>)
  linalg.fill ins(%zero64 : f64) outs(%l3 : memref<20x17xf64>)
  call @linear64Kernel(%x3, %w3, %k3)
      : (memref<20x19xf64>, memref<17x19xf64>, memref<20x17xf64>) -> ()
  call @linear64Loops(%x3, %w3, %l3)
      : (memref<20x19xf64>, memref<17x19xf64>, memref<20x17xf64>) -> ()
  // The float64 results (exact multiples of 0.25) converted back exactly.
  %k3s = memref.alloc() : memref<20x17xf32>
  %l3s = memref.alloc() : memref<20x17xf32>
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]}
      ins(%k3 : memref<20x17xf64>) outs(%k3s : memref<20x17xf32>) {
  ^bb0(%a: f64, %o: f32):
    %t = arith.truncf %a : f64 to f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]}
      ins(%l3 : memref<20x17xf64>) outs(%l3s : memref<20x17xf32>) {
  ^bb0(%a: f64, %o: f32):
    %t = arith.truncf %a : f64 to f32
    linalg.yield %t : f32
  }
  %k3f = memref.reinterpret_cast %k3s to offset: [0], sizes: [340],
      strides: [1] : memref<20x17xf32> to memref<?xf32>
  %l3f = memref.reinterpret_cast %l3s to offset: [0], sizes: [340],
      strides: [1] : memref<20x17xf32> to memref<?xf32>
  call @printMaxDifference(%k3f, %l3f) : (memref<?xf32>, memref<?xf32>) -> ()

  // 4. S = Q K^T, Q [4, 33, 2, 16], K [4, 40, 2, 16].
  %n4q = arith.constant 4224 : index
  %n4k = arith.constant 5120 : index
  %r132 = arith.constant 132 : index
  %r160 = arith.constant 160 : index
  %r32 = arith.constant 32 : index
  %q4f, %q4v = call @input(%n4q, %r132, %r32, %c2)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %k4f, %k4v = call @input(%n4k, %r160, %r32, %c0)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %q4 = memref.reinterpret_cast %q4f to offset: [0], sizes: [4, 33, 2, 16],
      strides: [1056, 32, 16, 1] : memref<?xf32> to memref<4x33x2x16xf32>
  %k4 = memref.reinterpret_cast %k4f to offset: [0], sizes: [4, 40, 2, 16],
      strides: [1280, 32, 16, 1] : memref<?xf32> to memref<4x40x2x16xf32>
  %k4s = memref.alloc() : memref<4x2x33x40xf32>
  %l4s = memref.alloc() : memref<4x2x33x40xf32>
  linalg.fill ins(%zero : f32) outs(%k4s : memref<4x2x33x40xf32>)
  linalg.fill ins(%zero : f32) outs(%l4s : memref<4x2x33x40xf32>)
  call @scoresKernel(%q4, %k4, %k4s)
      : (memref<4x33x2x16xf32>, memref<4x40x2x16xf32>,
         memref<4x2x33x40xf32>) -> ()
  call @scoresLoops(%q4, %k4, %l4s)
      : (memref<4x33x2x16xf32>, memref<4x40x2x16xf32>,
         memref<4x2x33x40xf32>) -> ()
  %k4f2 = memref.reinterpret_cast %k4s to offset: [0], sizes: [10560],
      strides: [1] : memref<4x2x33x40xf32> to memref<?xf32>
  %l4f2 = memref.reinterpret_cast %l4s to offset: [0], sizes: [10560],
      strides: [1] : memref<4x2x33x40xf32> to memref<?xf32>
  call @printMaxDifference(%k4f2, %l4f2) : (memref<?xf32>, memref<?xf32>) -> ()
  // 5. Case 1 with a rounded epilogue, bias [40].
  %r1 = arith.constant 1 : index
  %b5f, %b5v = call @input(%r40, %r1, %r40, %c2)
      : (index, index, index, index) -> (memref<?xf32>, memref<?x?xf32>)
  %b5 = memref.reinterpret_cast %b5f to offset: [0], sizes: [40],
      strides: [1] : memref<?xf32> to memref<40xf32>
  %c5k = memref.alloc() : memref<100x40xf32>
  %c5l = memref.alloc() : memref<100x40xf32>
  linalg.fill ins(%zero : f32) outs(%c5k : memref<100x40xf32>)
  linalg.fill ins(%zero : f32) outs(%c5l : memref<100x40xf32>)
  %y5k = memref.alloc() : memref<100x40xbf16>
  %y5l = memref.alloc() : memref<100x40xbf16>
  call @roundedKernel(%x1, %w1, %b5, %c5k, %y5k)
      : (memref<100x300xf32>, memref<40x300xf32>, memref<40xf32>,
         memref<100x40xf32>, memref<100x40xbf16>) -> ()
  call @roundedLoops(%x1, %w1, %b5, %c5l, %y5l)
      : (memref<100x300xf32>, memref<40x300xf32>, memref<40xf32>,
         memref<100x40xf32>, memref<100x40xbf16>) -> ()
  %f5k = memref.alloc() : memref<100x40xf32>
  %f5l = memref.alloc() : memref<100x40xf32>
  call @widen(%y5k, %f5k) : (memref<100x40xbf16>, memref<100x40xf32>) -> ()
  call @widen(%y5l, %f5l) : (memref<100x40xbf16>, memref<100x40xf32>) -> ()
  %f5kf = memref.reinterpret_cast %f5k to offset: [0], sizes: [4000],
      strides: [1] : memref<100x40xf32> to memref<?xf32>
  %f5lf = memref.reinterpret_cast %f5l to offset: [0], sizes: [4000],
      strides: [1] : memref<100x40xf32> to memref<?xf32>
  call @printMaxDifference(%f5kf, %f5lf) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
