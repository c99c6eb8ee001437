// RUN: tfc-opt %s -split-input-file --tfc-gpu-forall-consumers | FileCheck %s

// A loop over (batch, head, row) that writes each row of a head's 4 values
// of a fresh buffer as one vector (tfc-row-attention's output), then the
// buffer rounded to bf16 and the rounding scaled by a constant into a
// second bf16 buffer, each an element-wise op of its own: both are applied
// in the loop, on the row just written (the constant broadcast), and their
// rows written at the same place of their buffers; the two ops are gone.
// CHECK-LABEL: func.func @rounded_rows
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x8x16xf32>
// CHECK: %[[ROUNDED:.*]] = memref.alloc() : memref<2x8x16xbf16>
// CHECK: %[[SCALED:.*]] = memref.alloc() : memref<2x8x16xbf16>
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[S:.*]]) in (2, 4, 8)
// CHECK: %[[COL:.*]] = arith.muli %[[H]], %c4
// CHECK: %[[ROW:.*]] = memref.subview %[[OUT]][%[[B]], %[[S]], %[[COL]]] [1, 1, 4] [1, 1, 1]
// CHECK: vector.transfer_write %[[V:.*]], %[[ROW]]
// CHECK: %[[R:.*]] = arith.truncf %[[V]] : vector<4xf32> to vector<4xbf16>
// CHECK: %[[RROW:.*]] = memref.subview %[[ROUNDED]][%[[B]], %[[S]], %[[COL]]] [1, 1, 4] [1, 1, 1] : memref<2x8x16xbf16> to memref<4xbf16, strided<[1], offset: ?>>
// CHECK: vector.transfer_write %[[R]], %[[RROW]]
// CHECK: %[[HALF:.*]] = vector.broadcast %{{.*}} : bf16 to vector<4xbf16>
// CHECK: %[[M:.*]] = arith.mulf %[[R]], %[[HALF]] : vector<4xbf16>
// CHECK: %[[SROW:.*]] = memref.subview %[[SCALED]][%[[B]], %[[S]], %[[COL]]]
// CHECK: vector.transfer_write %[[M]], %[[SROW]]
// CHECK: }
// CHECK-NOT: linalg.generic
// CHECK: return %[[ROUNDED]], %[[SCALED]]
#id = affine_map<(b, s, d) -> (b, s, d)>
func.func @rounded_rows(%x: memref<2x8x16xf32>) -> (memref<2x8x16xbf16>, memref<2x8x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %pad = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<2x8x16xf32>
  scf.forall (%b, %h, %s) in (2, 4, 8) {
    %col = arith.muli %h, %c4 : index
    %in = memref.subview %x[%b, %s, %col] [1, 1, 4] [1, 1, 1] : memref<2x8x16xf32> to memref<4xf32, strided<[1], offset: ?>>
    %v = vector.transfer_read %in[%c0], %pad {in_bounds = [true]} : memref<4xf32, strided<[1], offset: ?>>, vector<4xf32>
    %e = math.exp %v : vector<4xf32>
    %row = memref.subview %out[%b, %s, %col] [1, 1, 4] [1, 1, 1] : memref<2x8x16xf32> to memref<4xf32, strided<[1], offset: ?>>
    vector.transfer_write %e, %row[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32, strided<[1], offset: ?>>
  }
  %rounded = memref.alloc() : memref<2x8x16xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%out : memref<2x8x16xf32>) outs(%rounded : memref<2x8x16xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %half = arith.constant 0.5 : bf16
  %scaled = memref.alloc() : memref<2x8x16xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%rounded : memref<2x8x16xbf16>) outs(%scaled : memref<2x8x16xbf16>) {
  ^bb0(%in: bf16, %o: bf16):
    %m = arith.mulf %in, %half : bf16
    linalg.yield %m : bf16
  }
  return %rounded, %scaled : memref<2x8x16xbf16>, memref<2x8x16xbf16>
}

// -----

// Left alone: a loop's output that a fill writes before it (what the loop
// leaves unwritten is then defined); an op that reads the output
// transposed; an op whose other input an op in between writes.
// CHECK-LABEL: func.func @refused
// CHECK: scf.forall
// CHECK-NOT: arith.truncf
// CHECK: }
// CHECK: linalg.generic
// CHECK: scf.forall
// CHECK-NOT: arith.truncf
// CHECK: }
// CHECK: linalg.generic
// CHECK: linalg.fill
// CHECK: linalg.generic
#id = affine_map<(b, s, d) -> (b, s, d)>
#tr = affine_map<(b, s, d) -> (s, b, d)>
func.func @refused(%x: memref<8x8x4xf32>, %y: memref<8x8x4xbf16>, %z: memref<8x8x4xf32>, %w: memref<8x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %defined = memref.alloc() : memref<8x8x4xf32>
  linalg.fill ins(%zero : f32) outs(%defined : memref<8x8x4xf32>)
  scf.forall (%b, %s) in (8, 8) {
    %v = vector.transfer_read %x[%b, %s, %c0], %zero {in_bounds = [true]} : memref<8x8x4xf32>, vector<4xf32>
    %row = memref.subview %defined[%b, %s, 0] [1, 1, 4] [1, 1, 1] : memref<8x8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32, strided<[1], offset: ?>>
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%defined : memref<8x8x4xf32>) outs(%y : memref<8x8x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %out = memref.alloc() : memref<8x8x4xf32>
  scf.forall (%b, %s) in (8, 8) {
    %v = vector.transfer_read %x[%b, %s, %c0], %zero {in_bounds = [true]} : memref<8x8x4xf32>, vector<4xf32>
    %row = memref.subview %out[%b, %s, 0] [1, 1, 4] [1, 1, 1] : memref<8x8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32, strided<[1], offset: ?>>
  }
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%out : memref<8x8x4xf32>) outs(%y : memref<8x8x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.fill ins(%zero : f32) outs(%z : memref<8x8x4xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%out, %z : memref<8x8x4xf32>, memref<8x8x4xf32>) outs(%w : memref<8x8x4xf32>) {
  ^bb0(%in: f32, %a: f32, %o: f32):
    %r = arith.addf %in, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left alone: a row that the loop also writes otherwise (a store after the
// row's write), so that the written vector is not the row's final value.
// CHECK-LABEL: func.func @written_twice
// CHECK: scf.forall
// CHECK-NOT: arith.truncf
// CHECK: }
// CHECK: linalg.generic
#id = affine_map<(b, s, d) -> (b, s, d)>
func.func @written_twice(%x: memref<8x8x4xf32>, %y: memref<8x8x4xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<8x8x4xf32>
  scf.forall (%b, %s) in (8, 8) {
    %v = vector.transfer_read %x[%b, %s, %c0], %zero {in_bounds = [true]} : memref<8x8x4xf32>, vector<4xf32>
    %row = memref.subview %out[%b, %s, 0] [1, 1, 4] [1, 1, 1] : memref<8x8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32, strided<[1], offset: ?>>
    memref.store %zero, %out[%b, %s, %c0] : memref<8x8x4xf32>
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%out : memref<8x8x4xf32>) outs(%y : memref<8x8x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}
