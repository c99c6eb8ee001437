// RUN: tfc-opt %s --tfc-export-abi -split-input-file -verify-diagnostics | FileCheck %s

// @forward becomes the C entry point tfc_forward(params, tokens, targets,
// mask, logits, loss) on memrefs, and the module attributes become the
// manifest text: the config entries (sorted by name), the parameter count,
// the FLOPs per token (tfc.flops over the 8 positions), the bytes of every
// tensor.empty of @forward (2 * 4 * 3 * 4 + 4 = 100) and one line per
// tensor, NUL-terminated.

// CHECK: func.func private @forward
// CHECK-LABEL: func.func @tfc_forward
// CHECK-SAME: (%[[P:.*]]: memref<8xf32>, %[[T:.*]]: memref<2x4xi32>, %[[Y:.*]]: memref<2x4xi32>, %[[M:.*]]: memref<2x4xf32>, %[[LOGITS:.*]]: memref<2x4x3xf32>, %[[LOSS:.*]]: memref<f32>)
// CHECK: %[[PT:.*]] = bufferization.to_tensor %[[P]] restrict
// CHECK: %[[R:.*]]:2 = call @forward(%[[PT]],
// CHECK: bufferization.materialize_in_destination %[[R]]#1 in restrict writable %[[LOGITS]]
// CHECK: bufferization.materialize_in_destination %[[R]]#0 in restrict writable %[[LOSS]]
// CHECK: llvm.mlir.global external constant @tfc_model_manifest("tfc-manifest 1\0Alr 0.001{{0*[0-9]*}}\0Aname m\0Atask lm\0Awarmup 2\0Aparams 8\0Aflops_per_token 8\0Aactivation_bytes 100\0Atensor w 0 param normal:0.02 2 2 4\0Aend\0A\00")
module attributes {tfc.config = {name = "m", task = "lm", lr = 1.0e-3 : f64, warmup = 2 : i64}, tfc.param_count = 8 : i64, tfc.flops = 64 : i64, tfc.manifest = [{name = "w", offset = 0 : i64, kind = "param", init = "normal:0.02", shape = array<i64: 2, 4>}]} {
  func.func @forward(%p: tensor<8xf32>, %t: tensor<2x4xi32>, %y: tensor<2x4xi32>, %m: tensor<2x4xf32>) -> (tensor<f32>, tensor<2x4x3xf32>) {
    %logits = tensor.empty() : tensor<2x4x3xf32>
    %loss = tensor.empty() : tensor<f32>
    return %loss, %logits : tensor<f32>, tensor<2x4x3xf32>
  }
}

// -----

// expected-error @+1 {{no @forward function to export}}
module {
}

// -----

module {
  // expected-error @+1 {{must take (params, tokens, targets, mask) and return (loss, logits); run tfc-flatten-params first}}
  func.func @forward(%p: tensor<8xf32>) -> tensor<f32> {
    %loss = tensor.empty() : tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Sizes past 64 bits are an error, not a division by a wrapped zero: 2^62 x 4
// token positions wrap to 0.

module attributes {tfc.flops = 64 : i64} {
  // expected-error @+1 {{has a token tensor 'tensor<4611686018427387904x4xi32>' whose element count is not a positive 64-bit integer}}
  func.func @forward(%p: tensor<8xf32>, %t: tensor<4611686018427387904x4xi32>, %y: tensor<4611686018427387904x4xi32>, %m: tensor<4611686018427387904x4xf32>) -> (tensor<f32>, tensor<2x4x3xf32>) {
    %logits = tensor.empty() : tensor<2x4x3xf32>
    %loss = tensor.empty() : tensor<f32>
    return %loss, %logits : tensor<f32>, tensor<2x4x3xf32>
  }
}

// -----

// Working memory past 2^63 bytes: 2^59 x 4 x 4 floats.

module attributes {tfc.flops = 64 : i64} {
  func.func @forward(%p: tensor<8xf32>, %t: tensor<2x4xi32>, %y: tensor<2x4xi32>, %m: tensor<2x4xf32>) -> (tensor<f32>, tensor<2x4x3xf32>) {
    %logits = tensor.empty() : tensor<2x4x3xf32>
    // expected-error @+1 {{makes the working memory of @forward exceed 2^63 bytes}}
    %big = tensor.empty() : tensor<576460752303423488x4x4xf32>
    %loss = tensor.empty() : tensor<f32>
    return %loss, %logits : tensor<f32>, tensor<2x4x3xf32>
  }
}

// -----

// tfc_optimizer_step's new parameters and moments may be the memory of the
// old ones (ModelABI.h): their writes are not `restrict`, unlike the stats.

// CHECK-LABEL: func.func @tfc_optimizer_step
// CHECK-SAME: %[[PO:[a-z0-9]+]]: memref<8xf32>, %[[MO:[a-z0-9]+]]: memref<8xf32>, %[[VO:[a-z0-9]+]]: memref<8xf32>, %[[S:[a-z0-9]+]]: memref<2xf32>)
// CHECK: %[[R:.*]]:4 = call @optimizer_step(
// CHECK-NEXT: bufferization.materialize_in_destination %[[R]]#0 in writable %[[PO]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[R]]#1 in writable %[[MO]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[R]]#2 in writable %[[VO]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[R]]#3 in restrict writable %[[S]]
module attributes {tfc.config = {name = "m", task = "lm"}, tfc.param_count = 8 : i64, tfc.flops = 64 : i64, tfc.manifest = []} {
  func.func @forward(%p: tensor<8xf32>, %t: tensor<2x4xi32>, %y: tensor<2x4xi32>, %m: tensor<2x4xf32>) -> (tensor<f32>, tensor<2x4x3xf32>) {
    %logits = tensor.empty() : tensor<2x4x3xf32>
    %loss = tensor.empty() : tensor<f32>
    return %loss, %logits : tensor<f32>, tensor<2x4x3xf32>
  }
  func.func @optimizer_step(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %t: tensor<i64>, %s: tensor<3xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>) {
    %stats = tensor.empty() : tensor<2xf32>
    return %p, %m, %v, %stats : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>
  }
}
