#===- FakeModelChecks.sh - What the fake-model tests share -----------------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# Sourced by FakeModelCliTest.sh, FakeModelTrainTest.sh and
# FakeModelHardenTest.sh: the start of a test (start_test), running a
# command (run, which leaves stdout in $dir/out, stderr in $dir/err and
# the exit status in $status), the checks that count passes and fails, the
# files the tests train on, and the summary that ends a test (finish).
#
#===------------------------------------------------------------------------===#

# start_test DIR EXE...: every EXE must be an executable; DIR, the test's
# work directory, starts empty, and so do the counters.
start_test() {
  dir=$1
  shift
  for exe in "$@"; do
    [ -x "$exe" ] || { echo "$exe: not an executable"; echo "0 passed, 1 failed"; exit 1; }
  done
  rm -rf "$dir"
  mkdir -p "$dir"
  passes=0
  fails=0
  status=0
}

# run CMD...: stdout to $dir/out, stderr to $dir/err, exit status to $status.
run() {
  "$@" >"$dir/out" 2>"$dir/err"
  status=$?
}

# finish: prints the counts; the exit status says whether every check passed.
finish() {
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}

# check NAME CONDITION...: counts a pass or prints the failure.
check() {
  name=$1
  shift
  if "$@"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $name"
    fails=$((fails + 1))
  fi
}

ok() {
  [ "$status" -eq 0 ] || { echo "  exit status $status: $(cat "$dir/err")"; return 1; }
}

# error TEXT: exit status 1 and one line on stderr, "tfc: ...TEXT...".
error() {
  if [ "$status" -eq 1 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] &&
    grep -q '^tfc: ' "$dir/err" && grep -qF -- "$1" "$dir/err"; then
    return 0
  fi
  echo "  exit status $status, stderr: $(cat "$dir/err")"
  return 1
}

# out TEXT...: stdout holds every TEXT.
out() {
  for text in "$@"; do
    grep -qF -- "$text" "$dir/out" || { echo "  stdout lacks '$text':"; cat "$dir/out"; return 1; }
  done
}

# meta FILE KEY: a metadata value of a safetensors file.
meta() {
  head -c 4096 "$1" | tr -c '[:print:]' '\n' | grep -o "\"$2\":\"[^\"]*\"" |
    sed 's/.*:"\(.*\)"/\1/'
}

# corpus FILE BYTES: a byte file of BYTES letters (a, h, o, ...).
corpus() {
  awk "BEGIN { for (i = 0; i < $2; i++) printf \"%c\", 97 + (i * 7) % 26 }" >"$1"
}

# steps LOG: the number of step records in a metrics log.
steps() {
  grep -c '^{"step":[0-9]*,"loss"' "$1"
}

# wait_for CONDITION...: polls for up to 20 s.
wait_for() {
  i=0
  while [ $i -lt 400 ]; do
    "$@" && return 0
    sleep 0.05
    i=$((i + 1))
  done
  echo "  timed out waiting for: $*"
  return 1
}

# logged LOG N: the log has at least N lines.
logged() {
  [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]
}

# no_tmp DIR: no temporary file is left in DIR.
no_tmp() {
  [ -z "$(find "$1" -name '*.tmp')" ] || { echo "  left: $(find "$1" -name '*.tmp')"; return 1; }
}
