#!/usr/bin/env bash
# Regenerates the pictures of docs/heatmaps.md with an attn binary that is
# already built (this script builds nothing):
#
#   scripts/make_heatmap_docs.sh [ATTN]     ATTN defaults to build/attn
#
# The output is deterministic: the same binary gives byte-identical files,
# so a clean `git status` afterwards means the pictures are up to date.
set -euo pipefail

cd "$(dirname "$0")/.."
attn=${1:-build/attn}
if [ ! -x "$attn" ]; then
  echo "make_heatmap_docs.sh: no attn binary at $attn; build first (scripts/dev.sh demo)" >&2
  exit 2
fi
out=docs/images
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

draw() {  # input, image, extra flags...
  local input=$1 image=$2
  shift 2
  "$attn" run "$input" -q -o /dev/null --heatmap "$out/$image" "$@"
  echo "$out/$image"
}

# The blog's two examples (the self-attention blog post), as PNG and as SVG.
draw data/examples/sweet.json sweet_weights.png
draw data/examples/sweet.json sweet_weights.svg
draw data/examples/hungry.json hungry_weights.png
# The scores before the softmax, and a signed matrix in the diverging map.
draw data/examples/sweet.json sweet_scores.png --of scores
draw data/heatmaps/cosine.json cosine_scores.png --of scores
# A causal mask: masked cells are hatched, not drawn as 0.
draw data/examples/causal.json causal.png
# Four heads and a batch of two: one panel per head plus the head mean.
draw data/examples/multihead.json multihead.png
draw data/examples/multihead.json multihead_batch1_head2.png --batch 1 --head 2
# Chinese labels in Noto Sans CJK (Debian's fonts-noto-cjk), when installed.
cjk=/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
if [ -f "$cjk" ]; then
  draw data/examples/sweet.json sweet_chinese.png --labels '它,喝,牛奶,甜' --font "$cjk"
else
  echo "make_heatmap_docs.sh: $cjk not found (apt-get install fonts-noto-cjk); sweet_chinese.png kept" >&2
fi

# A large matrix: 4096 tokens with sinusoidal position vectors (as in
# "Attention is all you need", 16 dimensions), causal, each row divided by
# its maximum so the band of nearby positions shows; downsampled to fit
# 900 px.
awk 'BEGIN {
  print "{\"title\": \"4096 positions (sinusoidal vectors), causal\", \"causal\": true, \"X\": ["
  for (i = 0; i < 4096; i++) {
    line = ""
    for (j = 0; j < 16; j++) {
      f = exp(-(j - j % 2) / 16 * log(10000))
      v = (j % 2 == 0) ? sin(i * f / 8) : cos(i * f / 8)
      line = line (j ? ", " : "") sprintf("%.6f", v)
    }
    print "[" line "]" (i < 4095 ? "," : "")
  }
  print "]}"
}' > "$tmp/positions.json"
draw "$tmp/positions.json" large_causal.png --normalize row --max-size 900

# A model's stack: the model view (layers down, heads across, the causal
# zeros hatched) and the head summary of the same stack.
"$attn" heatmap data/models/tiny-llama/attentions.npy --tokens data/models/tiny-llama/tokens.json \
  -o "$out/model_view.png"
echo "$out/model_view.png"
"$attn" heatmap data/models/tiny-llama/attentions.npy --summary previous -o "$out/head_summary.png"
echo "$out/head_summary.png"

# docs/analyses.md: attention rollout of a sentence, and the logit lens.
"$attn" run --checkpoint data/models/tiny-llama --text "The cat sat on the mat" --layer all \
  --of rollout --heatmap "$out/rollout.png"
echo "$out/rollout.png"
"$attn" run --checkpoint data/models/tiny-gpt2 --text "The cat sat on the mat." --layer all \
  --logit-lens 1 --heatmap "$out/logit_lens.png" >/dev/null
echo "$out/logit_lens.png"

# The interactive page (docs/heatmaps.md): the model view of the tiny Llama
# as HTML, opened in headless Chromium, layer 1 chosen and a cell hovered,
# then photographed. Chromium's fonts and version shape that picture, so it
# is redrawn only where chromium and python3 are installed; the script says
# so otherwise.
"$attn" heatmap data/models/tiny-llama/attentions.npy --tokens data/models/tiny-llama/tokens.json \
  --title "tiny-llama: attention of 2 layers x 4 heads" -o "$tmp/model_view.html"
if command -v chromium >/dev/null && command -v python3 >/dev/null; then
  python3 tests/html_page_check.py "$tmp/model_view.html" --select select-batch=1 --cell 5,4 \
    --width 1000 --screenshot "$out/heatmap_page.png" >/dev/null
  echo "$out/heatmap_page.png"
else
  echo "make_heatmap_docs.sh: no chromium (or python3): $out/heatmap_page.png left as it is" >&2
fi
