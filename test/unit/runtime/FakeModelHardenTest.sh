#!/bin/sh
#===- FakeModelHardenTest.sh - Hostile files and failing writes -------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# Drives the command line of libtfcrt_main through the test-only models
# (FakeModelLm.cpp, FakeModelClassify.cpp) against what the file system can
# throw at it. One part per run:
#   outputs    an output path that is a FIFO, a device or a directory is
#              refused by name and left as it was
#   lock       a second training run into a busy run directory is refused,
#              and the first run's files are its own
#   inputs     /dev/zero, a FIFO and other endless inputs are refused by
#              name at once: no hang, no exhausted memory
#   log        a metrics log that cannot be written stops the run with the
#              last good checkpoint kept
#   nonfinite  eval and generate fail on weights that give non-finite
#              results, train on a validation loss that is not finite
#
# usage: FakeModelHardenTest.sh PART LM_EXE CLASSIFY_EXE WORK_DIR
#
#===------------------------------------------------------------------------===#

set -u
part=$1
lm=$2
cls=$3
. "$(dirname "$0")/FakeModelChecks.sh"
umount "$4/mnt" 2>/dev/null
start_test "$4" "$lm" "$cls"

# run CMD...: as the shared one, but nothing may take 20 s (a FIFO's open
# blocks forever) or 2 GB of memory (reading /dev/zero).
run() {
  (ulimit -v 2000000; exec timeout 20 "$@") >"$dir/out" 2>"$dir/err"
  status=$?
}

# poke FILE FLOAT_BYTES: overwrites the first float of the first tensor of
# the safetensors FILE (the bias of both fake models) with four bytes given
# as printf escapes.
poke() {
  header=$(head -c 8 "$1" | od -An -t u8 | tr -d ' ')
  printf "$2" | dd of="$1" bs=1 seek=$((8 + header)) conv=notrunc 2>/dev/null
}

# 4,000 bytes: 3,600 train, 200 val, 200 test.
corpus "$dir/corpus.txt" 4000
cat >"$dir/train.jsonl" <<'JSONL'
{"text": "Bad taste, not good.", "label": 0}
{"text": "Great taste! Love it.", "label": 1}
{"text": "Stale and bad.", "label": 0}
{"text": "Love it, great snack", "label": 1}
JSONL
# One batch of lm tokens (B = 2, S = 8): int32 ids 0.
head -c 64 /dev/zero >"$dir/tokens.bin"
"$lm" init --seed 1 -o "$dir/w.safetensors" >/dev/null
"$cls" init --seed 1 -o "$dir/c.safetensors" --data "$dir/train.jsonl" >/dev/null
root=false
[ "$(id -u)" -eq 0 ] && root=true

case $part in

#===--- Outputs: only regular files are replaced ---===#
outputs)
  mkfifo "$dir/fifo"
  run "$lm" init -o "$dir/fifo"
  check "init -o FIFO" error "$dir/fifo: is a FIFO, not a regular file; refusing to replace it"
  check "init -o FIFO: the FIFO stays" test -p "$dir/fifo"
  ln -s "$dir/fifo" "$dir/fifo-link"
  run "$lm" init -o "$dir/fifo-link"
  check "init -o a link to a FIFO" error "$dir/fifo-link: is a FIFO, not a regular file"
  check "init -o a link to a FIFO: the link stays" test -L "$dir/fifo-link"
  mkdir "$dir/adir"
  run "$lm" init -o "$dir/adir"
  check "init -o directory" error "$dir/adir: is a directory; refusing to replace it"
  if $root && mknod "$dir/null" c 1 7 2>/dev/null; then
    run "$lm" init -o "$dir/null"
    check "init -o character device" error "$dir/null: is a character device, not a regular file; refusing to replace it"
    check "init -o character device: the device stays" test -c "$dir/null"
  fi
  run "$lm" forward --weights "$dir/w.safetensors" --tokens "$dir/tokens.bin" --logits "$dir/fifo"
  check "forward --logits FIFO" error "$dir/fifo: is a FIFO, not a regular file"
  check "forward --logits FIFO: the FIFO stays" test -p "$dir/fifo"
  mkfifo "$dir/c2.safetensors.vocab"
  run "$cls" init -o "$dir/c2.safetensors" --data "$dir/train.jsonl"
  check "classify init: vocabulary path is a FIFO" error "$dir/c2.safetensors.vocab: is a FIFO"
  check "classify init: the FIFO stays" test -p "$dir/c2.safetensors.vocab"
  mkdir "$dir/run"
  mkfifo "$dir/run/metrics.jsonl"
  run "$lm" train --data "$dir/corpus.txt" --out "$dir/run" --steps 3
  check "train: metrics.jsonl is a FIFO" error "$dir/run/metrics.jsonl: is a FIFO"
  check "train: the FIFO stays" test -p "$dir/run/metrics.jsonl"
  # A regular file is still replaced, and no temporary is left.
  run "$lm" init --seed 2 -o "$dir/w2.safetensors"
  run "$lm" init --seed 3 -o "$dir/w2.safetensors"
  check "init over a regular file" ok
  check "init over a regular file: replaced" test "$(meta "$dir/w2.safetensors" tfc.seed)" = 3
  check "init: no temporary left" test -z "$(find "$dir" -name '*.tmp')"
  ;;

#===--- Lock: one training run per run directory ---===#
lock)
  TFC_FAKE_SLEEP_MS=100 "$lm" train --data "$dir/corpus.txt" --out "$dir/run" --seed 1 \
    --steps 30 --checkpoint-every 10 --eval-every 10 >"$dir/first.out" 2>"$dir/first.err" &
  first=$!
  wait_for logged "$dir/run/metrics.jsonl" 1
  run "$lm" train --data "$dir/corpus.txt" --out "$dir/run" --seed 2 --steps 30 \
    --checkpoint-every 10 --eval-every 10
  check "a second run into a busy directory" error "$dir/run: another training run is writing to this directory"
  mkdir -p "$dir/other"
  run "$lm" train --data "$dir/corpus.txt" --out "$dir/other" --seed 2 --steps 5
  check "a second run into another directory" ok
  wait $first
  firstStatus=$?
  check "the first run ends well" test "$firstStatus" -eq 0
  check "the first run's log is whole" test "$(steps "$dir/run/metrics.jsonl")" -eq 30
  check "the first run's checkpoints" test "$(meta "$dir/run/last.safetensors" tfc.seed)" = 1 -a \
    "$(meta "$dir/run/last.safetensors" tfc.step)" = 30 -a \
    "$(meta "$dir/run/best.safetensors" tfc.seed)" = 1
  run "$lm" train --resume "$dir/run/last.safetensors" --steps 35
  check "the lock ends with the run" ok
  check "no temporary left" test -z "$(find "$dir" -name '*.tmp')"
  ;;

#===--- Inputs: endless files are refused ---===#
inputs)
  mkfifo "$dir/fifo"
  run "$lm" eval --weights "$dir/w.safetensors" --data /dev/zero
  check "eval --data /dev/zero" error "/dev/zero: is a character device, not a regular file"
  run "$lm" eval --weights "$dir/w.safetensors" --data "$dir/fifo"
  check "eval --data FIFO" error "$dir/fifo: is a FIFO, not a regular file"
  run "$lm" eval --weights "$dir/fifo" --data "$dir/corpus.txt"
  check "eval --weights FIFO" error "$dir/fifo: is a FIFO, not a regular file"
  run "$lm" eval --weights /dev/zero --data "$dir/corpus.txt"
  check "eval --weights /dev/zero" error "/dev/zero: is a character device"
  run "$lm" train --data /dev/zero --out "$dir/x"
  check "train --data /dev/zero" error "/dev/zero: is a character device"
  run "$lm" train --data "$dir/corpus.txt" --val /dev/zero --out "$dir/x"
  check "train --val /dev/zero" error "/dev/zero: is a character device"
  run "$lm" train --data "$dir/corpus.txt" --test "$dir/fifo" --out "$dir/x"
  check "train --test FIFO" error "$dir/fifo: is a FIFO"
  run "$lm" train --resume "$dir/fifo"
  check "train --resume FIFO" error "$dir/fifo: is a FIFO"
  run "$cls" init -o "$dir/x.safetensors" --data /dev/zero
  check "classify init --data /dev/zero" error "/dev/zero: is a character device"
  run "$cls" train --data "$dir/fifo" --out "$dir/x"
  check "classify train --data FIFO" error "$dir/fifo: is a FIFO"
  cp "$dir/c.safetensors" "$dir/c2.safetensors"
  mkfifo "$dir/c2.safetensors.vocab"
  run "$cls" eval --weights "$dir/c2.safetensors" --data "$dir/train.jsonl"
  check "classify eval: the vocabulary is a FIFO" error "$dir/c2.safetensors.vocab: is a FIFO"
  run "$lm" forward --weights "$dir/w.safetensors" --tokens /dev/zero --logits "$dir/logits.bin"
  check "forward --tokens /dev/zero" error "/dev/zero: is a character device"
  run "$lm" forward --weights "$dir/w.safetensors" --tokens "$dir/tokens.bin" \
    --targets "$dir/fifo" --logits "$dir/logits.bin"
  check "forward --targets FIFO" error "$dir/fifo: is a FIFO"
  run "$lm" forward --weights "$dir/w.safetensors" --tokens "$dir/tokens.bin" \
    --mask /dev/zero --logits "$dir/logits.bin"
  check "forward --mask /dev/zero" error "/dev/zero: is a character device"
  head -c 1048576 /dev/zero >"$dir/big.bin"
  run "$lm" forward --weights "$dir/w.safetensors" --tokens "$dir/big.bin" --logits "$dir/logits.bin"
  check "forward --tokens too large" error "$dir/big.bin: --tokens expects 64 bytes (int32 [2, 8]), the file has 1048576"
  check "refused inputs write nothing" test ! -e "$dir/x" -a ! -e "$dir/logits.bin"
  # A checkpoint whose metadata names data that became endless.
  cp "$dir/corpus.txt" "$dir/data.txt"
  run "$lm" train --data "$dir/data.txt" --out "$dir/run" --steps 3
  check "a run to resume" ok
  rm "$dir/data.txt"
  ln -s /dev/zero "$dir/data.txt"
  run "$lm" train --resume "$dir/run/last.safetensors" --steps 6
  check "resume: the recorded data is now /dev/zero" error "$dir/data.txt: is a character device"
  rm "$dir/data.txt"
  mkfifo "$dir/data.txt"
  run "$lm" train --resume "$dir/run/last.safetensors" --steps 6
  check "resume: the recorded data is now a FIFO" error "$dir/data.txt: is a FIFO"
  check "resume refused: the run is as it was" test "$(meta "$dir/run/last.safetensors" tfc.step)" = 3 -a \
    "$(steps "$dir/run/metrics.jsonl")" -eq 3
  ;;

#===--- Log: a failed write stops the run ---===#
log)
  # From step 15 on, the log's writes fail with ENOSPC (the fake model points
  # the runtime's descriptor at /dev/full).
  run env TFC_FAKE_LOG_FULL_AT=15 "$lm" train --data "$dir/corpus.txt" --out "$dir/run" \
    --steps 30 --checkpoint-every 10 --eval-every 10
  check "full log: the run stops" error "$dir/run/metrics.jsonl: write error: No space left on device; the run stops at step 15 ($dir/run/last.safetensors, step 10, is kept as it was)"
  check "full log: the last good checkpoint" test "$(meta "$dir/run/last.safetensors" tfc.step)" = 10
  check "full log: the log holds steps 1 to 14" test "$(steps "$dir/run/metrics.jsonl")" -eq 14
  run "$lm" train --resume "$dir/run/last.safetensors"
  check "full log: the run resumes" ok
  check "full log: after the resume, 30 steps" test "$(steps "$dir/run/metrics.jsonl")" -eq 30
  # The curves cannot be written: a directory is in their place.
  mkdir -p "$dir/curves/curves.svg"
  run "$lm" train --data "$dir/corpus.txt" --out "$dir/curves" --steps 30 \
    --checkpoint-every 5 --eval-every 10
  check "curves cannot be written" error "$dir/curves/curves.svg: is a directory; refusing to replace it; the run stops at step 10 ($dir/curves/last.safetensors, step 5, is kept as it was)"
  # A full disk for real: a tmpfs with no room left when the run starts.
  mkdir "$dir/mnt"
  if $root && mount -t tmpfs -o size=1m tfc-test "$dir/mnt" 2>/dev/null; then
    mkdir "$dir/mnt/run"
    dd if=/dev/zero of="$dir/mnt/filler" bs=4096 2>/dev/null
    run "$lm" train --data "$dir/corpus.txt" --out "$dir/mnt/run" --steps 30 \
      --checkpoint-every 10 --eval-every 10
    check "full disk: the run stops at step 1" error "$dir/mnt/run/metrics.jsonl: write error: No space left on device; the run stops at step 1 (no checkpoint was written)"
    check "full disk: nothing but the empty log" test "$(ls "$dir/mnt/run")" = metrics.jsonl -a \
      ! -s "$dir/mnt/run/metrics.jsonl"
    umount "$dir/mnt"
  fi
  ;;

#===--- Non-finite results fail ---===#
nonfinite)
  cp "$dir/w.safetensors" "$dir/inf.safetensors"
  poke "$dir/inf.safetensors" '\000\000\200\177' # +inf
  run "$lm" eval --weights "$dir/inf.safetensors" --data "$dir/corpus.txt"
  check "eval: infinite weights" error "eval: the loss of $dir/inf.safetensors on the val split of $dir/corpus.txt is not finite (nan)"
  check "eval: the loss is printed as null" out '"loss":null'
  cp "$dir/w.safetensors" "$dir/nan.safetensors"
  poke "$dir/nan.safetensors" '\000\000\300\177' # nan
  run "$lm" generate --weights "$dir/nan.safetensors" --prompt "ab" --tokens 5
  check "generate: NaN logits" error "generate: byte 1: the logits of $dir/nan.safetensors are not finite (byte value 0: nan)"
  check "generate: no byte sampled from NaN" test "$(cat "$dir/out")" = ab
  run "$lm" generate --weights "$dir/w.safetensors" --prompt "ab" --tokens 5
  check "generate: finite weights still sample" ok
  cp "$dir/c.safetensors" "$dir/cinf.safetensors"
  cp "$dir/c.safetensors.vocab" "$dir/cinf.safetensors.vocab"
  poke "$dir/cinf.safetensors" '\000\000\200\177'
  run "$cls" eval --weights "$dir/cinf.safetensors" --data "$dir/train.jsonl"
  check "classify eval: infinite weights" error "eval: the loss of $dir/cinf.safetensors on $dir/train.jsonl is not finite"
  run "$cls" eval --weights "$dir/c.safetensors" --data "$dir/train.jsonl"
  check "classify eval: finite weights still evaluate" ok
  # A validation loss that is not finite stops training as a training loss
  # does, and saves no best checkpoint.
  run env TFC_FAKE_FORWARD_NAN=1 "$lm" train --data "$dir/corpus.txt" --out "$dir/run" \
    --steps 30 --checkpoint-every 5 --eval-every 10
  check "train: NaN validation loss" error "train: step 10: the validation loss is nan; stopping ($dir/run/last.safetensors, step 5, is kept as it was)"
  check "train: NaN validation loss: no best checkpoint" test ! -e "$dir/run/best.safetensors"
  ;;

*)
  echo "unknown part '$part'"
  fails=1
  ;;
esac

finish && [ "$passes" -gt 0 ]
