#!/usr/bin/env bash
#===- gpu-session.sh - Every GPU check and timing in one call ---------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: scripts/gpu-session.sh build DIR   (where tfc is built; writes DIR
#                                           and DIR.tar.xz)
#        scripts/gpu-session.sh run ARCHIVE OUT
#                                          (on the GPU machine, from the
#                                           repository root; results in OUT)
#
# A GPU machine is lent for minutes and has no MLIR, LLVM or tfc, so
# everything it runs is built here and packed into one archive small
# enough to carry (executables compress about 5x):
#
#   DIR/check   scripts/gpu-check.sh build: every check of the GPU build
#               (float64 families, the tiny LM, bf16, FlashAttention);
#   DIR/rows    bench/gpu build, config B in bf16, attention by rows (the
#               default), for $GPU_SESSION_FAMILIES at $GPU_SESSION_SEQS
#               (built only when the rows step is asked for: the archive
#               must stay under 64 MiB);
#   DIR/flash   bench/gpu build with --gpu-attention=flash, for
#               $GPU_SESSION_FLASH_FAMILIES (those and Longformer, whose
#               window runs as FlashAttention kernels only there);
#   DIR/gemm, DIR/gemm90a, DIR/gemm90a-b132  bench/gpu-gemm build: the
#               contraction kernels alone at config B's shapes and 4096^3,
#               on mma.sync (sm_90) and on Hopper's warpgroup mma (sm_90a),
#               the latter also with tiles chosen for one block per
#               multiprocessor (min-blocks=132: larger tiles);
#   DIR/hopper  DIR/flash's models at $GPU_SESSION_HOPPER_SEQS (1024)
#               built with --gpu-arch=sm_90a (their contractions on the
#               warpgroup mma);
#   DIR/peer    bench/tfc_torch.py and test/interop's Longformer check,
#               whose --flex mode checks the FlexAttention form that
#               bench/gpu's compiled PyTorch side runs against the dense
#               definition (float32, on the GPU);
#   DIR/long    bench/gpu build of config B Longformer in bf16 with
#               --gpu-attention=flash at 16,384 and 65,536 tokens, batch 1
#               (its device memory as the sequence grows 4x);
#   DIR/attention  bench/gpu-attention build: the FlashAttention kernels
#               alone, forward + backward, per sequence length, head
#               dimension and mask (a Longformer window of 256 among them);
#   DIR/enwik8  specs/hourglass_enwik8.toml at its full size (8 x 2,049,
#               shortened 3x to 683: lengths padded to multiples of 64
#               around the FlashAttention kernels) in bf16 with
#               --gpu-attention=flash, and the corpus it trains on.
#
# `run` unpacks the archive and runs, in this order (most needed first:
# a call is cut off after its time limit, about 10 minutes, and each
# bench rewrites its table after every case, so a cut keeps what ran),
# writing each one's output under OUT: nvidia-smi's description of the
# device (device.txt); gpu-check.sh run (check.log); the FlexAttention
# peer's check (peer.log); bench/gpu-gemm run on gemm, gemm90a and
# gemm90a-b132, each kernel checked against float32 products and timed
# against cuBLAS (gemm.md, gemm90a.md, gemm90a-b132.md); bench/gpu run on
# flash with TFC_GPU_GRAPH=0 and 1 and the PyTorch sides
# $GPU_SESSION_TORCH (flash.md); bench/gpu run on hopper, graphs too,
# tfc's side only (hopper.md; flash.md has PyTorch's of the same run);
# bench/gpu-attention run against
# PyTorch's flash SDPA and FlexAttention (attention.md); hourglass_enwik8
# trains $GPU_SESSION_ENWIK8_STEPS (8) steps, its median tokens per second
# after the first step (enwik8.md, the run's log and metrics in
# enwik8.log and enwik8.jsonl); bench/gpu run on
# long, tfc's side only (long.md); bench/gpu run on rows, graphs too,
# tfc's side only (rows.md). A failed step is reported
# and the next runs. $GPU_SESSION_STEPS (default
# check,peer,gemm,flash,hopper,attention,enwik8,long; rows too when
# asked for)
# picks the steps, for a call that has less time, and, given to build,
# what is built.
#
#===------------------------------------------------------------------------===#

set -uo pipefail
mode=${1:-}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
families=${GPU_SESSION_FAMILIES:-vanilla,hourglass,primer_ez}
flash_families=${GPU_SESSION_FLASH_FAMILIES:-$families,longformer}
seqs=${GPU_SESSION_SEQS:-1024,4096}
hopper_seqs=${GPU_SESSION_HOPPER_SEQS:-1024}
torch_modes=${GPU_SESSION_TORCH:-bf16-compile}
steps=${GPU_SESSION_STEPS:-check,peer,gemm,flash,hopper,attention,enwik8,long}
enwik8_steps=${GPU_SESSION_ENWIK8_STEPS:-8}
# wants STEP: whether `run` runs STEP.
wants() { [[ ,$steps, == *,$1,* ]]; }

case $mode in
  build)
    dir=${2:?usage: $0 build DIR}
    set -e
    rm -rf "$dir" && mkdir -p "$dir"
    "$root/scripts/gpu-check.sh" build "$dir/check"
    if wants rows; then
      python3 "$root/bench/gpu" build "$dir/rows" --seqs "$seqs" \
        --families "$families" --tfc-flag=--precision=bf16
    fi
    python3 "$root/bench/gpu" build "$dir/flash" --seqs "$seqs" \
      --families "$flash_families" --tfc-flag=--precision=bf16 \
      --tfc-flag=--gpu-attention=flash
    python3 "$root/bench/gpu-gemm" build "$dir/gemm"
    python3 "$root/bench/gpu-gemm" build "$dir/gemm90a" --arch sm_90a
    python3 "$root/bench/gpu-gemm" build "$dir/gemm90a-b132" --arch sm_90a \
      --options min-blocks=132
    if wants hopper; then
      python3 "$root/bench/gpu" build "$dir/hopper" --seqs "$hopper_seqs" \
        --families "$flash_families" --tfc-flag=--precision=bf16 \
        --tfc-flag=--gpu-attention=flash --tfc-flag=--gpu-arch=sm_90a
    fi
    mkdir -p "$dir/peer/bench" "$dir/peer/test/interop/Inputs"
    cp "$root/bench/tfc_torch.py" "$dir/peer/bench/"
    cp "$root/test/interop/Inputs/check_longformer_chunks.py" "$dir/peer/test/interop/Inputs/"
    python3 "$root/bench/gpu" build "$dir/long" --seqs 16384,65536 --batch 1 \
      --families longformer --tfc-flag=--precision=bf16 \
      --tfc-flag=--gpu-attention=flash
    python3 "$root/bench/gpu-attention" build "$dir/attention"
    if wants enwik8; then
      tfc_bin=${TFC_BUILD_DIR:-$root/build}/bin/tfc
      mkdir -p "$dir/enwik8"
      "$tfc_bin" compile "$root/specs/hourglass_enwik8.toml" --target=cuda \
        --precision=bf16 --gpu-attention=flash -o "$dir/enwik8/hourglass_enwik8"
      cp "$dir/flash/sotu.txt" "$dir/enwik8/sotu.txt"
    fi
    # Within the carry limit (64 MiB): one copy of each corpus (tar keeps
    # hard links as links), and no CPU executable whose runs are done.
    for corpus in "$dir"/rows/*.txt "$dir"/long/*.txt "$dir"/hopper/*.txt \
      "$dir"/enwik8/*.txt; do
      [[ -f $corpus && -f $dir/flash/$(basename "$corpus") ]] &&
        ln -f "$dir/flash/$(basename "$corpus")" "$corpus"
    done
    rm -f "$dir"/check/flash/*.cpu32
    tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
    echo "built $dir.tar.xz ($(du -m "$dir.tar.xz" | cut -f1) MiB); now: $0 run $dir.tar.xz OUT (on the GPU machine)"
    ;;
  run)
    archive=${2:?usage: $0 run ARCHIVE OUT}
    out=${3:?usage: $0 run ARCHIVE OUT}
    mkdir -p "$out"
    work=$(mktemp -d)
    tar -C "$work" -xJf "$archive"
    dir=$work/$(basename "$archive" .tar.xz)
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/device.txt" 2>&1
    date -u >> "$out/device.txt"
    if wants check; then
      "$root/scripts/gpu-check.sh" run "$dir/check" > "$out/check.log" 2>&1 ||
        echo "gpu-check: FAILED (see check.log)"
      grep -E ': (ok|FAILED)|^gpu-check' "$out/check.log"
    fi
    if wants peer; then
      python3 "$dir/peer/test/interop/Inputs/check_longformer_chunks.py" --flex cuda \
        > "$out/peer.log" 2>&1 && echo "FlexAttention peer: ok" ||
        echo "FlexAttention peer: FAILED (see peer.log)"
    fi
    if wants gemm; then
      for g in gemm gemm90a gemm90a-b132; do
        python3 "$dir/$g/gpu-gemm" run "$dir/$g" --out "$out/$g.md" > "$out/$g.log" 2>&1 ||
          echo "bench $g: FAILED (see $g.log)"
      done
    fi
    if wants flash; then
      python3 "$dir/flash/gpu" run "$dir/flash" --tfc-graph --torch-modes "$torch_modes" \
        --steps 5 --out "$out/flash.md" > "$out/flash.log" 2>&1 ||
        echo "bench flash: FAILED (see flash.log)"
    fi
    if wants hopper; then
      python3 "$dir/hopper/gpu" run "$dir/hopper" --tfc-graph --no-torch \
        --steps 5 --out "$out/hopper.md" > "$out/hopper.log" 2>&1 ||
        echo "bench hopper: FAILED (see hopper.log)"
    fi
    if wants attention; then
      python3 "$dir/attention/gpu-attention" run "$dir/attention" \
        --out "$out/attention.md" > "$out/attention.log" 2>&1 ||
        echo "bench attention: FAILED (see attention.log)"
    fi
    if wants enwik8; then
      (cd "$dir/enwik8" &&
       ./hourglass_enwik8 train --data sotu.txt --steps "$enwik8_steps" \
         --eval-every 0 --out run > "$out/enwik8.log" 2>&1 &&
       cp run/metrics.jsonl "$out/enwik8.jsonl" &&
       python3 - "$out/enwik8.jsonl" > "$out/enwik8.md" <<'PY'
import json, statistics, sys
rates = [r["tokens_per_s"] for r in map(json.loads, open(sys.argv[1]))
         if "tokens_per_s" in r and r.get("step", 0) > 1]
print("| model | tokens/s (median of steps 2-%d) |" % (len(rates) + 1))
print("| --- | ---: |")
print("| hourglass_enwik8, bf16, flash, 8 x 2,049 | %.0f |" % statistics.median(rates))
PY
      ) || echo "hourglass_enwik8: FAILED (see enwik8.log)"
    fi
    if wants long; then
      python3 "$dir/long/gpu" run "$dir/long" --no-torch --steps 3 \
        --out "$out/long.md" > "$out/long.log" 2>&1 ||
        echo "bench long: FAILED (see long.log)"
    fi
    if wants rows; then
      python3 "$dir/rows/gpu" run "$dir/rows" --tfc-graph --no-torch \
        --steps 5 --out "$out/rows.md" > "$out/rows.log" 2>&1 ||
        echo "bench rows: FAILED (see rows.log)"
    fi
    cat "$out/gemm.md" "$out/gemm90a.md" "$out/gemm90a-b132.md" "$out/flash.md" "$out/hopper.md" \
      "$out/attention.md" "$out/enwik8.md" "$out/long.md" "$out/rows.md" 2>/dev/null
    rm -rf "$work"
    ;;
  *) echo "usage: $0 build DIR | run ARCHIVE OUT" >&2; exit 1 ;;
esac
