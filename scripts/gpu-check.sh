#!/usr/bin/env bash
#===- gpu-check.sh - The GPU build checked on a GPU machine without tfc -----===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: scripts/gpu-check.sh build DIR    (where tfc is built)
#        scripts/gpu-check.sh run DIR      (on the GPU machine)
#        scripts/gpu-check.sh build-bf16 DIR, run-bf16 DIR: check 4 alone
#        scripts/gpu-check.sh build-flash DIR, run-flash DIR: check 6 alone
#
# The lit tests that need a GPU (test/codegen/gpu/device-*.test) compile
# as they go, so they run only on a machine that has both a GPU and tfc's
# toolchain. This script splits the same checks in two: `build` compiles
# everything into DIR, and `run` needs only the NVIDIA driver, a shell and
# DIR (the CPU builds bring their libomp):
#
#   1. every family of device-families.test, built in float64 for the GPU
#      and for the CPU (attention in blocks of 8 rows): the GPU build's
#      gradient check, then the CPU build's, comparing loss, logits,
#      gradient and one optimizer step with the GPU's at 1e-10 relative;
#   2. test/e2e/Inputs/tiny_lm.toml: the GPU executable trains 20 steps and
#      its test loss is compared with the CPU's from `build` (1e-3
#      relative, as in device-train-resume.test); it resumes the CPU's
#      checkpoint of step 10 to step 20 and evaluates the CPU's weights
#      (1e-5 relative). `run` leaves the GPU's checkpoint of step 20 in
#      DIR/tiny/r; `scripts/gpu-check.sh resume DIR`, back where tfc is
#      built, resumes it on the CPU to step 30;
#   3. the same LM with Performer attention whose features are redrawn
#      every 3 steps (the host rewrites parameters that the GPU keeps in
#      its memory between steps): after 20 GPU steps, every tensor of the
#      checkpoint agrees with the CPU's to 1e-3 of its largest element (a
#      feature matrix the GPU missed would differ by its whole size);
#   4. --precision=bf16 (its tensor-core contractions): the tiny LM at
#      d_model 64 trains 20 steps on the GPU to the CPU bf16 build's test
#      loss, and evaluates the CPU's float32-trained weights to the CPU
#      float32 build's loss, each within 1e-2 relative (run_bf16 says
#      why); tiny_performer64, a causal Performer in bf16 whose chunk
#      products run on the tensor cores, trains 20 steps to the CPU bf16
#      build's test loss (1e-2 relative); on an sm_90 device, the same
#      for the --gpu-arch=sm_90a builds (their contractions on Hopper's
#      warpgroup mma);
#   5. the trainings of 2 and 3 again with TFC_GPU_GRAPH=1 (the launches
#      between two copies replayed as one CUDA graph from their second
#      time on): the checkpoints are the same, bit for bit;
#   6. --gpu-attention=flash (FlashAttention kernels, bf16): the
#      tiny_lm64 of 4 trains 20 steps to the CPU bf16 build's test loss
#      (1e-2 relative); causal LMs with heads of 16, 64 and 128 channels
#      (lengths 64 and 128), a classifier with padding keys (heads of
#      32 channels, reviews padded to 64 tokens), two Longformers
#      without global tokens (a causal LM with a dilated window, a
#      classifier with a window on both sides) and a Longformer classifier
#      with global tokens 0 and 70 at 256 positions, and the first LM and
#      that classifier at 100 positions, which the kernels' 64 rows do not
#      divide (flash_models), evaluate CPU
#      float32-trained weights to the CPU float32 build's loss (1e-2
#      relative: 4's tolerance, for the same reasons), and their first
#      step's gradients, read from the checkpoint's Adam moments (m =
#      0.1 g after one step), agree with the CPU float32 build's tensor by
#      tensor within 0.2 of each tensor's largest (same_moments says
#      why). `build-flash DIR` and `run-flash DIR` run 6 alone.
#
# Prints one line per check and `gpu-check: ok` or `gpu-check: FAILED`.
#
# With TFC_GPU_CHECK_EMULATE=1, `build-bf16` and `build-flash` build the
# GPU executables of checks 4 and 6 with --gpu-emulate (at -O0), and their
# `run-bf16` and `run-flash` run here, on the CPU, kernel for kernel what
# the GPU would run (tfc-gpu-emulate-launches); the sm_90a builds run too.
#
#===------------------------------------------------------------------------===#

set -euo pipefail
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
  echo "usage: $0 build|run|resume|build-bf16|run-bf16|build-flash|run-flash DIR" >&2
  exit 1
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The GPU target of checks 4 and 6, emulated on the CPU on request.
cuda=(--target=cuda)
if [[ ${TFC_GPU_CHECK_EMULATE:-} == 1 ]]; then
  cuda=(--target=cuda --gpu-emulate -O0)
fi

# The families and the flags of test/codegen/gpu/device-families.test.
# A family named NAME_blocks is NAME built with --gpu-attention=blocks.
families=(vanilla_lm hourglass_lm hourglass_enwik8 primer_ez_lm transformer_cls
          performer_cls longformer_cls performer_lm longformer_lm
          vanilla_lm_blocks transformer_cls_blocks)

spec_of() { # family -> the tiny spec on stdout
  local tiny=$root/test/gradcheck/Inputs/tiny.sed specs=$root/specs
  case $1 in
    hourglass_enwik8) sed -f "$tiny" -e 's/^layout = .*/layout = "1@1 1@3 1@1"/' \
                        "$specs/hourglass_enwik8.toml" ;;
    performer_lm) sed -f "$tiny" -e 's/^kind = "softmax"/kind = "performer"\nfeatures = 8/' \
                    "$specs/vanilla_lm.toml" ;;
    longformer_lm) sed -f "$tiny" -e 's/^kind = "softmax"/kind = "longformer"\nwindow = [3, 2]\ndilation = [2, 3]/' \
                     "$specs/vanilla_lm.toml" ;;
    *) sed -f "$tiny" "$specs/$1.toml" ;;
  esac
}

build() {
  local build=${TFC_BUILD_DIR:-$root/build}
  local tfc=$build/bin/tfc lib=$build/lib llvm_lib=/usr/lib/llvm-19/lib
  mkdir -p "$dir/lib" "$dir/tiny"
  cp "$llvm_lib/libomp.so.5" "$dir/lib/"
  for f in "${families[@]}"; do
    local d=$dir/$f seq=32 gpu_flags=()
    [[ $f == hourglass_enwik8 ]] && seq=48
    [[ $f == *_blocks ]] && gpu_flags=(--gpu-attention=blocks)
    mkdir -p "$d"
    spec_of "${f%_blocks}" > "$d/spec.toml"
    "$tfc" compile "$d/spec.toml" --f64 --emit=obj --attention-block 8 --seq-len $seq \
      --target=cuda "${gpu_flags[@]}" -o "$d/gpu.o"
    "$tfc" compile "$d/spec.toml" --f64 --emit=obj --attention-block 8 --seq-len $seq \
      -o "$d/cpu.o"
    c++ "$d/gpu.o" "$lib/libtfc-gradcheck.a" "$lib/libtfcrt_cuda.a" -ldl -lm -o "$d/gpu"
    c++ "$d/cpu.o" "$lib/libtfc-gradcheck.a" -L"$llvm_lib" -Wl,-rpath,'$ORIGIN/../lib' \
      -lomp -lm -o "$d/cpu"
    rm "$d/gpu.o" "$d/cpu.o"
    echo "built $f"
  done
  local inputs=$root/test/e2e/Inputs
  cp "$inputs/tiny.txt" "$dir/tiny/"
  "$tfc" compile "$inputs/tiny_lm.toml" --target=cuda -o "$dir/tiny/gpu"
  "$tfc" compile "$inputs/tiny_lm.toml" -o "$dir/tiny/cpu"
  sed -e 's/^name = "tiny_lm"/name = "tiny_performer_lm"/' \
      -e 's/^kind = "softmax"/kind = "performer"\nfeatures = 16\nredraw = 3/' \
      "$inputs/tiny_lm.toml" > "$dir/tiny/performer.toml"
  "$tfc" compile "$dir/tiny/performer.toml" --target=cuda -o "$dir/tiny/pgpu"
  "$tfc" compile "$dir/tiny/performer.toml" -o "$dir/tiny/pcpu"
  build_bf16
  build_flash
  # The CPU's side of the training checks, run here: the GPU machine need
  # not run the CPU executable (it links Open MPI's library).
  (cd "$dir/tiny" && rm -rf c r &&
   ./cpu train --out c --steps 20 --data tiny.txt > c.log &&
   ./cpu train --out r --steps 10 --data tiny.txt > /dev/null &&
   ./cpu eval --weights c/last.safetensors --data tiny.txt > ce.log &&
   rm -rf pc && ./pcpu train --out pc --steps 20 --data tiny.txt > pc.log)
  echo "built tiny_lm; now: $0 run $dir (on the GPU machine)"
}

# The bf16 checks' models: the tiny LM at d_model 64 (d_ff 256, 2 x 64
# positions), whose projections and weight gradients are shapes that
# tfc-gpu-tensor-core-contractions maps, in bf16 for the GPU and the CPU,
# and its CPU runs (float32 and bf16), made here.
build_bf16() {
  local build=${TFC_BUILD_DIR:-$root/build}
  local tfc=$build/bin/tfc t=$dir/bf16
  mkdir -p "$t"
  cp "$root/test/e2e/Inputs/tiny.txt" "$t/"
  sed -e 's/^name = "tiny_lm"/name = "tiny_lm64"/' -e 's/^d_model = 32/d_model = 64/' \
      -e 's/^d_ff = 64/d_ff = 256/' -e 's/^seq_len = 32/seq_len = 64/' \
      -e 's/^dropout = 0.1/dropout = 0.0/' -e 's/^batch = 4/batch = 2/' \
      "$root/test/e2e/Inputs/tiny_lm.toml" > "$t/lm.toml"
  "$tfc" compile "$t/lm.toml" "${cuda[@]}" --precision=bf16 -o "$t/gpu"
  "$tfc" compile "$t/lm.toml" "${cuda[@]}" --precision=bf16 --gpu-arch=sm_90a \
    -o "$t/gpu90a"
  "$tfc" compile "$t/lm.toml" --precision=bf16 -o "$t/cpu"
  "$tfc" compile "$t/lm.toml" -o "$t/cpu32"
  # A causal Performer whose chunk products (64 positions, 64 features,
  # heads of 32 channels) run on the tensor cores.
  sed -e 's/^name = "tiny_lm64"/name = "tiny_performer64"/' -e 's/^heads = 4/heads = 2/' \
      -e 's/^seq_len = 64/seq_len = 128/' -e 's/^batch = 2/batch = 1/' \
      -e 's/^kind = "softmax"/kind = "performer"\nfeatures = 64/' \
      "$t/lm.toml" > "$t/performer.toml"
  "$tfc" compile "$t/performer.toml" "${cuda[@]}" --precision=bf16 -o "$t/pgpu"
  "$tfc" compile "$t/performer.toml" "${cuda[@]}" --precision=bf16 --gpu-arch=sm_90a \
    -o "$t/pgpu90a"
  "$tfc" compile "$t/performer.toml" --precision=bf16 -o "$t/pcpu"
  (cd "$t" && rm -rf c c32 &&
   ./cpu train --out c --steps 20 --data tiny.txt > c.log &&
   ./cpu32 train --out c32 --steps 20 --data tiny.txt > c32.log &&
   ./cpu32 eval --weights c32/last.safetensors --data tiny.txt > ce32.log &&
   rm -rf pc && ./pcpu train --out pc --steps 20 --data tiny.txt > pc.log)
  rm -f "$t/emulated"
  if [[ ${TFC_GPU_CHECK_EMULATE:-} == 1 ]]; then touch "$t/emulated"; fi
  echo "built tiny_lm64 and tiny_performer64 (bf16)"
}

# The data file of FlashAttention check NAME; the split that an LM's
# evaluation reads (the train split: the others of tiny.txt are shorter
# than a batch of 2 x 129 bytes).
flash_data() { [[ $1 == *cls ]] && echo tiny_reviews.jsonl || echo tiny.txt; }
flash_split() { [[ $1 == *cls ]] || echo "--split train"; }

# The FlashAttention checks' models: causal LMs with heads of 16, 64 and
# 128 channels, a classifier with padding keys, two Longformers without
# global tokens: a causal LM whose two layers have windows of 24 and 10
# positions, the second 3 apart, and a classifier with a window of 16
# positions 2 apart on both sides and padding keys; and that classifier
# at 256 positions with global tokens 0 and 70 (the kernels visit their
# columns' tiles outside a block's band; their rows are computed apart);
# and at lengths that 64 does not divide, padded around the kernels: the
# causal LM with heads of 16 channels at 100 positions (the padding keys
# come after every query) and the classifier with global tokens at 100
# (its padding keys masked).
flash_models="h16 h64 h128 cls lf64 lfcls lfgcls h16pad lfg100cls"

# flash_train EXE OUT STEPS NAME: EXE trains model NAME for STEPS steps
# into OUT on its data (tested on the same data, no evaluations between).
flash_train() {
  rm -rf "$2"
  "$1" train --out "$2" --steps "$3" --eval-every 0 --data "$(flash_data "$4")" \
    --test "$(flash_data "$4")"
}

# The FlashAttention checks' models (check 6), each NAME built for the GPU
# in bf16 with --gpu-attention=flash (NAME.fgpu) and for the CPU in
# float32 (NAME.cpu32), whose 10 training steps and evaluation run here;
# h16 is check 4's tiny_lm64.
build_flash() {
  local build=${TFC_BUILD_DIR:-$root/build}
  local tfc=$build/bin/tfc f=$dir/flash inputs=$root/test/e2e/Inputs
  mkdir -p "$f"
  cp "$inputs/tiny.txt" "$inputs/tiny_reviews.jsonl" "$f/"
  local lm=(-e 's/^dropout = 0.1/dropout = 0.0/' -e 's/^batch = 4/batch = 2/')
  cp "$dir/bf16/lm.toml" "$f/h16.toml"
  sed "${lm[@]}" -e 's/^d_model = 32/d_model = 128/' -e 's/^heads = 4/heads = 2/' \
      -e 's/^d_ff = 64/d_ff = 256/' -e 's/^seq_len = 32/seq_len = 128/' \
      "$inputs/tiny_lm.toml" > "$f/h64.toml"
  sed "${lm[@]}" -e 's/^d_model = 32/d_model = 256/' -e 's/^heads = 4/heads = 2/' \
      -e 's/^d_ff = 64/d_ff = 256/' -e 's/^seq_len = 32/seq_len = 128/' \
      "$inputs/tiny_lm.toml" > "$f/h128.toml"
  sed -f "$root/test/gradcheck/Inputs/tiny.sed" -e 's/^d_model = .*/d_model = 64/' \
      -e 's/^seq_len = .*/seq_len = 64/' -e 's/^batch = .*/batch = 2/' \
      "$root/specs/transformer_cls.toml" > "$f/cls.toml"
  sed "${lm[@]}" -e 's/^d_model = 32/d_model = 128/' -e 's/^heads = 4/heads = 2/' \
      -e 's/^d_ff = 64/d_ff = 256/' -e 's/^seq_len = 32/seq_len = 128/' \
      -e 's/^kind = "softmax"/kind = "longformer"\nwindow = [24, 10]\ndilation = [1, 3]/' \
      "$inputs/tiny_lm.toml" > "$f/lf64.toml"
  sed -f "$root/test/gradcheck/Inputs/tiny.sed" -e 's/^d_model = .*/d_model = 64/' \
      -e 's/^seq_len = .*/seq_len = 64/' -e 's/^batch = .*/batch = 2/' \
      -e 's/^window = .*/window = 16/' -e 's/^dilation = .*/dilation = 2/' \
      -e 's/^global_tokens = .*/global_tokens = []/' \
      "$root/specs/longformer_cls.toml" > "$f/lfcls.toml"
  sed -f "$root/test/gradcheck/Inputs/tiny.sed" -e 's/^d_model = .*/d_model = 64/' \
      -e 's/^seq_len = .*/seq_len = 256/' -e 's/^batch = .*/batch = 2/' \
      -e 's/^window = .*/window = 16/' -e 's/^dilation = .*/dilation = 2/' \
      -e 's/^global_tokens = .*/global_tokens = [0, 70]/' \
      "$root/specs/longformer_cls.toml" > "$f/lfgcls.toml"
  sed -e 's/^seq_len = .*/seq_len = 100/' "$f/h16.toml" > "$f/h16pad.toml"
  sed -e 's/^seq_len = .*/seq_len = 100/' "$f/lfgcls.toml" > "$f/lfg100cls.toml"
  local name
  for name in $flash_models; do
    "$tfc" compile "$f/$name.toml" "${cuda[@]}" --precision=bf16 \
      --gpu-attention=flash -o "$f/$name.fgpu"
    "$tfc" compile "$f/$name.toml" -o "$f/$name.cpu32"
    (cd "$f" && flash_train "./$name.cpu32" "$name.c32" 10 $name > /dev/null &&
     "./$name.cpu32" eval --weights "$name.c32/last.safetensors" \
       --data "$(flash_data $name)" $(flash_split $name) > "$name.ce32.log" &&
     flash_train "./$name.cpu32" "$name.s32" 1 $name > /dev/null)
  done
  echo "built the FlashAttention checks (bf16)"
}

# The FlashAttention checks, on the GPU machine. A kernel that read a
# fragment or a tile from the wrong place, attended a future token or a
# padding key, or normalised a row with another row's maximum would move
# these losses by far more than the bf16 roundings' 1e-2.
run_flash() {
  local failed=0 name
  cd "$dir/bf16"
  rm -rf fg
  check_loss fg.log c.log 1e-2 \
    "tiny_lm64 flash: 20 GPU steps, test loss %s (CPU bf16 %s): ok" \
    "tiny_lm64 flash: 20 GPU steps: FAILED (%s against %s)" \
    "$dir/flash/h16.fgpu" train --out fg --steps 20 --data tiny.txt || failed=1
  cd "$dir/flash"
  local diff
  for name in $flash_models; do
    check_loss "$name.ge.log" "$name.ce32.log" 1e-2 \
      "flash $name: the GPU's evaluation of the CPU's float32 weights %s (CPU f32 %s): ok" \
      "flash $name: evaluation on the GPU: FAILED (%s against %s)" \
      "./$name.fgpu" eval --weights "$name.c32/last.safetensors" \
      --data "$(flash_data $name)" $(flash_split $name) || failed=1
    if flash_train "./$name.fgpu" "$name.g1" 1 $name > "$name.g1.log" 2>&1 &&
       diff=$(same_moments "$name.g1/last.safetensors" "$name.s32/last.safetensors" 0.2); then
      echo "flash $name: the first step's gradients within $diff of the CPU float32 build's: ok"
    else
      echo "flash $name: the first step's gradients: FAILED (${diff:-no checkpoint})"; failed=1
    fi
  done
  return $failed
}

# The bf16 checks, on the GPU machine. Tolerances: the float32 builds of
# the GPU and the CPU agree to 1e-3 after 20 steps (above); in bf16 both
# round the same float32 values to bf16, but where the float32 values
# differ in their last bits (sums in another order) one may round to the
# neighbouring bf16 number, 2^-8 (0.4%) of that operand, so 20 steps are
# held to 1e-2. The GPU's bf16 evaluation of float32-trained weights
# differs from the float32 CPU's by the rounding of every operand (at most
# 2^-9 each, errors that mostly cancel in the sums): 1e-2 as well. A
# tensor-core kernel that read a fragment from the wrong place would move
# either by far more.
run_bf16() {
  local failed=0
  cd "$dir/bf16"
  gpu_steps 1e-2 \
    "tiny_lm64 bf16: 20 GPU steps, test loss %s (CPU bf16 %s, f32 $(loss_of c32.log)): ok" \
    "tiny_lm64 bf16: 20 GPU steps: FAILED (%s against %s)" || failed=1
  gpu_eval c32/last.safetensors ce32.log 1e-2 \
    "tiny_lm64 bf16: the GPU's evaluation of the CPU's float32 weights %s (CPU f32 %s): ok" \
    "tiny_lm64 bf16: evaluation on the GPU: FAILED (%s against %s)" || failed=1
  if grep -q '"event":"precision","precision":"bf16"' g/metrics.jsonl; then
    echo "tiny_lm64 bf16: metrics.jsonl records the precision: ok"
  else
    echo "tiny_lm64 bf16: no precision event in metrics.jsonl: FAILED"; failed=1
  fi
  bf16_steps ./pgpu pg pc.log "tiny_performer64 bf16" || failed=1
  # The same on Hopper's warpgroup mma (--gpu-arch=sm_90a), on an sm_90
  # device only (its cubin runs nowhere else), or emulated.
  if [[ -x gpu90a ]] && { [[ -e emulated ]] ||
       nvidia-smi --query-gpu=compute_cap --format=csv,noheader | grep -q '^9\.0'; }; then
    bf16_steps ./pgpu90a pg90a pc.log "tiny_performer64 bf16 sm_90a (wgmma)" || failed=1
    bf16_steps ./gpu90a g90a c.log "tiny_lm64 bf16 sm_90a (wgmma)" || failed=1
    check_loss ge90a.log ce32.log 1e-2 \
      "tiny_lm64 bf16 sm_90a (wgmma): the GPU's evaluation of the CPU's float32 weights %s (CPU f32 %s): ok" \
      "tiny_lm64 bf16 sm_90a (wgmma): evaluation on the GPU: FAILED (%s against %s)" \
      ./gpu90a eval --weights c32/last.safetensors --data tiny.txt || failed=1
  else
    echo "tiny_lm64 and tiny_performer64 bf16 sm_90a (wgmma): skipped (not an sm_90 device)"
  fi
  return $failed
}

# same_tensors A B TOL PREFIX FLOOR: every tensor of safetensors file A
# whose name starts with PREFIX within TOL times its largest magnitude in
# B, or FLOOR times the largest of all where that is larger; prints the
# worst ratio and its tensor (python3 with numpy).
same_tensors() {
  python3 - "$@" <<'PY'
import json, struct, sys
import numpy as np
def load(path, prefix):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for name, t in head.items():
        if name == "__metadata__" or not name.startswith(prefix):
            continue
        a, b = t["data_offsets"]
        dtype = {"F32": np.float32, "F64": np.float64}[t["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dtype)
    return out
prefix, tol = sys.argv[4], float(sys.argv[3])
a, b = load(sys.argv[1], prefix), load(sys.argv[2], prefix)
floor = max(float(sys.argv[5]) * max(float(np.max(np.abs(v))) for v in b.values()), 1e-30)
worst, name = max((float(np.max(np.abs(a[k] - b[k]))) / max(float(np.max(np.abs(b[k]))), floor), k)
                  for k in b)
print(f"{worst:.2e} ({name})")
sys.exit(0 if a.keys() == b.keys() and worst <= tol else 1)
PY
}

# same_weights A B TOL: every tensor of A within TOL times its largest
# magnitude in B.
same_weights() { same_tensors "$1" "$2" "$3" "" 0; }

# same_moments A B TOL: the Adam first moments (`optimizer.m.*`, 0.1 times
# the gradient after one step) of A within TOL of B's, tensor by tensor,
# relative to the tensor's largest magnitude in B, or 1e-3 of the largest
# of all where that is smaller (the gradient of a key projection's bias is
# zero but for rounding: softmax ignores a constant added to a row's
# scores). The CPU's bf16 and float32 builds differ by up to 0.09 so
# (lfgcls's first feed-forward weight), the emulated FlashAttention builds
# of check 6 by 0.005-0.10; a misplaced fragment of an attention
# gradient, or an operand overwritten before the gradient reads it, by
# 6-90 times the tensor (an emulated run of check 6 before the forward's
# operands had buffers of their own, FlashAttentionTensors.cpp).
same_moments() { same_tensors "$1" "$2" "$3" optimizer.m. 1e-3; }

loss_of() { sed -n 's/.*"loss":\([^,]*\),.*/\1/p' "$1" | tail -n 1; }

# within A B RTOL: |A - B| <= RTOL * |B|
within() { awk -v a="$1" -v b="$2" -v r="$3" \
             'BEGIN { d = a - b; if (d < 0) d = -d; if (b < 0) b = -b; exit !(d <= r * b) }'; }

# check_loss LOG REF RTOL OK FAILED CMD...: runs CMD, its output in LOG; when
# it succeeds and LOG's last loss is within RTOL of REF's (another log),
# prints OK, else FAILED and the last two lines of LOG and returns 1. OK and
# FAILED are printf formats given the two losses, LOG's then REF's.
check_loss() {
  local log=$1 ref=$2 rtol=$3 ok=$4 failed=$5
  shift 5
  if "$@" > "$log" 2>&1 &&
     within "$(loss_of "$log")" "$(loss_of "$ref")" "$rtol"; then
    printf "$ok\n" "$(loss_of "$log")" "$(loss_of "$ref")"
  else
    printf "$failed\n" "$(loss_of "$log")" "$(loss_of "$ref")"
    tail -n 2 "$log"
    return 1
  fi
}

# gpu_steps RTOL OK FAILED: ./gpu trains 20 steps from scratch into g/ (in
# the current folder, on tiny.txt); its test loss must be within RTOL of the
# CPU's in c.log (check_loss, g.log).
gpu_steps() {
  rm -rf g
  check_loss g.log c.log "$1" "$2" "$3" \
    ./gpu train --out g --steps 20 --data tiny.txt
}

# bf16_steps EXE OUT REF NAME: EXE (a bf16 build) trains 20 steps from
# scratch into OUT on tiny.txt; its test loss must be within 1e-2 of the
# CPU bf16 build's in REF (check_loss, OUT.log).
bf16_steps() {
  rm -rf "$2"
  check_loss "$2.log" "$3" 1e-2 \
    "$4: 20 GPU steps, test loss %s (CPU bf16 %s): ok" \
    "$4: 20 GPU steps: FAILED (%s against %s)" \
    "$1" train --out "$2" --steps 20 --data tiny.txt
}

# gpu_eval WEIGHTS REF RTOL OK FAILED: ./gpu evaluates WEIGHTS on tiny.txt;
# the loss must be within RTOL of the CPU's in REF (check_loss, ge.log).
gpu_eval() {
  check_loss ge.log "$2" "$3" "$4" "$5" \
    ./gpu eval --weights "$1" --data tiny.txt
}

run() {
  local failed=0
  export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  cd "$dir/tiny"
  gpu_steps 1e-3 "tiny_lm: 20 GPU steps, test loss %s (CPU %s): ok" \
    "tiny_lm: 20 GPU steps: FAILED" || failed=1
  if ./gpu train --resume r/last.safetensors --data tiny.txt --steps 20 > r1.log 2>&1 &&
     grep -q 'trained to step 20' r1.log; then
    echo "tiny_lm: the CPU's checkpoint of step 10 resumed on the GPU to step 20: ok"
  else
    echo "tiny_lm: resume on the GPU: FAILED"; tail -n 2 r1.log; failed=1
  fi
  gpu_eval c/last.safetensors ce.log 1e-5 \
    "tiny_lm: the GPU's evaluation of the CPU's weights %s (CPU %s): ok" \
    "tiny_lm: evaluation on the GPU: FAILED" || failed=1
  rm -rf pg
  local diff
  if ./pgpu train --out pg --steps 20 --data tiny.txt > pg.log 2>&1 &&
     diff=$(same_weights pg/last.safetensors pc/last.safetensors 1e-3); then
    echo "tiny_performer_lm (features redrawn every 3 steps): 20 GPU steps, weights within $diff of the CPU's: ok"
  else
    echo "tiny_performer_lm: 20 GPU steps: FAILED"; tail -n 2 pg.log; failed=1
  fi
  # 5. The same two trainings with their launches replayed as CUDA graphs.
  local exe out ref
  for exe in gpu pgpu; do
    out=${exe}-graph; ref=$([[ $exe == gpu ]] && echo g || echo pg)
    rm -rf "$out"
    if TFC_GPU_GRAPH=1 ./$exe train --out "$out" --steps 20 --data tiny.txt > "$out.log" 2>&1 &&
       diff=$(same_weights "$out/last.safetensors" "$ref/last.safetensors" 0); then
      echo "$exe with TFC_GPU_GRAPH=1: 20 steps, the same weights as launch by launch ($diff): ok"
    else
      echo "$exe with TFC_GPU_GRAPH=1: FAILED"; tail -n 2 "$out.log"; failed=1
    fi
  done
  # The families run side by side: each is a few thousand small forward calls
  # (two to four minutes on an H100 machine of 16 cores).
  echo "running the ${#families[@]} families side by side"
  for f in "${families[@]}"; do
    (cd "$dir/$f" && rm -f gpu.bin cpu.log &&
     { rc=0; ./gpu --dump gpu.bin > gpu.log 2>&1 || rc=$?; echo "exit $rc" >> gpu.log
       if ((rc == 0)); then
         rc=0; ./cpu --compare gpu.bin > cpu.log 2>&1 || rc=$?; echo "exit $rc" >> cpu.log
       fi; }) &
  done
  wait
  for f in "${families[@]}"; do
    local d=$dir/$f
    if grep -q '^gradcheck: ok' "$d/gpu.log" && grep -q '^exit 0' "$d/gpu.log" &&
       grep -q '^compare: ok' "$d/cpu.log" && grep -q '^exit 0' "$d/cpu.log"; then
      echo "$f: gradient check and CPU comparison ok ($(grep '^compare params' "$d/cpu.log"))"
    else
      echo "$f: FAILED"; tail -n 3 "$d/gpu.log" "$d/cpu.log" 2>/dev/null || true; failed=1
    fi
  done
  run_bf16 || failed=1
  run_flash || failed=1
  if ((failed)); then echo "gpu-check: FAILED"; exit 1; fi
  echo "gpu-check: ok"
}

resume() {
  cd "$dir/tiny"
  if ./cpu train --resume r/last.safetensors --data tiny.txt --steps 30 > r2.log 2>&1 &&
     grep -q 'trained to step 30' r2.log; then
    echo "tiny_lm: the GPU's checkpoint of step 20 resumed on the CPU to step 30: ok"
  else
    echo "tiny_lm: resume on the CPU: FAILED"; tail -n 2 r2.log; exit 1
  fi
}

case $mode in
  build) build ;;
  run) dir=$(cd "$dir" && pwd); run ;;
  build-bf16) mkdir -p "$dir"; build_bf16 ;;
  run-bf16) dir=$(cd "$dir" && pwd)
            if run_bf16; then echo "gpu-check: ok"; else echo "gpu-check: FAILED"; exit 1; fi ;;
  build-flash) mkdir -p "$dir"; build_bf16; build_flash ;;
  run-flash) dir=$(cd "$dir" && pwd)
             if run_flash; then echo "gpu-check: ok"; else echo "gpu-check: FAILED"; exit 1; fi ;;
  resume) resume ;;
  *) echo "usage: $0 build|run|resume|build-bf16|run-bf16|build-flash|run-flash DIR" >&2; exit 1 ;;
esac
