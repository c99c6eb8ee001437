// FAVOR+ at the op level: tfc.attention #tfc.performer with 2048 random
// features, lowered by tfc-lower-to-linalg and run through MLIR's upstream
// CPU lowering, against the exact softmax attention of the same inputs.
//
// 1. The causal check of the FAVOR+ paper: q = k = 1 for every position,
//    v_0 = [1, 0, 0, 0] and every other value 0. Softmax attention over the
//    prefix is uniform, so position i outputs v_0 / (i + 1); all keys share
//    one feature vector, so FAVOR+ must give the same [1, 1/2, 1/3, ...]
//    whatever the features (up to the 1e-6 regulariser of its
//    denominator). Printed rounded to 4 decimals. The non-causal form gives
//    1/8 everywhere.
// 2. With 2048 Gaussian features, FAVOR+ approximates softmax attention on
//    smooth, unit-scale inputs: the largest difference of the outputs,
//    causal and non-causal, rounded to 2 decimals, is at most 0.03 (the
//    values are of order 1; it is 0.01 here, 0.05 with 16 features, and
//    attention that ignored the queries would be 0.13 off).
//
// The features are N(0, 1) draws made inside the module (a PCG hash of the
// element index through Box-Muller), so that the test needs no data file.

// RUN: tfc-opt %s --tfc-lower-to-linalg \
// RUN: | mlir-opt --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:     --convert-linalg-to-loops --convert-scf-to-cf \
// RUN:     --expand-strided-metadata --lower-affine --finalize-memref-to-llvm \
// RUN:     --convert-math-to-llvm --convert-arith-to-llvm \
// RUN:     --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | mlir-cpu-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

// CHECK:      Unranked Memref {{.*}} sizes = [1, 8, 4]
// CHECK-NEXT: {{\[\[\[}}1,   0,   0,   0]
// CHECK-NEXT: [0.5,   0,   0,   0]
// CHECK-NEXT: [0.3333,   0,   0,   0]
// CHECK-NEXT: [0.25,   0,   0,   0]
// CHECK-NEXT: [0.2,   0,   0,   0]
// CHECK-NEXT: [0.1667,   0,   0,   0]
// CHECK-NEXT: [0.1429,   0,   0,   0]
// CHECK-NEXT: [0.125,   0,   0,   0]
// CHECK:      Unranked Memref {{.*}} sizes = [1, 8, 4]
// CHECK-COUNT-8: [0.125,   0,   0,   0]
// CHECK:      Unranked Memref {{.*}} rank = 0
// CHECK-NEXT: [0{{(\.0[0-3])?}}]
// CHECK:      Unranked Memref {{.*}} rank = 0
// CHECK-NEXT: [0{{(\.0[0-3])?}}]

func.func private @printMemrefF32(memref<*xf32>)

/// Prints `x` through MLIR's runner utilities.
func.func @print(%x: tensor<*xf32>) {
  %m = bufferization.to_memref %x : memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

/// `round(x * scale) / scale`, element-wise.
func.func @round(%x: tensor<1x8x4xf32>, %scale: f32) -> tensor<1x8x4xf32> {
  %init = tensor.empty() : tensor<1x8x4xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, s, e) -> (b, s, e)>,
                       affine_map<(b, s, e) -> (b, s, e)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x8x4xf32>) outs(%init : tensor<1x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scaled = arith.mulf %in, %scale : f32
    %rounded = math.round %scaled : f32
    %back = arith.divf %rounded, %scale : f32
    linalg.yield %back : f32
  } -> tensor<1x8x4xf32>
  return %r : tensor<1x8x4xf32>
}

/// `round(max |x - y| * 100) / 100` as a 0-d tensor.
func.func @maxDifference(%x: tensor<1x8x4xf32>, %y: tensor<1x8x4xf32>)
    -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %hundred = arith.constant 100.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>)
      -> tensor<f32>
  %max = linalg.generic {
      indexing_maps = [affine_map<(b, s, e) -> (b, s, e)>,
                       affine_map<(b, s, e) -> (b, s, e)>,
                       affine_map<(b, s, e) -> ()>],
      iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%x, %y : tensor<1x8x4xf32>, tensor<1x8x4xf32>)
      outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %abs = math.absf %d : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %rounded = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
      iterator_types = []}
      ins(%max : tensor<f32>) outs(%empty : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %scaled = arith.mulf %in, %hundred : f32
    %r = math.round %scaled : f32
    %back = arith.divf %r, %hundred : f32
    linalg.yield %back : f32
  } -> tensor<f32>
  return %rounded : tensor<f32>
}

/// `[2048, 4]` N(0, 1) features: element n = 4 m + e takes two uniforms
/// from a PCG hash of 2n and 2n + 1 and combines them by Box-Muller.
func.func @gaussianFeatures() -> tensor<2048x4xf32> {
  %init = tensor.empty() : tensor<2048x4xf32>
  %f = linalg.generic {
      indexing_maps = [affine_map<(m, e) -> (m, e)>],
      iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<2048x4xf32>) {
  ^bb0(%out: f32):
    %m = linalg.index 0 : index
    %e = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %row = arith.muli %m, %c4 : index
    %n = arith.addi %row, %e : index
    %n32 = arith.index_cast %n : index to i32
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %even = arith.muli %n32, %two : i32
    %odd = arith.addi %even, %one : i32
    %u1 = func.call @uniform(%even) : (i32) -> f32
    %u2 = func.call @uniform(%odd) : (i32) -> f32
    %minus2 = arith.constant -2.0 : f32
    %twoPi = arith.constant 6.28318530718 : f32
    %log = math.log %u1 : f32
    %radius2 = arith.mulf %log, %minus2 : f32
    %radius = math.sqrt %radius2 : f32
    %angle = arith.mulf %u2, %twoPi : f32
    %cos = math.cos %angle : f32
    %g = arith.mulf %radius, %cos : f32
    linalg.yield %g : f32
  } -> tensor<2048x4xf32>
  return %f : tensor<2048x4xf32>
}

/// A uniform number in (0, 1) from the PCG hash of `x`.
func.func @uniform(%x: i32) -> f32 {
  %mul = arith.constant 747796405 : i32
  %inc = arith.constant -1403630843 : i32  // 2891336453 as i32
  %c28 = arith.constant 28 : i32
  %c4 = arith.constant 4 : i32
  %c22 = arith.constant 22 : i32
  %c8 = arith.constant 8 : i32
  %mix = arith.constant 277803737 : i32
  %state0 = arith.muli %x, %mul : i32
  %state = arith.addi %state0, %inc : i32
  %top = arith.shrui %state, %c28 : i32
  %shift = arith.addi %top, %c4 : i32
  %shifted = arith.shrui %state, %shift : i32
  %xored = arith.xori %shifted, %state : i32
  %word = arith.muli %xored, %mix : i32
  %high = arith.shrui %word, %c22 : i32
  %hash = arith.xori %high, %word : i32
  %bits = arith.shrui %hash, %c8 : i32
  %float = arith.uitofp %bits : i32 to f32
  %half = arith.constant 0.5 : f32
  %centred = arith.addf %float, %half : f32
  %ulp = arith.constant 5.9604644775390625e-08 : f32  // 2^-24
  %u = arith.mulf %centred, %ulp : f32
  return %u : f32
}

/// `amplitude * sin(a * s + b * e + c)` at position s, channel e.
func.func @wave(%a: f32, %b: f32, %c: f32, %amplitude: f32)
    -> tensor<1x8x4xf32> {
  %init = tensor.empty() : tensor<1x8x4xf32>
  %w = linalg.generic {
      indexing_maps = [affine_map<(b, s, e) -> (b, s, e)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%init : tensor<1x8x4xf32>) {
  ^bb0(%out: f32):
    %s = linalg.index 1 : index
    %e = linalg.index 2 : index
    %s64 = arith.index_cast %s : index to i64
    %e64 = arith.index_cast %e : index to i64
    %sf = arith.sitofp %s64 : i64 to f32
    %ef = arith.sitofp %e64 : i64 to f32
    %as = arith.mulf %a, %sf : f32
    %be = arith.mulf %b, %ef : f32
    %sum = arith.addf %as, %be : f32
    %phase = arith.addf %sum, %c : f32
    %sin = math.sin %phase : f32
    %value = arith.mulf %amplitude, %sin : f32
    linalg.yield %value : f32
  } -> tensor<1x8x4xf32>
  return %w : tensor<1x8x4xf32>
}

func.func @main() {
  %features = call @gaussianFeatures() : () -> tensor<2048x4xf32>
  %ones = arith.constant dense<1.0> : tensor<1x8x4xf32>
  %v = arith.constant dense<[[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                              [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                              [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                              [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]>
      : tensor<1x8x4xf32>
  %four = arith.constant 1.0e4 : f32

  // 1. Uniform attention over the prefix (causal) or the whole sequence.
  %causal = tfc.attention
      #tfc.performer<features = 2048, redraw = 0, causal> heads 1
      %ones, %ones, %v features(%features : tensor<2048x4xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %causalRounded = call @round(%causal, %four)
      : (tensor<1x8x4xf32>, f32) -> tensor<1x8x4xf32>
  %p0 = tensor.cast %causalRounded : tensor<1x8x4xf32> to tensor<*xf32>
  call @print(%p0) : (tensor<*xf32>) -> ()

  %full = tfc.attention
      #tfc.performer<features = 2048, redraw = 0> heads 1
      %ones, %ones, %v features(%features : tensor<2048x4xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %fullRounded = call @round(%full, %four)
      : (tensor<1x8x4xf32>, f32) -> tensor<1x8x4xf32>
  %p1 = tensor.cast %fullRounded : tensor<1x8x4xf32> to tensor<*xf32>
  call @print(%p1) : (tensor<*xf32>) -> ()

  // 2. Smooth unit-scale inputs: FAVOR+ against exact softmax attention.
  %a = arith.constant 1.3 : f32
  %b = arith.constant 0.7 : f32
  %c = arith.constant 0.2 : f32
  %d = arith.constant -0.4 : f32
  %g = arith.constant 2.1 : f32
  %h = arith.constant 1.7 : f32
  %amp = arith.constant 0.8 : f32
  %unit = arith.constant 1.0 : f32
  %q = call @wave(%a, %b, %c, %amp) : (f32, f32, f32, f32) -> tensor<1x8x4xf32>
  %k = call @wave(%b, %d, %a, %amp) : (f32, f32, f32, f32) -> tensor<1x8x4xf32>
  %val = call @wave(%g, %h, %c, %unit)
      : (f32, f32, f32, f32) -> tensor<1x8x4xf32>

  %favorCausal = tfc.attention
      #tfc.performer<features = 2048, redraw = 0, causal> heads 1
      %q, %k, %val features(%features : tensor<2048x4xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %exactCausal = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %val
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %diffCausal = call @maxDifference(%favorCausal, %exactCausal)
      : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<f32>
  %p2 = tensor.cast %diffCausal : tensor<f32> to tensor<*xf32>
  call @print(%p2) : (tensor<*xf32>) -> ()

  %favorFull = tfc.attention
      #tfc.performer<features = 2048, redraw = 0> heads 1
      %q, %k, %val features(%features : tensor<2048x4xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %exactFull = tfc.attention #tfc.softmax<> heads 1 %q, %k, %val
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %diffFull = call @maxDifference(%favorFull, %exactFull)
      : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<f32>
  %p3 = tensor.cast %diffFull : tensor<f32> to tensor<*xf32>
  call @print(%p3) : (tensor<*xf32>) -> ()
  return
}
