#!/usr/bin/env python3
"""Writes the planted-bug cases of tests/diagnose_test.cc.

Each case is an attention written in PyTorch (float64) with one of the
mistakes people make when they write attention by hand; its output is
saved as ref.npy beside the inputs. attn runs the intended attention with
--expect ref.npy, and its check must name the mistake. Re-run this script
to regenerate the files (they are committed; tests never run Python).

    /usr/bin/python3 tests/diagnose/make_planted.py
"""
import math
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(7)


def save(case, **arrays):
    d = os.path.join(HERE, case)
    os.makedirs(d, exist_ok=True)
    for name, a in arrays.items():
        a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
        np.save(os.path.join(d, name + ".npy"), np.ascontiguousarray(a))


def attention(q, k, v, block=None, scale=None, dim=-1):
    """softmax(q kᵀ · scale) v over the last two axes; block: True = masked."""
    s = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if block is not None:
        s = s.masked_fill(block, float("-inf"))
    return torch.softmax(s, dim=dim) @ v


def causal_block(lq, lk, offset=0):
    i = torch.arange(lq)[:, None] + offset
    j = torch.arange(lk)[None, :]
    return j > i


def rope(x, layout, start=0):
    """Rotary embedding on [.., L, d] at positions start..start+L-1, theta 10000."""
    L, d = x.shape[-2], x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    ang = torch.arange(start, start + L, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cos(ang), torch.sin(ang)
    if layout == "half":
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        c, s = cos, sin
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    return out.flatten(-2)


L, D = 6, 8
q, k, v = (torch.randn(L, D, dtype=torch.float64) for _ in range(3))

# --causal intended, the reference forgot the mask.
save("causal_forgotten", q=q, k=k, v=v, ref=attention(q, k, v))
# No mask intended, the reference is causal (is_causal=True left on).
save("causal_extra", q=q, k=k, v=v, ref=attention(q, k, v, causal_block(L, L)))
# The causal mask on the wrong side (torch.tril where torch.triu was meant):
# the keys before each query masked, the later ones visible.
save("causal_wrong_side", q=q, k=k, v=v, ref=attention(q, k, v, causal_block(L, L).T & ~torch.eye(L, dtype=torch.bool)))
# A decode step: 2 new queries after 4 cached keys; the reference aligns the
# last query with the last key (flash-attn, KV cache), attn's --causal is top-left.
q2 = torch.randn(2, D, dtype=torch.float64)
save("causal_bottom_right", q=q2, k=k, v=v, ref=attention(q2, k, v, causal_block(2, L, L - 2)))
# The same decode step with RoPE: the new queries sit at positions 4 and 5,
# as a KV cache puts them, for the rotation and the mask alike.
save("causal_bottom_right_rope", q=q2, k=k, v=v,
     ref=attention(rope(q2, "half", start=L - 2), rope(k, "half"), v, causal_block(2, L, L - 2)))
# A boolean mask meant as "True = takes part" (scaled_dot_product_attention's
# attn_mask) given to attn as is, where attn reads True as masked.
keep = torch.rand(L, L) > 0.35
keep |= torch.eye(L, dtype=torch.bool)
save("mask_polarity", q=q, k=k, v=v, mask=keep.numpy(), ref=attention(q, k, v, ~keep))
# The mask applied transposed (mask.T): block[i][j] read as block[j][i].
block = torch.rand(L, L) > 0.6
block &= ~torch.eye(L, dtype=torch.bool)
save("mask_transposed", q=q, k=k, v=v, mask=block.numpy(), ref=attention(q, k, v, block.T))
# softmax over the queries (dim=-2) instead of the keys.
save("softmax_axis", q=q, k=k, v=v, ref=attention(q, k, v, dim=-2))
# The scale applied twice: scores / d_k instead of / √d_k.
save("scale_twice", q=q, k=k, v=v, ref=attention(q, k, v, scale=1 / D))
# No scaling at all.
save("scale_missing", q=q, k=k, v=v, ref=attention(q, k, v, scale=1.0))
# Heads split in the wrong order: [L, H*d] viewed as [L, d, H] instead of
# [L, H, d] (and merged back the same way).
H, HD = 2, 4
def split_wrong(x):
    return x.view(L, HD, H).permute(2, 0, 1)
out = attention(split_wrong(q), split_wrong(k), split_wrong(v))  # [H, L, HD]
save("heads_split", q=q, k=k, v=v, ref=out.permute(1, 2, 0).reshape(L, H * HD))
# RoPE in the interleaved layout (RoFormer, Meta's Llama) where attn's
# default is half (GPT-NeoX, Hugging Face).
save("rope_layout", q=q, k=k, v=v, ref=attention(rope(q, "interleaved"), rope(k, "interleaved"), v))
# Grouped-query attention with the key/value heads tiled (repeat) instead of
# repeated per group (repeat_interleave): query head h reads kv head h % 2.
q4 = torch.randn(1, 4, L, HD, dtype=torch.float64)
k4, v4 = (torch.randn(1, 2, L, HD, dtype=torch.float64) for _ in range(2))
save("gqa_tiled", q=q4, k=k4, v=v4, ref=attention(q4, k4.repeat(1, 2, 1, 1), v4.repeat(1, 2, 1, 1)))
