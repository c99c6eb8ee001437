#!/bin/sh
#===- fused-unfused.sh - A spec built with and without fusion --------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: fused-unfused.sh SPEC DIR GRADCHECK_LIB... -- TFC_COMPILE_FLAGS...
#
# Builds SPEC in float64 twice, with the fusion passes (attention blocks of
# 8 rows, so that a short test sequence spans several blocks) and with
# --no-fusion, links both with the gradient check, and runs:
#   1. the fused build's gradient check against finite differences, which
#      writes its results (loss, logits, gradient, one optimizer step) with
#      --dump;
#   2. the unfused build's gradient check, comparing the same results with
#      --compare at 1e-10 relative to each part's largest magnitude.
# Prints both reports, the unfused one after a line `== unfused`.
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
tfc compile "$spec" --f64 --emit=obj --attention-block 8 "$@" -o "$dir/fused.o"
tfc compile "$spec" --f64 --emit=obj --no-fusion "$@" -o "$dir/unfused.o"
c++ "$dir/fused.o" $lib -lm -o "$dir/fused"
c++ "$dir/unfused.o" $lib -lm -o "$dir/unfused"
"$dir/fused" --dump "$dir/fused.bin"
echo "== unfused"
"$dir/unfused" --compare "$dir/fused.bin"
