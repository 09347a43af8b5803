"""Time and memory of attn on real-model sizes (not a test: numbers to read).

  python3 bench/model_bench.py [ATTN] [--scratch DIR]

Builds, once, in the scratch directory (default /tmp/attn-model-bench):
- stacks of attention weights [12][1][12][N][N] in float32, the shape of
  BERT-base's or GPT-2's output_attentions, for N = 512 (151 MB) and
  N = 1600 (1.47 GB), softmax rows of random logits;
- a 1 GB checkpoint whose one Llama-style layer (hidden 1024, 8 heads,
  2 K/V heads, head width 128; 12 MB of weights) sits after 1 GB of other
  tensors, with its config.json and a 64-token X.

Then runs attn heatmap's model view on each stack and attn run
--checkpoint on the layer, reporting wall time and peak RSS (GNU time's
%M). The page cache is warm after the first run; the first line of each
is dropped.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np


def stack(path, n):
    if os.path.exists(path):
        return
    arr = np.lib.format.open_memmap(path + ".part", mode="w+", dtype="<f4", shape=(12, 1, 12, n, n))
    rng = np.random.default_rng(1)
    for layer in range(12):
        x = rng.standard_normal((1, 12, n, n)).astype(np.float32) * 3
        x = np.exp(x - x.max(-1, keepdims=True))
        arr[layer] = x / x.sum(-1, keepdims=True)
    arr.flush()
    del arr
    os.rename(path + ".part", path)


def checkpoint(d):
    if os.path.exists(os.path.join(d, "model.safetensors")):
        return
    os.makedirs(d, exist_ok=True)
    hidden, heads, kv, hd = 1024, 8, 2, 128
    layer = "model.layers.0.self_attn."
    names = [("model.a_filler.weight", (262144, 1024)),  # 1 GiB, before the layer
             (layer + "q_proj.weight", (heads * hd, hidden)),
             (layer + "k_proj.weight", (kv * hd, hidden)),
             (layer + "v_proj.weight", (kv * hd, hidden)),
             (layer + "o_proj.weight", (hidden, heads * hd))]
    header, offset = {}, 0
    for name, shape in names:
        size = int(np.prod(shape)) * 4
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(2)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape in names:
            cells = rng.standard_normal(shape) / 32 if "filler" not in name else None
            if cells is None:
                f.write(np.zeros(shape[1], dtype="<f4").tobytes() * shape[0])
            else:
                f.write(cells.astype("<f4").tobytes())
    json.dump({"model_type": "llama", "hidden_size": hidden, "num_attention_heads": heads,
               "num_key_value_heads": kv, "head_dim": hd, "num_hidden_layers": 1,
               "rope_theta": 500000.0}, open(os.path.join(d, "config.json"), "w"))
    np.save(os.path.join(d, "x.npy"), np.random.default_rng(3).standard_normal((64, hidden)))


def measure(label, args):
    runs = []
    for _ in range(3):
        r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + args, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{label}: {r.stderr}")
        seconds, kb = r.stderr.strip().splitlines()[-1].split()
        runs.append((float(seconds), int(kb)))
    best = min(runs[1:])
    print(f"{label:48s} {best[0]:6.2f} s  {best[1] / 1024:7.1f} MB peak RSS")


def main():
    attn = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "build/attn"
    scratch = "/tmp/attn-model-bench"
    if "--scratch" in sys.argv:
        scratch = sys.argv[sys.argv.index("--scratch") + 1]
    os.makedirs(scratch, exist_ok=True)
    for n in (512, 1600):
        path = os.path.join(scratch, f"stack_{n}.npy")
        stack(path, n)
        size = os.path.getsize(path) / 1e6
        measure(f"model view, stack [12][1][12][{n}][{n}] ({size:.0f} MB)",
                [attn, "heatmap", path, "-o", os.path.join(scratch, f"view_{n}.png")])
    d = os.path.join(scratch, "checkpoint")
    checkpoint(d)
    size = os.path.getsize(os.path.join(d, "model.safetensors")) / 1e6
    measure(f"one layer (12.6 MB) of a {size:.0f} MB checkpoint",
            [attn, "run", "--checkpoint", d, "--x", os.path.join(d, "x.npy"),
             "-o", os.path.join(scratch, "out.npy")])


if __name__ == "__main__":
    main()
