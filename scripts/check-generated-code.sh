#!/usr/bin/env bash
#===- check-generated-code.sh - Generated code against a recorded build ----===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: scripts/check-generated-code.sh record DIR
#        scripts/check-generated-code.sh compare DIR
#
# A guard for changes that must not change what tfc generates (moving
# files, splitting functions, formatting). `record` uses the tfc of
# $TFC_BUILD_DIR (default build/) to compile every spec in specs/ for this
# CPU at batch 2 x 96 tokens, trains each 10 steps from seed 0 on the test
# corpora with 2 threads (validating and testing on 2 batches)
# and keeps DIR/<spec>/last.safetensors, and keeps the optimised LLVM IR
# (--emit=llvm) of each spec as DIR/<spec>.ll. `compare`, run with the
# changed build, does the same in a scratch folder and compares: the
# checkpoints' tensors (names, dtypes, shapes and bytes; the metadata holds
# times and paths) and the LLVM IR, which must be byte-identical up to the
# module's source-file name and the order of its global definitions (the
# order in which bufferization meets a function's constants; each
# definition and all code must be the same). Prints one line per spec and
# `check-generated-code: ok` or `check-generated-code: FAILED`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
tfc="$build/bin/tfc"

usage() {
  echo "usage: $(basename "$0") record|compare DIR" >&2
  exit 1
}
(($# == 2)) || usage
mode=$1
dir=$2
[[ $mode == record || $mode == compare ]] || usage
[[ -x $tfc ]] || { echo "$(basename "$0"): $tfc: not built" >&2; exit 1; }

out="$dir"
if [[ $mode == compare ]]; then
  [[ -d $dir ]] || { echo "$(basename "$0"): $dir: no recorded build (run 'record' first)" >&2; exit 1; }
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

# Builds SPEC's executable, trains it 10 steps and writes its IR into $out.
generate() {
  local spec=$1 name data
  name=$(basename "$spec" .toml)
  data="$root/test/e2e/Inputs/tiny.txt"
  grep -q '^task *= *"classify"' "$spec" && data="$root/test/train/Inputs/reviews.jsonl"
  mkdir -p "$out/$name"
  "$tfc" compile "$spec" --batch 2 --seq-len 96 --emit=llvm -o "$out/$name.ll"
  "$tfc" compile "$spec" --batch 2 --seq-len 96 -o "$out/$name/exe"
  "$out/$name/exe" train --data "$data" --out "$out/$name/run" --steps 10 \
    --seed 0 --threads 2 --eval-every 5 --eval-batches 2 --test-batches 2 >/dev/null
  cp "$out/$name/run/last.safetensors" "$out/$name/last.safetensors"
  rm -rf "$out/$name/run" "$out/$name/exe"
}

status=0
for spec in "$root"/specs/*.toml; do
  name=$(basename "$spec" .toml)
  generate "$spec"
  [[ $mode == record ]] && { echo "$name: recorded"; continue; }
  if python3 - "$dir/$name/last.safetensors" "$out/$name/last.safetensors" <<'PY'
import json, struct, sys

def tensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        body = f.read()
    header.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}

a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
sys.exit(0 if a == b else 1)
PY
  then ckpt=identical; else ckpt=DIFFERENT; status=1; fi
  if diff -q <(grep -v '^source_filename\|^; ModuleID' "$dir/$name.ll") \
             <(grep -v '^source_filename\|^; ModuleID' "$out/$name.ll") >/dev/null
  then ir=identical
  elif diff -q <(grep -v '^@' "$dir/$name.ll" | grep -v '^source_filename\|^; ModuleID') \
               <(grep -v '^@' "$out/$name.ll" | grep -v '^source_filename\|^; ModuleID') >/dev/null &&
       diff -q <(grep '^@' "$dir/$name.ll" | sort) <(grep '^@' "$out/$name.ll" | sort) >/dev/null
  then ir="identical but for the order of its globals"
  else ir=DIFFERENT; status=1; fi
  echo "$name: checkpoint $ckpt, LLVM IR $ir"
done
if [[ $mode == compare ]]; then
  ((status == 0)) && echo "check-generated-code: ok" || echo "check-generated-code: FAILED"
fi
exit $status
