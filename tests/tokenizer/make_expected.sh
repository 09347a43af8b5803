#!/usr/bin/env bash
# Regenerate data/tokenizers/<name>/expected.json with the oracle:
#   {"oracle": ..., "texts": "tests/tokenizer/texts.json",
#    "special": [{"text","ids","tokens"}...], "no_special": [...]}
# "special" = encode(text) (post-processor special tokens added),
# "no_special" = encode(text, add_special_tokens=False).
#
#   tests/tokenizer/make_expected.sh [NAME...]     (default: every data/tokenizers/*/)
#
# Needs node and the oracle packages under $ATTN_TOKENIZER_ORACLE (default
# /tmp/tokoracle); see tests/tokenizer/README.md. Uses --impl rust (the
# `tokenizers` npm package, i.e. the Rust crate) unless ORACLE_IMPL=js.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
impl=${ORACLE_IMPL:-rust}
oracle_dir=${ATTN_TOKENIZER_ORACLE:-/tmp/tokoracle}
if [ "$impl" = rust ]; then
  label="tokenizers@$(node -p "require('$oracle_dir/node_modules/tokenizers/package.json').version") (Hugging Face's Node binding of the Rust tokenizers crate)"
else
  label="@huggingface/tokenizers@$(node -p "require('$oracle_dir/node_modules/@huggingface/tokenizers/package.json').version") (Tokenizers.js, pure JS port)"
fi
if [ $# -eq 0 ]; then
  set --
  for d in "$repo"/data/tokenizers/*/; do
    [ -f "$d/tokenizer.json" ] && set -- "$@" "$(basename "$d")"
  done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in "$@"; do
  dir="$repo/data/tokenizers/$name"
  node "$here/oracle.mjs" "$dir/tokenizer.json" --impl "$impl" < "$here/texts.json" > "$tmp/special.json"
  node "$here/oracle.mjs" "$dir/tokenizer.json" --impl "$impl" --no-special < "$here/texts.json" > "$tmp/no_special.json"
  python3 - "$tmp/special.json" "$tmp/no_special.json" "$dir/expected.json" "$label" <<'PY'
import json, sys
special = json.load(open(sys.argv[1], encoding="utf-8"))
no_special = json.load(open(sys.argv[2], encoding="utf-8"))
def block(rows):
    return "[\n" + ",\n".join(" " + json.dumps(r, ensure_ascii=False) for r in rows) + "\n ]"
out = ("{\n \"oracle\": " + json.dumps(sys.argv[4]) + ",\n \"texts\": \"tests/tokenizer/texts.json\",\n"
       " \"special\": " + block(special) + ",\n \"no_special\": " + block(no_special) + "\n}\n")
json.loads(out)
open(sys.argv[3], "w", encoding="utf-8").write(out)
PY
  echo "wrote $dir/expected.json"
done
