// RUN: tfc-opt %s -split-input-file --tfc-fast-math | FileCheck %s

// Float arithmetic may be reassociated and contracted; integer ops are left
// alone.

// CHECK-LABEL: func.func @dot
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
func.func @dot(%a: f32, %b: f32, %c: f32, %i: i32) -> (f32, i32) {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %p, %c : f32
  %j = arith.addi %i, %i : i32
  return %s, %j : f32, i32
}

// -----

// f32 transcendental functions become polynomials (no libm call left);
// f64 ones stay for libm.

// CHECK-LABEL: func.func @transcendental
// CHECK-NOT: math.tanh %{{.*}} : f32
// CHECK-NOT: math.exp %{{.*}} : f32
// CHECK: math.fma
// CHECK: math.tanh %{{.*}} : f64
func.func @transcendental(%x: f32, %y: f64) -> (f32, f32, f64) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %d = math.tanh %y : f64
  return %t, %e, %d : f32, f32, f64
}

// -----

// Flags an op already carries are kept: a softmax's row maximum, marked
// nnan and nsz where it was built, stays a plain max instruction.

// CHECK-LABEL: func.func @keeps_flags
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,nnan,nsz,contract> : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
func.func @keeps_flags(%a: f32, %b: f32) -> (f32, f32) {
  %m = arith.maximumf %a, %b fastmath<nnan,nsz> : f32
  %r = arith.maximumf %a, %b : f32
  return %m, %r : f32, f32
}

// -----

// exp on f32, scalar or vector, is 2^k p(r): x clamped by comparisons that
// keep a NaN, k = roundeven(x log2 e), r = x - k ln 2 (two fmas), p of
// degree 5 (five fmas), 2^(k-1) built in the exponent bits, one multiply.

// CHECK-LABEL: func.func @exp
// CHECK: %[[LO:.*]] = arith.cmpf uge, %[[X:.*]], %{{.*}} : f32
// CHECK: %[[X1:.*]] = arith.select %[[LO]], %[[X]], %{{.*}} : f32
// CHECK: %[[HI:.*]] = arith.cmpf ule, %[[X1]], %{{.*}} : f32
// CHECK: %[[X2:.*]] = arith.select %[[HI]], %[[X1]], %{{.*}} : f32
// CHECK: %[[K:.*]] = math.roundeven %{{.*}} : f32
// CHECK-COUNT-7: math.fma
// CHECK: %[[KI:.*]] = arith.fptosi %[[K]] : f32 to i32
// CHECK: %[[E:.*]] = arith.addi %[[KI]], %{{.*}} : i32
// CHECK: %[[BITS:.*]] = arith.shli %[[E]], %{{.*}} : i32
// CHECK: %[[SCALE:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK-NOT: math.exp
// CHECK-NOT: math.floor
func.func @exp(%x: f32, %v: vector<16xf32>) -> (f32, vector<16xf32>) {
  %e = math.exp %x : f32
  %w = math.exp %v : vector<16xf32>
  return %e, %w : f32, vector<16xf32>
}
