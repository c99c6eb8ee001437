// RUN: tfc-opt %s -split-input-file --tfc-gpu-flash-roundings | FileCheck %s

// A FlashAttention kernel stores two buffers by marked pair stores (as
// storePair makes them: the aligned pointer plus a byte offset); the first
// is rounded to bf16 after another op that reads it: the kernel stores the
// rounded pair too, at half the byte offset in the rounding's output
// (whose allocation moves before the kernel), and the rounding is gone.
// The second buffer is written by the op after the kernel, so its
// rounding stays.
// CHECK-LABEL: func.func @rounded_output
// CHECK: %[[DQ:.*]] = memref.alloc() : memref<2x64x32xf32>
// CHECK: %[[DK:.*]] = memref.alloc() : memref<2x64x32xf32>
// CHECK: %[[DQ16:.*]] = memref.alloc() : memref<2x64x32xbf16>
// CHECK: gpu.launch
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[DQ]]
// CHECK: %[[SUM:.*]] = arith.addi %[[BASE]], %[[OFFSET:.*]] : index
// CHECK: llvm.store %[[PAIR:.*]], %{{.*}} {alignment = 8 : i64, tfc.flash_row_store} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[PAIR]] : vector<2xf32> to vector<2xbf16>
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[HALF:.*]] = arith.divui %[[OFFSET]], %[[C2]] : index
// CHECK-NEXT: %[[BASE16:.*]] = memref.extract_aligned_pointer_as_index %[[DQ16]]
// CHECK-NEXT: %[[SUM16:.*]] = arith.addi %[[BASE16]], %[[HALF]] : index
// CHECK-NEXT: %[[I16:.*]] = arith.index_cast %[[SUM16]] : index to i64
// CHECK-NEXT: %[[P16:.*]] = llvm.inttoptr %[[I16]] : i64 to !llvm.ptr<1>
// CHECK-NEXT: llvm.store %[[R]], %[[P16]] {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64, tfc.flash_row_store}
// CHECK-NOT: vector<2xbf16>
// CHECK: } {tfc.flash_attention_tile = array<i64: 64, 64, 32>}
// CHECK: linalg.copy ins(%[[DQ]]
// CHECK-NOT: ins(%[[DQ]] : memref<2x64x32xf32>) outs(%[[DQ16]]
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} ins(%[[DK]] : memref<2x64x32xf32>)
// CHECK: return %[[DQ16]]
#id = affine_map<(b, s, d) -> (b, s, d)>
func.func @rounded_output(%v: vector<2xf32>, %o: index, %copy: memref<2x64x32xf32>)
    -> (memref<2x64x32xbf16>, memref<2x64x32xbf16>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %dq = memref.alloc() : memref<2x64x32xf32>
  %dk = memref.alloc() : memref<2x64x32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %base = memref.extract_aligned_pointer_as_index %dq : memref<2x64x32xf32> -> index
    %sum = arith.addi %base, %o : index
    %address = arith.index_cast %sum : index to i64
    %pointer = llvm.inttoptr %address : i64 to !llvm.ptr<1>
    llvm.store %v, %pointer {alignment = 8 : i64, tfc.flash_row_store} : vector<2xf32>, !llvm.ptr<1>
    %kbase = memref.extract_aligned_pointer_as_index %dk : memref<2x64x32xf32> -> index
    %ksum = arith.addi %kbase, %o : index
    %kaddress = arith.index_cast %ksum : index to i64
    %kpointer = llvm.inttoptr %kaddress : i64 to !llvm.ptr<1>
    llvm.store %v, %kpointer {alignment = 8 : i64, tfc.flash_row_store} : vector<2xf32>, !llvm.ptr<1>
    gpu.terminator
  } {tfc.flash_attention_tile = array<i64: 64, 64, 32>}
  linalg.copy ins(%dq : memref<2x64x32xf32>) outs(%copy : memref<2x64x32xf32>)
  linalg.fill ins(%zero : f32) outs(%dk : memref<2x64x32xf32>)
  %dq16 = memref.alloc() : memref<2x64x32xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dq : memref<2x64x32xf32>) outs(%dq16 : memref<2x64x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %dk16 = memref.alloc() : memref<2x64x32xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dk : memref<2x64x32xf32>) outs(%dk16 : memref<2x64x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return %dq16, %dk16 : memref<2x64x32xbf16>, memref<2x64x32xbf16>
}

// -----

// A kernel without the FlashAttention attribute, or a store without the
// mark, is left alone.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: vector<2xbf16>
// CHECK: linalg.generic
// CHECK: return
#id = affine_map<(b, s, d) -> (b, s, d)>
func.func @unmarked(%v: vector<2xf32>, %o: index) -> memref<2x64x32xbf16> {
  %c1 = arith.constant 1 : index
  %dq = memref.alloc() : memref<2x64x32xf32>
  %dq16 = memref.alloc() : memref<2x64x32xbf16>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %base = memref.extract_aligned_pointer_as_index %dq : memref<2x64x32xf32> -> index
    %sum = arith.addi %base, %o : index
    %address = arith.index_cast %sum : index to i64
    %pointer = llvm.inttoptr %address : i64 to !llvm.ptr<1>
    llvm.store %v, %pointer {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
    gpu.terminator
  } {tfc.flash_attention_tile = array<i64: 64, 64, 32>}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dq : memref<2x64x32xf32>) outs(%dq16 : memref<2x64x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return %dq16 : memref<2x64x32xbf16>
}
