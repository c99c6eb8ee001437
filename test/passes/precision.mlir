// RUN: tfc-opt %s -split-input-file --tfc-precision | FileCheck %s

// A projection (linalg.matmul_transpose_b, as tfc-lower-to-linalg emits a
// linear layer) and its weight gradient (a linalg.generic contraction
// over the rows): each float32 operand is rounded to bf16 by an
// element-wise op, once (x, read by both, has one bf16 copy), right after
// its definition (after the copies of the earlier arguments, for an
// argument); each contraction becomes a
// linalg.generic reading them widened back and summing in float32 into its
// float32 output. The fusion passes' mark stays on the contraction.
// The module records the precision for the manifest.
// CHECK: module attributes {tfc.precision = "bf16"}
// CHECK-LABEL: func.func @projection_and_gradient
// CHECK: %[[XE:.*]] = tensor.empty() : tensor<64x32xbf16>
// CHECK: %[[XB:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<64x32xf32>) outs(%[[XE]] : tensor<64x32xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK: %[[WB:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<48x32xf32>) outs(%{{.*}} : tensor<48x32xbf16>)
// CHECK: %[[DYB:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<64x48xf32>) outs(%{{.*}} : tensor<64x48xbf16>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XB]], %[[WB]] : tensor<64x32xbf16>, tensor<48x32xbf16>) outs(%{{.*}} : tensor<64x48xf32>) attrs ={{ +}}{tfc.epilogue}
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DYB]], %[[XB]] : tensor<64x48xbf16>, tensor<64x32xbf16>) outs(%{{.*}} : tensor<48x32xf32>)
// CHECK-NOT: linalg.matmul
// CHECK-NOT: arith.truncf
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @projection_and_gradient(%x: tensor<64x32xf32>, %w: tensor<48x32xf32>, %dy: tensor<64x48xf32>)
    -> (tensor<64x48xf32>, tensor<48x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %y = linalg.matmul_transpose_b {tfc.epilogue} ins(%x, %w : tensor<64x32xf32>, tensor<48x32xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  %ge = tensor.empty() : tensor<48x32xf32>
  %gf = linalg.fill ins(%zero : f32) outs(%ge : tensor<48x32xf32>) -> tensor<48x32xf32>
  %dw = linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : tensor<64x48xf32>, tensor<64x32xf32>) outs(%gf : tensor<48x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<48x32xf32>
  return %y, %dw : tensor<64x48xf32>, tensor<48x32xf32>
}

// -----

// Left as they are: element-wise ops and reductions (a softmax's row
// maximum), a contraction whose body is not a
// multiply-add, and a float64 contraction (the gradient check's build).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: bf16
// CHECK: return
func.func @left_alone(%x: tensor<64x32xf32>, %w: tensor<32x48xf32>, %d: tensor<64x32xf64>, %dw: tensor<32x48xf64>)
    -> (tensor<64xf32>, tensor<64x48xf32>, tensor<64x48xf64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %zero64 = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.reduce ins(%x : tensor<64x32xf32>) outs(%f : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %ye = tensor.empty() : tensor<64x48xf32>
  %yf = linalg.fill ins(%zero : f32) outs(%ye : tensor<64x48xf32>) -> tensor<64x48xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x48xf32>) outs(%yf : tensor<64x48xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.maximumf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  %ze = tensor.empty() : tensor<64x48xf64>
  %zf = linalg.fill ins(%zero64 : f64) outs(%ze : tensor<64x48xf64>) -> tensor<64x48xf64>
  %z = linalg.matmul ins(%d, %dw : tensor<64x32xf64>, tensor<32x48xf64>) outs(%zf : tensor<64x48xf64>) -> tensor<64x48xf64>
  return %m, %y, %z : tensor<64xf32>, tensor<64x48xf32>, tensor<64x48xf64>
}

// -----

// A contraction in a loop reads a block of a tensor computed outside it
// (blocked attention's key blocks): the whole tensor is rounded once, right
// after its definition, and the loop slices its bf16 copy, through the
// same reshape; no rounding is left in the loop. Nothing else reads the
// float32 tensor, so the element-wise op that computes it writes the bf16
// copy itself (the rounding folded into it).
// CHECK-LABEL: func.func @blocks_in_a_loop
// CHECK: %[[KB:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<4x128xf32>) outs(%{{.*}} : tensor<4x128xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[IN]], %[[IN]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK-NOT: tensor<4x128xf32>
// CHECK: %[[KB3:.*]] = tensor.expand_shape %[[KB]] {{.*}} : tensor<4x128xbf16> into tensor<4x4x32xbf16>
// CHECK: scf.for
// CHECK-NOT: arith.truncf
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[KB3]]{{.*}} : tensor<4x4x32xbf16> to tensor<4x32xbf16>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[BLOCK]] : tensor<8x32xbf16>, tensor<4x32xbf16>)
// CHECK-NOT: arith.truncf
// CHECK: return
#bq = affine_map<(m, n, k) -> (m, k)>
#bk = affine_map<(m, n, k) -> (n, k)>
#bs = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @blocks_in_a_loop(%q: tensor<8x32xf32>, %x: tensor<4x128xf32>, %acc: tensor<8x4xf32>)
    -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4x128xf32>
  %k = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<4x128xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [4, 4, 32] : tensor<4x128xf32> into tensor<4x4x32xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %acc) -> tensor<8x4xf32> {
    %block = tensor.extract_slice %k3[0, %i, 0] [4, 1, 32] [1, 1, 1] : tensor<4x4x32xf32> to tensor<4x32xf32>
    %p = linalg.generic {indexing_maps = [#bq, #bk, #bs], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %block : tensor<8x32xf32>, tensor<4x32xf32>) outs(%s : tensor<8x4xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %t = arith.addf %c, %m : f32
      linalg.yield %t : f32
    } -> tensor<8x4xf32>
    scf.yield %p : tensor<8x4xf32>
  }
  return %r : tensor<8x4xf32>
}

// -----

// In @train_step, the backward (the ops after the one computing the loss,
// the first result) reads a forward element-wise result h (a GELU's
// input) in its gradient: it reads h's bf16 copy, made right after h and
// widened back in the reader's body. The forward still reads h in
// float32, so h's op keeps writing float32 and the rounding stays an op
// of its own; tanh(h), read only by the projection, is written in bf16 by
// the op that computes it. The logits (a projection plus a bias), from
// which the loss is computed without a contraction in between, stay
// float32 for the loss's gradient.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<16x8xf32>
// CHECK-NEXT: tensor.empty() : tensor<16x8xbf16>
// CHECK-NEXT: %[[HB:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<16x8xf32>) outs(%{{.*}} : tensor<16x8xbf16>)
// CHECK: %[[GB:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<16x8xf32>) outs(%{{.*}} : tensor<16x8xbf16>)
// CHECK-NEXT: ^bb0(%[[HIN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[HIN]] : f32
// CHECK-NEXT: arith.truncf %[[T]] : f32 to bf16
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[GB]], %{{.*}} : tensor<16x8xbf16>, tensor<8x8xbf16>) outs(%{{.*}} : tensor<16x8xf32>)
// CHECK: %[[LOGITS:.*]] = linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<16x8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<16x8xf32>)
// CHECK-NOT: bf16
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} ins(%[[LOGITS]] : tensor<16x8xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.generic {{.*}} ins(%[[LOGITS]] : tensor<16x8xf32>) outs(%{{.*}} : tensor<16x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[HB]], %{{.*}} : tensor<16x8xbf16>, tensor<16x8xf32>) outs(%{{.*}} : tensor<16x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: arith.mulf %[[W]], %{{.*}} : f32
// CHECK: return %[[LOSS]]
#rows = affine_map<(i, j) -> (i, j)>
#cols = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>
func.func @train_step(%x: tensor<16x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<f32>, tensor<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %h = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.mulf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<16x8xf32>
  %g = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.tanh %in : f32
    linalg.yield %y : f32
  } -> tensor<16x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %proj = linalg.matmul ins(%g, %w : tensor<16x8xf32>, tensor<8x8xf32>) outs(%f : tensor<16x8xf32>) -> tensor<16x8xf32>
  %logits = linalg.generic {indexing_maps = [#rows, #cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%proj, %b : tensor<16x8xf32>, tensor<8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %y = arith.addf %in, %bias : f32
    linalg.yield %y : f32
  } -> tensor<16x8xf32>
  %le = tensor.empty() : tensor<f32>
  %lf = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#rows, #all], iterator_types = ["reduction", "reduction"]}
      ins(%logits : tensor<16x8xf32>) outs(%lf : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %y = arith.addf %in, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %dlogits = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%logits : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<16x8xf32>
  %dx = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%h, %dlogits : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: f32, %d: f32, %out: f32):
    %y = arith.mulf %in, %d : f32
    linalg.yield %y : f32
  } -> tensor<16x8xf32>
  return %loss, %dx : tensor<f32>, tensor<16x8xf32>
}

// -----

// A slice of a tensor that the loop carries is rounded alone, in the loop:
// rounding its source would round the whole tensor at each iteration.
// CHECK-LABEL: func.func @slice_of_a_carried_tensor
// CHECK: scf.for {{.*}} iter_args(%{{.*}}, %[[CARRIED:[a-z0-9_]+]] = %{{.*}}) -> (tensor<8x2xf32>, tensor<4x32xf32>)
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[CARRIED]]{{.*}} : tensor<4x32xf32> to tensor<2x32xf32>
// CHECK: %[[BB:.*]] = linalg.generic {{.*}} ins(%[[BLOCK]] : tensor<2x32xf32>) outs(%{{.*}} : tensor<2x32xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[BB]] : tensor<8x32xbf16>, tensor<2x32xbf16>)
// CHECK-NOT: tensor<4x32xbf16>
// CHECK: return
#cq = affine_map<(m, n, k) -> (m, k)>
#ck = affine_map<(m, n, k) -> (n, k)>
#cs = affine_map<(m, n, k) -> (m, n)>
func.func @slice_of_a_carried_tensor(%q: tensor<8x32xf32>, %x: tensor<4x32xf32>, %acc: tensor<8x2xf32>)
    -> (tensor<8x2xf32>, tensor<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %acc, %t = %x) -> (tensor<8x2xf32>, tensor<4x32xf32>) {
    %block = tensor.extract_slice %t[%i, 0] [2, 32] [1, 1] : tensor<4x32xf32> to tensor<2x32xf32>
    %p = linalg.generic {indexing_maps = [#cq, #ck, #cs], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %block : tensor<8x32xf32>, tensor<2x32xf32>) outs(%s : tensor<8x2xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %u = arith.addf %c, %m : f32
      linalg.yield %u : f32
    } -> tensor<8x2xf32>
    %e = tensor.empty() : tensor<4x32xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%t : tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %y = arith.addf %in, %in : f32
      linalg.yield %y : f32
    } -> tensor<4x32xf32>
    scf.yield %p, %next : tensor<8x2xf32>, tensor<4x32xf32>
  }
  return %r#0, %r#1 : tensor<8x2xf32>, tensor<4x32xf32>
}

// -----

// A contraction's epilogue (a bias add updating the marked contraction's
// result in place) whose result only a projection reads: the rounding
// folds into the epilogue, which then reads the contraction's result as
// its last input and writes the bf16 copy (its output allocated before the
// contraction, so that nothing comes between the two); the contraction
// keeps its mark, for its kernel to apply the epilogue and store the
// rounded values.
// CHECK-LABEL: func.func @epilogue_then_projection
// CHECK: linalg.fill
// CHECK-NEXT: %[[OUT:.*]] = tensor.empty() : tensor<16x8xbf16>
// CHECK-NEXT: %[[C:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x8xf32>) attrs ={{ +}}{tfc.epilogue}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<16x8xf32>
// CHECK-NEXT: %[[E:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[C]] : tensor<8xf32>, tensor<16x8xf32>) outs(%[[OUT]] : tensor<16x8xbf16>)
// CHECK-NEXT: ^bb0(%[[BIAS:.*]]: f32, %[[CV:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[CV]], %[[BIAS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK: linalg.generic {{.*}} ins(%[[E]], %{{.*}} : tensor<16x8xbf16>, tensor<8x8xbf16>)
// CHECK-NOT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return
#er = affine_map<(i, j) -> (i, j)>
#ec = affine_map<(i, j) -> (j)>
func.func @epilogue_then_projection(%x: tensor<16x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %c = linalg.matmul {tfc.epilogue} ins(%x, %w : tensor<16x8xf32>, tensor<8x8xf32>) outs(%f : tensor<16x8xf32>) -> tensor<16x8xf32>
  %biased = linalg.generic {indexing_maps = [#ec, #er], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8xf32>) outs(%c : tensor<16x8xf32>) {
  ^bb0(%bias: f32, %out: f32):
    %y = arith.addf %out, %bias : f32
    linalg.yield %y : f32
  } -> tensor<16x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %y = linalg.matmul ins(%biased, %w : tensor<16x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}

// -----

// A float32 tensor that an element-wise op widens from bf16 (a
// FlashAttention kernel's output, which it stores in bf16) is its own
// bf16 copy: the projection reads the bf16 tensor, with no rounding.
// CHECK-LABEL: func.func @widened_operand
// CHECK-NOT: arith.truncf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %{{.*}} : tensor<64x32xbf16>, tensor<48x32xbf16>) outs(%{{.*}} : tensor<64x48xf32>)
// CHECK-NOT: arith.truncf
// CHECK: return
#id = affine_map<(m, k) -> (m, k)>
func.func @widened_operand(%o: tensor<64x32xbf16>, %w: tensor<48x32xbf16>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %ee = tensor.empty() : tensor<64x32xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%o : tensor<64x32xbf16>) outs(%ee : tensor<64x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %wide = arith.extf %in : bf16 to f32
    linalg.yield %wide : f32
  } -> tensor<64x32xf32>
  %we = tensor.empty() : tensor<48x32xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<48x32xbf16>) outs(%we : tensor<48x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %wide = arith.extf %in : bf16 to f32
    linalg.yield %wide : f32
  } -> tensor<48x32xf32>
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %y = linalg.matmul_transpose_b ins(%x, %wf : tensor<64x32xf32>, tensor<48x32xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %y : tensor<64x48xf32>
}
