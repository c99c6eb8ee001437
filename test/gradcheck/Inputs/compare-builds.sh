#!/bin/sh
#===- compare-builds.sh - Two builds of a spec against each other ----------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: compare-builds.sh fused|emulate|device SPEC DIR GRADCHECK_LIB... --
#          TFC_COMPILE_FLAGS... [--first FIRST_ONLY_FLAGS...]
#
# Builds SPEC in float64 twice, with TFC_COMPILE_FLAGS and the flags of the
# mode:
#   fused    with the fusion passes (attention blocks of 8 rows, so that a
#            short test sequence spans several blocks) and with --no-fusion;
#            the second report follows a line `== unfused`;
#   emulate  for the GPU and for the CPU, attention in blocks of 8 rows, the
#            GPU build's kernels run on the CPU (--target=cuda --gpu-emulate:
#            the same loops-to-kernels mapping, arena placement and host
#            code, each kernel run by loops over its blocks and threads);
#            the second report follows a line `== cpu`;
#   device   as emulate, but the kernels run on the GPU (--target=cuda,
#            linked with the CUDA driver glue: GRADCHECK_LIB then names
#            libtfcrt_cuda.a and -ldl too).
# Flags after `--first` (such as --gpu-attention) go to the first build
# only. Links both with the gradient check, and runs:
#   1. the first build's gradient check against finite differences, which
#      writes its results (loss, logits, gradient, one optimizer step) with
#      --dump;
#   2. the second build's gradient check, comparing the same results with
#      --compare at 1e-10 relative to each part's largest magnitude.
# Prints both reports.
#
#===------------------------------------------------------------------------===#

set -eu
case $1 in
fused)
  first=fused second=unfused
  first_flags="--attention-block 8" second_flags=--no-fusion ;;
emulate)
  first=gpu second=cpu
  first_flags="--attention-block 8 --target=cuda --gpu-emulate"
  second_flags="--attention-block 8" ;;
device)
  first=gpu second=cpu
  first_flags="--attention-block 8 --target=cuda"
  second_flags="--attention-block 8" ;;
*)
  echo "compare-builds.sh: unknown mode '$1'" >&2
  exit 2 ;;
esac
spec=$2
dir=$3
shift 3
lib=""
while [ "$1" != "--" ]; do
  lib="$lib $1"
  shift
done
shift
common=""
while [ $# -gt 0 ] && [ "$1" != "--first" ]; do
  common="$common $1"
  shift
done
if [ $# -gt 0 ]; then
  shift
fi

mkdir -p "$dir"
tfc compile "$spec" --f64 --emit=obj $first_flags $common "$@" \
  -o "$dir/$first.o"
tfc compile "$spec" --f64 --emit=obj $second_flags $common \
  -o "$dir/$second.o"
c++ "$dir/$first.o" $lib -lm -o "$dir/$first"
c++ "$dir/$second.o" $lib -lm -o "$dir/$second"
"$dir/$first" --dump "$dir/$first.bin"
echo "== $second"
"$dir/$second" --compare "$dir/$first.bin"
