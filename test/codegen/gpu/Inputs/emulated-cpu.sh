#!/bin/sh
#===- emulated-cpu.sh - A spec's GPU kernels, run on the CPU ---------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: emulated-cpu.sh SPEC DIR GRADCHECK_LIB... -- TFC_COMPILE_FLAGS...
#
# Builds SPEC in float64 twice, attention in blocks of 8 rows: for the GPU
# with its kernels emulated on the CPU (--target=cuda --gpu-emulate: the
# same loops-to-kernels mapping, arena placement and host code, each
# kernel run by loops over its blocks and threads) and for the CPU. Links
# both with the gradient check, and runs:
#   1. the emulated GPU build's gradient check against finite differences,
#      which writes its results (loss, logits, gradient, one optimizer
#      step) with --dump;
#   2. the CPU build's gradient check, comparing the same results with
#      --compare at 1e-10 relative to each part's largest magnitude.
# Prints both reports, the CPU one after a line `== cpu`.
#
#===------------------------------------------------------------------------===#

set -eu
spec=$1
dir=$2
shift 2
lib=""
while [ "$1" != "--" ]; do
  lib="$lib $1"
  shift
done
shift

mkdir -p "$dir"
tfc compile "$spec" --f64 --emit=obj --attention-block 8 --target=cuda \
  --gpu-emulate "$@" -o "$dir/gpu.o"
tfc compile "$spec" --f64 --emit=obj --attention-block 8 "$@" -o "$dir/cpu.o"
c++ "$dir/gpu.o" $lib -lm -o "$dir/gpu"
c++ "$dir/cpu.o" $lib -lm -o "$dir/cpu"
"$dir/gpu" --dump "$dir/gpu.bin"
echo "== cpu"
"$dir/cpu" --compare "$dir/gpu.bin"
