#!/usr/bin/env bash
# Regenerates the pictures of docs/tutorial.md (docs/images/tutorial_*.png)
# with an attn binary that is already built (this script builds nothing):
#
#   scripts/make_tutorial_images.sh [ATTN]     ATTN defaults to build/attn
#
# Every picture comes from a built-in example (or, for section 10, a tiny
# model in data/models), with the same flags as the
# command shown next to it in the tutorial. The output is deterministic: the
# same binary gives byte-identical files, so a clean `git status` afterwards
# means the pictures are up to date.
set -euo pipefail

cd "$(dirname "$0")/.."
attn=${1:-build/attn}
if [ ! -x "$attn" ]; then
  echo "make_tutorial_images.sh: no attn binary at $attn; build first (scripts/dev.sh demo)" >&2
  exit 2
fi
out=docs/images
mkdir -p "$out"

draw() {  # example, image, extra flags...
  local example=$1 image=$2
  shift 2
  "$attn" run --example "$example" -q -o /dev/null --heatmap "$out/$image" "$@"
  echo "$out/$image"
}

# Section 2 and 4: the blog's first example, as the formula says and as the
# blog computed it (scale after the softmax), on the same colour range.
draw sweet tutorial_sweet_weights.png --vmax 1
draw sweet tutorial_sweet_blog_weights.png --vmax 1 --scale-at output
# Section 4: the blog's weights minus the formula's (attn diff), drawn from
# files named as in the tutorial, since the figure names them.
attn_abs=$(cd "$(dirname "$attn")" && pwd)/$(basename "$attn")
out_abs=$(pwd)/$out
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(
  cd "$tmp"
  "$attn_abs" run --example sweet -f json -w -o formula.json
  "$attn_abs" run --example sweet --scale-at output -f json -w -o blog.json
  "$attn_abs" diff formula.json blog.json --heatmap "$out_abs/tutorial_sweet_diff.png" >/dev/null
)
echo "$out/tutorial_sweet_diff.png"
# Section 3: the scaled scores that enter the softmax.
draw sweet tutorial_sweet_scores.png --of scores
# Section 5: the second example.
draw hungry tutorial_hungry_weights.png --vmax 1
# Section 6: d2l's valid_lens, and fully masked rows.
draw d2l_valid_lens tutorial_d2l_weights.png
draw key_padding tutorial_key_padding.png
# Section 7: the blog's two columns as two heads, and four heads.
draw sweet tutorial_sweet_heads.png --heads 2
draw multihead tutorial_multihead.png --batch 0
# Section 10: the model view of the tiny GPT-2's stack of attention weights.
"$attn" heatmap data/models/tiny-gpt2/attentions.npy \
  --tokens data/models/tiny-gpt2/tokens.json -o "$out/tutorial_model_view.png"
echo "$out/tutorial_model_view.png"
