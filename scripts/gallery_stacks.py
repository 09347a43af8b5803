#!/usr/bin/env python3
"""Writes the inputs of the gallery in docs/heatmaps.md (scripts/make_gallery.sh).

Attention stacks shaped as a real model's, [layers][1][heads][q][k], causal,
with the head types people look for: previous-token heads, sink heads
(weight on the first token), heads that stay on their own token, local
heads and broad ones, mixed over layers; and the hidden states of a
1024-token sequence for a causal map. Seeded: the same files every run.

    python3 scripts/gallery_stacks.py DIR
"""
import json
import os
import sys

import numpy as np


def stack(layers, heads, tokens, seed):
    rng = np.random.default_rng(seed)
    i = np.arange(tokens)[:, None]
    j = np.arange(tokens)[None, :]
    out = np.zeros((layers, 1, heads, tokens, tokens), dtype=np.float32)
    for l in range(layers):
        for h in range(heads):
            s = rng.normal(0, 1.0, (tokens, tokens))
            kind = rng.integers(0, 6)
            strength = rng.uniform(3, 7)
            if kind == 0:
                s += strength * (j == i - 1)  # previous token
            elif kind == 1:
                s += strength * (j == 0)  # sink
            elif kind == 2:
                s += strength * (j == i)  # self
            elif kind == 3:
                s -= 0.6 * np.abs(i - j)  # local
            elif kind == 4:
                s += 0.5 * strength * (j == 0) + 0.5 * strength * (j == i - 1)
            s = np.where(j > i, -np.inf, s)
            e = np.exp(s - s.max(-1, keepdims=True))
            out[l, 0, h] = e / e.sum(-1, keepdims=True)
    return out


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    words = ("The cat sat on the mat and looked at the dog , which slept by the door "
             "until the rain stopped again .").split()
    tokens = ["<s>"] + ["\u0120" + w if k else w for k, w in enumerate(words)]
    tokens = tokens[:24]
    with open(os.path.join(out, "tokens24.json"), "w") as f:
        json.dump(tokens, f, ensure_ascii=False)
    np.save(os.path.join(out, "stack_12x12x24.npy"), stack(12, 12, 24, 1))
    np.save(os.path.join(out, "stack_32x32x128.npy"), stack(32, 32, 128, 2))
    # 24 layers x 14 heads over 12 tokens: a model view that wants a
    # landscape grid on a slide.
    with open(os.path.join(out, "tokens12.json"), "w") as f:
        json.dump(tokens[:12], f, ensure_ascii=False)
    np.save(os.path.join(out, "stack_24x14x12.npy"), stack(24, 14, 12, 4))
    # 1024 positions: sinusoidal vectors of 16 dimensions plus noise.
    rng = np.random.default_rng(3)
    pos = np.arange(1024)[:, None]
    freq = np.exp(-np.arange(0, 16, 2) / 16 * np.log(10000))[None, :]
    x = np.concatenate([np.sin(pos * freq / 8), np.cos(pos * freq / 8)], axis=1)
    np.save(os.path.join(out, "x1024.npy"), x + 0.3 * rng.normal(size=x.shape))


if __name__ == "__main__":
    main()
