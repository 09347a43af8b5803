#!/bin/sh
# Runs one fuzzer, or merges its findings into the committed corpus.
#
#   tests/fuzz/run.sh fuzz  TARGET SECONDS [libFuzzer flags...]
#   tests/fuzz/run.sh merge TARGET
#
# TARGET is json, csv, npy, escape, flags, binary, safetensors, npz, font, config,
# gguf or tokenizer;
# the fuzzers must be built in build-fuzz (see README.md). `fuzz` runs under
# nice -n 19, growing build-fuzz/work/TARGET from the committed corpus and
# fresh seeds (make_seeds.py); reproducers land in build-fuzz/artifacts/TARGET/
# and the log in build-fuzz/logs/. `merge` minimizes everything into a fresh
# tests/fuzz/TARGET/corpus.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${ATTN_FUZZ_BUILD:-$root/build-fuzz}

mode=$1
target=$2
timeout=10
extra=
case $target in
  json) max_len=4096 ;;
  csv) max_len=2048 ;;
  npy) max_len=4096 ;;
  escape) max_len=512 ;;
  # A whole run of the largest example with a trace takes about 4 s under
  # the sanitizers, and more at nice 19 beside a build: a 10 s timeout
  # would report the machine's load, not a hang.
  # The program writes to fds 1 and 2, which the entry point redirects: with
  # -close_fd_mask libFuzzer keeps a descriptor of its own for its reports.
  flags) max_len=1024 timeout=60 extra=-close_fd_mask=3 ;;
  binary | safetensors | npz) max_len=4096 ;;
  # The seed fonts (make_font_seeds.py) are about 600 bytes.
  font) max_len=4096 ;;
  # config.json files of the tiny checkpoints are under 1.5 KB.
  config) max_len=4096 ;;
  # types.gguf, a tensor of each type attn reads, is 9.7 KB.
  gguf) max_len=16384 ;;
  # A seed is a tokenizer.json of about 4 KB and a text.
  tokenizer) max_len=8192 ;;
  *) echo "run.sh: unknown target '$target' (json, csv, npy, escape, flags, binary, safetensors, npz, font, config, gguf, tokenizer)" >&2; exit 2 ;;
esac
fuzzer=$build/fuzz_$target
corpus=$here/$target/corpus
work=$build/work/$target
seeds=$build/seeds/$target
# The single-reader targets start from the binary target's seeds.
case $target in safetensors | npz) seeds=$build/seeds/binary ;; esac
mkdir -p "$corpus" "$work" "$build/artifacts/$target" "$build/logs"
rm -rf "$build/seeds"
python3 "$here/make_seeds.py" "$build/seeds"
python3 "$here/make_font_seeds.py" "$build/seeds/font"
# A target without generated seeds (config) starts from its committed corpus.
mkdir -p "$seeds"

common="-dict=$here/$target.dict -max_len=$max_len -rss_limit_mb=2048 -timeout=$timeout $extra"
case $mode in
  fuzz)
    seconds=$3
    shift 3
    log=$build/logs/$target-$(date +%Y%m%d-%H%M%S).log
    echo "logging to $log"
    # shellcheck disable=SC2086
    /usr/bin/time -f "cpu_seconds: user %U system %S wall %e" \
      nice -n 19 "$fuzzer" $common -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$target/" "$@" "$work" "$corpus" "$seeds" \
      >"$log" 2>&1 || true
    grep -E "^(#[0-9]+[[:space:]]+DONE|stat::|cpu_seconds|==[0-9]+==ERROR|SUMMARY)" "$log" || tail -20 "$log"
    ;;
  merge)
    fresh=$build/merged/$target
    rm -rf "$fresh"
    mkdir -p "$fresh"
    # shellcheck disable=SC2086
    nice -n 19 "$fuzzer" $common -merge=1 "$fresh" "$corpus" "$work" "$seeds" 2>&1 | tail -3
    rm -rf "$corpus"
    mv "$fresh" "$corpus"
    echo "$target corpus: $(ls "$corpus" | wc -l) files, $(du -sk --apparent-size "$corpus" | cut -f1) KB"
    ;;
  *) echo "run.sh: unknown mode '$mode' (fuzz, merge)" >&2; exit 2 ;;
esac
