#!/bin/sh
#===- FakeModelTrainTest.sh - train and generate, end to end ---------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# Drives `train` and `generate` of libtfcrt_main through the test-only models
# (FakeModelLm.cpp, FakeModelClassify.cpp, whose training functions are in
# FakeModelTrain.h): a run lowers the loss; a resumed run repeats an
# uninterrupted one exactly; kill -9 loses nothing that was saved; Ctrl-C
# and SIGTERM save and exit; a time limit (--minutes) saves and tests; a NaN
# loss stops with the step and leaves the last checkpoint untouched; early
# stopping; classification; sampling; --threads.
#
# usage: FakeModelTrainTest.sh LM_EXE CLASSIFY_EXE LM_NOTRAIN_EXE WORK_DIR
#
#===------------------------------------------------------------------------===#

set -u
lm=$1
cls=$2
notrain=$3
. "$(dirname "$0")/FakeModelChecks.sh"
start_test "$4" "$lm" "$cls" "$notrain"

# losses LOG: the training losses and validation metrics of a metrics log,
# without the timings.
losses() {
  grep -o '"step":[0-9]*,"loss":[^,]*\|"val":{[^}]*}\|"test":{[^}]*}' "$1"
}

# same_losses A B: two runs logged the same losses.
same_losses() {
  losses "$1" >"$dir/losses.a"
  losses "$2" >"$dir/losses.b"
  [ -s "$dir/losses.a" ] && cmp -s "$dir/losses.a" "$dir/losses.b" ||
    { echo "  $1 and $2 differ:"; diff "$dir/losses.a" "$dir/losses.b" | head -5; return 1; }
}


# 4,000 bytes: 3,600 train, 200 val, 200 test.
corpus "$dir/corpus.txt" 4000

#===--- Options and refusals ---===#

run "$notrain" train --data "$dir/corpus.txt" --out "$dir/x"
check "model without training functions" error "compiled without its training functions"
run "$notrain" info
check "model without training functions: info works" ok
run "$lm" train --help
check "train --help" out "usage:" "--resume" "--patience" "--checkpoint-every"
run "$lm" generate --help
check "generate --help" out "usage:" "--temperature" "--top-k"
run "$lm" train --lr -0.1 --data "$dir/corpus.txt"
check "--lr must be positive" error "--lr: expected a positive learning rate, got '-0.1'"
run "$lm" train --batch 4 --data "$dir/corpus.txt"
check "--batch must match" error "--batch 4: the batch size is compiled into the model (batch 2)"
run "$lm" train --steps 0 --data "$dir/corpus.txt"
check "--steps 0" error "--steps: expected a positive integer, got '0'"
for bad in 0 -1 0x nan inf ""; do
  run "$lm" train --data "$dir/corpus.txt" --out "$dir/x" --minutes "$bad"
  check "--minutes '$bad'" error "train: --minutes: expected a positive number of minutes, got '$bad'"
done
for command in train eval generate forward; do
  for bad in 0 -3 2.5 many; do
    run "$lm" $command --threads "$bad"
    check "$command --threads '$bad'" error "$command: --threads: expected a positive integer, got '$bad'"
  done
  run "$lm" $command --threads 4097
  check "$command --threads 4097" error "$command: --threads: expected at most 4096 threads, got '4097'"
done
check "refused options write nothing" test ! -e "$dir/x"
run "$lm" train --out "$dir/x"
check "no training data" error "no training data"
run "$lm" train --data "$dir/missing.txt" --out "$dir/x"
check "missing training data" error "$dir/missing.txt: cannot open"
printf 'tiny' >"$dir/tiny.txt"
run "$lm" train --data "$dir/tiny.txt" --out "$dir/x"
check "training data too small" error "a training window needs 9"
run "$lm" train --data "$dir/corpus.txt" --val "$dir/tiny.txt" --out "$dir/x"
check "validation data too small" error "one evaluation batch needs 17"

#===--- A short run lowers the loss ---===#

run "$lm" train --data "$dir/corpus.txt" --out "$dir/short" --steps 40 --batch 2
check "short run" ok
check "short run: files" test -s "$dir/short/last.safetensors" -a -s "$dir/short/best.safetensors" \
  -a -s "$dir/short/metrics.jsonl" -a -s "$dir/short/curves.svg"
check "short run: no temporaries" no_tmp "$dir/short"
check "short run: progress and summary" out "step 1/40 | loss 5.5" "step 40/40 |" \
  "step 10: val loss" "step 40: val loss" "trained to step 40" "test (best weights, step 40"
check "short run: 40 steps, 4 evaluations, 1 test" test \
  "$(steps "$dir/short/metrics.jsonl")" -eq 40 -a \
  "$(grep -c '"val":' "$dir/short/metrics.jsonl")" -eq 4 -a \
  "$(grep -c '"test":' "$dir/short/metrics.jsonl")" -eq 1
check "short run: log members" grep -q '^{"step":1,"loss":[0-9.]*,"lr":0.05,"grad_norm":[0-9.]*,"tokens_per_s":[0-9.]*,"elapsed_s":[0-9.]*}$' "$dir/short/metrics.jsonl"
check "short run: times rounded to 0.1 and 0.001 s, no trailing zeros" test \
  "$(grep -Ec '"tokens_per_s":[0-9]+(\.[1-9])?,"elapsed_s":[0-9]+(\.[0-9]{0,2}[1-9])?[,}]' "$dir/short/metrics.jsonl")" -eq 40
val10=$(grep '^{"step":10,"loss"' "$dir/short/metrics.jsonl" | sed 's/.*"val":{[^}]*"loss":\([0-9.]*\).*/\1/')
val40=$(grep '^{"step":40,"loss"' "$dir/short/metrics.jsonl" | sed 's/.*"val":{[^}]*"loss":\([0-9.]*\).*/\1/')
check "short run: the validation loss falls ($val10 -> $val40)" awk "BEGIN { exit !($val40 < $val10 - 0.5) }"
check "short run: curves" grep -q '<polyline id="val"' "$dir/short/curves.svg"
check "short run: checkpoint state" test "$(meta "$dir/short/last.safetensors" tfc.step)" = 40 -a \
  "$(meta "$dir/short/best.safetensors" tfc.best_step)" = 40
run "$lm" eval --weights "$dir/short/last.safetensors" --data "$dir/corpus.txt"
check "short run: the checkpoint evaluates" out '"split":"val"'

run "$lm" train --data "$dir/corpus.txt" --out "$dir/tb" --steps 4 --test-batches 3
check "--test-batches: a shorter test" out '"split":"test"' '"tokens":48,"batches":3}'
check "--test-batches: recorded for a resumed run" test "$(meta "$dir/tb/last.safetensors" tfc.test_batches)" = 3
run "$lm" train --resume "$dir/tb/last.safetensors" --steps 6
check "--test-batches: kept by a resumed run" out '"tokens":48,"batches":3}'
run "$lm" train --data "$dir/corpus.txt" --out "$dir/x" --test-batches -1
check "--test-batches -1" error "train: --test-batches: expected a non-negative integer, got '-1'"

#===--- Resume is exact ---===#

run "$lm" train --data "$dir/corpus.txt" --out "$dir/whole" --steps 20
check "20 steps" ok
run "$lm" train --data "$dir/corpus.txt" --out "$dir/halves" --steps 10
check "10 steps" ok
run "$lm" train --resume "$dir/halves/last.safetensors" --steps 20
check "resume 10 more" ok
check "resume: message" out "resuming $dir/halves/last.safetensors at step 10"
check "resume: same losses as one run" same_losses "$dir/whole/metrics.jsonl" "$dir/halves/metrics.jsonl"
check "resume: same final checkpoint" cmp -s "$dir/whole/last.safetensors" "$dir/halves/last.safetensors"
run "$lm" train --data "$dir/corpus.txt" --out "$dir/halves"
check "a new run does not overwrite a run" error "$dir/halves/last.safetensors: the directory holds a run already; continue it with --resume $dir/halves/last.safetensors, or choose another --out DIR"
run "$lm" train --resume "$dir/halves/last.safetensors" --seed 5
check "resume keeps the seed" error "--seed 5: the run being resumed has seed 0"
run "$lm" train --resume "$dir/halves/best.safetensors"
check "resume needs a training checkpoint" error "best.safetensors: not a training checkpoint"
run "$lm" train --resume "$dir/halves/last.safetensors" --weights "$dir/halves/best.safetensors"
check "--resume and --weights" error "--resume and --weights exclude each other"
run "$lm" train --weights "$dir/halves/best.safetensors" --data "$dir/corpus.txt" --out "$dir/fromw" --steps 2
check "--weights starts a new run" ok

#===--- kill -9 loses nothing saved ---===#

run "$lm" train --data "$dir/corpus.txt" --out "$dir/calm" --steps 60 --checkpoint-every 5
check "60 steps" ok
TFC_FAKE_SLEEP_MS=15 "$lm" train --data "$dir/corpus.txt" --out "$dir/killed" --steps 60 \
  --checkpoint-every 5 >"$dir/killed.out" 2>&1 &
pid=$!
check "kill -9: training is under way" wait_for logged "$dir/killed/metrics.jsonl" 13
kill -9 $pid
wait $pid 2>/dev/null
saved=$(meta "$dir/killed/last.safetensors" tfc.step)
check "kill -9: a checkpoint was saved ($saved)" test "${saved:-0}" -ge 10
run "$lm" eval --weights "$dir/killed/last.safetensors" --data "$dir/corpus.txt"
check "kill -9: the checkpoint loads" ok
run "$lm" train --resume "$dir/killed/last.safetensors"
check "kill -9: resume" ok
check "kill -9: resume from the saved step" out "at step $saved"
check "kill -9: the run ends as an uninterrupted one" same_losses "$dir/calm/metrics.jsonl" "$dir/killed/metrics.jsonl"

#===--- Ctrl-C and SIGTERM save and exit ---===#

for sig in INT TERM; do
  TFC_FAKE_SLEEP_MS=15 "$lm" train --data "$dir/corpus.txt" --out "$dir/sig$sig" --steps 60 \
    --checkpoint-every 0 >"$dir/sig$sig.out" 2>&1 &
  pid=$!
  check "SIG$sig: training is under way" wait_for logged "$dir/sig$sig/metrics.jsonl" 3
  kill -$sig $pid
  wait $pid
  status=$?
  expected=130
  [ $sig = TERM ] && expected=143
  check "SIG$sig: exit status $expected" test $status -eq $expected
  check "SIG$sig: message" grep -q "interrupted: saved $dir/sig$sig/last.safetensors at step" "$dir/sig$sig.out"
  last=$(grep -o '^{"step":[0-9]*,"loss"' "$dir/sig$sig/metrics.jsonl" | tail -1 | tr -dc 0-9)
  check "SIG$sig: the checkpoint holds the last step ($last)" test "$(meta "$dir/sig$sig/last.safetensors" tfc.step)" = "$last"
  check "SIG$sig: event logged" grep -q "\"event\":\"interrupted\",\"signal\":\"SIG$sig\"" "$dir/sig$sig/metrics.jsonl"
  check "SIG$sig: no temporaries" no_tmp "$dir/sig$sig"
done
run "$lm" train --resume "$dir/sigINT/last.safetensors" --checkpoint-every 5
check "SIGINT: resume" ok
check "SIGINT: the run ends as an uninterrupted one" same_losses "$dir/calm/metrics.jsonl" "$dir/sigINT/metrics.jsonl"

#===--- A time limit saves, tests and resumes ---===#

# 0.01 minutes = 0.6 s at 15 ms a step: some 40 of the 60 steps.
run env TFC_FAKE_SLEEP_MS=15 "$lm" train --data "$dir/corpus.txt" --out "$dir/timed" --steps 60 \
  --checkpoint-every 5 --minutes 0.01
check "time limit: exit status 0" ok
last=$(grep -o '^{"step":[0-9]*,"loss"' "$dir/timed/metrics.jsonl" | tail -1 | tr -dc 0-9)
check "time limit: stopped before the end ($last)" test "${last:-60}" -lt 60
check "time limit: message" out "time limit 1s (--minutes 0.01)" \
  "time limit: stopping at step $last of 60 after" "trained to step $last in" "test (best weights"
check "time limit: the checkpoint holds the last step" test "$(meta "$dir/timed/last.safetensors" tfc.step)" = "$last"
check "time limit: event logged" grep -q "^{\"step\":$last,\"event\":\"time_limit\",\"minutes\":0.01,\"elapsed_s\":" "$dir/timed/metrics.jsonl"
elapsed=$(grep -o '"event":"time_limit".*"elapsed_s":[0-9.]*' "$dir/timed/metrics.jsonl" | sed 's/.*://')
check "time limit: after 0.6 s ($elapsed)" awk "BEGIN { exit !($elapsed >= 0.6) }"
check "time limit: tested" grep -q '"test":{"task":"lm"' "$dir/timed/metrics.jsonl"
check "time limit: no temporaries" no_tmp "$dir/timed"
run "$lm" train --resume "$dir/timed/last.safetensors"
check "time limit: resume" ok
check "time limit: resume from the saved step" out "at step $last"
check "time limit: the run ends as an uninterrupted one" same_losses "$dir/calm/metrics.jsonl" "$dir/timed/metrics.jsonl"
run env TFC_FAKE_SLEEP_MS=15 "$lm" train --data "$dir/corpus.txt" --out "$dir/timed-long" --steps 5 --minutes 5
check "time limit not reached" out "trained to step 5 in"
check "time limit not reached: no event" test -z "$(grep time_limit "$dir/timed-long/metrics.jsonl")"

#===--- A NaN loss stops the run and keeps the checkpoint ---===#

run "$lm" train --data "$dir/corpus.txt" --out "$dir/nan" --steps 10
check "nan: 10 good steps" ok
cp "$dir/nan/last.safetensors" "$dir/nan-before.safetensors"
run env TFC_FAKE_NAN_AT=3 "$lm" train --resume "$dir/nan/last.safetensors" --steps 20
check "nan: stops with the step" error "train: step 13: the loss is nan; stopping ($dir/nan/last.safetensors, step 10, is kept as it was)"
check "nan: the checkpoint is untouched" cmp -s "$dir/nan-before.safetensors" "$dir/nan/last.safetensors"
check "nan: no step 13 logged" test -z "$(grep '"step":13' "$dir/nan/metrics.jsonl")"
run env TFC_FAKE_NAN_AT=2 "$lm" train --data "$dir/corpus.txt" --out "$dir/nan2" --steps 20
check "nan before any checkpoint" error "step 2: the loss is nan; stopping (no checkpoint was written)"
check "nan before any checkpoint: none" test ! -e "$dir/nan2/last.safetensors"

#===--- Early stopping ---===#

# Training bytes are all 'a', validation bytes all 'b': the validation loss
# rises from the first evaluation on.
awk 'BEGIN { for (i = 0; i < 400; i++) printf "a" }' >"$dir/a.txt"
awk 'BEGIN { for (i = 0; i < 100; i++) printf "b" }' >"$dir/b.txt"
run "$lm" train --data "$dir/a.txt" --val "$dir/b.txt" --out "$dir/early" --steps 100 \
  --eval-every 2 --patience 2
check "early stop" ok
check "early stop: message" out "early stop at step 6: no better validation loss in 2 evaluations" \
  "test (best weights, step 2"
check "early stop: logged" grep -q '"step":6,"event":"early_stop","best_step":2' "$dir/early/metrics.jsonl"
check "early stop: checkpoints" test "$(meta "$dir/early/last.safetensors" tfc.step)" = 6 -a \
  "$(meta "$dir/early/best.safetensors" tfc.best_step)" = 2 -a \
  "$(meta "$dir/early/last.safetensors" tfc.bad_evals)" = 2
check "early stop: test on the best weights" grep -q '"weights":"best","weights_step":2}' "$dir/early/metrics.jsonl"
run "$lm" train --resume "$dir/early/last.safetensors"
check "early stop: resume has nothing to train" out "the run stopped early at step 6"

#===--- Classification ---===#

cat >"$dir/train.jsonl" <<'JSONL'
{"text": "Bad taste, not good.", "label": 0}
{"text": "Great taste! Love it.", "label": 1}
{"rating": 2.0, "title": "meh", "text": "Stale and bad.", "images": []}
{"text": "Not good at all", "label": 0}
{"rating": 5.0, "text": "Love it, great snack"}
{"text": "love love great", "label": 1}
{"text": "great", "label": 1}
{"text": "awful, bad", "label": 0}
{"text": "good stuff", "label": 1}
{"text": "so great", "label": 1}
{"text": "not bad", "label": 1}
{"text": "bad bad", "label": 0}
JSONL
run "$cls" train --data "$dir/train.jsonl" --test "$dir/train.jsonl" --out "$dir/cls" --steps 20
check "classify run" ok
check "classify: holdout and report" out "val: 3 lines held out of $dir/train.jsonl (25%)" \
  "precision    recall  f1-score   support" "weighted avg" '"task":"classify"'
check "classify: vocabularies beside the checkpoints" test -s "$dir/cls/last.safetensors.vocab" -a \
  -s "$dir/cls/best.safetensors.vocab"
check "classify: test report logged" grep -q '"test":{"task":"classify","examples":12,.*"report":{' "$dir/cls/metrics.jsonl"
run "$cls" eval --weights "$dir/cls/best.safetensors" --data "$dir/train.jsonl"
check "classify: best weights evaluate" out '"examples":12'
run "$cls" train --data "$dir/train.jsonl" --out "$dir/cls-halves" --test "$dir/train.jsonl" --steps 7
check "classify: 7 steps" ok
run "$cls" train --resume "$dir/cls-halves/last.safetensors" --steps 20
check "classify: resume" ok
check "classify: resume is exact across epochs" same_losses "$dir/cls/metrics.jsonl" "$dir/cls-halves/metrics.jsonl"
run "$cls" generate --weights "$dir/cls/last.safetensors" --prompt hi
check "classify: no generation" error "a classify model has no next-token distribution"

#===--- --threads ---===#

run env TFC_FAKE_OMP_LOG=1 "$lm" eval --weights "$dir/short/last.safetensors" --data "$dir/corpus.txt" --threads 3
check "--threads: set in the OpenMP runtime" test "$(head -1 "$dir/err")" = "omp_set_num_threads(3)"
check "--threads: eval runs" out '"split":"val"'
run "$cls" eval --weights "$dir/cls/best.safetensors" --data "$dir/train.jsonl" --threads 2
check "--threads without an OpenMP runtime" ok

#===--- Generation ---===#

run "$lm" generate --weights "$dir/short/last.safetensors" --prompt "abc" --tokens 20 --seed 1
check "generate" ok
cp "$dir/out" "$dir/gen1"
check "generate: prompt, 20 bytes, newline" test "$(head -c 3 "$dir/gen1")" = abc -a "$(wc -c <"$dir/gen1")" -eq 24
run "$lm" generate --weights "$dir/short/last.safetensors" --prompt "abc" --tokens 20 --seed 1
check "generate: the seed decides" cmp -s "$dir/gen1" "$dir/out"
run "$lm" generate --weights "$dir/short/last.safetensors" --prompt "a long prompt, longer than the window" \
  --tokens 5 --temperature 0
check "generate: a long prompt slides" ok
run "$lm" generate --weights "$dir/short/last.safetensors" --prompt "x" --tokens 30 --temperature 0
cp "$dir/out" "$dir/greedy"
run "$lm" generate --weights "$dir/short/last.safetensors" --prompt "x" --tokens 30 --top-k 1 --seed 9
check "generate: top-k 1 is greedy" cmp -s "$dir/greedy" "$dir/out"
run "$lm" generate --weights "$dir/short/last.safetensors"
check "generate: needs a prompt" error "generate: missing --prompt TEXT"
run "$lm" generate --prompt abc
check "generate: needs weights" error "generate: missing --weights PATH"

finish
