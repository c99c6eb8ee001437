// RUN: tfc-opt %s -split-input-file --tfc-precision | FileCheck %s

// A projection (linalg.matmul_transpose_b, as tfc-lower-to-linalg emits a
// linear layer) and its weight gradient (a linalg.generic contraction
// over the rows): each float32 operand is rounded to bf16 by an
// element-wise op, once (x, read by both, has one bf16 copy), right before
// the first contraction that reads it; each contraction becomes a
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
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XB]], %[[WB]] : tensor<64x32xbf16>, tensor<48x32xbf16>) outs(%{{.*}} : tensor<64x48xf32>) attrs ={{ +}}{tfc.epilogue}
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[DYB:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<64x48xf32>) outs(%{{.*}} : tensor<64x48xbf16>)
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
