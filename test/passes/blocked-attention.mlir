// RUN: tfc-opt %s -split-input-file --tfc-blocked-attention=block-size=4 | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-blocked-attention="block-size=4 parallel-heads=1" | FileCheck %s --check-prefix=PAIRS
// RUN: tfc-opt %s -split-input-file --tfc-blocked-attention | FileCheck %s --check-prefix=AUTO
// RUN: tfc-opt %s -split-input-file --tfc-blocked-attention=block-size=64 | FileCheck %s --check-prefix=WIDE

// Causal softmax attention over 8 positions in blocks of 4: an outer loop
// over the 2 query blocks, an inner loop over key blocks 0..qb only (the
// blocks above the diagonal are skipped), an online softmax whose running
// maximum, sum and accumulator are updated in place, and the causal test on
// absolute positions. No 8x8 score tensor is built.

// CHECK-LABEL: func.func @softmax_causal
// CHECK-NOT: tfc.attention
// CHECK-NOT: tensor<2x2x8x8xf32>
// CHECK: %[[OUT:.*]]:2 = scf.for %[[QB:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x8x2x4xf32>, tensor<2x2x8xf32>)
// CHECK: %[[ROW:.*]] = arith.muli %[[QB]], %c4
// CHECK: tensor.extract_slice %{{.*}}[0, %[[ROW]], 0, 0] [2, 4, 2, 4]
// CHECK: %[[NEXT:.*]] = arith.addi %[[QB]], %{{.*}} : index
// CHECK: %[[HI:.*]] = arith.minsi %{{.*}}, %[[NEXT]] : index
// CHECK: scf.for %[[KB:[a-z0-9_]+]] = %{{.*}} to %[[HI]] step %{{.*}} iter_args({{.*}}) -> (tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<2x4x2x4xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<2x2x4x4xf32>)
// CHECK: arith.cmpi sle
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: math.log
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, %[[ROW]], 0, 0] [2, 4, 2, 4]
// CHECK: tensor.collapse_shape %[[OUT]]#0

// With parallel-heads, the block loops run once per (batch, head) pair, in
// the iterations of one scf.forall over the 2 x 2 pairs, on blocks without
// the unit batch and head dimensions (4x4 scores, not 1x1x4x4; the zeros
// they start from are filled into a 4x4 tensor.empty, not into a reshape
// of a 1x1x4x4 one, which tfc-unshare-fills would not see); each pair
// writes its rows of the output and the log-sum-exp.

// PAIRS-LABEL: func.func @softmax_causal
// PAIRS: %[[OUT:.*]]:2 = scf.forall (%[[PAIR:.*]]) in (4) shared_outs({{.*}}) -> (tensor<2x8x2x4xf32>, tensor<2x2x8xf32>)
// PAIRS: %[[B:.*]] = arith.divui %[[PAIR]], %c2
// PAIRS: %[[H:.*]] = arith.remui %[[PAIR]], %c2
// PAIRS: tensor.extract_slice %{{.*}}[%[[B]], 0, %[[H]], 0] [1, 8, 1, 4] [1, 1, 1, 1] : tensor<2x8x2x4xf32> to tensor<8x4xf32>
// PAIRS: tensor.extract_slice %{{.*}}[%[[B]], 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
// PAIRS: scf.for
// PAIRS: scf.for
// PAIRS: %[[EMPTY:.*]] = tensor.empty() : tensor<4x4xf32>
// PAIRS-NEXT: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x4xf32>)
// PAIRS-NEXT: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}outs(%[[ZEROS]] : tensor<4x4xf32>)
// PAIRS: arith.cmpi sle
// PAIRS: math.exp
// PAIRS: math.log
// PAIRS: scf.forall.in_parallel
// PAIRS-NEXT: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], 0, %[[H]], 0] [1, 8, 1, 4]
// PAIRS-NEXT: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %[[H]], 0] [1, 1, 8]
// PAIRS: tensor.collapse_shape %[[OUT]]#0
func.func @softmax_causal(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>,
                          %v: tensor<2x8x8xf32>, %m: tensor<2x8xf32>)
    -> tensor<2x8x8xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      mask(%m : tensor<2x8xf32>)
      : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %a : tensor<2x8x8xf32>
}

// -----

// Non-causal softmax attention: every query block visits every key block
// (the inner loop runs from 0 to the block count, 2).

// CHECK-LABEL: func.func @softmax_full
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C2]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}}
// CHECK-NOT: arith.minsi
// CHECK-NOT: arith.cmpi
// CHECK: scf.yield
func.func @softmax_full(%q: tensor<1x8x4xf32>, %k: tensor<1x8x4xf32>,
                        %v: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  %a = tfc.attention #tfc.softmax<> heads 1 %q, %k, %v
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<1x8x4xf32>
  return %a : tensor<1x8x4xf32>
}

// -----

// Longformer, window 4 (2 keys on each side), dilation 2, global token 0,
// over 16 positions in blocks of 4: a key block range of qb-1..qb+1 (the
// band reaches 4 positions = one block each way), the global column skipped
// in the band blocks (its flag, a float, compared with 0) and visited as a
// block of its own (gathered once), and the global row recomputed over
// every key through the global projections. Positions in the masks are i32.

// CHECK-LABEL: func.func @longformer_global
// CHECK: %[[FLAGS:.*]] = arith.constant dense<[1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<16xf32>
// CHECK: %[[GIDX:.*]] = arith.constant dense<0> : tensor<1xi64>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 1, 1, 4] {{.*}} into tensor<1x1x1x4xf32>
// CHECK: scf.for %[[QB:[a-z0-9_]+]] =
// CHECK: %[[BACK:.*]] = arith.subi %[[QB]], %c1{{(_[0-9]+)?}} :
// CHECK: %[[LO:.*]] = arith.maxsi %{{.*}}, %[[BACK]]
// CHECK: %[[AHEAD:.*]] = arith.addi %[[QB]], %c2{{(_[0-9]+)?}} :
// CHECK: %[[HI:.*]] = arith.minsi %{{.*}}, %[[AHEAD]]
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[HI]]
// CHECK: tensor.extract_slice %[[FLAGS]]
// CHECK: arith.index_cast %{{.*}} : index to i32
// CHECK: arith.remsi %{{.*}} : i32
// CHECK: arith.cmpf oeq
// CHECK: scf.yield
// The global columns' block: scores against 1 gathered key, non-causal.
// CHECK: linalg.generic {{.*}}outs(%{{.*}} : tensor<1x1x4x1xf32>)
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[GIDX]] : tensor<1x1x4x1xf32>, tensor<1xi64>)
// CHECK: scf.yield
// The global row, after the blocks.
// CHECK: tensor.extract_slice %arg3[0, 0, 0] [1, 1, 4]
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 1, 1, 4]
func.func @longformer_global(%q: tensor<1x16x4xf32>, %k: tensor<1x16x4xf32>,
                             %v: tensor<1x16x4xf32>, %gq: tensor<1x16x4xf32>,
                             %gk: tensor<1x16x4xf32>, %gv: tensor<1x16x4xf32>)
    -> tensor<1x16x4xf32> {
  %a = tfc.attention #tfc.longformer<window = 4, dilation = 2, global = [0]> heads 1
      %q, %k, %v
      global(%gq, %gk, %gv : tensor<1x16x4xf32>, tensor<1x16x4xf32>, tensor<1x16x4xf32>)
      : tensor<1x16x4xf32>, tensor<1x16x4xf32>, tensor<1x16x4xf32> -> tensor<1x16x4xf32>
  return %a : tensor<1x16x4xf32>
}

// -----

// The gradient of causal softmax attention: the forward recomputed by
// blocks (output and log-sum-exp), D = rowsum(dO o O), then an outer loop
// over key blocks with an inner loop over the query blocks at or below the
// diagonal (qb from kb on), carrying dQ whole and dK, dV per key block.

// CHECK-LABEL: func.func @softmax_causal_grad
// CHECK-NOT: tfc.attention_grad
// CHECK: scf.for
// CHECK: math.log
// CHECK: scf.yield
// CHECK: scf.for %[[KB:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>)
// CHECK: %[[FIRST:.*]] = arith.subi %[[KB]], %c0{{(_[0-9]+)?}} :
// CHECK: %[[LO:.*]] = arith.maxsi %{{.*}}, %[[FIRST]]
// CHECK: scf.for %{{.*}} = %[[LO]] to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<1x8x2x4xf32>, tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>)
// CHECK: math.exp
// CHECK: tensor.insert_slice
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: return

// With parallel-heads, the forward and the gradient are one scf.forall
// each over the 1 x 2 pairs; the gradient writes each pair's dQ, dK and dV.

// PAIRS-LABEL: func.func @softmax_causal_grad
// PAIRS: scf.forall (%{{.*}}) in (2) shared_outs({{.*}}) -> (tensor<1x8x2x4xf32>, tensor<1x2x8xf32>)
// PAIRS: math.log
// PAIRS: scf.forall (%{{.*}}) in (2) shared_outs({{.*}}) -> (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>)
// PAIRS: scf.for
// PAIRS: scf.for
// PAIRS: math.exp
// PAIRS: scf.forall.in_parallel
// PAIRS-COUNT-3: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, %{{.*}}, 0] [1, 8, 1, 4]
// PAIRS: return
func.func @softmax_causal_grad(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                               %v: tensor<1x8x8xf32>, %g: tensor<1x8x8xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
      -> tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
  return %dq, %dk, %dv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// -----

// A length of which the block size (4) is no divisor, and no smaller power
// of two of at least 16 is either: the blocks cover 8 positions. The head-
// split queries, keys and values get two zero rows, the key mask (ones, as
// the attention has none) two zeros that hide the padding keys, and the
// output drops the two padding rows.

// CHECK-LABEL: func.func @padded_length
// CHECK-COUNT-3: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 6, 1, 4] [1, 1, 1, 1] : tensor<1x6x1x4xf32> into tensor<1x8x1x4xf32>
// CHECK: %[[ONES:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6xf32>)
// CHECK: tensor.insert_slice %[[ONES]] into %{{.*}}[0, 0] [1, 6] [1, 1] : tensor<1x6xf32> into tensor<1x8xf32>
// CHECK: scf.for
// CHECK: arith.cmpf une
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 6, 1, 4] [1, 1, 1, 1] : tensor<1x8x1x4xf32> to tensor<1x6x1x4xf32>
// CHECK: return

// With the block chosen per attention (128 rows), a length of 6 is one
// block: nothing is padded.

// AUTO-LABEL: func.func @padded_length
// AUTO-NOT: tensor<1x8x1x4xf32>
// AUTO: return
func.func @padded_length(%q: tensor<1x6x4xf32>, %k: tensor<1x6x4xf32>,
                         %v: tensor<1x6x4xf32>) -> tensor<1x6x4xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %v
      : tensor<1x6x4xf32>, tensor<1x6x4xf32>, tensor<1x6x4xf32> -> tensor<1x6x4xf32>
  return %a : tensor<1x6x4xf32>
}

// -----

// With the block chosen per attention, a length (200) that only blocks of
// 8 rows divide is padded to 224, a multiple of the widest block (32) that
// adds at most 1/8 of padding: 7 blocks of 32 rows, the padding keys hidden
// by the key mask, whose real part is the attention's own mask.

// AUTO-LABEL: func.func @narrow_divisor
// AUTO: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 200, 1, 4] [1, 1, 1, 1] : tensor<1x200x1x4xf32> into tensor<1x224x1x4xf32>
// AUTO: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [1, 200] [1, 1] : tensor<1x200xf32> into tensor<1x224xf32>
// AUTO: scf.for
// AUTO: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [1, 32, 1, 4]
// AUTO: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 200, 1, 4] [1, 1, 1, 1] : tensor<1x224x1x4xf32> to tensor<1x200x1x4xf32>
func.func @narrow_divisor(%q: tensor<1x200x4xf32>, %k: tensor<1x200x4xf32>,
                          %v: tensor<1x200x4xf32>, %m: tensor<1x200xf32>)
    -> tensor<1x200x4xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %v
      mask(%m : tensor<1x200xf32>)
      : tensor<1x200x4xf32>, tensor<1x200x4xf32>, tensor<1x200x4xf32> -> tensor<1x200x4xf32>
  return %a : tensor<1x200x4xf32>
}

// -----

// An explicit block size is the block: with block-size=64, 80 positions
// (which blocks of 16 would divide) are padded to 128, two blocks of 64.

// WIDE-LABEL: func.func @explicit_block
// WIDE: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 80, 1, 4] [1, 1, 1, 1] : tensor<1x80x1x4xf32> into tensor<1x128x1x4xf32>
// WIDE: scf.for
// WIDE: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [1, 64, 1, 4]
// WIDE: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 80, 1, 4] [1, 1, 1, 1] : tensor<1x128x1x4xf32> to tensor<1x80x1x4xf32>
func.func @explicit_block(%q: tensor<1x80x4xf32>, %k: tensor<1x80x4xf32>,
                          %v: tensor<1x80x4xf32>) -> tensor<1x80x4xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %v
      : tensor<1x80x4xf32>, tensor<1x80x4xf32>, tensor<1x80x4xf32> -> tensor<1x80x4xf32>
  return %a : tensor<1x80x4xf32>
}

// -----

// Refused: queries and keys of different lengths, and Performer attention,
// stay for the dense and chunked lowerings.

// CHECK-LABEL: func.func @cross_lengths
// CHECK: tfc.attention #tfc.softmax<>
func.func @cross_lengths(%q: tensor<1x4x4xf32>, %k: tensor<1x8x4xf32>,
                         %v: tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  %a = tfc.attention #tfc.softmax<> heads 1 %q, %k, %v
      : tensor<1x4x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<1x4x4xf32>
  return %a : tensor<1x4x4xf32>
}

// CHECK-LABEL: func.func @performer
// CHECK: tfc.attention #tfc.performer
func.func @performer(%q: tensor<1x8x4xf32>, %k: tensor<1x8x4xf32>,
                     %v: tensor<1x8x4xf32>, %f: tensor<8x4xf32>)
    -> tensor<1x8x4xf32> {
  %a = tfc.attention #tfc.performer<features = 8, redraw = 0, causal> heads 1 %q, %k, %v
      features(%f : tensor<8x4xf32>)
      : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<1x8x4xf32>
  return %a : tensor<1x8x4xf32>
}

// -----

// A forward and its gradient in one function (as in @train_step): the
// gradient reuses the forward's output and log-sum-exp instead of running
// the blocked forward again, so the log of the row sums appears once.

// CHECK-LABEL: func.func @forward_and_grad
// CHECK: %[[FWD:.*]]:2 = scf.for
// CHECK: math.log
// CHECK-NOT: math.log
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[FWD]]#0 : tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>)
// CHECK-NOT: math.log
// CHECK: tensor.extract_slice %[[FWD]]#1
// CHECK-NOT: math.log
// CHECK: return
func.func @forward_and_grad(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>,
                            %v: tensor<1x8x8xf32>, %g: tensor<1x8x8xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %a = tfc.attention #tfc.softmax<causal> heads 2 %q, %k, %v
      : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %dq, %dk, %dv = tfc.attention_grad #tfc.softmax<causal> heads 2 %q, %k, %v
      grad %g : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
      -> tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
  return %a, %dq, %dk, %dv : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// -----

// A forall that was there before the pass is not one of its pair loops:
// its ops keep their unit dimensions.

// PAIRS-LABEL: func.func @other_forall
// PAIRS: scf.forall
// PAIRS: linalg.generic {{.*}}outs(%{{.*}} : tensor<1x4xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
func.func @other_forall(%x: tensor<4x1x4xf32>) -> tensor<4x1x4xf32> {
  %r = scf.forall (%i) in (4) shared_outs(%o = %x) -> (tensor<4x1x4xf32>) {
    %s = tensor.extract_slice %x[%i, 0, 0] [1, 1, 4] [1, 1, 1]
        : tensor<4x1x4xf32> to tensor<1x4xf32>
    %d = linalg.generic {indexing_maps = [#id2, #id2],
                         iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<1x4xf32>) outs(%s : tensor<1x4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %a : f32
      linalg.yield %t : f32
    } -> tensor<1x4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %d into %o[%i, 0, 0] [1, 1, 4] [1, 1, 1]
          : tensor<1x4xf32> into tensor<4x1x4xf32>
    }
  }
  return %r : tensor<4x1x4xf32>
}

// -----

// Without block-size, softmax attention takes blocks of 128 rows, and a
// Longformer the block that visits the fewest key columns per row weighted
// by (T + 16) / T, narrower blocks only when at least 10% cheaper: a
// window of 128 (64 keys each side) over 256 positions in blocks of 64
// visits 3 key blocks, 192 columns (cost 240; 128 rows: both blocks, 288;
// 32 rows: 5 blocks, 240, a tie that goes to the wider block); a causal
// window of 256 over 512 positions keeps blocks of 128 (3 key blocks, cost
// 432; 64 rows: 5 blocks, 400, less than 10% cheaper); a window of 16
// takes blocks of 16 (3 key blocks, 96; 32 rows: 144).

// AUTO-LABEL: func.func @softmax_default
// AUTO: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [1, 128, 1, 4]
func.func @softmax_default(%q: tensor<1x256x4xf32>, %k: tensor<1x256x4xf32>,
                           %v: tensor<1x256x4xf32>) -> tensor<1x256x4xf32> {
  %a = tfc.attention #tfc.softmax<causal> heads 1 %q, %k, %v
      : tensor<1x256x4xf32>, tensor<1x256x4xf32>, tensor<1x256x4xf32> -> tensor<1x256x4xf32>
  return %a : tensor<1x256x4xf32>
}

// AUTO-LABEL: func.func @longformer_band_blocks
// AUTO: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [1, 64, 1, 4]
// AUTO-NOT: [1, 128, 1, 4]
// AUTO-LABEL: func.func @longformer_causal_band_blocks
// AUTO: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [1, 128, 1, 4]
// AUTO-NOT: [1, 64, 1, 4]
// AUTO-LABEL: func.func @longformer_narrow_band_blocks
// AUTO: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [1, 16, 1, 4]
// AUTO-NOT: [1, 32, 1, 4]
func.func @longformer_band_blocks(%q: tensor<1x256x4xf32>, %k: tensor<1x256x4xf32>,
                                  %v: tensor<1x256x4xf32>) -> tensor<1x256x4xf32> {
  %a = tfc.attention #tfc.longformer<window = 128> heads 1 %q, %k, %v
      : tensor<1x256x4xf32>, tensor<1x256x4xf32>, tensor<1x256x4xf32> -> tensor<1x256x4xf32>
  return %a : tensor<1x256x4xf32>
}

func.func @longformer_causal_band_blocks(%q: tensor<1x512x4xf32>, %k: tensor<1x512x4xf32>,
                                         %v: tensor<1x512x4xf32>) -> tensor<1x512x4xf32> {
  %a = tfc.attention #tfc.longformer<window = 256, causal> heads 1 %q, %k, %v
      : tensor<1x512x4xf32>, tensor<1x512x4xf32>, tensor<1x512x4xf32> -> tensor<1x512x4xf32>
  return %a : tensor<1x512x4xf32>
}

func.func @longformer_narrow_band_blocks(%q: tensor<1x256x4xf32>, %k: tensor<1x256x4xf32>,
                                         %v: tensor<1x256x4xf32>) -> tensor<1x256x4xf32> {
  %a = tfc.attention #tfc.longformer<window = 16> heads 1 %q, %k, %v
      : tensor<1x256x4xf32>, tensor<1x256x4xf32>, tensor<1x256x4xf32> -> tensor<1x256x4xf32>
  return %a : tensor<1x256x4xf32>
}
