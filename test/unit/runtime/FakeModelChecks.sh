#===- FakeModelChecks.sh - Checks shared by the fake-model tests ----------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# Sourced by FakeModelCliTest.sh, FakeModelTrainTest.sh and
# FakeModelHardenTest.sh, which set `dir` (where `run` leaves stdout in
# $dir/out and stderr in $dir/err), `status` (the last exit status) and the
# counters `passes` and `fails`.
#
#===------------------------------------------------------------------------===#

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
