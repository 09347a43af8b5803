#!/usr/bin/python3
"""Build the tiny Qwen 3, Gemma 3, Gemma and Mixtral models and the RoPE
scaling cases (data/models/tiny-qwen3, tiny-gemma3, tiny-gemma, tiny-mixtral,
rope-scaling/), with their reference numbers, as make_tiny_models.py does for
Llama, GPT-2 and BERT.

Each forward pass below is written from transformers' modeling code (eager
attention), run in float64 on the stored float32 weights widened:

* Qwen3Attention: q_norm and k_norm, an RMSNorm over each head's features
  (x * rsqrt(mean(x^2) + eps) * w), on the projected queries and keys
  before RoPE; the rest is Llama's (SwiGLU MLP, pre-norm residuals).
* Gemma3Attention: the same norms with Gemma's (1 + w); scores scaled by
  query_pre_attn_scalar^-1/2; layers whose (index + 1) is not a multiple of
  sliding_window_pattern are sliding (a window of sliding_window keys, the
  query's own included) and use the local rotary embedding
  (rope_local_base_freq, no scaling); the others use rope_theta with
  rope_scaling. Gemma 2's four norms per layer and sqrt(hidden) embedding
  scale.
* GemmaModel (Gemma 1): Llama's layer with Gemma's (1 + w) norms, the
  embedding scale and GeGLU (gelu_pytorch_tanh).
* MixtralSparseMoeBlock: router softmax over the experts (here in float64;
  transformers takes it in float32), the top num_experts_per_tok renormalised,
  each expert w2(silu(w1 x) * w3 x) weighted and summed.
* modeling_rope_utils: the inverse frequencies of linear, dynamic, llama3,
  yarn and longrope scaling and yarn's / longrope's attention factor on cos
  and sin (in float64; transformers computes them in float32).

The reference files per model: ids.json, attentions.npy (float64,
[layers][1][heads][q][k]) and hidden.npy (float64, [layers + 1][1][q][hidden],
the last after the final norm). The RoPE cases reuse tiny-llama's weights
with another config.json each. Run with ``python3
data/models/make_tiny_modern.py``; the output is byte-identical from run to
run.
"""

import copy
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_models as tm  # noqa: E402  (the writers and helpers)

HERE = os.path.dirname(os.path.abspath(__file__))
IDS = [2, 17, 29, 8, 33, 12, 24]


# ---------------------------------------------------------------------------
# RoPE frequencies (modeling_rope_utils.py), float64
# ---------------------------------------------------------------------------

def rope_params(c, sliding=False):
    """(theta, dims, scaling dict or None) of a layer, as transformers reads
    rope_theta / rope_scaling or v5's rope_parameters."""
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    partial = c.get("partial_rotary_factor", 1.0)
    if "rope_parameters" in c:
        rp = c["rope_parameters"]
        if "full_attention" in rp or "sliding_attention" in rp:
            rp = rp["sliding_attention" if sliding else "full_attention"]
        theta = rp.get("rope_theta", 10000.0)
        partial = rp.get("partial_rotary_factor", partial)
        scaling = rp if rp.get("rope_type", "default") != "default" else None
    else:
        theta = c.get("rope_theta", 10000.0)
        scaling = c.get("rope_scaling")
        if c["model_type"] == "gemma3_text" and sliding:
            theta, scaling = c.get("rope_local_base_freq", 10000.0), None
    return theta, int(hd * partial), scaling


def inv_freq_and_factor(c, seq_len, sliding=False):
    theta, dim, s = rope_params(c, sliding)
    ar = torch.arange(0, dim, 2, dtype=torch.float64)
    inv = 1.0 / (theta ** (ar / dim))
    if s is None:
        return inv, 1.0
    kind = s.get("rope_type", s.get("type"))
    maxpos = s.get("max_position_embeddings", c.get("max_position_embeddings"))
    if kind == "linear":
        return inv / s["factor"], 1.0
    if kind == "dynamic":
        factor = s["factor"]
        seq = seq_len if seq_len > maxpos else maxpos
        base = theta * ((factor * seq / maxpos) - (factor - 1)) ** (dim / (dim - 2))
        return 1.0 / (base ** (ar / dim)), 1.0
    if kind == "llama3":
        factor, lo, hi = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
        old = s["original_max_position_embeddings"]
        low_wl, high_wl = old / lo, old / hi
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    if kind == "yarn":
        original = s.get("original_max_position_embeddings") or maxpos
        factor = s.get("factor") or maxpos / original

        def mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        af = s.get("attention_factor")
        if af is None:
            if s.get("mscale") and s.get("mscale_all_dim"):
                af = mscale(factor, s["mscale"]) / mscale(factor, s["mscale_all_dim"])
            else:
                af = mscale(factor)
        beta_fast, beta_slow = s.get("beta_fast") or 32, s.get("beta_slow") or 1

        def corr(rot):
            return dim * math.log(original / (rot * 2 * math.pi)) / (2 * math.log(theta))

        low, high = corr(beta_fast), corr(beta_slow)
        if s.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low), 0, 1)
        pos = theta ** (ar / dim)
        extra = 1 - ramp
        return (1.0 / (factor * pos)) * (1 - extra) + (1.0 / pos) * extra, af
    if kind == "longrope":
        if "original_max_position_embeddings" in c:
            original = c["original_max_position_embeddings"]
            factor = c["max_position_embeddings"] / original
        else:
            original = s.get("original_max_position_embeddings") or maxpos
            factor = s["factor"]
        af = s.get("attention_factor")
        if af is None:
            af = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
        ext = torch.tensor(s["long_factor"] if seq_len > original else s["short_factor"],
                           dtype=torch.float64)
        return 1.0 / (ext * theta ** (ar / dim)), af
    raise ValueError(kind)


def cos_sin(c, seq, sliding=False):
    """(cos, sin) [seq, dims] as the rotary embedding returns them."""
    inv, af = inv_freq_and_factor(c, seq, sliding)
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * af, emb.sin() * af


def apply_rope(t, cos, sin):
    """apply_rotary_pos_emb with partial rotary: the first dims features
    rotate, the rest pass through."""
    d = cos.shape[-1]
    rot, rest = t[..., :d], t[..., d:]
    return torch.cat((rot * cos + tm.rotate_half(rot) * sin, rest), dim=-1)


# ---------------------------------------------------------------------------
# Norms, MLPs
# ---------------------------------------------------------------------------

def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def gemma_rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + w)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def gated(m, w, p, act):
    return (act(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
            ) @ w[p + "mlp.down_proj.weight"].T


def moe(m, w, p, c):
    """MixtralSparseMoeBlock.forward for one sequence."""
    e_n, k = c["num_local_experts"], c["num_experts_per_tok"]
    logits = m @ w[p + "block_sparse_moe.gate.weight"].T
    probs = torch.softmax(logits, dim=1)
    top_w, top_i = torch.topk(probs, k, dim=-1)
    top_w = top_w / top_w.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(m)
    for e in range(e_n):
        x = f"{p}block_sparse_moe.experts.{e}."
        idx, slot = torch.where(top_i == e)
        if idx.numel() == 0:
            continue
        cur = m[idx]
        y = (F.silu(cur @ w[x + "w1.weight"].T) * (cur @ w[x + "w3.weight"].T)) @ w[x + "w2.weight"].T
        out.index_add_(0, idx, y * top_w[idx, slot, None])
    return out


# ---------------------------------------------------------------------------
# Attention and the forward pass, every architecture of this file
# ---------------------------------------------------------------------------

def is_sliding(c, n):
    t = c["model_type"]
    if "layer_types" in c:
        return c["layer_types"][n] == "sliding_attention"
    if c.get("sliding_window") is None:
        return False
    if t in ("mistral", "mixtral"):
        return True
    if t == "gemma3_text":
        return bool((n + 1) % c.get("sliding_window_pattern", 6))
    if t in ("qwen2", "qwen3"):
        return c.get("use_sliding_window", False) and n >= c.get("max_window_layers", 0)
    return False


def attention(x, w, p, c, n):
    t = c["model_type"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or c["hidden_size"] // nh
    s = x.shape[0]
    q = (x @ w[p + "self_attn.q_proj.weight"].T).view(s, nh, hd)
    k = (x @ w[p + "self_attn.k_proj.weight"].T).view(s, nkv, hd)
    v = (x @ w[p + "self_attn.v_proj.weight"].T).view(s, nkv, hd)
    eps = c.get("rms_norm_eps", 1e-6)
    if t == "qwen3":
        q, k = rms(q, w[p + "self_attn.q_norm.weight"], eps), rms(k, w[p + "self_attn.k_norm.weight"], eps)
    elif t == "gemma3_text":
        q = gemma_rms(q, w[p + "self_attn.q_norm.weight"], eps)
        k = gemma_rms(k, w[p + "self_attn.k_norm.weight"], eps)
    q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
    sliding = is_sliding(c, n)
    cos, sin = cos_sin(c, s, sliding)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    k = k.repeat_interleave(nh // nkv, dim=0)
    v = v.repeat_interleave(nh // nkv, dim=0)
    scale = c["query_pre_attn_scalar"] ** -0.5 if t.startswith("gemma3") else hd ** -0.5
    scores = q @ k.transpose(-1, -2) * scale
    if c.get("attn_logit_softcapping") is not None and t.startswith("gemma3"):
        cap = c["attn_logit_softcapping"]
        scores = torch.tanh(scores / cap) * cap
    mask = tm.causal_mask(s)
    if sliding:
        i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
        mask = mask.masked_fill(i - j >= c["sliding_window"], float("-inf"))
    weights = tm.softmax(scores + mask)
    o = (weights @ v).transpose(0, 1).reshape(s, nh * hd)
    return o @ w[p + "self_attn.o_proj.weight"].T, weights


def forward(w, ids, c):
    t = c["model_type"]
    eps = c.get("rms_norm_eps", 1e-6)
    h = w["model.embed_tokens.weight"][ids]
    if t.startswith("gemma"):
        h = h * torch.tensor(c["hidden_size"] ** 0.5, dtype=torch.float64)
    gemma = t.startswith("gemma")
    norm = gemma_rms if gemma else rms
    hidden, atts = [], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        hidden.append(h)
        a, att = attention(norm(h, w[p + "input_layernorm.weight"], eps), w, p, c, n)
        atts.append(att)
        if t in ("gemma2", "gemma3_text"):
            h = h + gemma_rms(a, w[p + "post_attention_layernorm.weight"], eps)
            m = gemma_rms(h, w[p + "pre_feedforward_layernorm.weight"], eps)
            h = h + gemma_rms(gated(m, w, p, gelu_tanh), w[p + "post_feedforward_layernorm.weight"], eps)
        else:
            h = h + a
            m = norm(h, w[p + "post_attention_layernorm.weight"], eps)
            if t == "mixtral":
                h = h + moe(m, w, p, c)
            else:
                h = h + gated(m, w, p, gelu_tanh if t == "gemma" else F.silu)
    hidden.append(norm(h, w["model.norm.weight"], eps))
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None]


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

BASE = {
    "hidden_size": 32,
    "intermediate_size": 48,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "max_position_embeddings": 64,
    "rms_norm_eps": 1e-6,
    "vocab_size": 40,
    "attention_bias": False,
    "torch_dtype": "float32",
}

MODELS = {
    "tiny-qwen3": dict(BASE, **{
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "head_dim": 12,
        "hidden_act": "silu", "rope_theta": 1000000.0, "tie_word_embeddings": True,
        "use_sliding_window": False, "sliding_window": None, "max_window_layers": 2,
        "max_position_embeddings": 64,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": 16}}),
    "tiny-gemma3": dict(BASE, **{
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "head_dim": 8,
        "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 8,
        "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
        "sliding_window": 3, "sliding_window_pattern": 2, "attn_logit_softcapping": None,
        "final_logit_softcapping": None, "tie_word_embeddings": True}),
    "tiny-gemma": dict(BASE, **{
        "architectures": ["GemmaForCausalLM"], "model_type": "gemma", "head_dim": 8,
        "hidden_act": "gelu", "hidden_activation": "gelu_pytorch_tanh",
        "rope_theta": 10000.0, "tie_word_embeddings": True}),
    "tiny-mixtral": dict(BASE, **{
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_act": "silu",
        "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 4,
        "rope_theta": 10000.0, "max_position_embeddings": 4,
        "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
        "router_aux_loss_coef": 0.02, "output_router_logits": False,
        "tie_word_embeddings": False}),
}


def model_weights(c, seed):
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or d // nh
    t = c["model_type"]
    gemma = t.startswith("gemma")
    rng = np.random.default_rng(seed)
    w = {"model.embed_tokens.weight": (0.3 * rng.standard_normal((v, d))).astype("<f4")}
    centre = 0.0 if gemma else 1.0   # Gemma's norms multiply by (1 + w)
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        norms = ["input_layernorm", "post_attention_layernorm"]
        if t in ("gemma2", "gemma3_text"):
            norms += ["pre_feedforward_layernorm", "post_feedforward_layernorm"]
        for norm in norms:
            w[p + norm + ".weight"] = tm.vector(rng, d, centre, 0.2)
        w[p + "self_attn.q_proj.weight"] = tm.linear(rng, nh * hd, d, 2.0)
        w[p + "self_attn.k_proj.weight"] = tm.linear(rng, nkv * hd, d, 2.0)
        w[p + "self_attn.v_proj.weight"] = tm.linear(rng, nkv * hd, d)
        w[p + "self_attn.o_proj.weight"] = tm.linear(rng, d, nh * hd)
        if t in ("qwen3", "gemma3_text"):
            w[p + "self_attn.q_norm.weight"] = tm.vector(rng, hd, centre, 0.3)
            w[p + "self_attn.k_norm.weight"] = tm.vector(rng, hd, centre, 0.3)
        if t == "mixtral":
            e_n = c["num_local_experts"]
            w[p + "block_sparse_moe.gate.weight"] = tm.linear(rng, e_n, d, 2.0)
            for e in range(e_n):
                x = f"{p}block_sparse_moe.experts.{e}."
                w[x + "w1.weight"] = tm.linear(rng, inter, d)
                w[x + "w2.weight"] = tm.linear(rng, d, inter)
                w[x + "w3.weight"] = tm.linear(rng, inter, d)
        else:
            w[p + "mlp.gate_proj.weight"] = tm.linear(rng, inter, d)
            w[p + "mlp.up_proj.weight"] = tm.linear(rng, inter, d)
            w[p + "mlp.down_proj.weight"] = tm.linear(rng, d, inter)
    w["model.norm.weight"] = tm.vector(rng, d, centre, 0.2)
    if not c.get("tie_word_embeddings", True):
        w["lm_head.weight"] = tm.linear(rng, v, d)
    return w


def write_case(d, config, w32, ids, write_weights=True):
    os.makedirs(d, exist_ok=True)
    tm.write_json(os.path.join(d, "config.json"), config)
    if write_weights:
        tm.write_bytes(os.path.join(d, "model.safetensors"),
                       tm.safetensors_bytes({k: ("F32", a) for k, a in w32.items()}))
    atts, hidden = forward(tm.to_torch(w32), torch.tensor(ids), config)
    tm.write_json(os.path.join(d, "ids.json"), ids, indent=None, sort_keys=False)
    tm.write_npy(os.path.join(d, "attentions.npy"), atts.numpy())
    tm.write_npy(os.path.join(d, "hidden.npy"), hidden.numpy())
    return atts, hidden


# The RoPE cases: tiny-llama's weights (data/models/tiny-llama) under other
# config.json files, one per scaling kind and spelling.
def rope_cases(llama):
    long_ids = IDS + [5, 9, 31, 14, 22]    # 12 tokens: past the 8 of longrope's original length
    hd = 8
    cases = {
        "linear": ({"rope_scaling": {"rope_type": "linear", "factor": 4.0}}, IDS),
        "dynamic": ({"max_position_embeddings": 5,
                     "rope_scaling": {"type": "dynamic", "factor": 3.0}}, IDS),
        "llama3": ({"rope_theta": 500000.0, "max_position_embeddings": 64,
                    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0,
                                     "original_max_position_embeddings": 16}}, IDS),
        "yarn": ({"max_position_embeddings": 128,
                  "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "beta_fast": 8,
                                   "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 0.5,
                                   "original_max_position_embeddings": 16}}, IDS),
        "longrope": ({"max_position_embeddings": 32, "original_max_position_embeddings": 8,
                      "rope_scaling": {"rope_type": "longrope",
                                       "short_factor": [1.0, 1.5, 2.0, 3.0][: hd // 2],
                                       "long_factor": [2.0, 4.0, 8.0, 16.0][: hd // 2]}},
                     long_ids),
        "v5": ({"rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 4.0,
                                    "low_freq_factor": 1.0, "high_freq_factor": 2.0,
                                    "original_max_position_embeddings": 8}}, IDS),
    }
    out = {}
    for name, (change, ids) in cases.items():
        c = copy.deepcopy(llama)
        c.pop("rope_scaling", None)
        c.update(change)
        if "rope_parameters" in c:
            c.pop("rope_theta", None)
        out[name] = (c, ids)
    return out


def main():
    torch.set_num_threads(1)
    seeds = {"tiny-qwen3": 31, "tiny-gemma3": 32, "tiny-gemma": 33, "tiny-mixtral": 34}
    for name, config in MODELS.items():
        d = os.path.join(HERE, name)
        atts, _ = write_case(d, config, model_weights(config, seeds[name]), IDS)
        print(f"{name}: attentions {tuple(atts.shape)}")
    # Sanity of the RoPE scaling formulas against a second formulation:
    # linear scaling is the positions divided by the factor.
    c = dict(BASE, model_type="llama", rope_theta=10000.0,
             rope_scaling={"rope_type": "linear", "factor": 4.0})
    inv, _ = inv_freq_and_factor(c, 7)
    plain = 1.0 / (10000.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8))
    worst = tm.max_diff(torch.outer(torch.arange(7.0, dtype=torch.float64), inv),
                        torch.outer(torch.arange(7.0, dtype=torch.float64) / 4.0, plain))
    assert worst <= tm.CROSS_TOL, worst
    with open(os.path.join(HERE, "tiny-llama", "config.json"), encoding="utf-8") as f:
        llama = json.load(f)
    w_llama, _ = tm.read_safetensors(os.path.join(HERE, "tiny-llama", "model.safetensors"))
    w32 = {k: a for k, (tag, a) in w_llama.items()}
    for name, (config, ids) in rope_cases(llama).items():
        write_case(os.path.join(HERE, "rope-scaling", name), config, w32, ids, write_weights=False)
    for path in sorted(tm.WRITTEN):
        print(os.path.relpath(path, HERE), os.path.getsize(path))


if __name__ == "__main__":
    main()
