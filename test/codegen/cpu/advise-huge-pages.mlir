// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-advise-huge-pages | FileCheck %s

// An arena of 4 MiB gets the advice over the 4 KiB pages it covers (its
// address rounded up, its end rounded down); one of 64 KiB, smaller than a
// huge page, and a global that is not an arena do not.

// CHECK-LABEL: module @two_arenas
// CHECK: llvm.func @madvise(!llvm.ptr, i64, i32) -> i32
// CHECK: llvm.func internal @tfc_advise_huge_pages()
// CHECK: %[[MASK:.*]] = llvm.mlir.constant(-4096 : i64)
// CHECK: %[[ADVICE:.*]] = llvm.mlir.constant(14 : i32)
// CHECK: %[[ARENA:.*]] = llvm.mlir.addressof @__tfc_arena_0
// CHECK: %[[ADDRESS:.*]] = llvm.ptrtoint %[[ARENA]]
// CHECK: %[[ROUND:.*]] = llvm.mlir.constant(4095 : i64)
// CHECK: %[[UP:.*]] = llvm.add %[[ADDRESS]], %[[ROUND]]
// CHECK: %[[FIRST:.*]] = llvm.and %[[UP]], %[[MASK]]
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(4194304 : i64)
// CHECK: %[[PAST:.*]] = llvm.add %[[ADDRESS]], %[[BYTES]]
// CHECK: %[[END:.*]] = llvm.and %[[PAST]], %[[MASK]]
// CHECK: %[[LENGTH:.*]] = llvm.sub %[[END]], %[[FIRST]]
// CHECK: %[[START:.*]] = llvm.inttoptr %[[FIRST]]
// CHECK: llvm.call @madvise(%[[START]], %[[LENGTH]], %[[ADVICE]])
// CHECK-NOT: llvm.call
// CHECK: llvm.return
// CHECK: llvm.mlir.global_ctors {ctors = [@tfc_advise_huge_pages], priorities = [65535 : i32]}
module @two_arenas {
  llvm.mlir.global private @__tfc_arena_0() {alignment = 64 : i64} : !llvm.array<4194304 x i8> {
    %0 = llvm.mlir.undef : !llvm.array<4194304 x i8>
    llvm.return %0 : !llvm.array<4194304 x i8>
  }
  llvm.mlir.global private @__tfc_arena_1() {alignment = 64 : i64} : !llvm.array<65536 x i8> {
    %0 = llvm.mlir.undef : !llvm.array<65536 x i8>
    llvm.return %0 : !llvm.array<65536 x i8>
  }
  llvm.mlir.global private @table() {alignment = 64 : i64} : !llvm.array<8388608 x i8> {
    %0 = llvm.mlir.undef : !llvm.array<8388608 x i8>
    llvm.return %0 : !llvm.array<8388608 x i8>
  }
}

// -----

// No arena holds a huge page: the module stays as it is.

// CHECK-LABEL: module @small_arena
// CHECK-NOT: madvise
// CHECK-NOT: llvm.mlir.global_ctors
module @small_arena {
  llvm.mlir.global private @__tfc_arena_0() {alignment = 64 : i64} : !llvm.array<65536 x i8> {
    %0 = llvm.mlir.undef : !llvm.array<65536 x i8>
    llvm.return %0 : !llvm.array<65536 x i8>
  }
}

// -----

// The pass adds the module's only constructor list.

// expected-error @below {{already has llvm.mlir.global_ctors}}
module @constructors {
  llvm.mlir.global private @__tfc_arena_0() {alignment = 64 : i64} : !llvm.array<4194304 x i8> {
    %0 = llvm.mlir.undef : !llvm.array<4194304 x i8>
    llvm.return %0 : !llvm.array<4194304 x i8>
  }
  llvm.func @init() {
    llvm.return
  }
  llvm.mlir.global_ctors {ctors = [@init], priorities = [0 : i32]}
}

// -----

// expected-error @below {{is an arena but not an array of bytes}}
llvm.mlir.global private @__tfc_arena_0() {alignment = 64 : i64} : !llvm.array<1048576 x f32> {
  %0 = llvm.mlir.undef : !llvm.array<1048576 x f32>
  llvm.return %0 : !llvm.array<1048576 x f32>
}
