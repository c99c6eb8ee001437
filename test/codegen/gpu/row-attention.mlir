// RUN: tfc-opt %s -split-input-file --tfc-row-attention | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-row-attention=flash-forward=1 | FileCheck %s --check-prefix=FLASH

// Causal softmax attention with a key mask, 2 heads of 4 channels: one
// scf.forall over (batch, head, query row), rows innermost; each iteration
// reads its query row as a vector, runs over keys 0..i with the online
// softmax's maximum, normaliser and accumulator as loop-carried registers,
// skips padding keys (factor 1, weight 0) and writes its output row. No
// score tensor exists.

// CHECK-LABEL: func.func @softmax_causal
// CHECK-NOT: tfc.attention
// CHECK-NOT: tensor<2x2x8x8xf32>
// CHECK: %[[OUT:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (2, 2, 8) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x8x8xf32>)
// CHECK: %[[Q:.*]] = vector.transfer_read %arg0[%[[B]], %[[I]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x8x8xf32>, vector<4xf32>
// CHECK: %[[END:.*]] = arith.addi %[[I]], %c1
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[J:.*]] = %{{.*}} to %[[END]] step %{{.*}} iter_args({{.*}}) -> (f32, f32, vector<4xf32>)
// CHECK: %[[K:.*]] = vector.transfer_read %arg1[%[[B]], %[[J]], %{{.*}}]
// CHECK: arith.mulf %[[Q]], %[[K]] : vector<4xf32>
// CHECK: vector.reduction <add>
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.exp
// CHECK: %[[FLAG:.*]] = tensor.extract %arg3[%[[B]], %[[J]]] : tensor<2x8xf32>
// CHECK: %[[REAL:.*]] = arith.cmpf une, %[[FLAG]]
// CHECK: arith.select %[[REAL]]
// CHECK: vector.transfer_read %arg2[%[[B]], %[[J]], %{{.*}}]
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: arith.cmpf ogt, %[[LOOP]]#1
// CHECK: %[[ROW:.*]] = vector.transfer_write %{{.*}}, %{{.*}}[%c0{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<4xf32>
// CHECK: %[[COL:.*]] = arith.muli %[[H]], %c4
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[ROW]] into %[[ACC]][%[[B]], %[[I]], %[[COL]]] [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<2x8x8xf32>
// CHECK: return %[[OUT]]
func.func @softmax_causal(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                          %v: tensor<2x8x8xf32>, %m: tensor<2x8xf32>)
    -> tensor<2x8x8xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      mask(%m : tensor<2x8xf32>)
      : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %a : tensor<2x8x8xf32>
}

// -----

// Without the causal mask, every row runs over all keys, also when the
// query and key lengths differ.

// CHECK-LABEL: func.func @softmax_cross
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 4) shared_outs
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step
// CHECK-NOT: tensor.extract
// CHECK: tensor.parallel_insert_slice %{{.*}} [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<1x4x4xf32>
func.func @softmax_cross(%q: tensor<1x4x4xf32>, %k: tensor<1x8x4xf32>,
                         %v: tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  %a = tfc.attention #tfc.softmax<> heads 1 %q, %k, %v
      : tensor<1x4x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<1x4x4xf32>
  return %a : tensor<1x4x4xf32>
}

// -----

// The gradient: a loop over query rows that recomputes the log-sum-exp and
// D = dO . O (one loop over keys, rescaled online) and accumulates dQ (a
// second loop over keys), writing dQ's row and the row's two numbers into
// [B, H, S] tensors; then a loop over key rows that runs over the queries
// i >= j from the last down (i = 7 - step for 8 - j steps), reading those
// numbers, and accumulates dK and dV.

// CHECK-LABEL: func.func @softmax_causal_grad
// CHECK-NOT: tfc.attention_grad
// CHECK: %[[ROWS:.*]]:3 = scf.forall (%{{.*}}, %{{.*}}, %[[I:.*]]) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
// CHECK: scf.for {{.*}} -> (f32, f32, f32)
// CHECK: math.log
// CHECK: scf.for {{.*}} -> (vector<4xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<1x8x8xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} [1, 1, 1] [1, 1, 1] : tensor<1xf32> into tensor<1x2x8xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} [1, 1, 1] [1, 1, 1] : tensor<1xf32> into tensor<1x2x8xf32>
// CHECK: %[[KEYS:.*]]:2 = scf.forall (%[[KB:.*]], %[[KH:.*]], %[[J:.*]]) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>)
// CHECK: %[[COUNT:.*]] = arith.subi %c8{{.*}}, %[[J]]
// CHECK: scf.for %[[STEP:.*]] = %c0{{.*}} to %[[COUNT]] step {{.*}} -> (vector<4xf32>, vector<4xf32>)
// CHECK: %[[QI:.*]] = arith.subi %c7{{.*}}, %[[STEP]]
// CHECK: vector.transfer_read %arg0[%[[KB]], %[[QI]],
// CHECK: tensor.extract %[[ROWS]]#1[%[[KB]], %[[KH]], %[[QI]]]
// CHECK: tensor.extract %[[ROWS]]#2[%[[KB]], %[[KH]], %[[QI]]]
// CHECK: return %[[ROWS]]#0, %[[KEYS]]#0, %[[KEYS]]#1
func.func @softmax_causal_grad(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                               %v: tensor<1x8x8xf32>, %g: tensor<1x8x8xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
      -> tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
  return %dq, %dk, %dv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// -----

// A padding key is attended by no query: its loop over queries is empty
// (no steps).

// CHECK-LABEL: func.func @softmax_masked_grad
// CHECK: scf.forall
// CHECK: scf.forall (%[[B:.*]], %{{.*}}, %[[J:.*]]) in (1, 1, 4)
// CHECK: %[[FLAG:.*]] = tensor.extract %arg3[%[[B]], %[[J]]]
// CHECK: %[[REAL:.*]] = arith.cmpf une, %[[FLAG]]
// CHECK: %[[END:.*]] = arith.select %[[REAL]], %c4{{.*}}, %c0
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[END]]
func.func @softmax_masked_grad(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>,
                               %v: tensor<1x4x4xf32>, %m: tensor<1x4xf32>,
                               %g: tensor<1x4x4xf32>)
    -> (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) {
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<> heads 1 %q, %k, %v
      mask(%m : tensor<1x4xf32>)
      grad %g : tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
      -> tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
  return %dq, %dk, %dv : tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
}

// -----

// Left alone: Longformer and Performer attention (tfc-blocked-attention
// and tfc-lower-to-linalg lower them).

// CHECK-LABEL: func.func @longformer
// CHECK: tfc.attention #tfc.longformer
// CHECK-NOT: scf.forall
func.func @longformer(%q: tensor<1x16x4xf32>, %k: tensor<1x16x4xf32>,
                      %v: tensor<1x16x4xf32>) -> tensor<1x16x4xf32> {
  %a = tfc.attention #tfc.longformer<window = 4, dilation = 1, global = [], causal> heads 1
      %q, %k, %v
      : tensor<1x16x4xf32>, tensor<1x16x4xf32>, tensor<1x16x4xf32> -> tensor<1x16x4xf32>
  return %a : tensor<1x16x4xf32>
}

// -----

// A gradient after its forward (the same operands) reads the forward's
// output and log-sum-exp: the forward's loop also writes each row's
// log-sum-exp into a [B, H, S] tensor, and the gradient's loop over query
// rows reads it and computes D = dO . O from the forward's output row,
// with one loop over keys (dQ) instead of two. A forward with no gradient
// (the evaluation graph) writes its output alone.

// CHECK-LABEL: func.func @softmax_forward_and_grad
// CHECK: %[[FWD:.*]]:2 = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x2x8xf32>)
// CHECK: math.log
// CHECK: %[[ROWS:.*]]:3 = scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)
// CHECK: %[[DOUT:.*]] = vector.transfer_read %arg3[%[[B]], %[[I]],
// CHECK: %[[LSE:.*]] = tensor.extract %[[FWD]]#1[%[[B]], %[[H]], %[[I]]]
// CHECK: %[[O:.*]] = vector.transfer_read %[[FWD]]#0[%[[B]], %[[I]],
// CHECK: arith.mulf %[[DOUT]], %[[O]]
// CHECK: vector.reduction <add>
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: scf.forall.in_parallel
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 8) shared_outs({{.*}}) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>)
// CHECK: return %[[FWD]]#0, %[[ROWS]]#0
func.func @softmax_forward_and_grad(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                                    %v: tensor<1x8x8xf32>, %g: tensor<1x8x8xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
      -> tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
  return %a, %dq, %dk, %dv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// -----

// With flash-forward, each operand's bf16 rounding is built right after
// the op that computes it (so that the GPU pipeline fuses it with that op,
// as with Primer's convolutions of the query, key and value), not all of
// them after the last.

// FLASH-LABEL: func.func @flash_rounds_after_producers
// FLASH: %[[Q:.*]] = linalg.fill ins(%arg1 : f32)
// FLASH-NEXT: tensor.empty() : tensor<1x64x64xbf16>
// FLASH-NEXT: linalg.generic {{.*}} ins(%[[Q]] : tensor<1x64x64xf32>) outs(%{{.*}} : tensor<1x64x64xbf16>)
// FLASH: %[[K:.*]] = linalg.fill ins(%arg2 : f32)
// FLASH-NEXT: tensor.empty() : tensor<1x64x64xbf16>
// FLASH-NEXT: linalg.generic {{.*}} ins(%[[K]] : tensor<1x64x64xf32>) outs(%{{.*}} : tensor<1x64x64xbf16>)
// FLASH: %[[V:.*]] = linalg.fill ins(%arg3 : f32)
// FLASH-NEXT: tensor.empty() : tensor<1x64x64xbf16>
// FLASH-NEXT: linalg.generic {{.*}} ins(%[[V]] : tensor<1x64x64xf32>) outs(%{{.*}} : tensor<1x64x64xbf16>)
// FLASH: gpu.launch
func.func @flash_rounds_after_producers(%x: tensor<1x64x64xf32>, %a: f32,
                                        %b: f32, %c: f32) -> tensor<1x64x64xf32> {
  %q = linalg.fill ins(%a : f32) outs(%x : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  %k = linalg.fill ins(%b : f32) outs(%x : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  %v = linalg.fill ins(%c : f32) outs(%x : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  %o = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %v
      : tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32> -> tensor<1x64x64xf32>
  return %o : tensor<1x64x64xf32>
}

// -----

// With flash-forward, a causal forward of 2 heads of 64 channels over 128
// positions is one FlashAttention kernel: Q, K and V rounded to bf16 into
// buffers of their own (read by the gradient's kernels too), a
// block of 128 threads per (query block of 64, batch, head), 2 x 2 x 2
// blocks; a 64 x 64 Q tile and two stages of 64-key K and V tiles in
// shared memory, each filled by 4 cp.async copies of 16 bytes per thread;
// Q's 4 A fragments read once; per key tile (up to the diagonal) 32 mma
// for S = Q K^T, the causal mask (on the tiles that meet a warp's
// diagonal), the rows' maxima over 4 lanes by
// shuffles, exp2, the probabilities rounded to bf16 pairs and 32 mma for
// P V with V's fragments by ldmatrix.trans. Per row it stores the output
// in bf16 (4-byte stores of two channels, rounded: the precision the
// out-projection reads; float32 readers widen it) and the log-sum-exp.
//
// The gradient is D = rowsum(dO O) (a sum over each head's channels), dO
// rounded to bf16 and two more kernels of the same shape on the same bf16
// Q, K and V: per query block, Q and dO held as A fragments and K, V
// streamed, 3 x 32 mma per key tile (S, dP, dQ), the rows' log-sum-exp
// and D read once; per key block, K and V held and Q, dO streamed from
// the block's own diagonal on (causal), 4 x 32 mma per query tile (S^T,
// dV, dP^T, dK), each column's log-sum-exp and D read per tile. D's
// loops are (b, h, s, e), in the order of its [B, H, S] result, so that
// its threads are those of its zero fill, which then merges into it.

// FLASH: #[[DROWS:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// FLASH: #[[DSUMS:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// FLASH-LABEL: func.func @flash_forward_and_grad
// FLASH: %[[Q16:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x128x128xf32>) outs(%{{.*}} : tensor<2x128x128xbf16>)
// FLASH: arith.truncf %{{.*}} : f32 to bf16
// FLASH: linalg.generic {{.*}} ins(%arg1 : tensor<2x128x128xf32>) outs(%{{.*}} : tensor<2x128x128xbf16>)
// FLASH: linalg.generic {{.*}} ins(%arg2 : tensor<2x128x128xf32>) outs(%{{.*}} : tensor<2x128x128xbf16>)
// FLASH: %[[QB:.*]] = memref.alloc() : memref<2x128x128xbf16>
// FLASH-NEXT: bufferization.materialize_in_destination %[[Q16]] in restrict writable %[[QB]]
// FLASH-NEXT: %[[Q16T:.*]] = bufferization.to_tensor %[[QB]] restrict : memref<2x128x128xbf16>
// FLASH-COUNT-2: bufferization.materialize_in_destination %{{.*}} in restrict writable
// FLASH: %[[OUT:.*]] = memref.alloc() : memref<2x128x128xbf16>
// FLASH: %[[LSE:.*]] = memref.alloc() : memref<2x2x128xf32>
// FLASH: gpu.launch blocks({{.*}}) in (%{{.*}} = %c8, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[QT:.*]] : memref<64x64xbf16, #gpu.address_space<workgroup>>, %[[KT:.*]] : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
// FLASH-COUNT-4: nvgpu.device_async_copy %[[QB]][{{.*}}], %[[QT]]
// FLASH-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[KT]]
// FLASH-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[VT]]
// FLASH: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// FLASH-NEXT: gpu.barrier
// FLASH-COUNT-4: nvgpu.ldmatrix %[[QT]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// FLASH: scf.for {{.*}} -> ({{((f32, ){36})}}!nvgpu.device.async.token)
// FLASH: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// FLASH-NEXT: gpu.barrier
// FLASH: scf.if %{{.*}} -> (!nvgpu.device.async.token)
// FLASH-COUNT-8: nvgpu.device_async_copy
// FLASH: } else {
// FLASH: nvgpu.ldmatrix %[[KT]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// FLASH-COUNT-32: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// FLASH: arith.cmpi sgt
// FLASH: scf.if %{{.*}} -> ({{((f32, ){31})}}f32) {
// FLASH: arith.cmpi sgt
// FLASH: arith.select
// FLASH: } else {
// FLASH: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// FLASH: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// FLASH: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// FLASH: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// FLASH: nvgpu.ldmatrix %[[VT]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// FLASH-COUNT-32: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// FLASH-NOT: llvm.call_intrinsic "llvm.nvvm.mma
// FLASH: scf.yield
// FLASH: gpu.shuffle  xor
// FLASH: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// FLASH: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// FLASH: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64, tfc.flash_row_store} : vector<2xbf16>, !llvm.ptr<1>
// FLASH: memref.store %{{.*}}, %[[LSE]][{{.*}}] : memref<2x2x128xf32>
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: %[[O16:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// FLASH: %[[O:.*]] = linalg.generic {{.*}} ins(%[[O16]] : tensor<2x128x128xbf16>) outs(%{{.*}} : tensor<2x128x128xf32>)
// FLASH: arith.extf %{{.*}} : bf16 to f32
// FLASH: %[[L:.*]] = bufferization.to_tensor %[[LSE]] restrict writable
// FLASH-NOT: scf.forall
// FLASH: %[[D:.*]] = linalg.generic {indexing_maps = [#[[DROWS]], #[[DROWS]], #[[DSUMS]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x128x2x64xf32>, tensor<2x128x2x64xbf16>) outs(%{{.*}} : tensor<2x2x128xf32>)
// FLASH: %[[DO16:.*]] = linalg.generic {{.*}} ins(%arg3 : tensor<2x128x128xf32>) outs(%{{.*}} : tensor<2x128x128xbf16>)
// FLASH: %[[DQ:.*]] = memref.alloc() : memref<2x128x128xf32>
// FLASH: %[[DK:.*]] = memref.alloc() : memref<2x128x128xf32>
// FLASH: %[[DV:.*]] = memref.alloc() : memref<2x128x128xf32>
// FLASH: bufferization.to_memref %[[Q16T]] read_only
// FLASH: bufferization.to_memref %[[DO16]] read_only
// FLASH: %[[LB:.*]] = bufferization.to_memref %[[L]] read_only
// FLASH: %[[DB:.*]] = bufferization.to_memref %[[D]] read_only
// FLASH: gpu.launch blocks({{.*}}) in (%{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads
// FLASH: memref.load %[[LB]]
// FLASH: memref.load %[[DB]]
// FLASH: scf.for {{.*}} -> ({{((f32, ){32})}}!nvgpu.device.async.token)
// FLASH-COUNT-96: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// FLASH-NOT: llvm.call_intrinsic "llvm.nvvm.mma
// FLASH: scf.yield
// FLASH: llvm.store
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: gpu.launch blocks({{.*}}) in (%{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads
// FLASH: scf.for {{.*}} -> ({{((f32, ){64})}}!nvgpu.device.async.token)
// FLASH-COUNT-32: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// FLASH: arith.cmpi slt
// FLASH: scf.if
// FLASH: arith.cmpi slt
// FLASH: memref.load %[[LB2:.*]][
// FLASH-COUNT-96: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// FLASH-NOT: llvm.call_intrinsic "llvm.nvvm.mma
// FLASH: scf.yield
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: %[[GQ:.*]] = bufferization.to_tensor %[[DQ]] restrict writable
// FLASH: %[[GK:.*]] = bufferization.to_tensor %[[DK]] restrict writable
// FLASH: %[[GV:.*]] = bufferization.to_tensor %[[DV]] restrict writable
// FLASH-NOT: scf.forall
// FLASH: return %[[O]], %[[GQ]], %[[GK]], %[[GV]]
func.func @flash_forward_and_grad(%q: tensor<2x128x128xf32>, %k: tensor<2x128x128xf32>,
                                  %v: tensor<2x128x128xf32>, %g: tensor<2x128x128xf32>)
    -> (tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      : tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32> -> tensor<2x128x128xf32>
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32>
      -> tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32>
  return %a, %dq, %dk, %dv : tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32>
}

// -----

// A head of 128 channels takes K and V tiles of 32 keys (the Q tile and
// both stages then fill the 48 KiB of static shared memory). Without the
// causal mask every key tile is visited and nothing compares positions;
// a padding key's score is -inf, from the mask read in the kernel. 64
// queries against 128 keys: one block per (batch, head).

// FLASH-LABEL: func.func @flash_padded_cross
// FLASH: %[[MASK:.*]] = bufferization.to_memref %arg3 read_only : memref<1x128xf32>
// FLASH: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) workgroup(%{{.*}} : memref<64x128xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2x32x128xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2x32x128xbf16, #gpu.address_space<workgroup>>)
// FLASH: scf.for %{{.*}} = %{{.*}} to %c4{{.*}} step
// FLASH-NOT: arith.cmpi sgt
// FLASH: memref.load %[[MASK]]
// FLASH: arith.cmpf une
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 32, 128>}
// FLASH-NOT: scf.forall
// FLASH: return
func.func @flash_padded_cross(%q: tensor<1x64x128xf32>, %k: tensor<1x128x128xf32>,
                              %v: tensor<1x128x128xf32>, %m: tensor<1x128xf32>)
    -> tensor<1x64x128xf32> {
  %a = tfc.attention #tfc.softmax<> heads 1 %q, %k, %v
      mask(%m : tensor<1x128xf32>)
      : tensor<1x64x128xf32>, tensor<1x128x128xf32>, tensor<1x128x128xf32> -> tensor<1x64x128xf32>
  return %a : tensor<1x64x128xf32>
}

// -----

// A gradient of heads of 128 channels stays the row loops (the key
// blocks' kernel would hold more than its registers), which read the
// forward kernel's log-sum-exp and the same bf16 operands, widened.

// FLASH-LABEL: func.func @flash_forward_rows_grad
// FLASH: linalg.generic {{.*}} ins(%arg0 : tensor<1x64x128xf32>) outs(%{{.*}} : tensor<1x64x128xbf16>)
// FLASH: %[[Q16:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<1x64x128xbf16>
// FLASH: gpu.launch
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 32, 128>}
// FLASH: %[[L:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<1x1x64xf32>
// FLASH-NOT: gpu.launch
// FLASH: scf.forall
// FLASH: vector.transfer_read %[[Q16]][{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1x64x128xbf16>, vector<128xbf16>
// FLASH: arith.extf %{{.*}} : vector<128xbf16> to vector<128xf32>
// FLASH: tensor.extract %[[L]]
// FLASH-NOT: math.log
// FLASH: return
func.func @flash_forward_rows_grad(%q: tensor<1x64x128xf32>, %k: tensor<1x64x128xf32>,
                                   %v: tensor<1x64x128xf32>, %g: tensor<1x64x128xf32>)
    -> (tensor<1x64x128xf32>, tensor<1x64x128xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %v
      : tensor<1x64x128xf32>, tensor<1x64x128xf32>, tensor<1x64x128xf32> -> tensor<1x64x128xf32>
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 1 %q, %k, %v
      grad %g : tensor<1x64x128xf32>, tensor<1x64x128xf32>, tensor<1x64x128xf32>
      -> tensor<1x64x128xf32>, tensor<1x64x128xf32>, tensor<1x64x128xf32>
  return %a, %dq : tensor<1x64x128xf32>, tensor<1x64x128xf32>
}

// -----

// Heads of 128 channels at lengths that 64 does not divide (their
// gradient is the row loops', which read the forward's unpadded tensors),
// or a head dimension of 8, keep the row loops.

// FLASH-LABEL: func.func @flash_not_taken
// FLASH-NOT: gpu.launch
// FLASH: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 96)
// FLASH: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, 64)
// FLASH-NOT: gpu.launch
// FLASH: return
func.func @flash_not_taken(%q: tensor<1x96x128xf32>, %k: tensor<1x96x128xf32>,
                           %v: tensor<1x96x128xf32>, %q8: tensor<1x64x64xf32>)
    -> (tensor<1x96x128xf32>, tensor<1x64x64xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %v
      : tensor<1x96x128xf32>, tensor<1x96x128xf32>, tensor<1x96x128xf32> -> tensor<1x96x128xf32>
  %b = tfc.attention #tfc.softmax<causal> heads 8 %q8, %q8, %q8
      : tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32> -> tensor<1x64x64xf32>
  return %a, %b : tensor<1x96x128xf32>, tensor<1x64x64xf32>
}

// -----

// A causal attention at 96 positions (heads of 32 channels): the bf16
// Q, K and V are padded with zero rows to 128, the kernels run at 128
// (2 query blocks x 2 heads), nothing masks the padding keys (they come
// after every real query), and the output is sliced back to 96 rows. The
// gradient pads the output gradient (so the padding rows' D is zero) and
// slices dQ, dK and dV back.

// FLASH-LABEL: func.func @flash_padded
// FLASH-COUNT-3: tensor.pad %{{.*}} low[0, 0, 0] high[0, 32, 0]
// FLASH-NOT: tensor<1x128xf32>
// FLASH: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1)
// FLASH: tensor.extract_slice %{{.*}}[0, 0, 0] [1, 96, 64] [1, 1, 1] : tensor<1x128x64xbf16> to tensor<1x96x64xbf16>
// FLASH: tensor<1x96x64xf32> to tensor<1x128x64xf32>
// FLASH: gpu.launch
// FLASH: gpu.launch
// FLASH-COUNT-3: tensor.extract_slice %{{.*}}[0, 0, 0] [1, 96, 64] [1, 1, 1] : tensor<1x128x64xf32> to tensor<1x96x64xf32>
func.func @flash_padded(%q: tensor<1x96x64xf32>, %k: tensor<1x96x64xf32>,
                        %v: tensor<1x96x64xf32>, %g: tensor<1x96x64xf32>)
    -> (tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      : tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32> -> tensor<1x96x64xf32>
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32>
      -> tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32>
  return %a, %dq, %dk, %dv : tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32>
}

// -----

// Not causal, without a mask: a real query could attend the padding keys,
// so the kernel takes a key mask, ones for the 96 real keys padded with
// zeros to 128.

// FLASH-LABEL: func.func @flash_padded_keys
// FLASH: %[[ONES:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x96xf32>)
// FLASH: tensor.pad %[[ONES]] low[0, 0] high[0, 32]
// FLASH: tensor<1x96xf32> to tensor<1x128xf32>
// FLASH: gpu.launch
func.func @flash_padded_keys(%q: tensor<1x96x64xf32>) -> tensor<1x96x64xf32> {
  %a = tfc.attention #tfc.softmax<> heads 2 %q, %q, %q
      : tensor<1x96x64xf32>, tensor<1x96x64xf32>, tensor<1x96x64xf32> -> tensor<1x96x64xf32>
  return %a : tensor<1x96x64xf32>
}

// -----

// A causal Longformer window of 32 keys (offsets -31..0), 256 positions,
// without global tokens: the same three kernels, each visiting only the
// tiles that meet the band. The forward's query block at o takes the key
// tiles from max(o - 31, 0) / 64 to min((o + 64 + 63) / 64, 4); the key
// block's kernel the query tiles up to min((o + 64 + 31 + 63) / 64, 4).
// A tile whose offsets for some row of the warp fall outside -31..0 is
// masked there (`scf.if` on the warp), each score by both bounds.

// FLASH-LABEL: func.func @flash_longformer
// FLASH: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads
// FLASH: %[[FIRST:.*]] = arith.subi %{{.*}}, %c31{{.*}} : index
// FLASH: arith.maxsi %[[FIRST]], %c0{{.*}} : index
// FLASH: %[[END:.*]] = arith.addi %{{.*}}, %c127{{.*}} : index
// FLASH: %[[ENDTILE:.*]] = arith.divui %[[END]], %c64{{.*}} : index
// FLASH: arith.minui %[[ENDTILE]], %c4{{.*}} : index
// FLASH: scf.for
// FLASH-COUNT-32: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// FLASH: arith.cmpi slt
// FLASH: arith.cmpi sgt
// FLASH: arith.ori
// FLASH: scf.if %{{.*}} -> ({{((f32, ){31})}}f32) {
// FLASH: arith.cmpi slt, %{{.*}}, %c-31{{.*}} : index
// FLASH: arith.cmpi sgt, %{{.*}}, %c0{{.*}} : index
// FLASH: arith.ori
// FLASH: arith.select
// FLASH: } else {
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: gpu.launch
// FLASH: arith.minui %{{.*}}, %c4{{.*}} : index
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: gpu.launch
// FLASH: arith.addi %{{.*}}, %c158{{.*}} : index
// FLASH: arith.minui %{{.*}}, %c4{{.*}} : index
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH-NOT: tfc.attention
// FLASH-NOT: scf.forall
// FLASH: return
func.func @flash_longformer(%q: tensor<1x256x64xf32>, %k: tensor<1x256x64xf32>,
                            %v: tensor<1x256x64xf32>, %g: tensor<1x256x64xf32>)
    -> (tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>) {
  %a = tfc.attention #tfc.longformer<window = 32, dilation = 1, global = [], causal> heads 1 %q, %k, %v
      : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32> -> tensor<1x256x64xf32>
  %dq, %dk, %dv = tfc.attention_grad #tfc.longformer<window = 32, dilation = 1, global = [], causal> heads 1 %q, %k, %v
      grad %g : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>
      -> tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>
  return %a, %dq, %dk, %dv : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>
}

// -----

// A non-causal window of 8 steps, 2 apart (offsets -8..8, even): every
// visited tile is masked, with no branch, each score also by its offset's
// remainder by 2; padding keys by the mask. Without flash-forward, and
// with more than 8 global tokens, a Longformer attention is left to
// tfc-blocked-attention.

// CHECK-LABEL: func.func @flash_longformer_dilated
// CHECK-COUNT-2: tfc.attention #tfc.longformer
// FLASH-LABEL: func.func @flash_longformer_dilated
// FLASH: gpu.launch
// FLASH: arith.maxsi
// FLASH: arith.minui
// FLASH: scf.for
// FLASH-NOT: scf.if %{{.*}} -> ({{((f32, ){31})}}f32)
// FLASH: arith.cmpi slt, %{{.*}}, %c-8{{.*}} : index
// FLASH: arith.cmpi sgt, %{{.*}}, %c8{{.*}} : index
// FLASH: arith.remsi %{{.*}}, %c2{{.*}} : index
// FLASH: arith.cmpi ne
// FLASH: arith.select
// FLASH: arith.cmpf une
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: tfc.attention #tfc.longformer<window = 8, dilation = 2, global = [0, 1, 2, 3, 4, 5, 6, 7, 8]>
// FLASH: return
func.func @flash_longformer_dilated(%q: tensor<2x128x128xf32>, %k: tensor<2x128x128xf32>,
                                    %v: tensor<2x128x128xf32>, %m: tensor<2x128xf32>)
    -> (tensor<2x128x128xf32>, tensor<2x128x128xf32>) {
  %a = tfc.attention #tfc.longformer<window = 8, dilation = 2, global = []> heads 2 %q, %k, %v
      mask(%m : tensor<2x128xf32>)
      : tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32> -> tensor<2x128x128xf32>
  %b = tfc.attention #tfc.longformer<window = 8, dilation = 2, global = [0, 1, 2, 3, 4, 5, 6, 7, 8]> heads 2 %q, %k, %v
      mask(%m : tensor<2x128xf32>) global(%q, %k, %v : tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32>)
      : tensor<2x128x128xf32>, tensor<2x128x128xf32>, tensor<2x128x128xf32> -> tensor<2x128x128xf32>
  return %a, %b : tensor<2x128x128xf32>, tensor<2x128x128xf32>
}

// -----

// A causal window of 32 with global tokens 0 and 70 (key tiles 0 and 1 of
// 64): each query block visits, before its band's tiles, those of the
// global columns outside them that its rows attend (70 only from the
// block of rows 64..127 on), by a counter from 0 that selects its tile;
// a masked score is kept where its key is global and at or before its
// query. The global rows are replaced by their one-row attentions through
// the global projections (row 0, then row 70). The gradient zeroes the
// output gradient's global rows before D and the kernels; each key block
// that holds a global column streams every query tile from its own on
// (the end tile 4, the last); the global projections' gradients are those
// of the one-row attentions.

// FLASH-LABEL: func.func @flash_longformer_global
// FLASH: gpu.launch
// FLASH: arith.cmpi ule, %c70{{.*}}, %{{.*}} : index
// FLASH: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1{{.*}} iter_args(
// FLASH: arith.cmpi eq, %{{.*}}, %c70{{.*}} : index
// FLASH: arith.cmpi sle, %{{.*}}, %c0{{.*}} : index
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 1, 1, 64]
// FLASH: tensor.insert_slice %{{.*}} into %{{.*}}[0, 70, 0, 0] [1, 1, 1, 64]
// FLASH: %[[LOCAL:.*]] = linalg.generic {{.*}} ins(%arg3, %{{.*}} : tensor<1x256x64xf32>, tensor<256xi1>)
// FLASH: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// FLASH: tensor.collapse_shape %[[LOCAL]]
// FLASH: gpu.launch
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: gpu.launch
// FLASH: arith.cmpi ule, %{{.*}}, %c70{{.*}} : index
// FLASH: arith.select %{{.*}}, %c4{{.*}}, %{{.*}} : index
// FLASH: arith.cmpi sge, %{{.*}}, %c0{{.*}} : index
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH-NOT: tfc.attention
// FLASH: return
func.func @flash_longformer_global(%q: tensor<1x256x64xf32>, %k: tensor<1x256x64xf32>,
                                   %v: tensor<1x256x64xf32>, %g: tensor<1x256x64xf32>)
    -> (tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>,
        tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>) {
  %a = tfc.attention #tfc.longformer<window = 32, dilation = 1, global = [0, 70], causal> heads 1 %q, %k, %v
      global(%k, %v, %q : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>)
      : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32> -> tensor<1x256x64xf32>
  %dq, %dk, %dv, %dgq, %dgk, %dgv = tfc.attention_grad #tfc.longformer<window = 32, dilation = 1, global = [0, 70], causal> heads 1 %q, %k, %v
      global(%k, %v, %q : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>)
      grad %g : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>
      -> tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>
  return %a, %dq, %dk, %dv, %dgq, %dgk, %dgv : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x256x64xf32>
}

// -----

// Non-causal, the global rows are row loops: the global query's row 0
// gathered as [1, 1, 64], one thread per (batch, head, global row) over
// every key of the global key and value, its row written over the
// kernel's row 0; in the gradient the output gradient's row 0 is gathered
// too, the query rows' and key rows' loops give the global projections'
// gradients, the global query's scattered into zeros at row 0.

// FLASH-LABEL: func.func @flash_longformer_global_rows
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: %[[GQ:.*]] = tensor.extract_slice %arg1[0, 0, 0] [1, 1, 64] [1, 1, 1] : tensor<1x128x64xf32> to tensor<1x1x64xf32>
// FLASH: %[[ROWS:.*]] = tensor.insert_slice %[[GQ]] into %{{.*}}[0, 0, 0] [1, 1, 64] [1, 1, 1] : tensor<1x1x64xf32> into tensor<1x1x64xf32>
// FLASH: %[[OUT:.*]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 1) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x1x64xf32>)
// FLASH: vector.transfer_read %[[ROWS]]
// FLASH: scf.for
// FLASH: vector.transfer_read %arg2
// FLASH: vector.transfer_read %arg0
// FLASH: %[[ROW:.*]] = tensor.extract_slice %[[OUT]][0, 0, 0] [1, 1, 64] [1, 1, 1]
// FLASH: %[[A:.*]] = tensor.insert_slice %[[ROW]] into %{{.*}}[0, 0, 0] [1, 1, 64] [1, 1, 1] : tensor<1x1x64xf32> into tensor<1x128x64xf32>
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: } {tfc.flash_attention_tile = array<i64: 64, 64, 64>}
// FLASH: tensor.extract_slice %arg1[0, 0, 0] [1, 1, 64]
// FLASH: tensor.extract_slice %arg3[0, 0, 0] [1, 1, 64]
// FLASH: %[[QROWS:.*]]:3 = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 1)
// FLASH: %[[KROWS:.*]]:2 = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 128)
// FLASH: %[[DGQ:.*]] = tensor.extract_slice %[[QROWS]]#0[0, 0, 0] [1, 1, 64]
// FLASH: %[[DGQS:.*]] = tensor.insert_slice %[[DGQ]] into %{{.*}}[0, 0, 0] [1, 1, 64] [1, 1, 1] : tensor<1x1x64xf32> into tensor<1x128x64xf32>
// FLASH: return %[[A]], %{{.*}}, %{{.*}}, %{{.*}}, %[[DGQS]], %[[KROWS]]#0, %[[KROWS]]#1
func.func @flash_longformer_global_rows(%q: tensor<1x128x64xf32>, %k: tensor<1x128x64xf32>,
                                        %v: tensor<1x128x64xf32>, %g: tensor<1x128x64xf32>)
    -> (tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>,
        tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>) {
  %a = tfc.attention #tfc.longformer<window = 16, dilation = 1, global = [0]> heads 1 %q, %k, %v
      global(%k, %v, %q : tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>)
      : tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32> -> tensor<1x128x64xf32>
  %dq, %dk, %dv, %dgq, %dgk, %dgv = tfc.attention_grad #tfc.longformer<window = 16, dilation = 1, global = [0]> heads 1 %q, %k, %v
      global(%k, %v, %q : tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>)
      grad %g : tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>
      -> tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>
  return %a, %dq, %dk, %dv, %dgq, %dgk, %dgv : tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32>
}
