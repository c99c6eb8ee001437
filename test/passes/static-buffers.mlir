// RUN: tfc-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect --tfc-static-buffers | FileCheck %s

// Three 4 KiB buffers in a chain: %a dies when %c is written, so %c reuses
// %a's bytes; %b is live across both and gets its own. The arena holds
// 8 KiB, not 12.

// CHECK: memref.global "private" @__tfc_arena_0 : memref<8192xi8> = uninitialized {alignment = 64 : i64}
// CHECK-LABEL: func.func @chain
// CHECK: %[[ARENA:.*]] = memref.get_global @__tfc_arena_0
// CHECK: arith.constant 0 : index
// CHECK: memref.view %[[ARENA]]{{.*}} : memref<8192xi8> to memref<1024xf32>
// CHECK: arith.constant 4096 : index
// CHECK: memref.view %[[ARENA]]{{.*}} : memref<8192xi8> to memref<1024xf32>
// CHECK: arith.constant 0 : index
// CHECK: memref.view %[[ARENA]]{{.*}} : memref<8192xi8> to memref<1024xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @chain(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %a = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  %c = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>)
  linalg.add ins(%b, %c : memref<1024xf32>, memref<1024xf32>) outs(%y : memref<1024xf32>)
  memref.dealloc %a : memref<1024xf32>
  return
}

// -----

// A use through a view keeps the buffer alive; a returned buffer lives to
// the end. Nothing can share, so the arena is the sum (2 x 256 + 1024).

// CHECK: memref.global "private" @__tfc_arena_0 : memref<1536xi8>
// CHECK-LABEL: func.func @aliases
func.func @aliases(%x: memref<8x8xf32>) -> memref<256xf32> {
  %a = memref.alloc() : memref<64xf32>
  %v = memref.expand_shape %a [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
  linalg.copy ins(%x : memref<8x8xf32>) outs(%v : memref<8x8xf32>)
  %b = memref.alloc() : memref<64xf32>
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  %r = memref.alloc() : memref<256xf32>
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%r : memref<256xf32>)
  "test.use"(%v, %b) : (memref<8x8xf32>, memref<64xf32>) -> ()
  return %r : memref<256xf32>
}

// -----

func.func @dynamic(%n: index) {
  // expected-error @+1 {{has a dynamic shape or a non-identity layout}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

// The manifest's activation_bytes (tfc-export-abi's upper bound) becomes
// tfc_forward's working memory, counting the functions it calls; the
// larger of the training entry points' is recorded as
// train_activation_bytes, and all arenas together as arena_bytes: @helper's
// (512) and @tfc_forward's (1024, it calls @helper) are their own, the two
// training entry points share one of 1024.

// CHECK-LABEL: llvm.mlir.global external constant @tfc_model_manifest
// CHECK-SAME: "tfc-manifest 1\0Aparams 16\0Aactivation_bytes 1536\0Atrain_activation_bytes 1024\0Aarena_bytes 2560\0Aend\0A\00"
llvm.mlir.global external constant @tfc_model_manifest("tfc-manifest 1\0Aparams 16\0Aactivation_bytes 999999\0Aend\0A\00") {addr_space = 0 : i32}
func.func private @helper() {
  %a = memref.alloc() : memref<128xf32>
  "test.use"(%a) : (memref<128xf32>) -> ()
  return
}
func.func @tfc_forward() {
  %a = memref.alloc() : memref<256xf32>
  "test.use"(%a) : (memref<256xf32>) -> ()
  func.call @helper() : () -> ()
  func.call @helper() : () -> ()
  return
}
func.func @tfc_train_step() {
  %a = memref.alloc() : memref<256xf32>
  "test.use"(%a) : (memref<256xf32>) -> ()
  return
}
func.func @tfc_optimizer_step() {
  %a = memref.alloc() : memref<256xf32>
  "test.use"(%a) : (memref<256xf32>) -> ()
  return
}

// -----

// Entry points that no function calls and that call none never run at the
// same time: they share one arena, as large as the largest of them (4096
// bytes, @entry_train's), not the sum.

// CHECK: memref.global "private" @__tfc_arena_0 : memref<4096xi8>
// CHECK-NOT: memref.global
// CHECK: func.func @entry_forward
// CHECK: memref.get_global @__tfc_arena_0 : memref<4096xi8>
// CHECK-LABEL: func.func @entry_train
// CHECK: memref.get_global @__tfc_arena_0 : memref<4096xi8>
// CHECK-LABEL: func.func @entry_optimizer
// CHECK: memref.get_global @__tfc_arena_0 : memref<4096xi8>
func.func @entry_forward() {
  %a = memref.alloc() : memref<256xf32>
  "test.use"(%a) : (memref<256xf32>) -> ()
  return
}
func.func @entry_train() {
  %a = memref.alloc() : memref<1024xf32>
  "test.use"(%a) : (memref<1024xf32>) -> ()
  return
}
func.func @entry_optimizer() {
  %a = memref.alloc() : memref<512xf32>
  "test.use"(%a) : (memref<512xf32>) -> ()
  return
}

// -----

// The buffers in the body of an scf.forall belong to one iteration: they go
// on the stack of the thread that runs it (the forall is an allocation
// scope), not into the arena that every thread shares. The buffer outside
// the loop still goes into the arena.

// CHECK-LABEL: func.func @forall_private
// CHECK: memref.view
// CHECK: scf.forall
// CHECK-NEXT: %[[A:.*]] = memref.alloca() {alignment = 64 : i64} : memref<128x128xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloca() {alignment = 64 : i64} : memref<128xf32>
// CHECK-NOT: memref.alloc()
// CHECK: "test.use"(%[[A]], %[[B]], %{{.*}})
func.func @forall_private() {
  %out = memref.alloc() : memref<64x128xf32>
  scf.forall (%i) in (64) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<128x128xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<128xf32>
    "test.use"(%a, %b, %out) : (memref<128x128xf32>, memref<128xf32>, memref<64x128xf32>) -> ()
  }
  return
}

// -----

// More than 1 MiB per iteration would risk a worker thread's stack: the
// smallest buffers go on the stack while they fit in 1 MiB together (the
// 64 bytes of %c, then one 512 KiB buffer), the larger rest (the other
// 512 KiB buffer) comes from the heap and is freed at the end of the
// iteration.

// CHECK-LABEL: func.func @forall_heap
// CHECK: scf.forall
// CHECK-NEXT: %[[A:.*]] = memref.alloca() : memref<512x256xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<512x256xf32>
// CHECK-NEXT: %[[C:.*]] = memref.alloca() : memref<16xf32>
// CHECK-NEXT: "test.use"(%[[A]], %[[B]], %[[C]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NOT: memref.dealloc
func.func @forall_heap() {
  scf.forall (%i) in (64) {
    %a = memref.alloc() : memref<512x256xf32>
    %b = memref.alloc() : memref<512x256xf32>
    %c = memref.alloc() : memref<16xf32>
    "test.use"(%a, %b, %c) : (memref<512x256xf32>, memref<512x256xf32>, memref<16xf32>) -> ()
  }
  return
}

// -----

// Buffers of an iteration that come from the heap are held by each worker
// thread besides the arenas: the manifest records the most that one
// iteration takes, here @tfc_train_step's (four 512 KiB buffers, two on
// the heap: 1048576 bytes), more than @tfc_forward's (one on the heap).

// CHECK-LABEL: llvm.mlir.global external constant @tfc_model_manifest
// CHECK-SAME: "tfc-manifest 1\0Aparams 16\0Aactivation_bytes 0\0Atrain_activation_bytes 0\0Aarena_bytes 0\0Athread_heap_bytes 1048576\0Aend\0A\00"
llvm.mlir.global external constant @tfc_model_manifest("tfc-manifest 1\0Aparams 16\0Aend\0A\00") {addr_space = 0 : i32}
func.func @tfc_forward() {
  scf.forall (%i) in (64) {
    %a = memref.alloc() : memref<512x256xf32>
    %b = memref.alloc() : memref<512x256xf32>
    %c = memref.alloc() : memref<512x256xf32>
    "test.use"(%a, %b, %c) : (memref<512x256xf32>, memref<512x256xf32>, memref<512x256xf32>) -> ()
  }
  return
}
func.func @tfc_train_step() {
  scf.forall (%i) in (64) {
    %a = memref.alloc() : memref<512x256xf32>
    %b = memref.alloc() : memref<512x256xf32>
    %c = memref.alloc() : memref<512x256xf32>
    %d = memref.alloc() : memref<512x256xf32>
    "test.use"(%a, %b, %c, %d) : (memref<512x256xf32>, memref<512x256xf32>, memref<512x256xf32>, memref<512x256xf32>) -> ()
  }
  return
}

// -----

// Any other allocation left inside a loop escapes an iteration: an error.

func.func @loop_alloc(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{is inside a loop and cannot become a static buffer}}
    %a = memref.alloc() : memref<16xf32>
    "test.use"(%a) : (memref<16xf32>) -> ()
  }
  return
}

// -----

// A contraction's kernel applies its epilogue (tfc-fuse-epilogues; here a
// rounded one, writing a buffer of its own) while it still reads its
// operands: %a, the contraction's last read, lives until the epilogue, so
// the epilogue's output %y does not take %a's bytes (it would, were %a
// dead after the contraction). The allocation between the two does not
// separate the epilogue from its contraction.

// CHECK-LABEL: func.func @epilogue_output
// CHECK: %[[ARENA:.*]] = memref.get_global @__tfc_arena_0
// CHECK: %[[A_AT:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[A_AT]]][] : memref<{{.*}}xi8> to memref<64x32xf32>
// CHECK: %[[C_AT:.*]] = arith.constant 8192 : index
// CHECK: memref.view %[[ARENA]][%[[C_AT]]][] : memref<{{.*}}xi8> to memref<64x16xf32>
// CHECK: %[[Y_AT:.*]] = arith.constant 12288 : index
// CHECK: memref.view %[[ARENA]][%[[Y_AT]]][] : memref<{{.*}}xi8> to memref<64x16xbf16>
#eo_bias = affine_map<(m, n) -> (n)>
#eo_mn = affine_map<(m, n) -> (m, n)>
func.func @epilogue_output(%x: memref<64x32xf32>, %w: memref<16x32xf32>,
                           %bias: memref<16xf32>, %out: memref<64x16xbf16>) {
  %a = memref.alloc() : memref<64x32xf32>
  linalg.copy ins(%x : memref<64x32xf32>) outs(%a : memref<64x32xf32>)
  %c = memref.alloc() : memref<64x16xf32>
  linalg.matmul_transpose_b {tfc.epilogue}
      ins(%a, %w : memref<64x32xf32>, memref<16x32xf32>)
      outs(%c : memref<64x16xf32>)
  %y = memref.alloc() : memref<64x16xbf16>
  linalg.generic {indexing_maps = [#eo_bias, #eo_mn, #eo_mn],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<16xf32>, memref<64x16xf32>)
      outs(%y : memref<64x16xbf16>) {
  ^bb0(%b: f32, %cv: f32, %o: bf16):
    %t = arith.addf %cv, %b : f32
    %r = arith.truncf %t : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.copy ins(%y : memref<64x16xbf16>) outs(%out : memref<64x16xbf16>)
  return
}
