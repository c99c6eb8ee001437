#!/usr/bin/env bash
# The first run: builds tfc, fetches the corpus (scripts/fetch-data.sh, which
# links the files of ../shared/data when they are there), prints the tfc IR
# of the hourglass language model, compiles it to a native executable,
# evaluates the untrained model, trains it for a few minutes on every core
# with validation and a final test, evaluates the trained model on the same
# validation batches and samples text from it.
#
# Environment:
#   TFC_BUILD_DIR     the build directory (default <project>/build)
#   TFC_DEMO_DIR      where the executable and the run go (default
#                     <project>/out/demo); a run already there is continued
#   TFC_DATA_DIR      where fetch-data.sh puts the corpora (default
#                     <project>/data)
#   TFC_CORPUS        a byte file to use instead of sotu.txt (no fetch)
#   TFC_DEMO_MINUTES  the training time budget in minutes (default 3)
#   TFC_DEMO_PRECISION  f32 (default) or bf16: tfc compile --precision
#                     (docs/precision.md; a run already there continues in
#                     either, its checkpoints hold float32 weights)
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/demo.sh

Builds tfc, compiles the hourglass language model, trains it for a few
minutes and samples from it. Takes no arguments; the comment at the top of
this script lists the environment variables it reads (TFC_BUILD_DIR,
TFC_DEMO_DIR, TFC_DATA_DIR, TFC_CORPUS, TFC_DEMO_MINUTES,
TFC_DEMO_PRECISION).
USAGE
}

if (($#)); then
  case $1 in
    -h | --help) usage; exit 0 ;;
    *) echo "$(basename "$0"): unexpected argument '$1' (see --help)" >&2
       exit 1 ;;
  esac
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
out="${TFC_DEMO_DIR:-$root/out/demo}"
spec="$root/specs/hourglass_lm.toml"
minutes="${TFC_DEMO_MINUTES:-3}"
precision="${TFC_DEMO_PRECISION:-f32}"
threads="$(nproc 2>/dev/null || echo 1)"
# The spec's model (d_model 256, batches of 8 x 512 bytes) needs hours; the
# demo trains the same hourglass (factors [2, 2], 2 layers per level) at
# d_model 128 with 4 heads, d_ff 512 and no dropout, in batches of
# 16 x 128 bytes, at a learning rate of 3e-3 after 100 warm-up steps, so
# that a few minutes on a small machine take thousands of steps and a
# sampled byte (one forward pass each) takes a few milliseconds.
shape=(--batch 16 --seq-len 128)
lr=(--lr 3e-3 --warmup 100)
# The cosine schedule ends at 700 steps a minute, about what a 2-core
# machine does: a faster one stops there, a slower one at its time limit.

if [[ ! "$minutes" =~ ^[0-9]*\.?[0-9]+$ ]] || ! awk "BEGIN { exit !($minutes > 0) }"; then
  echo "demo: TFC_DEMO_MINUTES: expected a positive number of minutes, got '$minutes'" >&2
  exit 1
fi
if [[ $precision != f32 && $precision != bf16 ]]; then
  echo "demo: TFC_DEMO_PRECISION: expected f32 or bf16, got '$precision'" >&2
  exit 1
fi
if [[ ! -x "$build/bin/tfc" ]]; then
  TFC_BUILD_DIR="$build" "$root/scripts/test.sh"
fi
if [[ -n "${TFC_CORPUS:-}" ]]; then
  corpus="$TFC_CORPUS"
else
  data="${TFC_DATA_DIR:-$root/data}"
  echo "== corpus"
  "$root/scripts/fetch-data.sh" "$data"
  corpus="$data/sotu.txt"
fi
if [[ ! -f "$corpus" ]]; then
  echo "demo: corpus $corpus not found (set TFC_CORPUS to a text file)" >&2
  exit 1
fi

mkdir -p "$out"
model="$out/hourglass_lm"
run="$out/run"
demo_spec="$out/hourglass_demo.toml"
# The corpus as a TOML string (backslashes and quotes escaped).
train="$(realpath "$corpus")"
train="${train//\\/\\\\}"
train="${train//\"/\\\"}"
TRAIN="$train" awk '
  /^d_model = / { print "d_model = 128"; next }
  /^heads = / { print "heads = 4"; next }
  /^d_ff = / { print "d_ff = 512"; next }
  /^dropout = / { print "dropout = 0.0"; next }
  /^train = / { print "train = \"" ENVIRON["TRAIN"] "\""; next }
  { print }' "$spec" >"$demo_spec"
echo "== tfc IR of $demo_spec ($spec at d_model 128; first lines, all of it in $model.tfc.mlir)"
"$build/bin/tfc" compile "$demo_spec" "${shape[@]}" --emit=tfc >"$model.tfc.mlir"
head -n 40 "$model.tfc.mlir"
echo "== compiling $demo_spec to $model (${shape[*]}, --precision=$precision)"
"$build/bin/tfc" compile "$demo_spec" "${shape[@]}" --precision="$precision" -o "$model"
"$model" info | grep '^precision:'
"$model" info | tail -n 8
"$model" init --seed 0 -o "$out/hourglass_lm.safetensors"
echo "== evaluating the untrained model on $corpus (ln 256 = 5.545 nats)"
"$model" eval --weights "$out/hourglass_lm.safetensors" \
  --data "$corpus" --split val --batches 4 --threads "$threads"

if [[ -f "$run/last.safetensors" ]]; then
  echo "== continuing the run in $run for $minutes min on $threads threads (remove $run to start afresh)"
  "$model" train --resume "$run/last.safetensors" --minutes "$minutes" --threads "$threads"
else
  echo "== training on $corpus for $minutes min on $threads threads"
  steps="$(awk "BEGIN { printf \"%d\", $minutes * 700 + 1 }")"
  "$model" train --data "$corpus" --out "$run" --minutes "$minutes" --threads "$threads" \
    --steps "$steps" "${lr[@]}" --eval-every 100 --eval-batches 4 --test-batches 16
fi

weights="$run/best.safetensors"
[[ -f "$weights" ]] || weights="$run/last.safetensors"
echo "== evaluating $weights on the same validation batches"
"$model" eval --weights "$weights" --data "$corpus" --split val --batches 4 --threads "$threads"

echo "== sampling from $weights"
"$model" generate --weights "$weights" --prompt "Fellow-Citizens of the Senate and House of Representatives: " \
  --tokens 120 --temperature 0.8 --top-k 40 --seed 0 --threads "$threads"
echo "== $run holds the checkpoints, metrics.jsonl and curves.svg;"
echo "   run the demo again to train on from where it stopped"
