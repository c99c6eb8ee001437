// RUN: tfc-opt %s -split-input-file --tfc-gpu-elide-copies | FileCheck %s

// A projection's bias and bf16 rounding write a `[B S, D]` buffer whose
// `[B, S, D]` view is copied into a buffer of its own (a FlashAttention
// operand): the rounding writes that buffer, through a `[B S, D]` view of
// it, whose allocation moves before it; the copy is gone.
// CHECK-LABEL: func.func @projection_rounding
// CHECK: %[[OWN:.*]] = memref.alloc() : memref<2x8x4xbf16>
// CHECK-NEXT: %[[FLAT:.*]] = memref.collapse_shape %[[OWN]] {{\[}}[0, 1], [2]] : memref<2x8x4xbf16> into memref<16x4xbf16>
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<16x4xf32>, memref<4xf32>) outs(%[[FLAT]] : memref<16x4xbf16>)
// CHECK-NOT: linalg.copy
// CHECK: return %[[OWN]]
#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
func.func @projection_rounding(%y: memref<16x4xf32>, %b: memref<4xf32>) -> memref<2x8x4xbf16> {
  %r = memref.alloc() : memref<16x4xbf16>
  linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : memref<16x4xf32>, memref<4xf32>) outs(%r : memref<16x4xbf16>) {
  ^bb0(%in: f32, %bias: f32, %out: bf16):
    %s = arith.addf %in, %bias : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  %view = memref.expand_shape %r [[0, 1], [2]] output_shape [2, 8, 4] : memref<16x4xbf16> into memref<2x8x4xbf16>
  %own = memref.alloc() : memref<2x8x4xbf16>
  linalg.copy ins(%view : memref<2x8x4xbf16>) outs(%own : memref<2x8x4xbf16>)
  return %own : memref<2x8x4xbf16>
}

// -----

// One buffer reused by two layers' roundings, each copied into a buffer
// of its own before the next writes it whole again: both copies go, and
// each rounding writes its own buffer.
// CHECK-LABEL: func.func @reused_source
// CHECK: %[[R:.*]] = memref.alloc() : memref<2x8x4xbf16>
// CHECK-NEXT: memref.collapse_shape %[[R]]
// CHECK-NEXT: %[[OWN0:.*]] = memref.alloc() : memref<2x8x4xbf16>
// CHECK-NEXT: %[[FLAT0:.*]] = memref.collapse_shape %[[OWN0]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}} : memref<16x4xf32>) outs(%[[FLAT0]] : memref<16x4xbf16>)
// CHECK: %[[OWN1:.*]] = memref.alloc() : memref<2x8x4xbf16>
// CHECK-NEXT: %[[FLAT1:.*]] = memref.collapse_shape %[[OWN1]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}} : memref<16x4xf32>) outs(%[[FLAT1]] : memref<16x4xbf16>)
// CHECK-NOT: linalg.copy
// CHECK: return %[[OWN0]], %[[OWN1]]
#id = affine_map<(i, j) -> (i, j)>
func.func @reused_source(%x0: memref<16x4xf32>, %x1: memref<16x4xf32>)
    -> (memref<2x8x4xbf16>, memref<2x8x4xbf16>) {
  %r = memref.alloc() : memref<2x8x4xbf16>
  %flat = memref.collapse_shape %r [[0, 1], [2]] : memref<2x8x4xbf16> into memref<16x4xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x0 : memref<16x4xf32>) outs(%flat : memref<16x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %own0 = memref.alloc() : memref<2x8x4xbf16>
  linalg.copy ins(%r : memref<2x8x4xbf16>) outs(%own0 : memref<2x8x4xbf16>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x1 : memref<16x4xf32>) outs(%flat : memref<16x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %own1 = memref.alloc() : memref<2x8x4xbf16>
  linalg.copy ins(%r : memref<2x8x4xbf16>) outs(%own1 : memref<2x8x4xbf16>)
  return %own0, %own1 : memref<2x8x4xbf16>, memref<2x8x4xbf16>
}

// -----

// The source is read again after the copy (by the kernel of a later op):
// its contents must stay, and so does the copy.
// CHECK-LABEL: func.func @source_read_after
// CHECK: linalg.copy
#id = affine_map<(i, j) -> (i, j)>
func.func @source_read_after(%x: memref<16x4xf32>, %y: memref<16x4xf32>) -> memref<16x4xf32> {
  %c1 = arith.constant 1 : index
  %r = memref.alloc() : memref<16x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x4xf32>) outs(%r : memref<16x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  %own = memref.alloc() : memref<16x4xf32>
  linalg.copy ins(%r : memref<16x4xf32>) outs(%own : memref<16x4xf32>)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %r[%tx, %ty] : memref<16x4xf32>
    memref.store %v, %y[%tx, %ty] : memref<16x4xf32>
    gpu.terminator
  }
  return %own : memref<16x4xf32>
}

// -----

// The writer adds to what the source held: it reads it, so the copy stays.
// CHECK-LABEL: func.func @writer_reads_source
// CHECK: linalg.copy
#id = affine_map<(i, j) -> (i, j)>
func.func @writer_reads_source(%x: memref<16x4xf32>) -> memref<16x4xf32> {
  %r = memref.alloc() : memref<16x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x4xf32>) outs(%r : memref<16x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  %own = memref.alloc() : memref<16x4xf32>
  linalg.copy ins(%r : memref<16x4xf32>) outs(%own : memref<16x4xf32>)
  return %own : memref<16x4xf32>
}

// -----

// The writer writes a part of the source only (a subview): the copy stays.
// CHECK-LABEL: func.func @partial_writer
// CHECK: linalg.copy
#id = affine_map<(i, j) -> (i, j)>
func.func @partial_writer(%x: memref<8x4xf32>) -> memref<16x4xf32> {
  %r = memref.alloc() : memref<16x4xf32>
  %half = memref.subview %r[0, 0] [8, 4] [1, 1] : memref<16x4xf32> to memref<8x4xf32, strided<[4, 1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x4xf32>) outs(%half : memref<8x4xf32, strided<[4, 1]>>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %own = memref.alloc() : memref<16x4xf32>
  linalg.copy ins(%r : memref<16x4xf32>) outs(%own : memref<16x4xf32>)
  return %own : memref<16x4xf32>
}

// -----

// The destination is written before the copy: the copy stays.
// CHECK-LABEL: func.func @destination_used_before
// CHECK: linalg.copy
#id = affine_map<(i, j) -> (i, j)>
func.func @destination_used_before(%x: memref<16x4xf32>) -> memref<16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %own = memref.alloc() : memref<16x4xf32>
  linalg.fill ins(%zero : f32) outs(%own : memref<16x4xf32>)
  %r = memref.alloc() : memref<16x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x4xf32>) outs(%r : memref<16x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.copy ins(%r : memref<16x4xf32>) outs(%own : memref<16x4xf32>)
  return %own : memref<16x4xf32>
}

// -----

// The source's address is taken in the function's block, where a later
// kernel could read through it unseen: the copy stays.
// CHECK-LABEL: func.func @address_taken
// CHECK: linalg.copy
#id = affine_map<(i, j) -> (i, j)>
func.func @address_taken(%x: memref<16x4xf32>) -> (memref<16x4xf32>, index) {
  %r = memref.alloc() : memref<16x4xf32>
  %address = memref.extract_aligned_pointer_as_index %r : memref<16x4xf32> -> index
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x4xf32>) outs(%r : memref<16x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %own = memref.alloc() : memref<16x4xf32>
  linalg.copy ins(%r : memref<16x4xf32>) outs(%own : memref<16x4xf32>)
  return %own, %address : memref<16x4xf32>, index
}
