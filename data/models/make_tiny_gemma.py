#!/usr/bin/python3
"""Build a tiny Gemma 2 model (data/models/tiny-gemma2) and its reference
numbers, as make_tiny_models.py does for Llama, GPT-2 and BERT.

The forward pass below is written from transformers' Gemma2Model, eager
attention, run in float64 on the stored float32 weights widened:

* the embeddings scaled by sqrt(hidden_size) (in the hidden states' dtype,
  here float64);
* Gemma's RMSNorm, x / sqrt(mean(x^2) + eps) * (1 + w), four per layer:
  input, post-attention (on the attention output, before the residual),
  pre-feed-forward and post-feed-forward;
* attention scaled by query_pre_attn_scalar^-1/2, its scores soft-capped,
  tanh(s / cap) * cap, before the causal mask; every other layer (0, 2, ...)
  sees a sliding window of sliding_window keys, itself included;
* the MLP down(gelu_tanh(gate(x)) * up(x)).

The attention is checked against a second formulation (an explicit loop
over heads with the window built from positions). Run with
``python3 data/models/make_tiny_gemma.py`` (numpy and torch); the output is
byte-identical from run to run.
"""

import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_models as tm  # noqa: E402  (the writers and helpers)

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = {
    "architectures": ["Gemma2ForCausalLM"],
    "model_type": "gemma2",
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "num_hidden_layers": 2,
    "rope_theta": 10000.0,
    "max_position_embeddings": 128,
    "rms_norm_eps": 1e-6,
    "vocab_size": 40,
    "attention_bias": False,
    "hidden_activation": "gelu_pytorch_tanh",
    "query_pre_attn_scalar": 16,
    "attn_logit_softcapping": 50.0,
    "final_logit_softcapping": 30.0,
    "sliding_window": 4,
    "torch_dtype": "float32",
    "tie_word_embeddings": True,
}
TOKENS = ["<bos>", "\u2581The", "\u2581cat", "\u2581sat", "\u2581on", "\u2581the", "\u2581mat"]
IDS = [2, 17, 29, 8, 33, 12, 24]


def weights():
    c = CONFIG
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    rng = np.random.default_rng(20261126)
    w = {"model.embed_tokens.weight": (0.3 * rng.standard_normal((v, d))).astype("<f4")}
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        # Gemma's norms multiply by (1 + w): weights near 0.
        for norm in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                     "post_feedforward_layernorm"):
            w[p + norm + ".weight"] = tm.vector(rng, d, 0.0, 0.2)
        w[p + "self_attn.q_proj.weight"] = tm.linear(rng, nh * hd, d, 2.0)
        w[p + "self_attn.k_proj.weight"] = tm.linear(rng, nkv * hd, d, 2.0)
        w[p + "self_attn.v_proj.weight"] = tm.linear(rng, nkv * hd, d)
        w[p + "self_attn.o_proj.weight"] = tm.linear(rng, d, nh * hd)
        w[p + "mlp.gate_proj.weight"] = tm.linear(rng, inter, d)
        w[p + "mlp.up_proj.weight"] = tm.linear(rng, inter, d)
        w[p + "mlp.down_proj.weight"] = tm.linear(rng, d, inter)
    w["model.norm.weight"] = tm.vector(rng, d, 0.0, 0.2)
    return w


def gemma_rms_norm(x, weight, eps):
    # Gemma2RMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + weight)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def sliding(n):
    return n % 2 == 0    # Gemma2DecoderLayer: is_sliding = not bool(layer_idx % 2)


def attention(x, w, p, c, n):
    """Gemma2Attention.forward (eager) for one sequence."""
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    s = x.shape[0]
    q = (x @ w[p + "self_attn.q_proj.weight"].T).view(s, nh, hd).transpose(0, 1)
    k = (x @ w[p + "self_attn.k_proj.weight"].T).view(s, nkv, hd).transpose(0, 1)
    v = (x @ w[p + "self_attn.v_proj.weight"].T).view(s, nkv, hd).transpose(0, 1)
    cos, sin = tm.rope_cos_sin(s, hd, c["rope_theta"])
    q = q * cos + tm.rotate_half(q) * sin
    k = k * cos + tm.rotate_half(k) * sin
    group = nh // nkv
    k = k.repeat_interleave(group, dim=0)
    v = v.repeat_interleave(group, dim=0)
    scores = q @ k.transpose(-1, -2) * c["query_pre_attn_scalar"] ** -0.5
    cap = c["attn_logit_softcapping"]
    scores = torch.tanh(scores / cap) * cap
    mask = tm.causal_mask(s)
    if sliding(n):
        # the sliding window: a key more than sliding_window - 1 back is masked
        i = torch.arange(s)[:, None]
        j = torch.arange(s)[None, :]
        mask = mask.masked_fill(i - j >= c["sliding_window"], float("-inf"))
    weights_ = tm.softmax(scores + mask)
    o = (weights_ @ v).transpose(0, 1).reshape(s, nh * hd)
    return o @ w[p + "self_attn.o_proj.weight"].T, weights_


def attention_loop(x, w, p, c, n):
    """Second formulation: one head at a time, the window from positions."""
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    s = x.shape[0]
    wq = w[p + "self_attn.q_proj.weight"].view(nh, hd, -1)
    wk = w[p + "self_attn.k_proj.weight"].view(nkv, hd, -1)
    wv = w[p + "self_attn.v_proj.weight"].view(nkv, hd, -1)
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    out = torch.zeros(s, nh * hd, dtype=torch.float64)
    weights_ = torch.zeros(nh, s, s, dtype=torch.float64)

    def rope(t):   # t [s, hd], half-split pairs (i, i + hd/2)
        r = t.clone()
        for pos in range(s):
            a = pos * inv
            c0, s0 = torch.cos(a), torch.sin(a)
            x1, x2 = t[pos, : hd // 2], t[pos, hd // 2:]
            r[pos, : hd // 2] = x1 * c0 - x2 * s0
            r[pos, hd // 2:] = x2 * c0 + x1 * s0
        return r

    for h in range(nh):
        kv = h // (nh // nkv)
        qh, kh, vh = rope(x @ wq[h].T), rope(x @ wk[kv].T), x @ wv[kv].T
        for i in range(s):
            row = []
            for j in range(s):
                visible = j <= i and (not sliding(n) or i - j < c["sliding_window"])
                if visible:
                    sc = float(qh[i] @ kh[j]) / math.sqrt(c["query_pre_attn_scalar"])
                    row.append(math.tanh(sc / c["attn_logit_softcapping"])
                               * c["attn_logit_softcapping"])
                else:
                    row.append(float("-inf"))
            r = torch.tensor(row, dtype=torch.float64)
            weights_[h, i] = torch.softmax(r, dim=-1)
        out[:, h * hd:(h + 1) * hd] = weights_[h] @ vh
    return out @ w[p + "self_attn.o_proj.weight"].T, weights_


def forward(w, ids, c, attn):
    eps = c["rms_norm_eps"]
    h = w["model.embed_tokens.weight"][ids] * torch.tensor(c["hidden_size"] ** 0.5,
                                                           dtype=torch.float64)
    xs, outs, atts = [], [], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        x = gemma_rms_norm(h, w[p + "input_layernorm.weight"], eps)
        a, att = attn(x, w, p, c, n)
        xs.append(x), outs.append(a), atts.append(att)
        h = h + gemma_rms_norm(a, w[p + "post_attention_layernorm.weight"], eps)
        m = gemma_rms_norm(h, w[p + "pre_feedforward_layernorm.weight"], eps)
        m = (gelu_tanh(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
             ) @ w[p + "mlp.down_proj.weight"].T
        h = h + gemma_rms_norm(m, w[p + "post_feedforward_layernorm.weight"], eps)
    return xs, outs, torch.stack(atts)[:, None]


def main():
    torch.set_num_threads(1)
    d = os.path.join(HERE, "tiny-gemma2")
    w32 = weights()
    tm.write_json(os.path.join(d, "config.json"), CONFIG)
    tm.write_bytes(os.path.join(d, "model.safetensors"),
                   tm.safetensors_bytes({k: ("F32", a) for k, a in w32.items()}))
    w = tm.to_torch(w32)
    ids = torch.tensor(IDS)
    xs, outs, atts = forward(w, ids, CONFIG, attention)
    xs2, outs2, atts2 = forward(w, ids, CONFIG, attention_loop)
    worst = max(max(tm.max_diff(a, b) for a, b in zip(xs, xs2)),
                max(tm.max_diff(a, b) for a, b in zip(outs, outs2)), tm.max_diff(atts, atts2))
    print(f"tiny-gemma2 cross-check max |diff| {worst:.2e}")
    assert worst <= tm.CROSS_TOL, worst
    tm.write_refs(d, TOKENS, IDS, xs, outs, atts)
    for path in sorted(tm.WRITTEN):
        print(os.path.relpath(path, HERE), os.path.getsize(path))


if __name__ == "__main__":
    sys.exit(main())
