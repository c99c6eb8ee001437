// RUN: tfc-opt %s -split-input-file -tfc-gpu-merge-launches | FileCheck %s
// RUN: tfc-opt %s -split-input-file -tfc-gpu-merge-launches=max-arguments=2 \
// RUN:   | FileCheck %s --check-prefix=FEW

// A LayerNorm's mean: the fill, the row sums and the scaling are one
// kernel, their bodies in order.
// CHECK-LABEL: func.func @fill_sum_scale
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<8192xf32>
// CHECK-NOT:   gpu.launch
// CHECK:         scf.for
// CHECK-NOT:   gpu.launch
// CHECK:         arith.mulf
// CHECK-NOT:   gpu.launch
// CHECK:       return
func.func @fill_sum_scale(%x: memref<8192x256xf32>, %mean: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c8192 = arith.constant 8192 : index
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 3.906250e-03 : f32
  %sum = memref.alloc() : memref<8192xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = arith.cmpi ult, %2, %c8192 : index
    scf.if %3 {
      memref.store %zero, %sum[%2] : memref<8192xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = arith.cmpi ult, %2, %c8192 : index
    scf.if %3 {
      %4 = memref.load %sum[%2] : memref<8192xf32>
      %5 = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %4) -> (f32) {
        %6 = memref.load %x[%2, %k] : memref<8192x256xf32>
        %7 = arith.addf %acc, %6 : f32
        scf.yield %7 : f32
      }
      memref.store %5, %sum[%2] : memref<8192xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c32, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = arith.cmpi ult, %2, %c8192 : index
    scf.if %3 {
      %4 = memref.load %sum[%2] : memref<8192xf32>
      %5 = arith.mulf %4, %scale : f32
      memref.store %5, %mean[%2] : memref<8192xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Elementwise kernels over a [rows, 256] buffer whose threads index it by
// the quotient and remainder of their id: one kernel, unless a kernel may
// take no more than two buffers (it would take three).
// FEW-LABEL: func.func @delinearized
// FEW-COUNT-2: gpu.launch
// CHECK-LABEL: func.func @delinearized
// CHECK:       gpu.launch
// CHECK:         arith.mulf
// CHECK-NOT:   gpu.launch
// CHECK:         arith.addf
// CHECK-NOT:   gpu.launch
// CHECK:       return
func.func @delinearized(%x: memref<64x256xf32>, %y: memref<64x256xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c16384 = arith.constant 16384 : index
  %two = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<64x256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c64, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = arith.cmpi ult, %2, %c16384 : index
    scf.if %3 {
      %4 = arith.remui %2, %c256 : index
      %5 = arith.divui %2, %c256 : index
      %6 = memref.load %x[%5, %4] : memref<64x256xf32>
      %7 = arith.mulf %6, %two : f32
      memref.store %7, %t[%5, %4] : memref<64x256xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c64, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = arith.cmpi ult, %2, %c16384 : index
    scf.if %3 {
      %4 = arith.remui %2, %c256 : index
      %5 = arith.divui %2, %c256 : index
      %6 = memref.load %t[%5, %4] : memref<64x256xf32>
      %7 = arith.addf %6, %two : f32
      memref.store %7, %y[%5, %4] : memref<64x256xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A bias gradient: the fill of the one-block total moves past the partial
// sums, which touch neither the total nor what the fill reads, into the
// kernel that adds them up.
// CHECK-LABEL: func.func @fill_sinks_past_partials
// FEW-LABEL: func.func @fill_sinks_past_partials
// CHECK:       gpu.launch blocks(%{{.*}}) in (%{{.*}} = %c4,
// CHECK:       gpu.launch blocks(%{{.*}}) in (%{{.*}} = %c1,
// CHECK:         memref.store %cst, %arg1[%{{.*}}]
// CHECK-NOT:   gpu.launch
// CHECK:         scf.for
// CHECK-NOT:   gpu.launch
// CHECK:       return
func.func @fill_sinks_past_partials(%g: memref<4x256x256xf32>, %total: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %partial = memref.alloc() : memref<4x256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.cmpi ult, %tx, %c256 : index
    scf.if %1 {
      memref.store %zero, %total[%tx] : memref<256xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = arith.cmpi ult, %2, %c1024 : index
    scf.if %3 {
      %4 = arith.remui %2, %c256 : index
      %5 = arith.divui %2, %c256 : index
      %6 = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (f32) {
        %7 = memref.load %g[%5, %k, %4] : memref<4x256x256xf32>
        %8 = arith.addf %acc, %7 : f32
        scf.yield %8 : f32
      }
      memref.store %6, %partial[%5, %4] : memref<4x256xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.cmpi ult, %tx, %c256 : index
    scf.if %1 {
      %2 = memref.load %total[%tx] : memref<256xf32>
      %3 = scf.for %p = %c0 to %c4 step %c1 iter_args(%acc = %2) -> (f32) {
        %4 = memref.load %partial[%p, %tx] : memref<4x256xf32>
        %5 = arith.addf %acc, %4 : f32
        scf.yield %5 : f32
      }
      memref.store %3, %total[%tx] : memref<256xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// The second kernel reads its neighbour's element: kept apart.
// CHECK-LABEL: func.func @neighbour
// CHECK-COUNT-2: gpu.launch
func.func @neighbour(%x: memref<257xf32>, %y: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<257xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %one, %t[%tx] : memref<257xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.addi %tx, %c1 : index
    %2 = memref.load %t[%1] : memref<257xf32>
    memref.store %2, %y[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// A row sum over what the first kernel wrote at other threads' elements:
// kept apart.
// CHECK-LABEL: func.func @reads_a_row
// CHECK-COUNT-2: gpu.launch
func.func @reads_a_row(%x: memref<256xf32>, %y: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = memref.load %x[%tx] : memref<256xf32>
    memref.store %1, %t[%tx] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (f32) {
      %2 = memref.load %t[%k] : memref<256xf32>
      %3 = arith.addf %acc, %2 : f32
      scf.yield %3 : f32
    }
    memref.store %1, %y[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Threads that share an element (`id mod 4`): the first reads what
// another thread of the second writes, so they stay apart.
// CHECK-LABEL: func.func @shared_element
// CHECK-COUNT-2: gpu.launch
func.func @shared_element(%bias: memref<4xf32>, %y: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.remui %tx, %c4 : index
    %2 = memref.load %bias[%1] : memref<4xf32>
    memref.store %2, %y[%tx] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.remui %tx, %c4 : index
    memref.store %zero, %bias[%1] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Different grids, a host store between two kernels, a kernel with a
// barrier between two that touch what it may write, and a kernel that
// reads what the one before it writes and what the one after it writes:
// no merge.
// CHECK-LABEL: func.func @kept_apart
// CHECK-COUNT-7: gpu.launch
func.func @kept_apart(%x: memref<512xf32>, %y: memref<512xf32>, %s: memref<f32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %one, %x[%tx] : memref<512xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    memref.store %one, %x[%2] : memref<512xf32>
    gpu.terminator
  }
  memref.store %one, %s[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    memref.store %one, %x[%2] : memref<512xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    gpu.barrier
    memref.store %one, %x[%2] : memref<512xf32>
    memref.store %one, %y[%2] : memref<512xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    memref.store %one, %y[%2] : memref<512xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %1 = memref.load %y[%c1] : memref<512xf32>
    %2 = memref.load %x[%c1] : memref<512xf32>
    %3 = arith.addf %1, %2 : f32
    memref.store %3, %s[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = memref.load %y[%2] : memref<512xf32>
    memref.store %3, %x[%2] : memref<512xf32>
    gpu.terminator
  }
  return
}

// -----

// Kernels of one thread: one kernel, whatever they touch.
// CHECK-LABEL: func.func @single_threads
// CHECK:       gpu.launch
// CHECK:         scf.for
// CHECK-NOT:   gpu.launch
// CHECK:         memref.load %arg1[%c3]
// CHECK-NOT:   gpu.launch
// CHECK:       return
func.func @single_threads(%x: memref<4xf32>, %s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.for %i = %c1 to %c4 step %c1 {
      %p = arith.subi %i, %c1 : index
      %1 = memref.load %s[%p] : memref<4xf32>
      %2 = memref.load %x[%i] : memref<4xf32>
      %3 = arith.addf %1, %2 : f32
      memref.store %3, %s[%i] : memref<4xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %1 = memref.load %s[%c3] : memref<4xf32>
    memref.store %1, %x[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Fills of two slices of one buffer that do not overlap: one kernel. A
// kernel reading a slice that overlaps the second at other threads'
// elements stays apart.
// CHECK-LABEL: func.func @slices
// CHECK:       gpu.launch
// CHECK:         memref.store
// CHECK-NOT:   gpu.launch
// CHECK:         memref.store
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.launch
// CHECK:       return
func.func @slices(%g: memref<512xf32>, %y: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %low = memref.subview %g[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
  %high = memref.subview %g[256] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1], offset: 256>>
  %middle = memref.subview %g[128] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1], offset: 128>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %low[%tx] : memref<256xf32, strided<[1]>>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %high[%tx] : memref<256xf32, strided<[1], offset: 256>>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = memref.load %middle[%tx] : memref<256xf32, strided<[1], offset: 128>>
    memref.store %1, %y[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Two weights' bf16 copies around a contraction that reads the first: the
// second moves up into the first's kernel, with the buffer it writes; a
// third that reads the contraction's output stays after it.
// CHECK-LABEL: func.func @moves_up
// CHECK:       %[[FIRST:.*]] = memref.alloc() : memref<256xbf16>
// CHECK:       %[[SECOND:.*]] = memref.alloc() : memref<256xbf16>
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.*}}, %[[FIRST]][%{{.*}}] : memref<256xbf16>
// CHECK-NOT:   gpu.launch
// CHECK:         memref.store %{{.*}}, %[[SECOND]][%{{.*}}] : memref<256xbf16>
// CHECK:       gpu.launch
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.launch
// CHECK:       return
func.func @moves_up(%w: memref<512xf32>, %y: memref<512xf32>, %z: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %first = memref.alloc() : memref<256xbf16>
  %wa = memref.subview %w[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = memref.load %wa[%tx] : memref<256xf32, strided<[1]>>
    %2 = arith.truncf %1 : f32 to bf16
    memref.store %2, %first[%tx] : memref<256xbf16>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = arith.muli %bx, %c256 : index
    %2 = arith.addi %1, %tx : index
    %3 = arith.remui %2, %c256 : index
    %4 = memref.load %first[%3] : memref<256xbf16>
    %5 = arith.extf %4 : bf16 to f32
    memref.store %5, %y[%2] : memref<512xf32>
    gpu.terminator
  }
  %second = memref.alloc() : memref<256xbf16>
  %wb = memref.subview %w[256] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1], offset: 256>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = memref.load %wb[%tx] : memref<256xf32, strided<[1], offset: 256>>
    %2 = arith.truncf %1 : f32 to bf16
    memref.store %2, %second[%tx] : memref<256xbf16>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %1 = memref.load %y[%tx] : memref<512xf32>
    memref.store %1, %z[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}
