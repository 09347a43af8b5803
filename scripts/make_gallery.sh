#!/usr/bin/env bash
# The gallery of docs/heatmaps.md: figures at the size of real models, in
# the two sizes they are designed for (--fit slide, 1920 x 1080, and --fit
# column, 700 px wide: 3.5 in at 200 dpi), drawn with an attn binary
# already built:
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

s24=$tmp/stack_24x14x12.npy
tok12=$tmp/tokens12.json
cjk=/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc

# Each figure at both targets of --fit: a slide (1920 x 1080) and a paper
# column (700 px wide: 3.5 in at 200 dpi, text at 7 pt or more).
for target in slide column; do
  # 12 layers x 12 heads over 24 tokens (a small model, a short sentence).
  fig model_view_12x12_$target.png heatmap "$s12" --tokens "$tok" --title "12 layers x 12 heads, 24 tokens" --fit $target
  # 24 layers x 14 heads: layers across on a slide.
  fig model_view_24x14_$target.png heatmap "$s24" --tokens "$tok12" --title "24 layers x 14 heads, 12 tokens" --fit $target
  # One layer's heads and their mean, and one head.
  fig layer3_$target.png heatmap "$s12" --tokens "$tok" --layer 3 --heads 0-6 --title "layer 3, heads 0-6" --fit $target
  fig layer3_head5_$target.png heatmap "$s12" --tokens "$tok" --layer 3 --head 5 --title "layer 3, head 5" --fit $target
  # 32 layers x 32 heads over 128 tokens, and its head summaries.
  fig model_view_32x32_$target.png heatmap "$s32" --title "32 layers x 32 heads, 128 tokens" --fit $target
  fig summary_previous_32x32_$target.png heatmap "$s32" --summary previous --title "previous-token heads" --fit $target
  fig summary_entropy_32x32_$target.png heatmap "$s32" --summary entropy --title "entropy of each head" --fit $target
  # A 1024-token causal map: the mask hatched, the range up to the 99th percentile.
  "$attn" run --x "$tmp/x1024.npy" --causal -q -o /dev/null --heatmap "$out/causal_1024_$target.png" \
    --vmax q99 --fit $target --title "1024 positions, causal"
  echo "$out/causal_1024_$target.png"
  # Chinese labels, in Noto Sans CJK (Debian's fonts-noto-cjk) where it is installed.
  if [ -f "$cjk" ]; then
    "$attn" run data/examples/sweet.json --labels '它,喝,牛奶,甜' --font "$cjk" -q -o /dev/null \
      --heatmap "$out/chinese_$target.png" --fit $target
    echo "$out/chinese_$target.png"
  fi
done
fig model_view_24x14_slide.svg heatmap "$s24" --tokens "$tok12" --title "24 layers x 14 heads, 12 tokens" --fit slide
fig model_view_32x32.svg heatmap "$s32" --title "32 layers x 32 heads, 128 tokens" --fit slide
fig summary_entropy_32x32.svg heatmap "$s32" --summary entropy --title "entropy of each head" --fit slide
fig summary_previous_32x32.html heatmap "$s32" --summary previous --title "previous-token heads"
fig model_view_12x12.html heatmap "$s12" --tokens "$tok" --title "12 layers x 12 heads, 24 tokens" --fit slide
