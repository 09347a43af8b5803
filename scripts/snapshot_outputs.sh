#!/usr/bin/env bash
# Writes what attn prints and draws for every golden case, example, trace
# format and figure kind into OUT, one file each, so that a refactoring can
# be shown to change no output byte:
#   scripts/snapshot_outputs.sh build/attn /tmp/before
#   ... change the code, rebuild ...
#   scripts/snapshot_outputs.sh build/attn /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
# Exit statuses are kept too (OUT/NAME.rc); stderr goes to OUT/NAME.err.
set -u
bin=$(realpath "$1")
out=$(realpath -m "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out" && mkdir -p "$out"
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one NAME ARGS...: stdout to NAME.out, stderr to NAME.err, status to NAME.rc
one() {
  local name=$1
  shift
  (cd "$tmp" && "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err" </dev/null)
  echo $? >"$out/$name.rc"
}
# a file the run wrote, copied beside its stdout
keep() { [ -e "$tmp/$1" ] && mv "$tmp/$1" "$out/$2"; }

for f in tests/golden/cases/*.json tests/golden/modern/*.json data/masks/*.json \
  data/variants/*.json data/heatmaps/*.json; do
  n=$(echo "$f" | tr '/' '_')
  one "$n.table" run "$root/$f" -w --precision 6
  one "$n.json" run "$root/$f" -w -f json
  one "$n.csv" run "$root/$f" -w -f csv
  one "$n.check" run "$root/$f" --check
  one "$n.trace" run "$root/$f" --trace --color never
done
for e in $(ls data/examples | sed -n 's/\.json$//p'); do
  one "ex.$e.table" run --example "$e" -w
  one "ex.$e.show" run --example "$e" --show --color always
  one "ex.$e.similarity" run --example "$e" --similarity
  one "ex.$e.emit" run --example "$e" --emit-pytorch
  for t in text markdown latex json; do
    one "ex.$e.trace.$t" run --example "$e" --trace --trace-format "$t" --color never
  done
  for h in png svg html; do
    one "ex.$e.heatmap.$h" run --example "$e" --heatmap "fig.$h"
    keep "fig.$h" "ex.$e.fig.$h"
  done
  one "ex.$e.npy" run --example "$e" -o r.npy --weights-out w.npy
  keep w.npy "ex.$e.w.npy"
  keep r.npy "ex.$e.r.npy"
  one "ex.$e.npz" run --example "$e" -w -o r.npz
  keep r.npz "ex.$e.r.npz"
  one "ex.$e.show-doc" examples show "$e"
done
for m in data/models/tiny-*; do
  n=$(basename "$m")
  one "model.$n.all" run --checkpoint "$root/$m" --ids 1,2,3,4,5 --layer all -o stack.npy \
    --hidden-out hidden.npy --heatmap model.png
  keep stack.npy "model.$n.stack.npy"
  keep hidden.npy "model.$n.hidden.npy"
  keep model.png "model.$n.model.png"
  one "model.$n.layer1" run --checkpoint "$root/$m" --ids 1,2,3,4,5 --layer 1 -w --trace \
    --color never
  if [ -e "$out/model.$n.stack.npy" ]; then
    cp "$out/model.$n.stack.npy" "$tmp/stack.npy"
    one "model.$n.stackfig" heatmap stack.npy -o grid.svg
    keep grid.svg "model.$n.grid.svg"
    one "model.$n.diff" diff stack.npy stack.npy --layer 1
    rm -f "$tmp/stack.npy"
  fi
done
for t in data/tokenizers/*/; do
  n=$(basename "$t")
  one "tok.$n.text" tokenize --tokenizer "$root/$t" "The cat sat on the mat." "héllo 世界 123 ok"
  one "tok.$n.json" tokenize --tokenizer "$root/$t" --format json "The cat sat" " x  y"
done
one help help
for c in run heatmap diff bench examples tokenize; do one "help.$c" help "$c"; done
one typo run --variantt dot
one bad run /nonexistent.json
echo "$(ls "$out" | wc -l) files in $out"
