#!/usr/bin/env bash
#===- check-format.sh - The C++ sources as clang-format writes them --------===#
#
# Part of tfc, a compiler for efficient transformers.
#
#===------------------------------------------------------------------------===#
#
# usage: scripts/check-format.sh [--changed BASE] [--fix]
#
# Checks the tracked C++ sources (*.cpp, *.h) against .clang-format (LLVM
# style) with clang-format 19 from Debian (clang-format-19). By default
# every file is checked: the tree is kept formatted, so that any line a
# change leaves unformatted fails. With --changed BASE only the lines
# changed since the commit BASE are checked (git clang-format). --fix
# rewrites instead of checking. Prints each unformatted file, or
# `check-format: ok`; exits 1 when a file is not formatted.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

base=""
fix=0
while (($#)); do
  case $1 in
    --changed) (($# >= 2)) || { echo "check-format.sh: --changed needs a commit" >&2; exit 1; }
               base=$2; shift 2 ;;
    --fix) fix=1; shift ;;
    -h|--help) sed -n '8,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-format.sh: unexpected argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done

format=$(command -v clang-format-19 || true)
[[ -n $format ]] || { echo "check-format.sh: clang-format-19 not found (apt-get install clang-format-19)" >&2; exit 1; }

if [[ -n $base ]]; then
  git rev-parse --verify -q "$base^{commit}" >/dev/null ||
    { echo "check-format.sh: --changed: '$base' is not a commit" >&2; exit 1; }
  if ((fix)); then
    git clang-format-19 --binary "$format" --extensions cpp,h "$base"
    exit 0
  fi
  diff=$(git clang-format-19 --binary "$format" --extensions cpp,h --diff "$base" || true)
  if [[ -z $diff || $diff == *"no modified files to format"* || $diff == *"did not modify any files"* ]]; then
    echo "check-format: ok"
    exit 0
  fi
  echo "$diff"
  echo "check-format: the lines above are not formatted (scripts/check-format.sh --changed $base --fix)"
  exit 1
fi

mapfile -t files < <(git ls-files '*.cpp' '*.h')
if ((fix)); then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf '%s: not formatted\n' "${bad[@]}"
  echo "check-format: ${#bad[@]} files not formatted (scripts/check-format.sh --fix)"
  exit 1
fi
echo "check-format: ok"
