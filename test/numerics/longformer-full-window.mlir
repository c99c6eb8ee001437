// Longformer attention whose window covers the whole sequence is full
// attention: at the op level, tfc.attention #tfc.longformer lowered by
// tfc-lower-to-linalg and run through MLIR's upstream CPU lowering gives the
// outputs of #tfc.softmax on the same queries, keys, values and padding
// mask (largest difference, rounded to 6 decimals, 0). Two heads of 2
// channels, smooth unit-scale inputs, key 4 of 8 masked where a mask is
// given.
//
// 1. causal, window 8 = the sequence, dilation 1: every j <= i is in the
//    window;
// 2. non-causal over 2 positions, window 2: the band |j - i| <= 1 covers
//    both;
// 3. non-causal over 3 positions, window 2, global token 0 whose global
//    projections are the local ones: row 1 sees 0..2 through its band,
//    row 2 sees 1..2 through its band and 0 as a global column, row 0 is a
//    global row over every key;
// 4. non-causal over 8 positions, window 8 (reach 4), dilation 1, global
//    tokens 0, 1, 6 and 7 with the local projections, padding mask: rows
//    2..5 see 0..7 through their band and the global columns, the others
//    are global rows.
// The verifier rejects a window longer than the sequence, so a non-causal
// band can cover everything only in these small or global forms.

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

// CHECK:      Unranked Memref {{.*}} rank = 0
// CHECK-NEXT: [0]
// CHECK:      Unranked Memref {{.*}} rank = 0
// CHECK-NEXT: [0]
// CHECK:      Unranked Memref {{.*}} rank = 0
// CHECK-NEXT: [0]
// CHECK:      Unranked Memref {{.*}} rank = 0
// CHECK-NEXT: [0]
// CHECK-NOT:  Unranked Memref

func.func private @printMemrefF32(memref<*xf32>)

/// Prints `round(max |x - y| * 1e6) / 1e6`.
func.func @printMaxDifference(%x: tensor<1x?x4xf32>, %y: tensor<1x?x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 1.0e6 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>)
      -> tensor<f32>
  %max = linalg.generic {
      indexing_maps = [affine_map<(b, s, e) -> (b, s, e)>,
                       affine_map<(b, s, e) -> (b, s, e)>,
                       affine_map<(b, s, e) -> ()>],
      iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%x, %y : tensor<1x?x4xf32>, tensor<1x?x4xf32>)
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
    %scaled = arith.mulf %in, %scale : f32
    %r = math.round %scaled : f32
    %back = arith.divf %r, %scale : f32
    linalg.yield %back : f32
  } -> tensor<f32>
  %unranked = tensor.cast %rounded : tensor<f32> to tensor<*xf32>
  %m = bufferization.to_memref %unranked : memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

/// `sin(a * s + b * e + c)` at position s, channel e.
func.func @wave(%a: f32, %b: f32, %c: f32) -> tensor<1x8x4xf32> {
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
    linalg.yield %sin : f32
  } -> tensor<1x8x4xf32>
  return %w : tensor<1x8x4xf32>
}

func.func @main() {
  %a = arith.constant 1.3 : f32
  %b = arith.constant 0.7 : f32
  %c = arith.constant 0.2 : f32
  %d = arith.constant -0.4 : f32
  %g = arith.constant 2.1 : f32
  %h = arith.constant 1.7 : f32
  %q = call @wave(%a, %b, %c) : (f32, f32, f32) -> tensor<1x8x4xf32>
  %k = call @wave(%b, %d, %a) : (f32, f32, f32) -> tensor<1x8x4xf32>
  %v = call @wave(%g, %h, %c) : (f32, f32, f32) -> tensor<1x8x4xf32>
  %mask = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]]>
      : tensor<1x8xf32>

  // 1. Causal, the window is the sequence.
  %l1 = tfc.attention
      #tfc.longformer<window = 8, dilation = 1, global = [], causal> heads 2
      %q, %k, %v
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %s1 = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %l1d = tensor.cast %l1 : tensor<1x8x4xf32> to tensor<1x?x4xf32>
  %s1d = tensor.cast %s1 : tensor<1x8x4xf32> to tensor<1x?x4xf32>
  call @printMaxDifference(%l1d, %s1d)
      : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> ()

  // 2. Non-causal over 2 positions, window 2.
  %q2 = tensor.extract_slice %q[0, 0, 0] [1, 2, 4] [1, 1, 1]
      : tensor<1x8x4xf32> to tensor<1x2x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, 0] [1, 2, 4] [1, 1, 1]
      : tensor<1x8x4xf32> to tensor<1x2x4xf32>
  %v2 = tensor.extract_slice %v[0, 0, 0] [1, 2, 4] [1, 1, 1]
      : tensor<1x8x4xf32> to tensor<1x2x4xf32>
  %l2 = tfc.attention
      #tfc.longformer<window = 2, dilation = 1, global = []> heads 2
      %q2, %k2, %v2
      : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
      -> tensor<1x2x4xf32>
  %s2 = tfc.attention #tfc.softmax<> heads 2 %q2, %k2, %v2
      : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
      -> tensor<1x2x4xf32>
  %l2d = tensor.cast %l2 : tensor<1x2x4xf32> to tensor<1x?x4xf32>
  %s2d = tensor.cast %s2 : tensor<1x2x4xf32> to tensor<1x?x4xf32>
  call @printMaxDifference(%l2d, %s2d)
      : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> ()

  // 3. Non-causal over 3 positions, window 2, global token 0.
  %q3 = tensor.extract_slice %q[0, 0, 0] [1, 3, 4] [1, 1, 1]
      : tensor<1x8x4xf32> to tensor<1x3x4xf32>
  %k3 = tensor.extract_slice %k[0, 0, 0] [1, 3, 4] [1, 1, 1]
      : tensor<1x8x4xf32> to tensor<1x3x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, 0] [1, 3, 4] [1, 1, 1]
      : tensor<1x8x4xf32> to tensor<1x3x4xf32>
  %l3 = tfc.attention
      #tfc.longformer<window = 2, dilation = 1, global = [0]> heads 2
      %q3, %k3, %v3 global(%q3, %k3, %v3
          : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>)
      : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>
      -> tensor<1x3x4xf32>
  %s3 = tfc.attention #tfc.softmax<> heads 2 %q3, %k3, %v3
      : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>
      -> tensor<1x3x4xf32>
  %l3d = tensor.cast %l3 : tensor<1x3x4xf32> to tensor<1x?x4xf32>
  %s3d = tensor.cast %s3 : tensor<1x3x4xf32> to tensor<1x?x4xf32>
  call @printMaxDifference(%l3d, %s3d)
      : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> ()

  // 4. Non-causal over 8 positions, window 8, global tokens 0, 1, 6 and 7,
  //    padding mask.
  %l4 = tfc.attention
      #tfc.longformer<window = 8, dilation = 1, global = [0, 1, 6, 7]> heads 2
      %q, %k, %v mask(%mask : tensor<1x8xf32>) global(%q, %k, %v
          : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %s4 = tfc.attention #tfc.softmax<> heads 2 %q, %k, %v
      mask(%mask : tensor<1x8xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>
      -> tensor<1x8x4xf32>
  %l4d = tensor.cast %l4 : tensor<1x8x4xf32> to tensor<1x?x4xf32>
  %s4d = tensor.cast %s4 : tensor<1x8x4xf32> to tensor<1x?x4xf32>
  call @printMaxDifference(%l4d, %s4d)
      : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> ()
  return
}
