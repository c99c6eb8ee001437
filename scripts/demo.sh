#!/usr/bin/env bash
# The first run: builds tfc, prints the tfc IR of the hourglass language
# model, compiles it to a native executable, initialises its weights and
# evaluates the untrained model on a real corpus.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
out="${TFC_DEMO_DIR:-$root/out/demo}"
spec="$root/specs/hourglass_lm.toml"
corpus="${TFC_CORPUS:-$root/../shared/data/sotu.txt}"

if [[ ! -x "$build/bin/tfc" ]]; then
  TFC_BUILD_DIR="$build" "$root/scripts/test.sh"
fi
if [[ ! -f "$corpus" ]]; then
  echo "demo: corpus $corpus not found (set TFC_CORPUS to a text file)" >&2
  exit 1
fi

echo "== tfc IR of $spec (first lines)"
"$build/bin/tfc" compile "$spec" --emit=tfc | head -n 40

mkdir -p "$out"
echo "== compiling $spec to $out/hourglass_lm"
"$build/bin/tfc" compile "$spec" -o "$out/hourglass_lm"
"$out/hourglass_lm" info | tail -n 8
"$out/hourglass_lm" init --seed 0 -o "$out/hourglass_lm.safetensors"
echo "== evaluating the untrained model on $corpus (ln 256 = 5.545 nats)"
"$out/hourglass_lm" eval --weights "$out/hourglass_lm.safetensors" \
  --data "$corpus" --split val --batches 4
