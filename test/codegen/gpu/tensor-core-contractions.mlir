// RUN: tfc-opt %s -split-input-file --tfc-gpu-tensor-core-contractions | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-gpu-tensor-core-contractions="stages=2 split-k=0" | FileCheck %s --check-prefix=TWO
// RUN: tfc-opt %s -split-input-file --tfc-gpu-tensor-core-contractions=warpgroup-mma=1 | FileCheck %s --check-prefix=WG

// A projection X W^T, [4096, 256] x [768, 256]^T, after a fill of zeros:
// 128 x 128 tiles would give 192 blocks, fewer than 264, so 128 x 64
// (384 blocks of 4 warps, each warp 64 x 32 outputs: 4 x 4 mma tiles).
// Four stages of 128 x 32 and 64 x 32 bf16 tiles fit in 48 KiB. Both
// operands have k innermost, as the mma fragments want them: ldmatrix
// without .trans. The fill is dropped and the accumulators start at zero.
// Three tiles are copied ahead (6 copies of 16 bytes per thread each);
// each of the 8 k steps waits until at most 2 groups are pending, meets
// the barrier, issues the next tile's copies (when there is one) and
// makes 2 x (4 + 2) ldmatrix and 2 x 16 mma. The 64 accumulators of a
// thread are stored once, two adjacent columns per store (an 8-byte
// store to the output's address: vector.store would be split in two).
// CHECK-LABEL: func.func @projection
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c384, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[A:.*]] : memref<4x128x32xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<4x64x32xbf16, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.load
// CHECK: scf.if %{{.*}} -> (!nvgpu.device.async.token)
// CHECK-COUNT-4: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[A]][%{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1}
// CHECK-COUNT-2: nvgpu.device_async_copy %arg1[%{{.*}}, %{{.*}}], %[[B]][%{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: } else {
// CHECK: nvgpu.device_async_create_group{{ *$}}
// CHECK: scf.if
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args(
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-6: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix %[[A]][%{{.*}}, %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<4x128x32xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-COUNT-3: nvgpu.ldmatrix %[[A]]
// CHECK-COUNT-2: nvgpu.ldmatrix %[[B]][%{{.*}}, %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"(%{{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-15: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-COUNT-6: nvgpu.ldmatrix
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: scf.yield
// CHECK: memref.extract_aligned_pointer_as_index %arg2 : memref<4096x768xf32> -> index
// CHECK: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-COUNT-31: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.terminator
// CHECK-NEXT: } {tfc.tensor_core_tile = array<i64: 128, 64, 32, 4>}
// CHECK-NOT: linalg.generic
// On Hopper's warpgroup mma (k = 256, a multiple of 64): the same 128 x
// 64 tiles, k steps of 64 through 4 stages of 128-byte swizzled tiles,
// (128 + 64) x 64 bf16 each, in 96 KiB of dynamic shared memory plus
// 1024 bytes from which they start at a 1024-byte boundary (a 1-D view
// of all the stages). Each k step waits for its tile's copies, fences
// them for the async proxy and meets a barrier, then issues 2 x 4 wgmma
// (two 64-row halves, 4 k steps of 16; both operands K-major: A "row",
// B "col") as one group, waits for the step before (wait_group 1) and,
// after a barrier, copies 3 tiles ahead into the stage that step used
// (8 copies of the 128 x 64 tile per thread, 4 of the 64 x 64 one). The
// accumulators start as two structs of 32 zeros and are stored after a
// wait_group 0 like the mma.sync kernel's, 32 stores of 2 per thread.
// WG-LABEL: func.func @projection
// WG: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c384, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c99328_i32 {
// WG: %[[RAW:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// WG: %[[TILES:.*]] = memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<49152xbf16, #gpu.address_space<workgroup>>
// WG-COUNT-8: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[TILES]][%{{.*}}], 8 {bypassL1}
// WG-COUNT-4: nvgpu.device_async_copy %arg1[%{{.*}}, %{{.*}}], %[[TILES]][%{{.*}}], 8 {bypassL1}
// WG: llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
// WG: scf.for %{{.*}} = %{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args(
// WG-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// WG-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WG-NEXT: gpu.barrier
// WG: nvvm.wgmma.fence.aligned
// WG-COUNT-8: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// WG-NEXT: nvvm.wgmma.commit.group.sync.aligned
// WG-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// WG-NEXT: gpu.barrier
// WG: scf.if
// WG-COUNT-12: nvgpu.device_async_copy
// WG: scf.yield
// WG: nvvm.wgmma.wait.group.sync.aligned 0
// WG-COUNT-32: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// WG-NOT: llvm.store
// WG: } {tfc.tensor_core_tile = array<i64: 128, 64, 64, 4>, tfc.warpgroup_mma}
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @projection(%x: memref<4096x256xbf16>, %w: memref<768x256xbf16>, %y: memref<4096x768xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4096x768xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4096x256xbf16>, memref<768x256xbf16>) outs(%y : memref<4096x768xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A weight gradient dY^T X, k the 512 tokens: [512, 256]^T x [512, 128],
// accumulated into the output. Its 8 tiles of 64 x 64 are too few blocks,
// so k is split in 2 parts of 256 (a part is at least 256 long): the
// operands are viewed as [2, 256, ...], the parts go to a buffer of
// partial outputs filled with zeros (the fill folded into the kernel, 16
// blocks), then one element-wise op adds both parts to the output, in
// order, reading part p through the map (m, n) -> (p, m, n) of the one
// buffer (which its kernel then takes once). Both operands have their
// rows innermost, not k: [k][rows] tiles read by ldmatrix.trans.
// CHECK-DAG: #[[PART0:.*]] = affine_map<(d0, d1) -> (0, d0, d1)>
// CHECK-DAG: #[[PART1:.*]] = affine_map<(d0, d1) -> (1, d0, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK: %[[DY:.*]] = memref.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [2, 256, 256] : memref<512x256xbf16> into memref<2x256x256xbf16>
// CHECK: %[[X:.*]] = memref.expand_shape %arg1 {{\[}}[0, 1], [2]] output_shape [2, 256, 128] : memref<512x128xbf16> into memref<2x256x128xbf16>
// CHECK: %[[PARTS:.*]] = memref.alloc() : memref<2x256x128xf32>
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c16, {{.*}} workgroup(%[[A:.*]] : memref<4x32x64xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<4x32x64xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %[[DY]][%{{.*}}, %{{.*}}, %{{.*}}], %[[A]]
// CHECK: nvgpu.device_async_copy %[[X]][%{{.*}}, %{{.*}}, %{{.*}}], %[[B]]
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %[[A]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: nvgpu.ldmatrix %[[B]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: memref.extract_aligned_pointer_as_index %[[PARTS]] : memref<2x256x128xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK: } {tfc.tensor_core_tile = array<i64: 64, 64, 32, 4>}
// CHECK: linalg.generic {indexing_maps = [#[[PART0]], #[[PART1]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[PARTS]], %[[PARTS]] : {{.*}}) outs(%arg2 : memref<256x128xf32>)
// CHECK-NEXT: ^bb0(%[[IN0:.*]]: f32, %[[IN1:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[OUT]], %[[IN0]] : f32
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[S0]], %[[IN1]] : f32
// CHECK-NEXT: linalg.yield %[[S1]] : f32
//
// Two stages, without the split: 8 blocks that each load their 32
// accumulators (a warp's 32 x 32 outputs) from the output.
// On the warpgroup mma, each part (k = 256) in 64 x 64 tiles: both
// operands M- or N-major, so both wgmma operands are transposed (A "col",
// B "row").
// WG-LABEL: func.func @weight_gradient
// WG: gpu.launch {{.*}} in (%{{.*}} = %c16, {{.*}} dynamic_shared_memory_size %c66560_i32
// WG: scf.for
// WG-COUNT-4: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// WG: } {tfc.tensor_core_tile = array<i64: 64, 64, 64, 4>, tfc.warpgroup_mma}
// TWO-LABEL: func.func @weight_gradient
// TWO-NOT: memref.expand_shape
// TWO: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c8, {{.*}} workgroup(%{{.*}} : memref<2x32x64xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2x32x64xbf16, #gpu.address_space<workgroup>>)
// TWO-COUNT-32: memref.load %arg2
// TWO: scf.for %{{.*}} = %{{.*}} to %c16{{.*}} step
// TWO: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// TWO: memref.extract_aligned_pointer_as_index %arg2
// TWO-COUNT-16: llvm.store
// TWO: } {tfc.tensor_core_tile = array<i64: 64, 64, 32, 2>}
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @weight_gradient(%dy: memref<512x256xbf16>, %x: memref<512x128xbf16>, %dw: memref<256x128xf32>) {
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : memref<512x256xbf16>, memref<512x128xbf16>) outs(%dw : memref<256x128xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two projections, then each one's bias added and the sum rounded to bf16
// into a buffer allocated after them (a bf16 build's Q and K): each kernel
// applies its epilogue to its accumulators (the bias loaded per column)
// and stores the bf16 results, two per 4-byte store; the epilogues, the
// float32 buffers and their fills are gone, and the bf16 buffers are
// allocated before the kernels. The second projection's epilogue comes
// after the first's, which neither reads nor writes its buffers.
// CHECK-LABEL: func.func @biased_projections
// CHECK: %[[Q:.*]] = memref.alloc() : memref<1024x256xbf16>
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: memref.load %arg2[%{{.*}}] : memref<256xf32>
// CHECK: arith.addf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.extract_aligned_pointer_as_index %[[Q]] : memref<1024x256xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK-NOT: vector<2xf32>, !llvm.ptr<1>
// CHECK: gpu.terminator
// CHECK: %[[K:.*]] = memref.alloc() : memref<1024x256xbf16>
// CHECK: gpu.launch
// CHECK: memref.load %arg4[%{{.*}}] : memref<256xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[K]] : memref<1024x256xbf16>
// CHECK: gpu.terminator
// CHECK-NOT: linalg
// CHECK: return %[[Q]], %[[K]]
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
func.func @biased_projections(%x: memref<1024x256xbf16>, %wq: memref<256x256xbf16>, %bq: memref<256xf32>,
                              %wk: memref<256x256xbf16>, %bk: memref<256xf32>)
    -> (memref<1024x256xbf16>, memref<1024x256xbf16>) {
  %zero = arith.constant 0.0 : f32
  %tq = memref.alloc() : memref<1024x256xf32>
  linalg.fill ins(%zero : f32) outs(%tq : memref<1024x256xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wq : memref<1024x256xbf16>, memref<256x256xbf16>) outs(%tq : memref<1024x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %tk = memref.alloc() : memref<1024x256xf32>
  linalg.fill ins(%zero : f32) outs(%tk : memref<1024x256xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wk : memref<1024x256xbf16>, memref<256x256xbf16>) outs(%tk : memref<1024x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc() : memref<1024x256xbf16>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tq, %bq : memref<1024x256xf32>, memref<256xf32>) outs(%q : memref<1024x256xbf16>) {
  ^bb0(%in: f32, %bias: f32, %out: bf16):
    %v = arith.addf %in, %bias : f32
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  %k = memref.alloc() : memref<1024x256xbf16>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tk, %bk : memref<1024x256xf32>, memref<256xf32>) outs(%k : memref<1024x256xbf16>) {
  ^bb0(%in: f32, %bias: f32, %out: bf16):
    %v = arith.addf %in, %bias : f32
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %tq : memref<1024x256xf32>
  memref.dealloc %tk : memref<1024x256xf32>
  return %q, %k : memref<1024x256xbf16>, memref<1024x256xbf16>
}

// -----

// An output projection whose bias and residual are added in place (the
// float32 residual stream, which later ops read): the kernel stores the
// epilogue's sums, float32 pairs, into the output itself, and only those
// (16 per thread: a 64 x 64 tile, 32 x 32 per warp).
// An epilogue whose input an op in between writes stays an op of its own.
// CHECK-LABEL: func.func @residual_projection
// CHECK: gpu.launch
// CHECK: memref.load %arg3[%{{.*}}, %{{.*}}] : memref<1024x256xf32>
// CHECK: memref.load %arg2[%{{.*}}] : memref<256xf32>
// CHECK: memref.extract_aligned_pointer_as_index %arg4 : memref<1024x256xf32>
// CHECK-COUNT-16: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<256xf32>)
// CHECK: linalg.generic
// CHECK: return
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
func.func @residual_projection(%x: memref<1024x256xbf16>, %w: memref<256x256xbf16>, %bias: memref<256xf32>,
                               %res: memref<1024x256xf32>, %y: memref<1024x256xf32>, %z: memref<1024x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1024x256xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1024x256xbf16>, memref<256x256xbf16>) outs(%y : memref<1024x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%res, %bias : memref<1024x256xf32>, memref<256xf32>) outs(%y : memref<1024x256xf32>) {
  ^bb0(%r: f32, %b: f32, %out: f32):
    %v = arith.addf %out, %b : f32
    %s = arith.addf %r, %v : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%z : memref<1024x256xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1024x256xbf16>, memref<256x256xbf16>) outs(%z : memref<1024x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%bias : memref<256xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%res, %bias : memref<1024x256xf32>, memref<256xf32>) outs(%z : memref<1024x256xf32>) {
  ^bb0(%r: f32, %b: f32, %out: f32):
    %v = arith.addf %out, %b : f32
    %s = arith.addf %r, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A projection whose float32 output, a buffer of its own, the next op only
// rounds to bf16 (a bf16 build's activation): the kernel stores the
// accumulators rounded, two bf16 per 4-byte store, into the bf16 buffer; the
// float32 buffer, its fill, the rounding op and the deallocation are gone.
// CHECK-LABEL: func.func @rounded_projection
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: %[[PAIR:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[PAIR]] : vector<2xf32> to vector<2xbf16>
// CHECK: memref.extract_aligned_pointer_as_index %arg2 : memref<1024x256xbf16>
// CHECK: llvm.store %[[ROUNDED]], %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK-COUNT-15: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK: gpu.terminator
// CHECK-NOT: linalg
// CHECK-NOT: memref.dealloc
// CHECK: return
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @rounded_projection(%x: memref<1024x256xbf16>, %w: memref<256x256xbf16>, %y: memref<1024x256xbf16>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<1024x256xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<1024x256xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1024x256xbf16>, memref<256x256xbf16>) outs(%t : memref<1024x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<1024x256xf32>) outs(%y : memref<1024x256xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %t : memref<1024x256xf32>
  return
}

// -----

// A bf16 build's first feed-forward projection: the bias added in place,
// then a bf16 copy of the result and an activation of it through a 3-D
// view ([2, 512, 1024] over the [1024, 1024] output), rounded to bf16.
// Both are consumers that the kernel applies as it stores: per pair of
// columns, the biased values, their copy, and the activation at the row
// spread over the view's outer loops (row / 512, row % 512). The float32
// output, which nothing else reads, is never stored; it, its fill, its
// view, the three element-wise ops and the deallocation are gone, and the
// consumers' buffers are allocated before the kernel.
// CHECK-LABEL: func.func @activated_projection
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<1024x1024xbf16>
// CHECK: %[[ACT:.*]] = memref.alloc() : memref<2x512x1024xbf16>
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: memref.load %arg2[%{{.*}}] : memref<1024xf32>
// CHECK: %[[LO:.*]] = arith.addf
// CHECK: memref.extract_aligned_pointer_as_index %[[COPY]] : memref<1024x1024xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK: %[[INNER:.*]] = arith.remui %[[ROW:.*]], %c512
// CHECK: %[[OUTER:.*]] = arith.divui %[[ROW]], %c512
// CHECK: arith.mulf %[[LO]], %[[LO]] : f32
// CHECK: arith.muli %[[INNER]], %c2048
// CHECK: arith.muli %[[OUTER]], %c1048576
// CHECK: memref.extract_aligned_pointer_as_index %[[ACT]] : memref<2x512x1024xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK-NOT: vector<2xf32>, !llvm.ptr<1>
// CHECK: gpu.terminator
// CHECK-NOT: linalg
// CHECK-NOT: memref.dealloc
// CHECK: return %[[COPY]], %[[ACT]]
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#id3 = affine_map<(b, s, n) -> (b, s, n)>
func.func @activated_projection(%x: memref<1024x256xbf16>, %w: memref<1024x256xbf16>, %bias: memref<1024xf32>)
    -> (memref<1024x1024xbf16>, memref<2x512x1024xbf16>) {
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<1024x1024xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1024x256xbf16>, memref<1024x256xbf16>) outs(%h : memref<1024x1024xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<1024xf32>) outs(%h : memref<1024x1024xf32>) {
  ^bb0(%b: f32, %out: f32):
    %v = arith.addf %out, %b : f32
    linalg.yield %v : f32
  }
  %hb = memref.alloc() : memref<1024x1024xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<1024x1024xf32>) outs(%hb : memref<1024x1024xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %h3 = memref.expand_shape %h [[0, 1], [2]] output_shape [2, 512, 1024] : memref<1024x1024xf32> into memref<2x512x1024xf32>
  %g = memref.alloc() : memref<2x512x1024xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h3 : memref<2x512x1024xf32>) outs(%g : memref<2x512x1024xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %m = arith.mulf %in, %in : f32
    %r = arith.truncf %m : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %h : memref<1024x1024xf32>
  return %hb, %g : memref<1024x1024xbf16>, memref<2x512x1024xbf16>
}

// -----

// The gradient through the activation: the output's gradient dY W (no
// epilogue), then, past a weight gradient that touches none of its
// buffers, the activation's gradient from it and the saved bf16 input
// (float32, which a column sum reads later), and that gradient's bf16
// copy. The kernel stores the activation's gradient and its copy, not the
// float32 output; the weight gradient is a kernel of its own and the
// column sum stays. (The weight gradient is split along k: its parts'
// kernel, then their sum.)
// CHECK-LABEL: func.func @activation_gradient
// CHECK-NOT: memref<1024x1024xf32>
// CHECK: %[[GRAD:.*]] = memref.alloc() : memref<2x512x1024xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<2x512x1024xbf16>
// CHECK: gpu.launch
// CHECK: memref.load %arg2[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x512x1024xbf16>
// CHECK: memref.extract_aligned_pointer_as_index %[[GRAD]] : memref<2x512x1024xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK: memref.extract_aligned_pointer_as_index %[[COPY]] : memref<2x512x1024xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK-NOT: memref<1024x1024xf32>
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic {{.*}} outs(%arg5 : memref<256x256xf32>)
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} ins(%[[GRAD]] : memref<2x512x1024xf32>) outs(%arg4 : memref<1024xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[COPY]]

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#id3 = affine_map<(b, s, n) -> (b, s, n)>
#sum = affine_map<(n, b, s) -> (b, s, n)>
#out = affine_map<(n, b, s) -> (n)>
func.func @activation_gradient(%dy: memref<1024x256xbf16>, %w: memref<256x1024xbf16>, %saved: memref<2x512x1024xbf16>,
                               %a: memref<1024x256xbf16>, %bgrad: memref<1024xf32>, %wgrad: memref<256x256xf32>)
    -> memref<2x512x1024xbf16> {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<1024x1024xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : memref<1024x256xbf16>, memref<256x1024xbf16>) outs(%d : memref<1024x1024xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pf = arith.extf %p : bf16 to f32
    %qf = arith.extf %q : bf16 to f32
    %m = arith.mulf %pf, %qf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%wgrad : memref<256x256xf32>)
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %a : memref<1024x256xbf16>, memref<1024x256xbf16>) outs(%wgrad : memref<256x256xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pf = arith.extf %p : bf16 to f32
    %qf = arith.extf %q : bf16 to f32
    %m = arith.mulf %pf, %qf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %d3 = memref.expand_shape %d [[0, 1], [2]] output_shape [2, 512, 1024] : memref<1024x1024xf32> into memref<2x512x1024xf32>
  %gf = memref.alloc() : memref<2x512x1024xf32>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%saved, %d3 : memref<2x512x1024xbf16>, memref<2x512x1024xf32>) outs(%gf : memref<2x512x1024xf32>) {
  ^bb0(%s: bf16, %g: f32, %out: f32):
    %sf = arith.extf %s : bf16 to f32
    %t = arith.mulf %sf, %g : f32
    linalg.yield %t : f32
  }
  %gb = memref.alloc() : memref<2x512x1024xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%gf : memref<2x512x1024xf32>) outs(%gb : memref<2x512x1024xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.fill ins(%zero : f32) outs(%bgrad : memref<1024xf32>)
  linalg.generic {indexing_maps = [#sum, #out], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%gf : memref<2x512x1024xf32>) outs(%bgrad : memref<1024xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return %gb : memref<2x512x1024xbf16>
}

// -----

// No consumers: an element-wise op whose other input an op in between
// writes (a fill), and one that reads the output transposed. The kernel
// stores its float32 output, and both ops stay.
// CHECK-LABEL: func.func @refused_consumers
// CHECK: gpu.launch
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK: gpu.terminator
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: return
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#tr = affine_map<(m, n) -> (n, m)>
func.func @refused_consumers(%x: memref<1024x256xbf16>, %w: memref<1024x256xbf16>, %y: memref<1024x1024xf32>,
                             %z: memref<1024x1024xf32>, %t: memref<1024x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<1024x1024xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1024x256xbf16>, memref<1024x256xbf16>) outs(%h : memref<1024x1024xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %y : memref<1024x1024xf32>, memref<1024x1024xf32>) outs(%z : memref<1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<1024x1024xf32>) outs(%t : memref<1024x1024xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %h : memref<1024x1024xf32>
  return
}

// -----

// A causal Performer's chunk product Q' S, [64 positions, 128 features] x
// [128 features, 32 channels] per (batch, head): the head lies between m
// (the positions) and n (the channels) in the output, and n is 32, so the
// tile is 64 x 32 (each warp 32 x 16 outputs); the batch and head index
// every operand and the output where their maps put them. On the
// warpgroup mma too this runs on mma.sync: its N-major tiles are atoms of
// 64 columns.
// CHECK-LABEL: func.func @head_between
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c8, {{.*}} workgroup(%[[A:.*]] : memref<4x64x32xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<4x32x32xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %arg0[%[[BATCH:.*]], %{{.*}}, %[[HEAD:.*]], %{{.*}}], %[[A]]
// CHECK: nvgpu.device_async_copy %arg1[%[[BATCH]], %[[HEAD]], %{{.*}}, %{{.*}}], %[[B]]
// CHECK: scf.for
// CHECK-COUNT-2: nvgpu.ldmatrix %[[A]]
// CHECK: nvgpu.ldmatrix %[[B]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK: memref.extract_aligned_pointer_as_index %arg2
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: } {tfc.tensor_core_tile = array<i64: 64, 32, 32, 4>}
// WG-LABEL: func.func @head_between
// WG-NOT: wgmma
// WG: } {tfc.tensor_core_tile = array<i64: 64, 32, 32, 4>}
#qf = affine_map<(b, c, h, e, f) -> (b, c, h, f)>
#sf = affine_map<(b, c, h, e, f) -> (b, h, f, e)>
#oe = affine_map<(b, c, h, e, f) -> (b, c, h, e)>
func.func @head_between(%q: memref<2x64x4x128xbf16>, %state: memref<2x4x128x32xbf16>, %out: memref<2x64x4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2x64x4x32xf32>)
  linalg.generic {indexing_maps = [#qf, #sf, #oe], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %state : memref<2x64x4x128xbf16>, memref<2x4x128x32xbf16>) outs(%out : memref<2x64x4x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Attention-like scores with a batch dimension (batch, m, n, k): 4 x 4 x 2
// tiles of 64 x 64, one block each; the block's batch index is its number
// divided by the 8 tiles of one batch element. A batch dimension is never
// split along k.
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch blocks(%[[BLOCK:[^,]*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32,
// CHECK: %[[REST:.*]] = arith.divui %[[BLOCK]], %c2
// CHECK: %[[BATCH:.*]] = arith.divui %[[REST]], %c4
// CHECK: %[[BI:.*]] = arith.remui %[[BATCH]], %c4
// CHECK: nvgpu.device_async_copy %arg0[%[[BI]], %{{.*}}, %{{.*}}]
// CHECK: tfc.tensor_core_tile = array<i64: 64, 64, 32, 4>
func.func @batched(%q: memref<4x256x64xbf16>, %k: memref<4x128x64xbf16>, %s: memref<4x256x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x256x64xbf16>, memref<4x128x64xbf16>) outs(%s : memref<4x256x128xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left to the SIMT kernels: float32 operands (an f32 build's contractions),
// a k that 8 does not divide, rows that 8 does not divide (a copy of 16
// bytes would straddle the end), and a body other than a multiply-add.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<128x64xf32>, memref<64x128xf32>)
// CHECK: linalg.matmul ins(%arg3, %arg4 : memref<128x44xbf16>, memref<44x128xbf16>)
// CHECK: linalg.matmul ins(%arg5, %arg6 : memref<100x64xbf16>, memref<64x128xbf16>)
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @left_alone(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %c: memref<128x128xf32>,
                      %d: memref<128x44xbf16>, %e: memref<44x128xbf16>,
                      %f: memref<100x64xbf16>, %g: memref<64x128xbf16>, %h: memref<100x128xf32>,
                      %x: memref<128x64xbf16>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>)
  linalg.matmul ins(%d, %e : memref<128x44xbf16>, memref<44x128xbf16>) outs(%c : memref<128x128xf32>)
  linalg.matmul ins(%f, %g : memref<100x64xbf16>, memref<64x128xbf16>) outs(%h : memref<100x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %g : memref<128x64xbf16>, memref<64x128xbf16>) outs(%c : memref<128x128xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pf = arith.extf %p : bf16 to f32
    %qf = arith.extf %q : bf16 to f32
    %m = arith.maximumf %pf, %qf : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Rows and a k that the tiles do not divide (hourglass_enwik8's 8 x 2,049
// tokens; here 200 of them): a projection [200, 64] x [128, 64]^T and the
// weight gradient [128, 200] x [200, 64], k the tokens. The projection's
// last row tile runs past row 200: its copies read row 199 instead
// (min), and its stores are made only for rows below 200. The weight
// gradient's 7 k steps of 32 cover 224 tokens: the copies of a token past
// 200 copy zeros (16 bytes from token 0, 0 of them read). On the warpgroup
// mma, whose steps are 64 tokens, the same with 4 steps.
// CHECK-LABEL: func.func @ragged
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c8,
// CHECK: arith.minui %{{.*}}, %c199
// CHECK: nvgpu.device_async_copy %arg0
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c200
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK: llvm.store
// CHECK: gpu.launch
// CHECK: %[[K:.*]] = arith.cmpi ult, %{{.*}}, %c200
// CHECK: %{{.*}} = arith.select %[[K]], %{{.*}}, %c0{{.*}}
// CHECK: %[[N:.*]] = arith.select %[[K]], %c8{{.*}}, %c0{{.*}}
// CHECK: nvgpu.device_async_copy %arg3[{{.*}}], %{{.*}}[{{.*}}], 8, %[[N]] {bypassL1}
// CHECK: scf.for %{{.*}} = %{{.*}} to %c7{{.*}} step
// WG-LABEL: func.func @ragged
// WG: nvgpu.device_async_copy %arg0
// WG: tfc.warpgroup_mma
// WG: arith.select
// WG: nvgpu.device_async_copy %arg3[{{.*}}], %{{.*}}[{{.*}}], 8, %{{.*}} {bypassL1}
// WG: scf.for %{{.*}} = %{{.*}} to %c4{{.*}} step
// WG: tfc.warpgroup_mma
func.func @ragged(%x: memref<200x64xbf16>, %w: memref<128x64xbf16>, %y: memref<200x128xf32>,
                  %dy: memref<200x128xbf16>, %dw: memref<128x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<200x128xf32>)
  linalg.matmul_transpose_b ins(%x, %w : memref<200x64xbf16>, memref<128x64xbf16>) outs(%y : memref<200x128xf32>)
  linalg.fill ins(%zero : f32) outs(%dw : memref<128x64xf32>)
  linalg.matmul_transpose_a ins(%dy, %x : memref<200x128xbf16>, memref<200x64xbf16>) outs(%dw : memref<128x64xf32>)
  return
}

// -----

// A weight gradient whose k (792 tokens) 32 does not divide, its one 64 x
// 64 tile too few blocks: k is split into 3 parts of 264 (any number of
// parts, each a multiple of 8 and at least 256 long; 2 would give parts
// of 396, which 8 does not divide), each part's last k step cut short.
// CHECK-LABEL: func.func @ragged_split
// CHECK: memref.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [3, 264, 64]
// CHECK: %[[PARTS:.*]] = memref.alloc() : memref<3x64x64xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c3,
// CHECK: arith.cmpi ult, %{{.*}}, %c264
// CHECK: scf.for %{{.*}} = %{{.*}} to %c9{{.*}} step
// CHECK: } {tfc.tensor_core_tile = array<i64: 64, 64, 32, 4>}
// CHECK: linalg.generic {{.*}} ins(%[[PARTS]], %[[PARTS]], %[[PARTS]] : {{.*}}) outs(%arg2 : memref<64x64xf32>)
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @ragged_split(%dy: memref<792x64xbf16>, %x: memref<792x64xbf16>, %dw: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : memref<792x64xbf16>, memref<792x64xbf16>) outs(%dw : memref<64x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}
