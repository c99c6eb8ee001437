// RUN: tfc-opt %s --tfc-build-optimizer -split-input-file -verify-diagnostics | FileCheck %s

// AdamW with warm-up, cosine decay and clipping over two runs of trained
// tensors; the buffer between them (Performer features) is not updated.
// The base rate, the run's length and the warm-up come from the `schedule`
// argument, not from the spec's settings.

// CHECK-LABEL: func.func @optimizer_step
// CHECK-SAME: (%[[P:.*]]: tensor<48xf32>, %[[G:.*]]: tensor<48xf32>, %[[M:.*]]: tensor<48xf32>, %[[V:.*]]: tensor<48xf32>, %[[STEP:.*]]: tensor<i64>, %[[SCHED:.*]]: tensor<3xf32>)
// CHECK-SAME: -> (tensor<48xf32>, tensor<48xf32>, tensor<48xf32>, tensor<2xf32>)
// The global norm over every gradient, then the clip factor min(1, 1 / norm).
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[G]] : tensor<48xf32>)
// CHECK: %[[NORM:.*]] = math.sqrt
// CHECK: %[[CLIP:.*]] = arith.minimumf
// CHECK: %[[T:.*]] = arith.sitofp
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[BASE:.*]] = tensor.extract %[[SCHED]][%[[C0]]] : tensor<3xf32>
// CHECK-DAG: %[[TOTAL:.*]] = tensor.extract %[[SCHED]][%[[C1]]] : tensor<3xf32>
// CHECK-DAG: %[[WARMUP:.*]] = tensor.extract %[[SCHED]][%[[C2]]] : tensor<3xf32>
// Warm-up factor t / max(t, warm-up); the cosine span is
// max(1, steps - warm-up).
// CHECK-NOT: arith.constant 1.000000e+01 : f32
// CHECK: %[[TW:.*]] = arith.maximumf %[[T]], %[[WARMUP]]
// CHECK: arith.divf %[[T]], %[[TW]]
// CHECK: arith.subf %[[TOTAL]], %[[WARMUP]]
// CHECK: math.cos
// CHECK: %[[LR:.*]] = arith.mulf %[[BASE]], %{{.*}} : f32
// CHECK: tensor.extract_slice %[[P]][0] [16] [1]
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %[[CLIP]] : f32
// Decoupled weight decay: added to the Adam direction, then scaled by the rate.
// CHECK: arith.constant 0.00999999977 : f32
// CHECK: arith.mulf %[[LR]], %{{.*}} : f32
// CHECK: tensor.insert_slice %{{.*}} into %[[P]][0] [16] [1]
// CHECK: tensor.extract_slice %[[P]][32] [4] [1]
// CHECK-NOT: [16] [16] [1]
// CHECK: tensor.insert_slice %{{.*}}[32] [4] [1]
// CHECK: %[[STATS:.*]] = tensor.from_elements %[[NORM]], %[[LR]] : tensor<2xf32>
// CHECK: return {{.*}}, %[[STATS]]
module attributes {tfc.param_count = 48 : i64, tfc.training = {optimizer = "adamw", schedule = "cosine", warmup = 10 : i64, beta1 = 0.9 : f64, beta2 = 0.98 : f64, eps = 1.0e-8 : f64, weight_decay = 0.01 : f64, clip = 1.0 : f64}, tfc.manifest = [{name = "w", offset = 0 : i64, kind = "param", init = "normal:0.02", shape = array<i64: 4, 4>}, {name = "features", offset = 16 : i64, kind = "buffer", init = "features", shape = array<i64: 16>}, {name = "b", offset = 32 : i64, kind = "param", init = "zeros", shape = array<i64: 4>}]} {
}

// -----

// Adam with a constant rate and no clipping: the rate is the base rate
// itself (times a warm-up and decay factor of 1), weight decay is added to
// the gradient, and there is no clip factor.

// CHECK-LABEL: func.func @optimizer_step
// CHECK-NOT: 9.99999997E-7
// CHECK-NOT: math.cos
// CHECK: arith.constant 5.000000e-04 : f32
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NOT: 9.99999997E-7
// CHECK-NOT: math.cos
// CHECK: tensor.from_elements
module attributes {tfc.param_count = 16 : i64, tfc.training = {optimizer = "adam", schedule = "constant", weight_decay = 5.0e-4 : f64}, tfc.manifest = [{name = "w", offset = 0 : i64, kind = "param", init = "normal:0.02", shape = array<i64: 16>}]} {
}

// -----

// Without training settings there is nothing to build.

// CHECK-LABEL: module attributes {tfc.param_count = 16
// CHECK-NOT: func.func
module attributes {tfc.param_count = 16 : i64} {
}

// -----

// expected-error @+1 {{tfc-build-optimizer: @optimizer_step exists}}
module attributes {tfc.param_count = 16 : i64, tfc.training = {optimizer = "adam"}, tfc.manifest = []} {
  func.func @optimizer_step() {
    return
  }
}
