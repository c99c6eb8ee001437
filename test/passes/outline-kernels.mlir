// RUN: tfc-opt %s -split-input-file --tfc-outline-kernels | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-outline-kernels=linalg-ops | FileCheck %s --check-prefix=LINALG

// Each top-level loop nest becomes a private noinline kernel; constants are
// cloned into it and buffers become arguments.

// CHECK-LABEL: func.func private @step_kernel_0(%{{.*}}: memref<8xf32>)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: scf.for
// CHECK: func.func @step(%[[BUF:.*]]: memref<8xf32>)
// CHECK: call @step_kernel_0(%[[BUF]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: return
func.func @step(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  return
}

// -----

// Loop nests with the same body over different buffers share one kernel;
// one that differs (another constant) gets its own.

// CHECK-LABEL: func.func private @twice_kernel_0(%{{.*}}: memref<8xf32>)
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK-LABEL: func.func private @twice_kernel_1(%{{.*}}: memref<8xf32>)
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK-NOT: func.func private @twice_kernel_2
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>)
// CHECK: call @twice_kernel_0(%[[A]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @twice_kernel_0(%[[B]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @twice_kernel_1(%[[B]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: return
func.func @twice(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %b[%i] : memref<8xf32>
  }
  return
}

// -----

// The same body over a buffer used twice and over two buffers are different
// kernels (one argument against two).

// CHECK-LABEL: func.func private @alias_kernel_0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK-LABEL: func.func private @alias_kernel_1(%{{.*}}: memref<8xf32>)
// CHECK-LABEL: func.func @alias(
// CHECK: call @alias_kernel_0(
// CHECK-NEXT: call @alias_kernel_1(
func.func @alias(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// Slices of one buffer at different static offsets (a parameter of each
// layer) share a kernel: each is passed at offset 0 with its offset as an
// index, and the kernel views it at that offset again, as do the views it
// takes of it.

// CHECK-LABEL: func.func private @layers_kernel_0(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<4x4xf32>, %[[OFF:[a-z0-9]+]]: index, %[[Y:[a-z0-9]+]]: memref<4xf32>)
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[W]] to offset: [%[[OFF]]], sizes: [4, 4], strides: [4, 1] : memref<4x4xf32> to memref<4x4xf32, strided<[4, 1], offset: ?>>
// CHECK: memref.subview %[[V]][%{{.*}}, 0] [1, 4] [1, 1] : memref<4x4xf32, strided<[4, 1], offset: ?>> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NOT: func.func private @layers_kernel_1
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[P:[a-z0-9]+]]: memref<48xf32>
// CHECK: memref.subview %[[P]][8] [16] [1]
// CHECK: %[[E0:.*]] = memref.expand_shape
// CHECK: %[[R0:.*]] = memref.reinterpret_cast %[[E0]] to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<4x4xf32, strided<[4, 1], offset: 8>> to memref<4x4xf32>
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: call @layers_kernel_0(%[[R0]], %[[C8]], %{{.*}}) : (memref<4x4xf32>, index, memref<4xf32>) -> ()
// CHECK: %[[R1:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<4x4xf32, strided<[4, 1], offset: 32>> to memref<4x4xf32>
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: call @layers_kernel_0(%[[R1]], %[[C32]], %{{.*}}) : (memref<4x4xf32>, index, memref<4xf32>) -> ()
func.func @layers(%p: memref<48xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s0 = memref.subview %p[8] [16] [1] : memref<48xf32> to memref<16xf32, strided<[1], offset: 8>>
  %w0 = memref.expand_shape %s0 [[0, 1]] output_shape [4, 4] : memref<16xf32, strided<[1], offset: 8>> into memref<4x4xf32, strided<[4, 1], offset: 8>>
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %w0[%i, 0] [1, 4] [1, 1] : memref<4x4xf32, strided<[4, 1], offset: 8>> to memref<4xf32, strided<[1], offset: ?>>
    %x = memref.load %row[%i] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %x, %y[%i] : memref<4xf32>
  }
  %s1 = memref.subview %p[32] [16] [1] : memref<48xf32> to memref<16xf32, strided<[1], offset: 32>>
  %w1 = memref.expand_shape %s1 [[0, 1]] output_shape [4, 4] : memref<16xf32, strided<[1], offset: 32>> into memref<4x4xf32, strided<[4, 1], offset: 32>>
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %w1[%i, 0] [1, 4] [1, 1] : memref<4x4xf32, strided<[4, 1], offset: 32>> to memref<4xf32, strided<[1], offset: ?>>
    %x = memref.load %row[%i] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %x, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// A slice used by an operation whose types cannot follow a dynamic offset
// (here memref.copy) keeps its static offset, and so its own kernel.

// CHECK-LABEL: func.func private @copies_kernel_0(
// CHECK-SAME: memref<4xf32, strided<[1], offset: 4>>
// CHECK-LABEL: func.func private @copies_kernel_1(
// CHECK-SAME: memref<4xf32, strided<[1], offset: 8>>
// CHECK-NOT: memref.reinterpret_cast
func.func @copies(%p: memref<16xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = memref.subview %p[4] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.for %i = %c0 to %c1 step %c1 {
    memref.copy %s0, %y : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32>
  }
  %s1 = memref.subview %p[8] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: 8>>
  scf.for %i = %c0 to %c1 step %c1 {
    memref.copy %s1, %y : memref<4xf32, strided<[1], offset: 8>> to memref<4xf32>
  }
  return
}

// -----

// With linalg-ops, each top-level linalg op on buffers becomes a kernel
// marked tfc.kernel; the same op on another layer's parameter slice (another
// static offset) calls the same kernel with its offset. Loop nests stay.

// LINALG-LABEL: func.func private @ops_linalg_0(
// LINALG-SAME: %[[X:[a-z0-9]+]]: memref<4xf32>, %[[W:[a-z0-9]+]]: memref<4xf32>, %[[OFF:[a-z0-9]+]]: index, %[[Y:[a-z0-9]+]]: memref<4xf32>)
// LINALG-SAME: tfc.kernel
// LINALG: %[[V:.*]] = memref.reinterpret_cast %[[W]] to offset: [%[[OFF]]]
// LINALG: linalg.add ins(%[[X]], %[[V]] : memref<4xf32>, memref<4xf32, strided<[1], offset: ?>>) outs(%[[Y]] : memref<4xf32>)
// LINALG-NOT: func.func private @ops_linalg_1
// LINALG-LABEL: func.func @ops(
// LINALG: call @ops_linalg_0(
// LINALG: call @ops_linalg_0(
// LINALG: scf.for
// LINALG-NOT: linalg.add
func.func @ops(%p: memref<12xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  %w0 = memref.subview %p[4] [4] [1] : memref<12xf32> to memref<4xf32, strided<[1], offset: 4>>
  %w1 = memref.subview %p[8] [4] [1] : memref<12xf32> to memref<4xf32, strided<[1], offset: 8>>
  linalg.add ins(%x, %w0 : memref<4xf32>, memref<4xf32, strided<[1], offset: 4>>) outs(%y : memref<4xf32>)
  linalg.add ins(%x, %w1 : memref<4xf32>, memref<4xf32, strided<[1], offset: 8>>) outs(%y : memref<4xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%i] : memref<4xf32>
    memref.store %a, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// A function marked tfc.kernel (a kernel made of a linalg op) keeps its
// loop nest; the loop nests of other functions are outlined.

// CHECK-LABEL: func.func private @whole_linalg_0(
// CHECK-NEXT: arith.constant
// CHECK: scf.for
// CHECK-NOT: call
// CHECK: return
// CHECK-LABEL: func.func private @whole_kernel_0(
// CHECK-LABEL: func.func @whole(
// CHECK: call @whole_linalg_0(
// CHECK: call @whole_kernel_0(
func.func private @whole_linalg_0(%x: memref<4xf32>) attributes {passthrough = ["noinline"], tfc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%i] : memref<4xf32>
    %s = arith.addf %a, %a : f32
    memref.store %s, %x[%i] : memref<4xf32>
  }
  return
}
func.func @whole(%x: memref<4xf32>) {
  call @whole_linalg_0(%x) : (memref<4xf32>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%i] : memref<4xf32>
    %s = arith.mulf %a, %a : f32
    memref.store %s, %x[%i] : memref<4xf32>
  }
  return
}

// -----

// The loop nests of one training step, counted over tfc_train_step and
// tfc_optimizer_step (two and one here), are recorded in the manifest as
// kernels_per_step, before its `end`.

// CHECK-LABEL: llvm.mlir.global external constant @tfc_model_manifest
// CHECK-SAME: "tfc-manifest 1\0Aparams 8\0Akernels_per_step 3\0Aend\0A\00"
llvm.mlir.global external constant @tfc_model_manifest("tfc-manifest 1\0Aparams 8\0Aend\0A\00") {addr_space = 0 : i32}
func.func @tfc_train_step(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.addf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  return
}
func.func @tfc_optimizer_step(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %buf[%i] : memref<8xf32>
    %y = arith.subf %x, %two : f32
    memref.store %y, %buf[%i] : memref<8xf32>
  }
  return
}

// -----

// A contraction marked by tfc-fuse-epilogues and its epilogue (the next
// linalg op, updating C in place) become one kernel; the view between
// them, which only the epilogue uses, stays outside and is passed in. With
// an op that writes memory between them (the second pair), each op gets a
// kernel of its own.

#n = affine_map<(m, n) -> (n)>
#mn = affine_map<(m, n) -> (m, n)>
// LINALG-LABEL: func.func private @pair_linalg_0(
// LINALG-SAME: %[[X:[a-z0-9]+]]: memref<8x4xf32>, %[[W:[a-z0-9]+]]: memref<4x16xf32>, %[[Y:[a-z0-9]+]]: memref<8x16xf32>, %[[B:[a-z0-9]+]]: memref<16xf32>, %[[OFF:[a-z0-9]+]]: index)
// LINALG-NEXT: %[[V:.*]] = memref.reinterpret_cast %[[B]] to offset: [%[[OFF]]]
// LINALG-NEXT: linalg.matmul {tfc.epilogue} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[Y]] : memref<8x16xf32>)
// LINALG-NEXT: linalg.generic {{.*}} ins(%[[V]] : {{.*}}) outs(%[[Y]] : memref<8x16xf32>)
// LINALG: return
// LINALG-LABEL: func.func private @pair_linalg_1(
// LINALG-NEXT: linalg.matmul {tfc.epilogue}
// LINALG-NEXT: return
// LINALG-LABEL: func.func private @pair_linalg_2(
// LINALG-NEXT: arith.constant
// LINALG-NEXT: linalg.fill
// LINALG-NEXT: return
// LINALG-LABEL: func.func private @pair_linalg_3(
// LINALG-NEXT: memref.reinterpret_cast
// LINALG-NEXT: linalg.generic
// LINALG-LABEL: func.func @pair(
// LINALG: memref.subview
// LINALG: call @pair_linalg_0(
// LINALG-NEXT: call @pair_linalg_1(
// LINALG: call @pair_linalg_2(
// LINALG: call @pair_linalg_3(
func.func @pair(%x: memref<8x4xf32>, %w: memref<4x16xf32>, %buf: memref<32xf32>,
                %y: memref<8x16xf32>, %z: memref<8x16xf32>, %t: memref<8xf32>) {
  linalg.matmul {tfc.epilogue} ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>)
                outs(%y : memref<8x16xf32>)
  %bias = memref.subview %buf[16] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1], offset: 16>>
  linalg.generic {indexing_maps = [#n, #mn], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<16xf32, strided<[1], offset: 16>>) outs(%y : memref<8x16xf32>) {
  ^bb0(%b: f32, %c: f32):
    %s = arith.addf %c, %b : f32
    linalg.yield %s : f32
  }
  linalg.matmul {tfc.epilogue} ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>)
                outs(%z : memref<8x16xf32>)
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%t : memref<8xf32>)
  linalg.generic {indexing_maps = [#n, #mn], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<16xf32, strided<[1], offset: 16>>) outs(%z : memref<8x16xf32>) {
  ^bb0(%b: f32, %c: f32):
    %s = arith.addf %c, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A fill and the reduction right after it that accumulates into the filled
// buffer become one kernel (where tfc-vectorize-contractions folds a zero
// fill into the contraction's first K panel), together with the
// contraction's epilogue when it has one. A fill whose next op with memory
// effects does not accumulate into it (the second fill, followed by a
// copy), and a fill followed by a reduction into another buffer (the last
// fill and matmul), stay kernels of their own; the two fills of %z are one
// kernel, called twice.

#n = affine_map<(m, n) -> (n)>
#mn = affine_map<(m, n) -> (m, n)>
// LINALG-LABEL: func.func private @filled_linalg_0(
// LINALG-NEXT: arith.constant 0.0
// LINALG-NEXT: linalg.fill
// LINALG-NEXT: linalg.matmul {tfc.epilogue}
// LINALG-NEXT: linalg.generic
// LINALG: return
// LINALG-LABEL: func.func private @filled_linalg_1(
// LINALG-NEXT: arith.constant 0.0
// LINALG-NEXT: linalg.fill
// LINALG-NEXT: return
// LINALG-LABEL: func.func private @filled_linalg_2(
// LINALG-NEXT: linalg.copy
// LINALG-NEXT: return
// LINALG-LABEL: func.func private @filled_linalg_3(
// LINALG-NEXT: linalg.matmul
// LINALG-NEXT: return
// LINALG-LABEL: func.func @filled(
// LINALG: call @filled_linalg_0(
// LINALG-NEXT: call @filled_linalg_1(
// LINALG-NEXT: call @filled_linalg_2(
// LINALG-NEXT: call @filled_linalg_1(
// LINALG-NEXT: call @filled_linalg_3(
// LINALG-NEXT: return
func.func @filled(%x: memref<8x4xf32>, %w: memref<4x16xf32>, %b: memref<16xf32>,
                  %y: memref<8x16xf32>, %z: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<8x16xf32>)
  linalg.matmul {tfc.epilogue} ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>)
                outs(%y : memref<8x16xf32>)
  linalg.generic {indexing_maps = [#n, #mn], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%bias: f32, %c: f32):
    %s = arith.addf %c, %bias : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%z : memref<8x16xf32>)
  linalg.copy ins(%y : memref<8x16xf32>) outs(%z : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%z : memref<8x16xf32>)
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>)
                outs(%y : memref<8x16xf32>)
  return
}
