#!/usr/bin/env bash
# One entry point for setting up, building and testing attn on Debian 12.
#
#   scripts/dev.sh demo   install what is missing, build (Release), run the blog example
#   scripts/dev.sh test   install what is missing, build, run the whole test suite, then
#                         build and run it again under ASan + UBSan
#   scripts/dev.sh fuzz   install clang, build the libFuzzer targets in build-fuzz
#                         (then run them with tests/fuzz/run.sh; see tests/fuzz/README.md)
#   scripts/dev.sh generate
#                         rewrite the completion scripts in data/completions/ and the
#                         entry headings of docs/attn.1 from the flag table
#                         (app/flag_table.cc) and the settings table, after a flag
#                         changed (the test FlagDocs.Generated fails until then)
#
# Both are safe to repeat: packages already installed are not touched and the
# build directories are reused.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# Debian packages the build needs (compiler, CMake, libraries, GoogleTest).
build_pkgs=(g++ make cmake pkg-config libeigen3-dev libcli11-dev nlohmann-json3-dev libstb-dev
            libfreetype-dev fonts-dejavu-core libgtest-dev)
# Extra packages for the test suite: the PyTorch cross-check of --emit-pytorch
# and docs/from-pytorch.md, the LaTeX trace compilation, jq pipelines, the
# man page rendering (groff), zsh completion, the clang-format check, the
# --font test with Noto Sans CJK and the HTML heatmap page in headless
# Chromium run only where these exist.
test_pkgs=(python3 python3-numpy python3-torch texlive-latex-base jq groff-base zsh clang-format
           fonts-noto-cjk chromium)

install_missing() {
  local missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "dev.sh: installing ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

configure_and_build() {  # dir, extra cmake args... (a later -DCMAKE_BUILD_TYPE wins)
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" ${target:+--target "$target"}
}

cmd=${1:-}
case "$cmd" in
  demo)
    install_missing "${build_pkgs[@]}"
    # The program only: a first run should not wait for the test suite.
    target=attn configure_and_build build
    echo
    echo "\$ build/attn run --example sweet"
    build/attn run --example sweet
    ;;
  test)
    install_missing "${build_pkgs[@]}" "${test_pkgs[@]}"
    werror=OFF
    if [ "${CI:-}" = "true" ]; then werror=ON; fi
    configure_and_build build -DATTN_WERROR=$werror
    (cd build && ctest --output-on-failure -j "$jobs")
    # The same suite under AddressSanitizer + UndefinedBehaviorSanitizer:
    # any report aborts the test that triggered it, so the run goes red.
    configure_and_build build-asan -DATTN_SANITIZE=ON -DATTN_WERROR=$werror \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo
    (cd build-asan &&
     ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j "$jobs")
    ;;
  fuzz)
    install_missing "${build_pkgs[@]}" clang libclang-rt-dev python3
    CXX=clang++ configure_and_build build-fuzz -DATTN_FUZZ=ON -DATTN_BUILD_TESTS=OFF
    echo "fuzzers built in build-fuzz: fuzz_json fuzz_csv fuzz_npy fuzz_escape fuzz_flags" \
         "fuzz_binary fuzz_safetensors fuzz_npz fuzz_font fuzz_config fuzz_gguf fuzz_tokenizer"
    echo "run one: tests/fuzz/run.sh fuzz json 1800"
    ;;
  generate)
    install_missing "${build_pkgs[@]}"
    target=attn_flag_docs configure_and_build build
    build/attn_flag_docs write "$root"
    git -C "$root" status --short -- data/completions docs/attn.1
    ;;
  *)
    echo "usage: scripts/dev.sh demo|test|fuzz|generate" >&2
    exit 2
    ;;
esac
