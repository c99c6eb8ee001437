#!/bin/sh
#===- FakeModelCliTest.sh - The model command line, end to end -------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# Drives the command line of libtfcrt_main through two test-only models
# (FakeModelLm.cpp, FakeModelClassify.cpp): info, init, eval and the one-line
# errors for bad flags, missing or corrupt files.
#
# usage: FakeModelCliTest.sh LM_EXE CLASSIFY_EXE WORK_DIR
#
#===------------------------------------------------------------------------===#

set -u
lm=$1
cls=$2
. "$(dirname "$0")/FakeModelChecks.sh"
start_test "$3" "$lm" "$cls"

#===--- Language model ---===#

# 2,000 bytes: 1,800 train, 100 val, 100 test.
corpus "$dir/corpus.txt" 2000
: >"$dir/empty.txt"
printf 'tiny' >"$dir/tiny.txt"

run "$lm" --help
check "lm --help" ok
check "lm --help text" out "usage:" "info" "init" "eval"
for command in info init eval; do
  run "$lm" "$command" --help
  check "lm $command --help" ok
  check "lm $command --help text" out "usage:"
done

run "$lm" info
check "lm info" ok
check "lm info text" out "model: fake-lm" "task: lm" "unigram.bias" "[256, 4]" \
  "layers.0.attn.features" "features:4:4" \
  "parameters: 1296 (trainable 1280, buffers 16)" \
  "flops per token (forward): 2048" "5184 bytes" "16384 bytes"

run "$lm" init --seed 7 -o "$dir/lm.safetensors"
check "lm init" ok
check "lm init wrote the file" test -s "$dir/lm.safetensors"
check "lm init left no temporary" test -z "$(find "$dir" -name '*.tmp')"
run "$lm" init --seed=7 --output "$dir/lm-again.safetensors"
check "lm init again" ok
check "same seed, same bytes" cmp -s "$dir/lm.safetensors" "$dir/lm-again.safetensors"
run "$lm" init --seed 8 -o "$dir/lm-other.safetensors"
check "other seed, other bytes" test "$(cmp -s "$dir/lm.safetensors" "$dir/lm-other.safetensors"; echo $?)" -eq 1

run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt"
check "lm eval" ok
# The unigram starts uniform: loss ln 256, 8 bits per byte. The val split
# has 100 bytes: 12 windows of 8 + 1, 6 batches of 2, 96 tokens.
check "lm eval metrics" out '"task":"lm"' '"split":"val"' '"loss":5.5451774' \
  '"bits_per_char":8.0000000' '"perplexity":256.00000' '"tokens":96' '"batches":6'
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt" --split test --batches 2
check "lm eval test split" ok
check "lm eval test split metrics" out '"split":"test"' '"batches":2' '"tokens":32'
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt" --split train
check "lm eval train split" out '"split":"train"' '"batches":112'

run "$lm"
check "no command" error "missing command"
run "$lm" frobnicate
check "unknown command" error "unknown command 'frobnicate'"
run "$lm" eval --bogus 1
check "unknown flag" error "eval: unknown option '--bogus'"
run "$lm" eval --weights "$dir/lm.safetensors" --data
check "missing value" error "option '--data' needs a value"
run "$lm" eval stray
check "stray argument" error "unexpected argument 'stray'"
run "$lm" info --seed 1
check "flag of another command" error "info: unknown option '--seed'"
run "$lm" init --seed abc -o "$dir/x.safetensors"
check "bad seed" error "--seed: expected a non-negative integer, got 'abc'"
run "$lm" init --seed 1
check "init without -o" error "init: missing -o PATH"
run "$lm" eval --data "$dir/corpus.txt"
check "eval without weights" error "eval: missing --weights PATH"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt" --split dev
check "bad split" error "--split: expected train, val or test, got 'dev'"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt" --batches 0
check "bad batches" error "--batches: expected a positive integer, got '0'"
run "$lm" eval --weights "$dir/lm.safetensors" --data=
check "empty value" error "eval: option '--data' needs a non-empty value"
run "$lm" eval --weights "$dir/lm.safetensors" --data "" --data "$dir/corpus.txt"
check "empty value, then another" error "eval: option '--data' needs a non-empty value"
run "$lm" eval --batches= 2 --weights "$dir/lm.safetensors" --data "$dir/corpus.txt"
check "'--flag=' takes no value from the next argument" error "eval: --batches: expected a positive integer, got ''"
run "$lm" init -o
check "-o without a value" error "init: option '--output' needs a value"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt" --split
check "value of a checked flag missing" error "eval: option '--split' needs a value"
run "$lm" eval -x
check "unknown short option" error "eval: unknown option '-x' (see '$lm eval --help')"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt" info
check "a second command" error "eval: unexpected argument 'info'"
run "$lm" --bogus
check "an option for a command" error "unknown command '--bogus'"
run "$lm" help
check "help command" out "usage:" "Commands:"
run "$lm" eval -h
check "-h" out "usage:" "--batches N"
run "$lm" eval --bogus --help
check "--help wins over an unknown option" out "usage:"
run "$lm" init --seed 7 -o"$dir/lm-short.safetensors"
check "-oPATH" cmp -s "$dir/lm.safetensors" "$dir/lm-short.safetensors"
run "$lm" init --seed 1 --seed 7 --output "$dir/x.safetensors" -o "$dir/lm-last.safetensors"
check "repeated flags: the last counts" cmp -s "$dir/lm.safetensors" "$dir/lm-last.safetensors"
check "repeated flags: nothing at the first path" test ! -e "$dir/x.safetensors"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/corpus.txt" --batches 00002 --split=test
check "integers in decimal, leading zeros too" out '"split":"test"' '"batches":2}'
run "$lm" eval --weights "$dir/lm.safetensors" --data -corpus.txt
check "a value that starts with '-'" error "-corpus.txt: cannot open"
run "$lm" eval --weights "$dir/missing.safetensors" --data "$dir/corpus.txt"
check "missing weights" error "$dir/missing.safetensors: cannot open: No such file or directory"
head -c 300 "$dir/lm.safetensors" >"$dir/cut.safetensors"
run "$lm" eval --weights "$dir/cut.safetensors" --data "$dir/corpus.txt"
check "truncated weights" error "$dir/cut.safetensors: truncated"
printf '\020\000\000\000\000\000\000\000{"a": [1, 2,, 3]}' >"$dir/bad.safetensors"
run "$lm" eval --weights "$dir/bad.safetensors" --data "$dir/corpus.txt"
check "corrupt weights" error "$dir/bad.safetensors: bad header"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/missing.txt"
check "missing data" error "$dir/missing.txt: cannot open"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/empty.txt"
check "empty data" error "$dir/empty.txt: file is empty"
run "$lm" eval --weights "$dir/lm.safetensors" --data "$dir/tiny.txt"
check "data too small" error "one evaluation batch needs 17"

#===--- Classifier ---===#

cat >"$dir/train.jsonl" <<'JSONL'
{"text": "Bad taste, not good.", "label": 0}
{"text": "Great taste! Love it.", "label": 1}
{"rating": 2.0, "title": "meh", "text": "Stale and bad.", "images": []}

{"text": "Not good at all", "label": 0}
{"rating": 5.0, "text": "Love it, great snack \u00e9\ud83d\ude00"}
JSONL
printf '{"text": "ok", "label": 0}\n{"text": "broken" "label": 1}\n' >"$dir/broken.jsonl"
printf '{"text": "ok", "label": 7}\n' >"$dir/range.jsonl"

run "$cls" info
check "classify info" out "model: fake-classify" "task: classify" "classes: 2"
run "$cls" init -o "$dir/c.safetensors"
check "classify init needs data" error "needs --data PATH"
run "$cls" init --seed 1 -o "$dir/c.safetensors" --data "$dir/train.jsonl"
check "classify init" ok
check "classify vocab written" test -s "$dir/c.safetensors.vocab"
check "classify vocab header" grep -qx 'tfc-vocab 1 12' "$dir/c.safetensors.vocab"

run "$cls" eval --weights "$dir/c.safetensors" --data "$dir/train.jsonl"
check "classify eval" ok
# Zero bias: every line predicted 0 with loss ln 2. Labels 0 1 0 0 1: class 0
# P 3/5 R 1 F1 0.75, class 1 all 0. Two batches of 4, 3 padding rows left out.
check "classify eval metrics" out '"task":"classify"' '"examples":5' \
  '"loss":0.693147180559945' '"accuracy":0.6' \
  '"0":{"precision":0.6,"recall":1,"f1-score":0.75,"support":3}' \
  '"1":{"precision":0,"recall":0,"f1-score":0,"support":2}' \
  '"macro avg":{"precision":0.3,"recall":0.5,"f1-score":0.375,"support":5}'
run "$cls" eval --weights "$dir/c.safetensors" --data "$dir/train.jsonl" --batches 1
check "classify eval one batch" out '"examples":4'
run "$cls" eval --weights "$dir/c.safetensors" --data "$dir/train.jsonl" --split val
check "classify eval rejects --split" error "--split applies to lm byte data only"
run "$cls" eval --weights "$dir/c.safetensors" --data "$dir/broken.jsonl"
check "classify bad line" error "$dir/broken.jsonl:2: column 25: syntax error while parsing object - unexpected string literal; expected '}'"
run "$cls" eval --weights "$dir/c.safetensors" --data "$dir/range.jsonl"
check "classify label range" error "$dir/range.jsonl:1: label 7 is out of range for 2 classes"
run "$cls" eval --weights "$dir/lm.safetensors" --data "$dir/train.jsonl"
check "checkpoint of another model" error "the checkpoint is of model 'fake-lm', this executable is model 'fake-classify'"
mv "$dir/c.safetensors.vocab" "$dir/c.vocab.saved"
run "$cls" eval --weights "$dir/c.safetensors" --data "$dir/train.jsonl"
check "classify eval needs the vocabulary" error "$dir/c.safetensors.vocab: cannot open"

finish
