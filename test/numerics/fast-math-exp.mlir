// tfc-fast-math's exp on float32 (a degree-5 polynomial times 2^k), scalar
// and 16-lane vector, against float64 libm exp: it counts the points of a
// grid of a million over [-86.9, 88.7] (every float32 result normal and
// finite) where the relative error exceeds 2.5e-7 (2 ulp), and prints the
// counts, which must be 0 (MLIR's own expansion, which it replaces, passes
// this too); then the values at the ends of the range: exp(-inf) = 0,
// exp(inf) = inf, exp(nan) = nan, exp(88.72) finite (just under float32's
// largest, 3.4e38), exp(88.73) = inf, exp(-87.5) = 0 (below x = -87, where a
// result would be under 1.7e-38), and
// exp(0) = 1.

// RUN: tfc-opt %s --tfc-fast-math \
// RUN: | mlir-opt --convert-scf-to-cf --convert-vector-to-llvm \
// RUN:     --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-cpu-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

// CHECK: scalar points over 2 ulp: 0
// CHECK-NEXT: vector points over 2 ulp: 0
// CHECK-NEXT: 0
// CHECK-NEXT: inf
// CHECK-NEXT: nan
// CHECK-NEXT: 3.393{{[0-9]*}}e+38
// CHECK-NEXT: inf
// CHECK-NEXT: 0
// CHECK-NEXT: 1

func.func private @printI64(i64)
func.func private @printF32(f32)
func.func private @printNewline()
func.func private @printString(!llvm.ptr)

llvm.mlir.global internal constant @scalar_label("scalar points over 2 ulp: \00")
llvm.mlir.global internal constant @vector_label("vector points over 2 ulp: \00")

func.func @exp_scalar(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}

func.func @exp_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x : vector<16xf32>
  return %e : vector<16xf32>
}

/// The number of i with |y[i] - exp(x[i])| > 2.5e-7 exp(x[i]), exp in f64.
func.func @count_bad(%x: memref<?xf32>, %y: memref<?xf32>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %tolerance = arith.constant 2.5e-7 : f64
  %n = memref.dim %x, %c0 : memref<?xf32>
  %bad = scf.for %i = %c0 to %n step %c1 iter_args(%count = %zero) -> i64 {
    %xi = memref.load %x[%i] : memref<?xf32>
    %yi = memref.load %y[%i] : memref<?xf32>
    %x64 = arith.extf %xi : f32 to f64
    %y64 = arith.extf %yi : f32 to f64
    %reference = math.exp %x64 : f64
    %difference = arith.subf %y64, %reference : f64
    %error = math.absf %difference : f64
    %bound = arith.mulf %reference, %tolerance : f64
    // Unordered: a NaN counts as an error.
    %over = arith.cmpf ugt, %error, %bound : f64
    %add = arith.select %over, %one, %zero : i64
    %next = arith.addi %count, %add : i64
    scf.yield %next : i64
  }
  return %bad : i64
}

func.func @print_label(%label: !llvm.ptr, %count: i64) {
  call @printString(%label) : (!llvm.ptr) -> ()
  call @printI64(%count) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @print_exp(%x: f32) {
  %e = call @exp_scalar(%x) : (f32) -> f32
  call @printF32(%e) : (f32) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = arith.constant 1048576 : index
  %lowest = arith.constant -86.9 : f64
  %step = arith.constant 1.674652099609375e-4 : f64
  %x = memref.alloc(%n) : memref<?xf32>
  %y = memref.alloc(%n) : memref<?xf32>
  %z = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %if = arith.sitofp %i64 : i64 to f64
    %offset = arith.mulf %if, %step : f64
    %x64 = arith.addf %lowest, %offset : f64
    %xi = arith.truncf %x64 : f64 to f32
    memref.store %xi, %x[%i] : memref<?xf32>
    %yi = func.call @exp_scalar(%xi) : (f32) -> f32
    memref.store %yi, %y[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %n step %c16 {
    %xv = vector.load %x[%i] : memref<?xf32>, vector<16xf32>
    %zv = func.call @exp_vector(%xv) : (vector<16xf32>) -> vector<16xf32>
    vector.store %zv, %z[%i] : memref<?xf32>, vector<16xf32>
  }
  %scalar_bad = call @count_bad(%x, %y) : (memref<?xf32>, memref<?xf32>) -> i64
  %vector_bad = call @count_bad(%x, %z) : (memref<?xf32>, memref<?xf32>) -> i64
  %scalar_label = llvm.mlir.addressof @scalar_label : !llvm.ptr
  %vector_label = llvm.mlir.addressof @vector_label : !llvm.ptr
  call @print_label(%scalar_label, %scalar_bad) : (!llvm.ptr, i64) -> ()
  call @print_label(%vector_label, %vector_bad) : (!llvm.ptr, i64) -> ()

  %neg_inf = arith.constant 0xFF800000 : f32
  %inf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %largest = arith.constant 88.72 : f32
  %overflow = arith.constant 88.73 : f32
  %underflow = arith.constant -87.5 : f32
  %zero = arith.constant 0.0 : f32
  call @print_exp(%neg_inf) : (f32) -> ()
  call @print_exp(%inf) : (f32) -> ()
  call @print_exp(%nan) : (f32) -> ()
  call @print_exp(%largest) : (f32) -> ()
  call @print_exp(%overflow) : (f32) -> ()
  call @print_exp(%underflow) : (f32) -> ()
  call @print_exp(%zero) : (f32) -> ()
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %y : memref<?xf32>
  memref.dealloc %z : memref<?xf32>
  return
}
