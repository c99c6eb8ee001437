// A forward projection (both operands k-innermost), a weight gradient
// (both transposed, split along k) and a Performer's chunk product (a head
// between m and n, 32 columns), for the PTX and ptxas tests.
func.func @projection(%x: memref<4096x256xbf16>, %w: memref<768x256xbf16>, %y: memref<4096x768xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4096x768xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
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

func.func @weight_gradient(%dy: memref<4096x256xbf16>, %x: memref<4096x256xbf16>, %dw: memref<256x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<256x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : memref<4096x256xbf16>, memref<4096x256xbf16>) outs(%dw : memref<256x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

func.func @head_between(%q: memref<2x64x4x128xbf16>, %state: memref<2x4x128x32xbf16>, %out: memref<2x64x4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2x64x4x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, c, h, e, f) -> (b, c, h, f)>, affine_map<(b, c, h, e, f) -> (b, h, f, e)>, affine_map<(b, c, h, e, f) -> (b, c, h, e)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
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
