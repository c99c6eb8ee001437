#!/bin/sh
#===- check-causal.sh - The autoregressive property of a compiled LM -------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: check-causal.sh SPEC MODEL DIR BATCH SEQ_LEN FROM [PERTURB_FROM]
#
# MODEL is the executable `tfc compile SPEC --batch BATCH --seq-len SEQ_LEN`
# produced for a language model. In DIR (created if needed):
#   1. initialises its weights and redraws them with visible magnitudes
#      (`tfc-reference randomize`);
#   2. draws random bytes (`tfc-reference inputs`) and a second sequence
#      equal to them before position PERTURB_FROM (default FROM) and
#      different at every position from there on (`tfc-reference perturb`);
#   3. runs `MODEL forward` on both and checks that the logits of the
#      positions before FROM are equal bit for bit and that later ones moved
#      (`tfc-reference prefix --atol 0`).
# Prints the report of prefix; exits non-zero when the check fails.
#
#===------------------------------------------------------------------------===#

set -eu
spec=$1
model=$2
dir=$3
batch=$4
seqlen=$5
from=$6
perturb=${7:-$from}
shape="--batch $batch --seq-len $seqlen"

mkdir -p "$dir"
"$model" init --seed 1 -o "$dir/init.safetensors" >/dev/null
tfc-reference randomize --weights "$dir/init.safetensors" --seed 2 \
  -o "$dir/weights.safetensors"
tfc-reference inputs --spec "$spec" $shape --seed 3 --tokens "$dir/tokens.bin" \
  --targets "$dir/targets.bin" --mask "$dir/mask.bin"
tfc-reference perturb --spec "$spec" $shape --seed 4 --from "$perturb" \
  --tokens "$dir/tokens.bin" -o "$dir/perturbed.bin"
for run in tokens perturbed; do
  "$model" forward --weights "$dir/weights.safetensors" \
    --tokens "$dir/$run.bin" --targets "$dir/targets.bin" \
    --mask "$dir/mask.bin" --logits "$dir/$run-logits.bin" >/dev/null
done
tfc-reference prefix $shape --from "$from" --atol 0 \
  --logits "$dir/tokens-logits.bin" "$dir/perturbed-logits.bin"
