// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-gpu-emulate-launches | FileCheck %s

// A launch becomes a loop over its blocks holding a loop over its threads; the ids come from the loops, the sizes from the launch; what
// depends on the block only is computed once per block.
// CHECK-LABEL: func.func @kernel
// CHECK-DAG: %[[GRID:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: scf.for %[[BX:.*]] = %[[ZERO]] to %[[GRID]] step %{{.*}} {
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[BX]], %[[THREADS]] : index
// CHECK: scf.for %[[TX:.*]] = %[[ZERO]] to %[[THREADS]] step %{{.*}}
// CHECK-NEXT: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%[[ID]]] : memref<1024xf32>
// CHECK-NOT: gpu.
func.func @kernel(%out: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %id = arith.addi %base, %tx : index
    memref.store %one, %out[%id] : memref<1024xf32>
    gpu.terminator
  }
  return
}

// -----

// A barrier between the body's own operations: every thread runs the part
// before it, then every thread the part after it, in a loop over the
// threads per part; the constants come once per block, and the device
// fences go (threads that run one after another see each other's writes).
// CHECK-LABEL: func.func @phases
// CHECK: scf.for %[[BX:.*]] =
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 255 : index
// CHECK: scf.for %[[T1:.*]] =
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%[[T1]]] : memref<256xf32>
// CHECK-NEXT: }
// CHECK: scf.for %[[T2:.*]] =
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[T2]]
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.load %arg0[%[[LAST]]] : memref<256xf32>
// CHECK-NOT: llvm.call_intrinsic
func.func @phases(%out: memref<256xf32>, %sum: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %one = arith.constant 1.0 : f32
    %last = arith.constant 255 : index
    memref.store %one, %out[%tx] : memref<256xf32>
    llvm.call_intrinsic "llvm.nvvm.membar.gl"() : () -> ()
    gpu.barrier
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %v = memref.load %out[%last] : memref<256xf32>
      memref.store %v, %sum[] : memref<f32>
    }
    gpu.terminator
  }
  return
}

// -----

// A thread's values used across a barrier: what it loaded is kept in a
// slot, a stack array of one element per thread (freed at the end of the
// block); its index arithmetic is computed again.
// CHECK-LABEL: func.func @value_across_barrier
// CHECK: scf.for
// CHECK-NEXT: %[[STACK:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK: %[[SLOT:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[T1:.*]] =
// CHECK: %[[V:.*]] = memref.load %arg0[%[[T1]]]
// CHECK-NEXT: memref.store %[[V]], %[[SLOT]][%[[T1]]] : memref<?xf32>
// CHECK: scf.for %[[T2:.*]] =
// CHECK-DAG: %[[NEXT:.*]] = arith.addi %[[T2]], %{{.*}} : index
// CHECK-DAG: %[[W:.*]] = memref.load %[[SLOT]][%[[T2]]] : memref<?xf32>
// CHECK: memref.store %[[W]], %arg1[%[[NEXT]]]
// CHECK: llvm.intr.stackrestore %[[STACK]] : !llvm.ptr
// CHECK-NEXT: }
func.func @value_across_barrier(%in: memref<256xf32>, %out: memref<257xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %next = arith.addi %tx, %c1 : index
    %v = memref.load %in[%tx] : memref<256xf32>
    gpu.barrier
    memref.store %v, %out[%next] : memref<257xf32>
    gpu.terminator
  }
  return
}

// -----

// A loop with a barrier runs once per block with its parts inside: what
// each thread carries lives in a slot, stored before the loop and at the
// end of every iteration; what is the same for every thread (the stage of
// a ring of buffers) stays the loop's own. Shared memory is a stack buffer
// of the block, without its address space.
// CHECK-LABEL: func.func @loop_with_barrier
// CHECK: llvm.intr.stacksave
// CHECK-DAG: %[[TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<2x256xf32>
// CHECK-DAG: %[[SUM:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[T0:.*]] =
// CHECK-NEXT: memref.store %{{.*}}, %[[SUM]][%[[T0]]]
// CHECK: %[[LAST:.*]] = scf.for %{{.*}} = {{.*}} iter_args(%[[STAGE:.*]] = %{{.*}}) -> (index) {
// CHECK: scf.for %[[T1:.*]] =
// CHECK: memref.store %{{.*}}, %[[TILE]][%[[STAGE]], %[[T1]]] : memref<2x256xf32>
// CHECK: scf.for %[[T2:.*]] =
// CHECK: memref.load %[[TILE]][%[[STAGE]], %{{.*}}] : memref<2x256xf32>
// CHECK: memref.store %{{.*}}, %[[SUM]][%[[T2]]]
// CHECK: scf.yield %{{.*}} : index
// CHECK: scf.for %[[T3:.*]] =
// CHECK-NEXT: %[[TOTAL:.*]] = memref.load %[[SUM]][%[[T3]]]
// CHECK-NEXT: memref.store %[[TOTAL]], %arg1[%[[T3]]]
// CHECK-NOT: address_space
func.func @loop_with_barrier(%in: memref<8x256xf32>, %out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
      workgroup(%tile : memref<2x256xf32, #gpu.address_space<workgroup>>) {
    %sum, %last = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero, %stage = %c0) -> (f32, index) {
      %x = memref.load %in[%i, %tx] : memref<8x256xf32>
      memref.store %x, %tile[%stage, %tx] : memref<2x256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %mirror = arith.subi %c255, %tx : index
      %y = memref.load %tile[%stage, %mirror] : memref<2x256xf32, #gpu.address_space<workgroup>>
      %next = arith.addf %acc, %y : f32
      %flip = arith.subi %c1, %stage : index
      scf.yield %next, %flip : f32, index
    }
    memref.store %sum, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// A warp shuffle: one loop puts every thread's value in a slot, the next
// gives each thread the value of its partner lane (lane XOR 1 here) of the
// same warp, and whether that lane is in its segment.
// CHECK-LABEL: func.func @shuffle
// CHECK-DAG: %[[VALUES:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK-DAG: %[[RESULTS:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[T1:.*]] =
// CHECK: memref.store %{{.*}}, %[[VALUES]][%[[T1]]]
// CHECK: scf.for %[[T2:.*]] =
// CHECK: %[[LANE:.*]] = arith.remui %[[T2]], %c32
// CHECK: %[[SOURCE:.*]] = arith.xori %{{.*}}, %c1_i32
// CHECK: %[[FROM:.*]] = arith.select %{{.*}}, %{{.*}}, %[[T2]] : index
// CHECK: %[[OTHER:.*]] = memref.load %[[VALUES]][%[[FROM]]]
// CHECK: memref.store %[[OTHER]], %[[RESULTS]][%[[T2]]]
// CHECK: scf.for %[[T3:.*]] =
// CHECK: memref.load %[[RESULTS]][%[[T3]]]
// CHECK-NOT: gpu.shuffle
func.func @shuffle(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1 : i32
  %width = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %x = memref.load %in[%tx] : memref<64xf32>
    %y, %valid = gpu.shuffle xor %x, %one, %width : f32
    %sum = arith.addf %x, %y : f32
    memref.store %sum, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A cp.async copy completes at once: its loads and stores, a zero past its
// source's elements; its group and wait go, and so does the group's token
// that a loop carries.
// CHECK-LABEL: func.func @async_copy
// CHECK: scf.for
// CHECK: %[[IN:.*]] = arith.cmpi ult, %c0{{.*}}, %{{.*}} : index
// CHECK: %[[V:.*]] = scf.if %[[IN]] -> (bf16) {
// CHECK-NEXT: memref.load %arg0
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}} : bf16
// CHECK: memref.store %[[V]], %{{.*}} : memref<8xbf16>
// CHECK-NOT: nvgpu.
func.func @async_copy(%in: memref<64xbf16>, %out: memref<64xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1)
      workgroup(%tile : memref<8xbf16, #gpu.address_space<workgroup>>) {
    %first = nvgpu.device_async_copy %in[%c8], %tile[%c0], 8 : memref<64xbf16> to memref<8xbf16, #gpu.address_space<workgroup>>
    %start = nvgpu.device_async_create_group %first
    %done = scf.for %i = %c0 to %c2 step %c1 iter_args(%token = %start) -> (!nvgpu.device.async.token) {
      %copy = nvgpu.device_async_copy %in[%c0], %tile[%c0], 8, %n : memref<64xbf16> to memref<8xbf16, #gpu.address_space<workgroup>>
      %group = nvgpu.device_async_create_group %copy
      nvgpu.device_async_wait %group
      gpu.barrier
      %v = memref.load %tile[%tx] : memref<8xbf16, #gpu.address_space<workgroup>>
      memref.store %v, %out[%tx] : memref<64xbf16>
      gpu.barrier
      scf.yield %group : !nvgpu.device.async.token
    }
    gpu.terminator
  }
  return
}

// -----

// Barriers inside a branch on the block id (a member of a grouped launch):
// the branch is taken once per block, its parts run in loops over the
// threads inside it.
// CHECK-LABEL: func.func @branch_on_block
// CHECK: scf.for %[[BX:.*]] =
// CHECK: %[[MEMBER:.*]] = arith.cmpi ult, %[[BX]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[MEMBER]] {
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK: } else {
// CHECK-NEXT: scf.for
func.func @branch_on_block(%out: memref<512xf32>, %copy: memref<512xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %first = arith.cmpi ult, %bx, %c1 : index
    scf.if %first {
      memref.store %one, %out[%tx] : memref<512xf32>
      gpu.barrier
      %v = memref.load %out[%c1] : memref<512xf32>
      memref.store %v, %copy[%tx] : memref<512xf32>
    } else {
      memref.store %one, %copy[%c256] : memref<512xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier inside a branch that threads of one block take differently
// would hang a GPU.
func.func @branch_on_thread(%out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  // expected-error @below {{'gpu.launch' op cannot be emulated: a barrier inside a branch that the block's threads take differently}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %one, %out[%tx] : memref<256xf32>
    %low = arith.cmpi ult, %tx, %c128 : index
    scf.if %low {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// An NVVM operation that the emulation does not know.
func.func @unknown_instruction(%out: memref<32xi32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @below {{'nvvm.read.ptx.sreg.laneid' op cannot be emulated}}
    %lane = nvvm.read.ptx.sreg.laneid : i32
    memref.store %lane, %out[%tx] : memref<32xi32>
    gpu.terminator
  }
  return
}

// -----

// A shuffle inside a branch that differs between the block's warps (a row
// kernel's bound on its warp's row): both sides run, each for the threads
// that take it.
// CHECK-LABEL: func.func @shuffle_in_branch
// CHECK: %[[TAKEN:.*]] = arith.ori
// CHECK-NEXT: }
// CHECK: %[[STAGE:.*]] = arith.ori
// CHECK-NEXT: scf.if %[[STAGE]] {
// CHECK-NEXT: memref.store
// CHECK: %[[SHUFFLE:.*]] = arith.ori
// CHECK-NEXT: scf.if %[[SHUFFLE]] {
// CHECK: arith.xori %{{.*}}, %c1_i32
func.func @shuffle_in_branch(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1 : i32
  %width = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %x = memref.load %in[%tx] : memref<64xf32>
    %first = arith.cmpi ult, %tx, %c32 : index
    %take = arith.cmpf ogt, %x, %x : f32
    %taken = arith.ori %first, %take : i1
    scf.if %taken {
      %y, %valid = gpu.shuffle xor %x, %one, %width : f32
      memref.store %y, %out[%tx] : memref<64xf32>
    }
    gpu.terminator
  }
  return
}
