// RUN: tfc-opt %s -split-input-file --tfc-linalg-to-nvvm | FileCheck %s

// A contraction (tfc-gpu-tile-contractions): each thread computes 8 rows
// of one column of the 64 x 48 outputs (48 columns: one per thread), 512
// threads in 2 blocks of 256, the column from threadIdx.x (so a warp reads
// consecutive columns of B and writes consecutive ones of C). The 8
// accumulators are loaded from the output before the k loop, carried
// through it in registers and stored after it; each k step loads 8
// elements of A and one of B for 8 contracted multiply-adds. The output
// lives in the arena, passed as a pointer; every pointer argument is
// declared 16-byte aligned (tfc-gpu-outline-kernels); the fill is its own
// kernel.
// CHECK-LABEL: func.func @tfc_matmul
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[VIEW:.*]] : memref<64x48xf32>)
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k1 blocks in (%c2, %{{.*}}, %{{.*}}) threads in (%c256, %{{.*}}, %{{.*}}) args(%[[VIEW]] : memref<64x48xf32>, %arg0 : memref<64x32xf32>, %arg1 : memref<32x48xf32>)
// CHECK: gpu.module @tfc_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK: llvm.func @tfc_k1(%{{.*}}: !llvm.ptr {llvm.align = 16 : i64}, %{{.*}}: !llvm.ptr {llvm.align = 16 : i64}, %{{.*}}: !llvm.ptr {llvm.align = 16 : i64}) attributes {{{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: llvm.br ^[[HEADER:bb[0-9]+]](%{{.*}} : i64, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: ^[[HEADER]](%{{.*}}: i64, %[[ACC:[0-9]+]]: f32,
// CHECK: llvm.cond_br %{{.*}}, ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK-COUNT-9: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.fmul {{.*}}contract
// CHECK: %[[SUM:.*]] = llvm.fadd %[[ACC]], %{{.*}}contract
// CHECK-COUNT-7: llvm.fadd
// CHECK-NOT: llvm.store
// CHECK: llvm.br ^[[HEADER]](%{{.*}}, %[[SUM]], %{{.*}} : i64, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: ^[[EXIT]]:
// CHECK: llvm.store %[[ACC]]
func.func @tfc_matmul(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %c : tensor<64x48xf32>
}

// -----

// A row reduction (a softmax's row maximum): one thread per row, the row
// read in a loop; exp is the CPU's polynomial (multiply-adds and a floor,
// which the NVPTX back end emits as cvt.rmi), not libdevice's __nv_expf.
// CHECK-LABEL: func.func @tfc_row_max_exp
// CHECK-COUNT-2: gpu.launch_func
// CHECK: gpu.module @tfc_kernels
// CHECK: llvm.intr.maxnum
// CHECK-NOT: __nv_expf
// CHECK: llvm.intr.fma
func.func @tfc_row_max_exp(%x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<128xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<128xf32>) -> tensor<128xf32>
  %m = linalg.reduce ins(%x : tensor<128x64xf32>) outs(%f : tensor<128xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maxnumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %o = tensor.empty() : tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<128x64xf32>, tensor<128xf32>) outs(%o : tensor<128x64xf32>) {
    ^bb0(%v: f32, %max: f32, %out: f32):
      %d = arith.subf %v, %max : f32
      %ex = math.exp %d : f32
      linalg.yield %ex : f32
    } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}
