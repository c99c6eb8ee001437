// RUN: tfc-opt %s -split-input-file --tfc-expand-bf16 | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-expand-bf16=roundings=false | FileCheck %s --check-prefix=WIDEN

// Rounding a vector to bf16: the float32 bits plus 0x7fff and the lowest
// kept bit, shifted right by 16 (round to nearest, ties to even); a NaN
// becomes the quiet NaN 0x7fc0. No arith.truncf is left for LLVM, which
// would call __truncsfbf2 on a CPU without AVX512-BF16.

// CHECK-LABEL: func.func @round_vector
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1> : vector<16xi32>
// CHECK-DAG: %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<16xi32>
// CHECK-DAG: %[[NAN:.*]] = arith.constant dense<32704> : vector<16xi16>
// CHECK-DAG: %[[HALF:.*]] = arith.constant dense<32767> : vector<16xi32>
// CHECK: %[[ISNAN:.*]] = arith.cmpf une, %arg0, %arg0 : vector<16xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : vector<16xf32> to vector<16xi32>
// CHECK: %[[HIGH:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]]
// CHECK: %[[LSB:.*]] = arith.andi %[[HIGH]], %[[ONE]]
// CHECK: %[[BIAS:.*]] = arith.addi %[[LSB]], %[[HALF]]
// CHECK: %[[SUM:.*]] = arith.addi %[[BITS]], %[[BIAS]]
// CHECK: %[[SHIFTED:.*]] = arith.shrui %[[SUM]], %[[SIXTEEN]]
// CHECK: %[[NARROW:.*]] = arith.trunci %[[SHIFTED]] : vector<16xi32> to vector<16xi16>
// CHECK: %[[SELECTED:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[NARROW]]
// CHECK: arith.bitcast %[[SELECTED]] : vector<16xi16> to vector<16xbf16>
// CHECK-NOT: arith.truncf
// With roundings=false (a CPU with AVX512-BF16) the rounding stays.
// WIDEN-LABEL: func.func @round_vector
// WIDEN: arith.truncf %arg0 : vector<16xf32> to vector<16xbf16>
func.func @round_vector(%a: vector<16xf32>) -> vector<16xbf16> {
  %0 = arith.truncf %a : vector<16xf32> to vector<16xbf16>
  return %0 : vector<16xbf16>
}

// -----

// Widening a scalar: its bits placed high.

// CHECK-LABEL: func.func @widen_scalar
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK: %[[HIGH:.*]] = arith.shli %[[WIDE]], %{{.*}} : i32
// CHECK: arith.bitcast %[[HIGH]] : i32 to f32
// CHECK-NOT: arith.extf
// WIDEN-LABEL: func.func @widen_scalar
// WIDEN: %[[BITS:.*]] = arith.bitcast %arg0 : bf16 to i16
// WIDEN: %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// WIDEN: %[[HIGH:.*]] = arith.shli %[[WIDE]], %{{.*}} : i32
// WIDEN: arith.bitcast %[[HIGH]] : i32 to f32
// WIDEN-NOT: arith.extf
func.func @widen_scalar(%a: bf16) -> f32 {
  %0 = arith.extf %a : bf16 to f32
  return %0 : f32
}

// -----

// Widening a vector, with either option: the same shift, lane by lane
// (which LLVM vectorises, where it would take an extf from bf16 apart).

// CHECK-LABEL: func.func @widen_vector
// CHECK: arith.constant dense<16> : vector<16xi32>
// CHECK: arith.bitcast %arg0 : vector<16xbf16> to vector<16xi16>
// CHECK: arith.extui %{{.*}} : vector<16xi16> to vector<16xi32>
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// WIDEN-LABEL: func.func @widen_vector
// WIDEN: %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<16xi32>
// WIDEN: %[[BITS:.*]] = arith.bitcast %arg0 : vector<16xbf16> to vector<16xi16>
// WIDEN: %[[WIDE:.*]] = arith.extui %[[BITS]] : vector<16xi16> to vector<16xi32>
// WIDEN: %[[HIGH:.*]] = arith.shli %[[WIDE]], %[[SIXTEEN]] : vector<16xi32>
// WIDEN: arith.bitcast %[[HIGH]] : vector<16xi32> to vector<16xf32>
// WIDEN-NOT: arith.extf
func.func @widen_vector(%a: vector<16xbf16>) -> vector<16xf32> {
  %0 = arith.extf %a : vector<16xbf16> to vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// Other conversions stay.

// CHECK-LABEL: func.func @other_types
// WIDEN-LABEL: func.func @other_types
// WIDEN: arith.truncf %arg0 : f64 to f32
// WIDEN: arith.extf %arg1 : f16 to f32
// CHECK: arith.truncf %arg0 : f64 to f32
// CHECK: arith.extf %arg1 : f16 to f32
func.func @other_types(%a: f64, %b: f16) -> (f32, f32) {
  %0 = arith.truncf %a : f64 to f32
  %1 = arith.extf %b : f16 to f32
  return %0, %1 : f32, f32
}
