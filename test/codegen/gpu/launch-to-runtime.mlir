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
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_kernel_shared_bytes(dense<0> : tensor<1xi32>) {{.*}}: !llvm.array<1 x i32>
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

// A buffer viewed from an arena is passed at the arena's address plus the
// view's byte shift (the views of views add up); a subview or
// reinterpret_cast is passed at its source's address, since the kernel
// adds the static offset of its argument type itself.
// CHECK-LABEL: func.func @arena
// CHECK-DAG: %[[ARENA:.*]] = memref.get_global @__tfc_arena_0
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[SHIFTED:.*]] = arith.addi %[[BASE]], %[[C256]] : index
// CHECK: arith.index_castui %[[SHIFTED]] : index to i64
// CHECK: %[[BASE2:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[OUTER:.*]] = arith.addi %[[BASE2]], %[[C256]] : index
// CHECK: %[[INNER:.*]] = arith.addi %[[OUTER]], %[[C64]] : index
// CHECK: arith.index_castui %[[INNER]] : index to i64
// CHECK: %[[BASE3:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK-NEXT: arith.index_castui %[[BASE3]] : index to i64
// CHECK: call @tfc_gpu_launch
module attributes {gpu.container_module} {
  memref.global "private" @__tfc_arena_0 : memref<1024xi8>
  func.func @arena(%p: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %arena = memref.get_global @__tfc_arena_0 : memref<1024xi8>
    %a = memref.view %arena[%c256][] : memref<1024xi8> to memref<16xf32>
    %bytes = memref.view %arena[%c256][] : memref<1024xi8> to memref<128xi8>
    %b = memref.view %bytes[%c64][] : memref<128xi8> to memref<16xf32>
    %c = memref.reinterpret_cast %p to offset: [32], sizes: [16], strides: [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: 32>>
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>, %b : memref<16xf32>, %c : memref<16xf32, strided<[1], offset: 32>>)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "//ptx\00">]
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

// -----

// Each kernel's dynamic shared memory (a warpgroup mma kernel's tiles),
// by kernel number, for the runtime to allow and pass at every launch.
// CHECK-LABEL: func.func @dynamic_shared
// CHECK: call @tfc_gpu_launch
// CHECK: call @tfc_gpu_launch
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_kernel_shared_bytes(dense<[0, 99328]> : tensor<2xi32>) {{.*}}: !llvm.array<2 x i32>
// CHECK-DAG: llvm.mlir.global external constant @tfc_gpu_arch(90 : i32)
module attributes {gpu.container_module} {
  func.func @dynamic_shared(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %bytes = arith.constant 99328 : i32
    gpu.launch_func @tfc_kernels::@tfc_k1 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %bytes args(%a : memref<64xf32>)
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "//ptx\00">]
}

// -----

// A dynamic shared memory size that is not a constant.
module attributes {gpu.container_module} {
  func.func @unknown_shared(%a: memref<64xf32>, %bytes: i32) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    // expected-error @below {{expected a constant dynamic shared memory size}}
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %bytes args(%a : memref<64xf32>)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "//ptx\00">]
}
