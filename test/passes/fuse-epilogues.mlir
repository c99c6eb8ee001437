// RUN: tfc-opt %s -split-input-file --tfc-fuse-epilogues | FileCheck %s

// A bias add after a matmul: the bias add updates C in place (C is its
// output, no longer an input), the matmul moves right before it and is
// marked.

// CHECK-LABEL: func.func @bias
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x32xf32>, %[[BIAS:.*]]: tensor<32xf32>)
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK-NEXT: %[[C:.*]] = linalg.matmul {tfc.epilogue} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[FILL]] : tensor<8x32xf32>)
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<32xf32>) outs(%[[C]] : tensor<8x32xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]]
// CHECK: return %[[Y]]
func.func @bias(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %bias: tensor<32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : tensor<8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%x: f32, %bv: f32, %o: f32):
    %s = arith.addf %x, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// A contraction written as a linalg.generic (batched, transposed B) with a
// bias, squared ReLU and residual epilogue; the residual is computed
// between the two, so the contraction moves past it. The body is cloned as
// it is, with the output element where it read C.

// CHECK-LABEL: func.func @bias_relu2_residual
// CHECK: %[[RES:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x8x32xf32>)
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x16xf32>, tensor<2x32x16xf32>) outs(%{{.*}} : tensor<2x8x32xf32>) attrs = {tfc.epilogue}
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[RES]] : tensor<32xf32>, tensor<2x8x32xf32>) outs(%[[C]] : tensor<2x8x32xf32>)
// CHECK-NEXT: ^bb0(%[[BV:.*]]: f32, %[[R:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK: %[[X:.*]] = arith.addf %[[OUT]], %[[BV]] : f32
// CHECK: arith.maximumf
// CHECK: arith.mulf
// CHECK: arith.addf %{{.*}}, %[[R]] : f32
// CHECK: return %[[Y]]
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(b, m, n) -> (b, m, n)>
#n3 = affine_map<(b, m, n) -> (n)>
func.func @bias_relu2_residual(%a: tensor<2x8x16xf32>, %b: tensor<2x32x16xf32>, %bias: tensor<32xf32>, %x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %c = linalg.generic {indexing_maps = [#bmk, #bnk, #bmn], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x8x16xf32>, tensor<2x32x16xf32>) outs(%fill : tensor<2x8x32xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x32xf32>
  %e2 = tensor.empty() : tensor<2x8x32xf32>
  %res = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x8x32xf32>) outs(%e2 : tensor<2x8x32xf32>) {
  ^bb0(%u: f32, %o: f32):
    %d = arith.mulf %u, %u : f32
    linalg.yield %d : f32
  } -> tensor<2x8x32xf32>
  %e3 = tensor.empty() : tensor<2x8x32xf32>
  %y = linalg.generic {indexing_maps = [#id3, #n3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %bias, %res : tensor<2x8x32xf32>, tensor<32xf32>, tensor<2x8x32xf32>) outs(%e3 : tensor<2x8x32xf32>) {
  ^bb0(%cv: f32, %bv: f32, %r: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %t = arith.addf %cv, %bv : f32
    %relu = arith.maximumf %t, %z : f32
    %sq = arith.mulf %relu, %relu : f32
    %out = arith.addf %sq, %r : f32
    linalg.yield %out : f32
  } -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// The epilogue grows through reshapes: the bias add works on [B*S, N], the
// residual add after a collapse and an expand on [B, S, N]. The residual
// add is rewritten over C's shape (its residual input collapsed to
// [B*S, N]), fused with the bias add, and the result expanded back.

// CHECK-LABEL: func.func @through_reshapes
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x32xf32>, %[[BIAS:.*]]: tensor<32xf32>, %[[X:.*]]: tensor<2x4x32xf32>)
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x4x32xf32> into tensor<8x32xf32>
// CHECK: %[[C:.*]] = linalg.matmul {tfc.epilogue} ins(%[[A]], %[[B]] : {{.*}})
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[XC]], %[[BIAS]] : tensor<8x32xf32>, tensor<32xf32>) outs(%[[C]] : tensor<8x32xf32>)
// CHECK-NEXT: ^bb0(%[[R:.*]]: f32, %[[BV:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[OUT]], %[[BV]] : f32
// CHECK-NEXT: arith.addf %[[R]], %[[S]] : f32
// CHECK: %[[E:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 4, 32] : tensor<8x32xf32> into tensor<2x4x32xf32>
// CHECK: return %[[E]]
func.func @through_reshapes(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %bias: tensor<32xf32>, %x: tensor<2x4x32xf32>) -> tensor<2x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : tensor<8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<8x32xf32> into tensor<256xf32>
  %y3 = tensor.expand_shape %flat [[0, 1, 2]] output_shape [2, 4, 32] : tensor<256xf32> into tensor<2x4x32xf32>
  %e3 = tensor.empty() : tensor<2x4x32xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(b, s, n) -> (b, s, n)>, affine_map<(b, s, n) -> (b, s, n)>, affine_map<(b, s, n) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %y3 : tensor<2x4x32xf32>, tensor<2x4x32xf32>) outs(%e3 : tensor<2x4x32xf32>) {
  ^bb0(%r: f32, %v: f32, %o: f32):
    %s = arith.addf %r, %v : f32
    linalg.yield %s : f32
  } -> tensor<2x4x32xf32>
  return %z : tensor<2x4x32xf32>
}

// -----

// Growth stops before math: the bias add is fused, the GELU (erf) after the
// reshapes stays a loop of its own (on the accumulators, tanh and erf
// polynomials ran slower than in their own loop), reading the result.

// CHECK-LABEL: func.func @stops_before_gelu
// CHECK: %[[C:.*]] = linalg.matmul {tfc.epilogue}
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32xf32>) outs(%[[C]] : tensor<8x32xf32>)
// CHECK: tensor.collapse_shape %[[Y]]
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: math.erf
func.func @stops_before_gelu(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %bias: tensor<32xf32>) -> tensor<2x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : tensor<8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<8x32xf32> into tensor<256xf32>
  %y3 = tensor.expand_shape %flat [[0, 1, 2]] output_shape [2, 4, 32] : tensor<256xf32> into tensor<2x4x32xf32>
  %e3 = tensor.empty() : tensor<2x4x32xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, s, n) -> (b, s, n)>, affine_map<(b, s, n) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3 : tensor<2x4x32xf32>) outs(%e3 : tensor<2x4x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 0.707106769 : f32
    %u = arith.mulf %v, %k : f32
    %erf = math.erf %u : f32
    linalg.yield %erf : f32
  } -> tensor<2x4x32xf32>
  return %g : tensor<2x4x32xf32>
}

// -----

// Refused: the consumer is a GELU (erf) read straight from C; tanh and erf
// polynomials on the accumulators ran slower than in a loop of their own.

// CHECK-LABEL: func.func @gelu_refused
// CHECK-NOT: tfc.epilogue
// CHECK: return
func.func @gelu_refused(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 0.707106769 : f32
    %u = arith.mulf %v, %k : f32
    %erf = math.erf %u : f32
    linalg.yield %erf : f32
  } -> tensor<8x32xf32>
  return %g : tensor<8x32xf32>
}

// -----

// Refused: C has a second user, which needs C itself, so it must be stored.

// CHECK-LABEL: func.func @two_users
// CHECK: linalg.matmul ins
// CHECK-NOT: tfc.epilogue
// CHECK: return
func.func @two_users(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %bias: tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : tensor<8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%x: f32, %bv: f32, %o: f32):
    %s = arith.addf %x, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y, %c : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// Refused: the consumer broadcasts C over a new dimension (its iteration
// space is not C's), so each element of C is used several times.

// CHECK-LABEL: func.func @broadcast_of_c
// CHECK-NOT: tfc.epilogue
// CHECK: return
func.func @broadcast_of_c(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<4x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<4x8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(r, m, n) -> (m, n)>, affine_map<(r, m, n) -> (r, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c : tensor<8x32xf32>) outs(%e2 : tensor<4x8x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x8x32xf32>
  return %y : tensor<4x8x32xf32>
}

// -----

// Refused: the consumer reduces C (a row sum); an epilogue is element-wise.

// CHECK-LABEL: func.func @reduction_consumer
// CHECK-NOT: tfc.epilogue
// CHECK: return
func.func @reduction_consumer(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]} ins(%c : tensor<8x32xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Refused: the consumer reads C transposed, so its iteration space is not
// C's and a tile of C is not a tile of the result.

// CHECK-LABEL: func.func @transposed_read
// CHECK-NOT: tfc.epilogue
// CHECK: return
func.func @transposed_read(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %c = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%fill : tensor<16x16xf32>) -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (n, m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// A consumer that reads positions (linalg.index: a causal mask) is fused;
// the contraction kernels give each lane its position.

// CHECK-LABEL: func.func @causal_mask
// CHECK: %[[C:.*]] = linalg.matmul {tfc.epilogue}
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%[[C]] : tensor<8x8xf32>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.cmpi sle
func.func @causal_mask(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sle, %j, %i : index
    %s = arith.select %keep, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Refused: a consumer behind a reshape that reads positions (iterating
// over C's shape, linalg.index of the merged loops would need a division).

// CHECK-LABEL: func.func @index_through_reshape
// CHECK-NOT: tfc.epilogue
// CHECK-NOT: arith.remui
// CHECK: tensor.expand_shape
// CHECK-NEXT: tensor.empty() : tensor<2x4x8xf32>
// CHECK-NEXT: linalg.generic
// CHECK: linalg.index 2
// CHECK: return
func.func @index_through_reshape(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %e2 = tensor.empty() : tensor<2x4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(s, t, n) -> (s, t, n)>, affine_map<(s, t, n) -> (s, t, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<2x4x8xf32>) outs(%e2 : tensor<2x4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi sle, %j, %t : index
    %s = arith.select %keep, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Refused: the consumer accumulates into its output (reads the output's
// initial value), which would be lost when C becomes its output.

// CHECK-LABEL: func.func @reads_its_output
// CHECK-NOT: tfc.epilogue
// CHECK: return
func.func @reads_its_output(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %acc: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<8x32xf32>) outs(%acc : tensor<8x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
