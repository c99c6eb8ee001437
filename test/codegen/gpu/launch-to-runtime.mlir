// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-gpu-launch-to-runtime | FileCheck %s

// The kernel image becomes globals the runtime reads; a launch becomes a
// call of tfc_gpu_launch with its arguments in 8-byte slots: a buffer as
// its aligned address, a float by its bits.
// CHECK-NOT: gpu.container_module
// CHECK-LABEL: func.func @step
// CHECK: %[[SLOTS:.*]] = memref.alloca() : memref<2xi64>
// CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[A:.*]] = arith.index_castui %[[ADDRESS]] : index to i64
// CHECK: memref.store %[[A]], %[[SLOTS]][%{{.*}}] : memref<2xi64>
// CHECK: %[[BITS:.*]] = arith.bitcast %arg1 : f32 to i32
// CHECK: %[[F:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK: memref.store %[[F]], %[[SLOTS]][%{{.*}}] : memref<2xi64>
// CHECK: call @tfc_gpu_launch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
// CHECK-NOT: gpu.launch_func
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_image("//ptx\00")
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_image_size(6 : i64)
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_image_format(0 : i32)
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_kernel_names("tfc_k0\00")
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_kernel_count(1 : i32)
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_arch(80 : i32)
// CHECK-DAG: func.func private @tfc_gpu_launch(i32, i64, i64, i64, i64, i64, i64, i64, i32)
// CHECK-NOT: gpu.binary
module attributes {gpu.container_module} {
  func.func @step(%a: memref<64xf32>, %s: f32) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>, %s : f32)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = "//ptx\00">]
}

// -----

// f64 math left as calls of libdevice, which was not linked, is refused.
module attributes {gpu.container_module} {
  func.func @step() {
    return
  }
  // expected-error @below {{calls CUDA's libdevice (__nv_exp) but no libdevice was linked}}
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".extern .func  (.param .b64 func_retval0) __nv_exp(.param .b64 p);\00">]
}
