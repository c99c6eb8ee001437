#!/bin/sh
#===- gpu-cpu.sh - A spec's GPU build against its CPU build ---------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: gpu-cpu.sh emulate|device SPEC DIR GRADCHECK_LIB... -- TFC_COMPILE_FLAGS...
#          [--gpu GPU_ONLY_FLAGS...]
#
# Builds SPEC in float64 twice, attention in blocks of 8 rows: for the GPU
# and for the CPU. With `emulate` the GPU build's kernels run on the CPU
# (--target=cuda --gpu-emulate: the same loops-to-kernels mapping, arena
# placement and host code, each kernel run by loops over its blocks and
# threads); with `device` they run on the GPU (--target=cuda, linked with
# the CUDA driver glue: GRADCHECK_LIB then names libtfcrt_cuda.a and -ldl
# too). Links both with the gradient check, and runs:
#   1. the GPU build's gradient check against finite differences,
#      which writes its results (loss, logits, gradient, one optimizer
#      step) with --dump;
#   2. the CPU build's gradient check, comparing the same results with
#      --compare at 1e-10 relative to each part's largest magnitude.
# Flags after `--gpu` (such as --gpu-attention) go to the GPU build only.
# Prints both reports, the CPU one after a line `== cpu`.
#
#===------------------------------------------------------------------------===#

set -eu
mode=$1
spec=$2
dir=$3
shift 3
emulate=""
if [ "$mode" = emulate ]; then
  emulate=--gpu-emulate
fi
lib=""
while [ "$1" != "--" ]; do
  lib="$lib $1"
  shift
done
shift
common=""
while [ $# -gt 0 ] && [ "$1" != "--gpu" ]; do
  common="$common $1"
  shift
done
if [ $# -gt 0 ]; then
  shift
fi

mkdir -p "$dir"
tfc compile "$spec" --f64 --emit=obj --attention-block 8 --target=cuda \
  $emulate $common "$@" -o "$dir/gpu.o"
tfc compile "$spec" --f64 --emit=obj --attention-block 8 $common -o "$dir/cpu.o"
c++ "$dir/gpu.o" $lib -lm -o "$dir/gpu"
c++ "$dir/cpu.o" $lib -lm -o "$dir/cpu"
"$dir/gpu" --dump "$dir/gpu.bin"
echo "== cpu"
"$dir/cpu" --compare "$dir/gpu.bin"
