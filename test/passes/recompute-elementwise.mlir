// RUN: tfc-opt %s -split-input-file --tfc-recompute-elementwise | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-recompute-elementwise --cse | FileCheck %s --check-prefix=CSE
// RUN: tfc-opt %s -split-input-file --tfc-recompute-elementwise="min-bytes=1024" | FileCheck %s --check-prefix=SMALL

// A training step in the shape tfc-autodiff leaves it: the forward, the
// loss (the first result), then the backward. The activation `a = tanh(h)`
// is read by the forward's loss and again by the backward's weight
// gradient; `h` is read by the backward anyway (the activation's
// gradient), so `a` is recomputed from it right before the weight gradient
// and the forward's `a` dies at the loss. CSE leaves the recomputation
// alone. Results under `min-bytes` (here 1 KiB) are left alone.

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#km = affine_map<(m, n, k) -> (k, m)>
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<8x4xf32>)
// CHECK: math.tanh
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8x4xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK: %[[A2:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<8x4xf32>) outs(%[[E]] : tensor<8x4xf32>) attrs = {tfc.recomputed}
// CHECK: math.tanh
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%arg2, %[[A2]] : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: %[[DH:.*]] = linalg.generic {{.*}} ins(%arg2, %[[H]] :
// CHECK: return %[[LOSS]], %[[DH]], %[[DW]]
// CSE-LABEL: func.func @train_step
// CSE: math.tanh
// CSE: attrs = {tfc.recomputed}
// CSE-NEXT: ^bb0
// CSE-NEXT: math.tanh
// SMALL-LABEL: func.func @train_step
// SMALL-NOT: tfc.recomputed
func.func @train_step(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>,
                      %dy: tensor<8x4xf32>)
    -> (tensor<f32>, tensor<8x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<8x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f0 : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<f32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all],
                          iterator_types = ["reduction", "reduction"]}
      ins(%a : tensor<8x4xf32>) outs(%f2 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  // Backward: the weight gradient reads `a`, the activation's gradient `h`.
  %e3 = tensor.empty() : tensor<4x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = linalg.generic {indexing_maps = [#km, #kn, #mn],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %a : tensor<8x4xf32>, tensor<8x4xf32>) outs(%f3 : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<8x4xf32>
  %dh = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%dy, %h : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%g: f32, %v: f32, %o: f32):
    %t = math.tanh %v : f32
    %t2 = arith.mulf %t, %t : f32
    %d = arith.subf %one, %t2 : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %loss, %dh, %dw : tensor<f32>, tensor<8x4xf32>, tensor<4x4xf32>
}

// -----

// The backward reads the activation through views (collapse, expand): the
// views are rebuilt on the recomputation.

#id3 = affine_map<(i, j, k) -> (i, j, k)>
#all3 = affine_map<(i, j, k) -> ()>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @train_step
// CSE-LABEL: func.func @train_step
// SMALL-LABEL: func.func @train_step
// SMALL-NOT: tfc.recomputed
// CHECK: %[[A:.*]] = linalg.generic
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[A]]
// CHECK: %[[A2:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x4x4xf32>) {{.*}} attrs = {tfc.recomputed}
// CHECK: %[[V2:.*]] = tensor.collapse_shape %[[A2]] {{.*}} into tensor<8x4xf32>
// CHECK: linalg.generic {{.*}} ins(%arg1, %[[V2]] : tensor<8x4xf32>, tensor<8x4xf32>)
func.func @train_step(%h: tensor<2x4x4xf32>, %dy: tensor<8x4xf32>)
    -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4x4xf32>
  %a = linalg.generic {indexing_maps = [#id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<2x4x4xf32>) outs(%e1 : tensor<2x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<2x4x4xf32>
  %flat = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<f32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id3, #all3],
                          iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%a : tensor<2x4x4xf32>) outs(%f2 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = linalg.generic {indexing_maps = [#km, #kn, #mn],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %flat : tensor<8x4xf32>, tensor<8x4xf32>) outs(%f3 : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %loss, %dw : tensor<f32>, tensor<4x4xf32>
}

// -----

// Refused: the activation's input `h` is not read after the forward (the
// backward's gradient reads `a` instead), and `h` is a contraction (each
// of its iterations reuses the operands), which is not recomputed: `a`
// stays as it is.

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#km = affine_map<(m, n, k) -> (k, m)>
// CHECK-LABEL: func.func @train_step
// CSE-LABEL: func.func @train_step
// SMALL-LABEL: func.func @train_step
// SMALL-NOT: tfc.recomputed
// CHECK-NOT: tfc.recomputed
func.func @train_step(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>,
                      %dy: tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f0 : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<f32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all],
                          iterator_types = ["reduction", "reduction"]}
      ins(%a : tensor<8x4xf32>) outs(%f2 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = linalg.generic {indexing_maps = [#km, #kn, #mn],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %a : tensor<8x4xf32>, tensor<8x4xf32>) outs(%f3 : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %loss, %dw : tensor<f32>, tensor<4x4xf32>
}

// -----

// Refused: a reduction (row sums) read again by the backward, and an
// element-wise op that reads its output (an accumulation), are not
// recomputed; nor is a result that only the forward reads.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
// CHECK-LABEL: func.func @train_step
// CSE-LABEL: func.func @train_step
// SMALL-LABEL: func.func @train_step
// SMALL-NOT: tfc.recomputed
// CHECK-NOT: tfc.recomputed
func.func @train_step(%x: tensor<8x4xf32>, %dy: tensor<8x4xf32>)
    -> (tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %sums = linalg.generic {indexing_maps = [#id, #row],
                          iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4xf32>) outs(%f0 : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%dy : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %only = linalg.generic {indexing_maps = [#id, #id],
                          iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<f32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #id, #all],
                          iterator_types = ["reduction", "reduction"]}
      ins(%acc, %only, %x : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
      outs(%f2 : tensor<f32>) {
  ^bb0(%p: f32, %q: f32, %r: f32, %l: f32):
    %s = arith.addf %p, %q : f32
    %t = arith.addf %l, %s : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %e3 = tensor.empty() : tensor<8x4xf32>
  %dx = linalg.generic {indexing_maps = [#id, #row, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%dy, %sums : tensor<8x4xf32>, tensor<8xf32>) outs(%e3 : tensor<8x4xf32>) {
  ^bb0(%g: f32, %s: f32, %o: f32):
    %r = arith.mulf %g, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %loss, %dx, %acc : tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A LayerNorm-like output `(x - mean(x)) * 2`: its inputs (the centred
// rows, and through them the row means) are not kept, but they are
// recomputable from `x`, which is: the means (a row sum from a constant
// fill), the centred rows and the output are recomputed, producers first.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @train_step
// CSE-LABEL: func.func @train_step
// SMALL-LABEL: func.func @train_step
// SMALL-NOT: tfc.recomputed
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<8xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x4xf32>) outs(%[[F0]] : tensor<8xf32>) attrs = {tfc.recomputed}
// CHECK: %[[XC:.*]] = linalg.generic {{.*}} ins(%arg0, %[[MEAN]] : tensor<8x4xf32>, tensor<8xf32>) {{.*}} attrs = {tfc.recomputed}
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[XC]] : tensor<8x4xf32>) {{.*}} attrs = {tfc.recomputed}
// CHECK: linalg.generic {{.*}} ins(%arg1, %[[OUT]] : tensor<8x4xf32>, tensor<8x4xf32>)
func.func @train_step(%x: tensor<8x4xf32>, %dy: tensor<8x4xf32>)
    -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %mean = linalg.generic {indexing_maps = [#id, #row],
                          iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4xf32>) outs(%f0 : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %q = arith.mulf %v, %two : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %xc = linalg.generic {indexing_maps = [#id, #row, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<8x4xf32>, tensor<8xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %out = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%xc : tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.mulf %v, %two : f32
    linalg.yield %d : f32
  } -> tensor<8x4xf32>
  %e3 = tensor.empty() : tensor<f32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all],
                          iterator_types = ["reduction", "reduction"]}
      ins(%out : tensor<8x4xf32>) outs(%f3 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = linalg.generic {indexing_maps = [#km, #kn, #mn],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %out : tensor<8x4xf32>, tensor<8x4xf32>) outs(%f4 : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %loss, %dw : tensor<f32>, tensor<4x4xf32>
}
