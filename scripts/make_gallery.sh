#!/usr/bin/env bash
# The gallery of docs/heatmaps.md: figures at the size of real models, in
# the two sizes they are designed for (a 1920-pixel slide, and a 700-pixel
# paper column: 3.5 in at 200 dpi), drawn with an attn binary already built:
#
#   scripts/make_gallery.sh [ATTN] [OUT]   ATTN defaults to build/attn,
#                                          OUT to docs/images/gallery
#
# The stacks are made by scripts/gallery_stacks.py with $PYTHON (default
# /usr/bin/python3, Debian's, with python3-numpy).
# PNGs are what docs/heatmaps.md shows; the SVG and HTML files go to OUT
# too (not committed: SVG and HTML of a 32 x 32 model are megabytes).
set -euo pipefail

cd "$(dirname "$0")/.."
attn=${1:-build/attn}
out=${2:-docs/images/gallery}
if [ ! -x "$attn" ]; then
  echo "make_gallery.sh: no attn binary at $attn; build first (scripts/dev.sh demo)" >&2
  exit 2
fi
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${PYTHON:-/usr/bin/python3}" scripts/gallery_stacks.py "$tmp"

fig() {  # output file, attn arguments...
  local file=$1
  shift
  "$attn" "$@" -q -o "$out/$file"
  echo "$out/$file"
}
s12=$tmp/stack_12x12x24.npy
s32=$tmp/stack_32x32x128.npy
tok=$tmp/tokens24.json

# 12 layers x 12 heads over 24 tokens (a small model, a short sentence).
fig model_view_12x12_slide.png heatmap "$s12" --tokens "$tok" --title "12 layers x 12 heads, 24 tokens" --max-size 1920
fig model_view_12x12_column.png heatmap "$s12" --tokens "$tok" --title "12 x 12 heads" --max-size 700
fig model_view_12x12.svg heatmap "$s12" --tokens "$tok" --title "12 layers x 12 heads, 24 tokens" --max-size 1920
fig model_view_12x12.html heatmap "$s12" --tokens "$tok" --title "12 layers x 12 heads, 24 tokens"
fig layer3_head5.png heatmap "$s12" --tokens "$tok" --layer 3 --head 5 --title "layer 3, head 5" --max-size 700
# 32 layers x 32 heads over 128 tokens, and its head summaries.
fig model_view_32x32_slide.png heatmap "$s32" --title "32 layers x 32 heads, 128 tokens" --max-size 1920
fig model_view_32x32.svg heatmap "$s32" --title "32 layers x 32 heads, 128 tokens" --max-size 1920
fig summary_previous_32x32_slide.png heatmap "$s32" --summary previous --title "previous-token heads" --max-size 1920
fig summary_first_32x32_column.png heatmap "$s32" --summary first --title "sink heads" --max-size 700
fig summary_entropy_32x32.svg heatmap "$s32" --summary entropy --title "entropy of each head" --max-size 1920
fig summary_previous_32x32.html heatmap "$s32" --summary previous --title "previous-token heads"
# A 1024-token causal map: the mask hatched, the range up to the 99th percentile.
"$attn" run --x "$tmp/x1024.npy" --causal -q -o /dev/null --heatmap "$out/causal_1024_slide.png" \
  --vmax q99 --max-size 1920 --title "1024 positions, causal"
echo "$out/causal_1024_slide.png"
