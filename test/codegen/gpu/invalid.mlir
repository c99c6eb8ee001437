// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-gpu-map-kernels

// A parallel loop with a reduction has no one-thread-per-iteration kernel.
func.func @parallel_reduction(%in: memref<8xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'scf.parallel' op with reductions cannot be mapped to a GPU kernel}}
  %sum = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %x = memref.load %in[%i] : memref<8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// -----

// The host cannot read device memory to decide its own control flow.
func.func @host_control(%n: memref<index>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  // expected-error @below {{'memref.load' op reads a buffer on the host, which cannot read device memory}}
  %count = memref.load %n[] : memref<index>
  scf.for %b = %c0 to %count step %c1 {
    scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
      memref.store %one, %out[%b] : memref<16xf32>
      scf.reduce
    }
  }
  return
}
