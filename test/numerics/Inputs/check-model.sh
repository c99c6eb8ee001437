#!/bin/sh
#===- check-model.sh - A compiled model against the float64 reference ------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: check-model.sh SPEC MODEL DIR BATCH SEQ_LEN [CAUSAL_FROM [DATA [SCALE]]]
#        check-model.sh --causal-only SPEC MODEL DIR BATCH SEQ_LEN FROM
#          [PERTURB_FROM]
#
# MODEL is the executable `tfc compile SPEC --batch BATCH --seq-len SEQ_LEN`
# produced. In DIR (created if needed):
#   1. initialises its weights (`MODEL init`, with `--data DATA` for a
#      classifier) and redraws them with visible magnitudes
#      (`tfc-reference randomize`; Performer features are kept), then, when
#      SCALE (TEXT=FACTOR) is given, multiplies the tensors whose names
#      contain TEXT by FACTOR (`tfc-reference edit --scale`);
#   2. draws random inputs (`tfc-reference inputs`: classifiers get CLS,
#      word ids and padding with its mask);
#   3. runs `MODEL forward` and `tfc-reference forward` on them and compares
#      logits and loss (`tfc-reference compare`, 1e-4 relative);
#   4. when CAUSAL_FROM is a position (not "-"), changes every token from that
#      position on, runs `MODEL forward` again and checks that the logits of
#      the earlier positions do not move (`tfc-reference prefix`, 1e-6).
# Prints the reports of compare and prefix; exits non-zero on the first
# failure.
#
# With --causal-only, the autoregressive property of a language model alone:
# step 3 runs `MODEL forward` only (no reference, no compare), step 4 changes
# the tokens from PERTURB_FROM (default FROM) on and checks that the logits
# of the positions before FROM are equal bit for bit and that later ones
# moved (`tfc-reference prefix --atol 0`). Prints the report of prefix.
#
#===------------------------------------------------------------------------===#

set -eu
causal_only=""
if [ "$1" = --causal-only ]; then
  causal_only=1
  shift
fi
spec=$1
model=$2
dir=$3
batch=$4
seqlen=$5
from=${6:--}
if [ -n "$causal_only" ]; then
  perturb=${7:-$from}
  data=""
  scale=""
  atol="--atol 0"
else
  perturb=$from
  data=${7:-}
  scale=${8:-}
  atol=""
fi
shape="--batch $batch --seq-len $seqlen"

mkdir -p "$dir"
if [ -n "$data" ]; then
  "$model" init --seed 1 --data "$data" -o "$dir/init.safetensors" >/dev/null
else
  "$model" init --seed 1 -o "$dir/init.safetensors" >/dev/null
fi
tfc-reference randomize --weights "$dir/init.safetensors" --seed 2 \
  -o "$dir/weights.safetensors"
if [ -n "$scale" ]; then
  tfc-reference edit --weights "$dir/weights.safetensors" --scale "$scale" \
    -o "$dir/scaled.safetensors"
  mv "$dir/scaled.safetensors" "$dir/weights.safetensors"
fi
tfc-reference inputs --spec "$spec" $shape --seed 3 --tokens "$dir/tokens.bin" \
  --targets "$dir/targets.bin" --mask "$dir/mask.bin"
"$model" forward --weights "$dir/weights.safetensors" \
  --tokens "$dir/tokens.bin" --targets "$dir/targets.bin" \
  --mask "$dir/mask.bin" --logits "$dir/got.bin" >"$dir/got.json"
if [ -z "$causal_only" ]; then
  tfc-reference forward --spec "$spec" $shape \
    --weights "$dir/weights.safetensors" --tokens "$dir/tokens.bin" \
    --targets "$dir/targets.bin" --mask "$dir/mask.bin" \
    --logits "$dir/ref.bin" >"$dir/ref.json"
  tfc-reference compare --logits "$dir/got.bin" "$dir/ref.bin" \
    --loss "$dir/got.json" "$dir/ref.json"
fi

if [ "$from" != "-" ]; then
  tfc-reference perturb --spec "$spec" $shape --seed 4 --from "$perturb" \
    --tokens "$dir/tokens.bin" -o "$dir/perturbed.bin"
  "$model" forward --weights "$dir/weights.safetensors" \
    --tokens "$dir/perturbed.bin" --targets "$dir/targets.bin" \
    --mask "$dir/mask.bin" --logits "$dir/perturbed-got.bin" >/dev/null
  tfc-reference prefix $shape --from "$from" $atol \
    --logits "$dir/got.bin" "$dir/perturbed-got.bin"
fi
