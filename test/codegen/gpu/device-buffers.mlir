// RUN: tfc-opt %s --tfc-gpu-device-buffers | FileCheck %s

// The arena global becomes device memory from the runtime; the entry
// point's buffers are copied to the device on entry, and the written one
// back before returning.
// CHECK-NOT: llvm.mlir.global {{.*}}@__tfc_arena_0
// CHECK-LABEL: llvm.func @tfc_forward
// CHECK-SAME: (%[[IN:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr)
// CHECK: %[[ID0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[B0:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK: %[[DIN:.*]] = llvm.call @tfc_gpu_to_device(%[[ID0]], %[[IN]], %[[B0]])
// CHECK: %[[ID1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[B1:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: %[[DOUT:.*]] = llvm.call @tfc_gpu_to_device(%[[ID1]], %[[OUT]], %[[B1]])
// CHECK: %[[N:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(1024 : i64) : i64
// CHECK: %[[ARENA:.*]] = llvm.call @tfc_gpu_arena(%[[N]], %[[SIZE]])
// CHECK: llvm.call @use(%[[DIN]], %[[DOUT]], %[[ARENA]])
// CHECK: llvm.call @tfc_gpu_to_host(%[[OUT]], %[[DOUT]], %{{.*}})
// CHECK-NEXT: llvm.return
module {
  llvm.mlir.global private @__tfc_arena_0() {addr_space = 0 : i32} : !llvm.array<1024 x i8>
  llvm.func @use(!llvm.ptr, !llvm.ptr, !llvm.ptr)
  llvm.func @tfc_forward(%in: !llvm.ptr, %out: !llvm.ptr) attributes {tfc.gpu.arg_bytes = array<i64: 256, 4>, tfc.gpu.written = array<i64: 1>} {
    %arena = llvm.mlir.addressof @__tfc_arena_0 : !llvm.ptr
    llvm.call @use(%in, %out, %arena) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }
}
