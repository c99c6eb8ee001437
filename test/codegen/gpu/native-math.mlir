// RUN: tfc-opt %s --pass-pipeline='builtin.module(gpu.module(tfc-gpu-native-math))' | FileCheck %s

// libdevice calls that PTX has an instruction for become intrinsics and
// their declarations go; the others (exp in f64) stay for libdevice.
// CHECK-LABEL: gpu.module @kernels
// CHECK-NOT: llvm.func @__nv_floorf
// CHECK-NOT: llvm.func @__nv_fabs(
// CHECK: llvm.func @__nv_exp(f64) -> f64
// CHECK-LABEL: llvm.func @k
// CHECK: llvm.intr.floor(%{{.*}}) : (f32) -> f32
// CHECK: llvm.intr.fabs(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call @__nv_exp
gpu.module @kernels {
  llvm.func @__nv_floorf(f32) -> f32
  llvm.func @__nv_fabs(f64) -> f64
  llvm.func @__nv_exp(f64) -> f64
  llvm.func @k(%x: f32, %y: f64) -> f64 {
    %a = llvm.call @__nv_floorf(%x) : (f32) -> f32
    %b = llvm.call @__nv_fabs(%y) : (f64) -> f64
    %c = llvm.call @__nv_exp(%b) : (f64) -> f64
    llvm.return %c : f64
  }
}
