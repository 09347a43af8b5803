#!/usr/bin/python3
"""Build tiny dense decoder models of seven more families, and two fixes of
existing ones, with their reference numbers, as make_tiny_models.py and
make_tiny_modern.py do:

  tiny-olmo, tiny-olmo2, tiny-granite, tiny-smollm3, tiny-starcoder2,
  tiny-cohere, tiny-cohere-qknorm, tiny-opt, tiny-opt-post,
  tiny-gpt2-ninner, tiny-llama-bias

Each forward pass is written from transformers' modeling code (eager
attention), run in float64 on the stored float32 weights widened. The files
followed (transformers 5.x where the index had it, else the nearest 4.5x):

* src/transformers/models/olmo/modular_olmo.py, modeling_olmo.py,
  configuration_olmo.py: OlmoLayerNorm = F.layer_norm without weight or bias,
  eps fixed at 1e-5; q, k, v clamped to [-clip_qkv, clip_qkv] right after
  their projections (before the head split and RoPE); Llama's SwiGLU MLP.
* src/transformers/models/olmo2/modular_olmo2.py: no input norm; the
  attention output and the MLP output go through their own RMSNorm
  (post_attention_layernorm, post_feedforward_layernorm) before the residual
  add; q_norm / k_norm are RMSNorms over the whole projected width
  (num_heads * head_dim, num_kv_heads * head_dim), before the head split.
* src/transformers/models/granite/modular_granite.py, configuration_granite.py:
  embeddings times embedding_multiplier; each sublayer output times
  residual_multiplier before the residual add; attention scores times
  attention_multiplier (instead of head_dim^-1/2); logits / logits_scaling.
* src/transformers/models/smollm3/modeling_smollm3.py, configuration_smollm3.py:
  Llama's layer; layer i rotates q and k only when no_rope_layers[i] == 1
  (default [(i + 1) % no_rope_layer_interval != 0]); a layer whose
  layer_types entry is "sliding_attention" (by default: NoPE layers, when
  use_sliding_window and sliding_window are set) masks keys i - j >= window.
* src/transformers/models/starcoder2/modular_starcoder2.py, modeling_starcoder2.py,
  configuration_starcoder2.py: nn.LayerNorm (weight and bias, norm_epsilon);
  q/k/v/o and c_fc/c_proj with biases (use_bias); MLP
  c_proj(gelu_pytorch_tanh(c_fc(x))); every layer masks keys i - j >= sliding_window.
* src/transformers/models/cohere/modular_cohere.py, configuration_cohere.py:
  parallel block h + attn(n) + mlp(n) with n = input_layernorm(h);
  CohereLayerNorm = mean-centred, weight only; RoPE on interleaved pairs
  (2p, 2p+1) with cos/sin repeat_interleave'd; logits * logit_scale; tied
  embeddings; use_qk_norm: CohereLayerNorm of shape [heads, head_dim] on
  each head of q and k before RoPE.
* src/transformers/models/opt/modeling_opt.py, configuration_opt.py:
  learned positions read at (cumsum(mask) * mask - 1) + 2; q scaled by
  head_dim^-1/2 (bias included) before q k^T; fc2(relu(fc1(x))); LayerNorms
  before (do_layer_norm_before) or after the sublayers, the final LayerNorm
  only in the first case.
* src/transformers/models/gpt2/modeling_gpt2.py: GPT2MLP's width is n_inner
  when set (4 * n_embd otherwise).
* src/transformers/models/llama/modeling_llama.py: biases on q/k/v/o when
  attention_bias, on gate/up/down when mlp_bias.
* src/transformers/utils/generic.py (check_model_inputs / capture_outputs):
  hidden_states = (input of layer 0, outputs of layers 0 .. L-2, the model's
  last_hidden_state after the final norm); OPT and GPT-2 build the same tuple
  by hand.

Transformers takes the RMS / Layer norms, RoPE cos/sin and the softmax in
float32 even for a float64 model; here everything is float64.

The reference files per model: ids.json, attentions.npy (float64,
[layers][1][heads][7][7]), hidden.npy (float64, [layers + 1][1][7][hidden])
and logits.npy (float64, [1][7][vocab]). Every attention module is checked
against a second formulation (one head at a time, explicit loops, RoPE as a
complex multiplication, norms from torch.nn.functional), over the whole
forward pass. Run with ``python3 data/models/make_tiny_dense.py``; the output
is byte-identical from run to run.
"""

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
SEQ = len(IDS)


# ---------------------------------------------------------------------------
# Building blocks, as transformers writes them (float64 here)
# ---------------------------------------------------------------------------

def lin(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def rms(x, w, eps):
    """LlamaRMSNorm / Olmo2RMSNorm: x * rsqrt(mean(x^2) + eps) * w."""
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rms_alt(x, w, eps):
    return x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps) * w


def layer_norm(x, w, b, eps):
    """(x - mean) * rsqrt(biased var + eps), then * w and + b when given:
    OlmoLayerNorm (neither), CohereLayerNorm (w only), nn.LayerNorm (both)."""
    mu = x.mean(-1, keepdim=True)
    var = (x - mu).pow(2).mean(-1, keepdim=True)
    y = (x - mu) * torch.rsqrt(var + eps)
    if w is not None:
        y = w * y
    return y if b is None else y + b


def layer_norm_alt(x, w, b, eps):
    y = F.layer_norm(x, (x.shape[-1],), None, None, eps)
    if w is not None:
        y = y * w
    return y if b is None else y + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def inv_freq(theta, dim):
    """1 / theta^(2i / dim), i < dim / 2 (float64; transformers: float32)."""
    return 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))


def cos_sin(seq, theta, dim, interleaved):
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv_freq(theta, dim))
    if interleaved:     # CohereRotaryEmbedding: repeat_interleave(freqs, 2)
        emb = torch.repeat_interleave(freqs, 2, dim=-1)
    else:               # LlamaRotaryEmbedding: cat((freqs, freqs))
        emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_half_interleaved(x):
    """Cohere's rotate_half: pairs (2p, 2p+1) -> (-x[2p+1], x[2p])."""
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack([-x2, x1], dim=-1).flatten(-2)


def additive_mask(s, window=None):
    """Causal mask, and keys i - j >= window masked (masking_utils'
    sliding_window_overlay: kv_idx > q_idx - window)."""
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    blocked = j > i
    if window is not None:
        blocked = blocked | (i - j >= window)
    return torch.zeros(s, s, dtype=torch.float64).masked_fill(blocked, float("-inf"))


# ---------------------------------------------------------------------------
# Attention: one description per layer, two formulations
# ---------------------------------------------------------------------------

def attn_spec(c, n):
    """Everything a layer's attention needs, read from the config."""
    t = c["model_type"]
    d = c["hidden_size"]
    nh = c["num_attention_heads"]
    nkv = c.get("num_key_value_heads") or nh
    hd = c.get("head_dim") or d // nh
    a = {"nh": nh, "nkv": nkv, "hd": hd, "scale": hd ** -0.5, "prescale": False,
         "clip": None, "qk_norm": None, "eps": None, "rope": "half", "window": None,
         "o": "self_attn.o_proj"}
    if "rope_parameters" in c:
        a["theta"] = c["rope_parameters"]["rope_theta"]
    else:
        a["theta"] = c.get("rope_theta", 10000.0)
    if t == "olmo":
        a["clip"] = c.get("clip_qkv")
    elif t == "olmo2":
        a["qk_norm"], a["eps"] = "full_rms", c["rms_norm_eps"]
    elif t == "granite":
        a["scale"] = c["attention_multiplier"]
    elif t == "smollm3":
        if not c["no_rope_layers"][n]:
            a["rope"] = None
        if c["layer_types"][n] == "sliding_attention":
            a["window"] = c["sliding_window"]
    elif t == "starcoder2":
        a["window"] = c.get("sliding_window")
    elif t == "cohere":
        a["rope"] = "interleaved"
        if c.get("use_qk_norm"):
            a["qk_norm"], a["eps"] = "head_ln", c["layer_norm_eps"]
    elif t == "opt":
        a["rope"], a["prescale"], a["o"] = None, True, "self_attn.out_proj"
    return a


def attention(x, w, p, a):
    """The vectorised formulation, step by step as the modeling code."""
    s = x.shape[0]
    nh, nkv, hd = a["nh"], a["nkv"], a["hd"]
    g = p + "self_attn."
    q = lin(x, w[g + "q_proj.weight"], w.get(g + "q_proj.bias"))
    k = lin(x, w[g + "k_proj.weight"], w.get(g + "k_proj.bias"))
    v = lin(x, w[g + "v_proj.weight"], w.get(g + "v_proj.bias"))
    if a["clip"] is not None:                       # OlmoAttention
        q, k, v = (t.clamp(min=-a["clip"], max=a["clip"]) for t in (q, k, v))
    if a["qk_norm"] == "full_rms":                  # Olmo2Attention
        q = rms(q, w[g + "q_norm.weight"], a["eps"])
        k = rms(k, w[g + "k_norm.weight"], a["eps"])
    if a["prescale"]:                               # OPTAttention
        q = q * a["scale"]
    q, k, v = q.view(s, nh, hd), k.view(s, nkv, hd), v.view(s, nkv, hd)
    if a["qk_norm"] == "head_ln":                   # CohereAttention
        q = layer_norm(q, w[g + "q_norm.weight"], None, a["eps"])
        k = layer_norm(k, w[g + "k_norm.weight"], None, a["eps"])
    q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
    if a["rope"] is not None:
        inter = a["rope"] == "interleaved"
        cos, sin = cos_sin(s, a["theta"], hd, inter)
        rot = rotate_half_interleaved if inter else rotate_half
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
    k = k.repeat_interleave(nh // nkv, dim=0)       # repeat_kv
    v = v.repeat_interleave(nh // nkv, dim=0)
    scores = q @ k.transpose(-1, -2) * (1.0 if a["prescale"] else a["scale"])
    weights = tm.softmax(scores + additive_mask(s, a["window"]))
    o = (weights @ v).transpose(0, 1).reshape(s, nh * hd)
    return lin(o, w[p + a["o"] + ".weight"], w.get(p + a["o"] + ".bias")), weights


def attention_loop(x, w, p, a):
    """Second formulation: projections by einsum, clipping by torch.where,
    norms from torch.nn.functional, then one head at a time with RoPE as a
    complex multiplication and the scores, mask and softmax as explicit
    loops over query and key positions."""
    s = x.shape[0]
    nh, nkv, hd = a["nh"], a["nkv"], a["hd"]
    g = p + "self_attn."

    def proj(name):
        y = torch.einsum("sd,od->so", x, w[g + name + ".weight"])
        b = w.get(g + name + ".bias")
        return y if b is None else y + b[None, :]

    q, k, v = proj("q_proj"), proj("k_proj"), proj("v_proj")
    if a["clip"] is not None:
        lim = a["clip"]
        q, k, v = (torch.where(t > lim, torch.full_like(t, lim),
                               torch.where(t < -lim, torch.full_like(t, -lim), t))
                   for t in (q, k, v))
    if a["qk_norm"] == "full_rms":
        q = rms_alt(q, w[g + "q_norm.weight"], a["eps"])
        k = rms_alt(k, w[g + "k_norm.weight"], a["eps"])
    q, k, v = q.reshape(s, nh, hd), k.reshape(s, nkv, hd), v.reshape(s, nkv, hd)
    if a["qk_norm"] == "head_ln":
        q = layer_norm_alt(q, w[g + "q_norm.weight"], None, a["eps"])
        k = layer_norm_alt(k, w[g + "k_norm.weight"], None, a["eps"])
    if a["rope"] is not None:
        angles = torch.outer(torch.arange(s, dtype=torch.float64),
                             inv_freq(a["theta"], hd))
        rotor = torch.polar(torch.ones_like(angles), angles)        # [s, hd/2]
        half = hd // 2

        def rotate(t):   # t [s, heads, hd]
            if a["rope"] == "interleaved":      # pairs (2p, 2p+1)
                z = torch.complex(t[..., 0::2], t[..., 1::2]) * rotor[:, None, :]
                return torch.stack((z.real, z.imag), dim=-1).reshape(t.shape)
            z = torch.complex(t[..., :half], t[..., half:]) * rotor[:, None, :]
            return torch.cat((z.real, z.imag), dim=-1)              # pairs (p, p + hd/2)

        q, k = rotate(q), rotate(k)
    group = nh // nkv
    out = torch.zeros(s, nh, hd, dtype=torch.float64)
    weights = torch.zeros(nh, s, s, dtype=torch.float64)
    for h in range(nh):
        kv = h // group
        for i in range(s):
            allowed = [j for j in range(s)
                       if j <= i and (a["window"] is None or i - j < a["window"])]
            sc = {j: float(torch.dot(q[i, h], k[j, kv])) * a["scale"] for j in allowed}
            top = max(sc.values())
            e = {j: math.exp(val - top) for j, val in sc.items()}
            total = math.fsum(e.values())
            for j in allowed:
                weights[h, i, j] = e[j] / total
                out[i, h] += weights[h, i, j] * v[j, kv]
    o = out.reshape(s, nh * hd)
    return proj_out(o, w, p + a["o"]), weights


def proj_out(o, w, name):
    y = torch.einsum("si,oi->so", o, w[name + ".weight"])
    b = w.get(name + ".bias")
    return y if b is None else y + b


# ---------------------------------------------------------------------------
# The forward passes
# ---------------------------------------------------------------------------

def swiglu(m, w, p, bias=False):
    def f(name):
        return lin(m, w[p + f"mlp.{name}.weight"], w.get(p + f"mlp.{name}.bias") if bias else None)
    return lin(F.silu(f("gate_proj")) * f("up_proj"), w[p + "mlp.down_proj.weight"],
               w.get(p + "mlp.down_proj.bias") if bias else None)


def forward(c, w, ids, alt=False):
    """(attentions [L,1,H,s,s], hidden [L+1,1,s,d], logits [1,s,V])."""
    t = c["model_type"]
    att_fn = attention_loop if alt else attention
    rn = rms_alt if alt else rms
    ln = layer_norm_alt if alt else layer_norm
    if t == "opt":
        return forward_opt(c, w, ids, att_fn, ln)
    if t == "gpt2":
        return forward_gpt2(c, w, ids, alt)
    L = c["num_hidden_layers"]
    h = w["model.embed_tokens.weight"][ids]
    if t == "granite":
        h = h * c["embedding_multiplier"]
    eps = c.get("rms_norm_eps", c.get("layer_norm_eps", c.get("norm_epsilon")))
    hidden, atts = [], []
    for n in range(L):
        p = f"model.layers.{n}."
        a = attn_spec(c, n)
        hidden.append(h)
        if t == "olmo":
            o, att = att_fn(ln(h, None, None, 1e-5), w, p, a)
            h = h + o
            h = h + swiglu(ln(h, None, None, 1e-5), w, p)
        elif t == "olmo2":
            o, att = att_fn(h, w, p, a)
            h = h + rn(o, w[p + "post_attention_layernorm.weight"], eps)
            h = h + rn(swiglu(h, w, p), w[p + "post_feedforward_layernorm.weight"], eps)
        elif t == "cohere":
            x = ln(h, w[p + "input_layernorm.weight"], None, eps)
            o, att = att_fn(x, w, p, a)
            h = h + o + swiglu(x, w, p)
        elif t == "starcoder2":
            x = ln(h, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
            o, att = att_fn(x, w, p, a)
            h = h + o
            m = ln(h, w[p + "post_attention_layernorm.weight"],
                   w[p + "post_attention_layernorm.bias"], eps)
            m = gelu_tanh(lin(m, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"]))
            h = h + lin(m, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
        else:   # llama, granite, smollm3
            r = c.get("residual_multiplier", 1.0) if t == "granite" else None
            o, att = att_fn(rn(h, w[p + "input_layernorm.weight"], eps), w, p, a)
            h = h + (o * r if r is not None else o)
            m = swiglu(rn(h, w[p + "post_attention_layernorm.weight"], eps), w, p,
                       bias=c.get("mlp_bias", False))
            h = h + (m * r if r is not None else m)
        atts.append(att)
    if t == "olmo":
        h = ln(h, None, None, 1e-5)
    elif t == "cohere":
        h = ln(h, w["model.norm.weight"], None, eps)
    elif t == "starcoder2":
        h = ln(h, w["model.norm.weight"], w["model.norm.bias"], eps)
    else:
        h = rn(h, w["model.norm.weight"], eps)
    hidden.append(h)
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    logits = h @ head.T
    if t == "granite":
        logits = logits / c["logits_scaling"]
    elif t == "cohere":
        logits = logits * c["logit_scale"]
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


def forward_opt(c, w, ids, att_fn, ln):
    d = "model.decoder."
    s = len(ids)
    mask = torch.ones(1, s, dtype=torch.long)
    pos = (torch.cumsum(mask, dim=1) * mask - 1)[0]         # 0 .. s-1
    emb = w[d + "embed_tokens.weight"][ids]
    if d + "project_in.weight" in w:
        emb = lin(emb, w[d + "project_in.weight"])
    h = emb + w[d + "embed_positions.weight"][pos + 2]      # OPTLearnedPositionalEmbedding offset
    pre = c["do_layer_norm_before"]
    eps = 1e-5                                              # nn.LayerNorm's default
    hidden, atts = [], []
    for n in range(c["num_hidden_layers"]):
        p = f"{d}layers.{n}."
        hidden.append(h)
        a = attn_spec(c, n)

        def norm(x, name):
            return ln(x, w[p + name + ".weight"], w[p + name + ".bias"], eps)

        o, att = att_fn(norm(h, "self_attn_layer_norm") if pre else h, w, p, a)
        atts.append(att)
        h = h + o
        if not pre:
            h = norm(h, "self_attn_layer_norm")
        m = norm(h, "final_layer_norm") if pre else h
        m = torch.relu(lin(m, w[p + "fc1.weight"], w[p + "fc1.bias"]))
        h = h + lin(m, w[p + "fc2.weight"], w[p + "fc2.bias"])
        if not pre:
            h = norm(h, "final_layer_norm")
    if pre:
        h = ln(h, w[d + "final_layer_norm.weight"], w[d + "final_layer_norm.bias"], eps)
    if d + "project_out.weight" in w:
        h = lin(h, w[d + "project_out.weight"])
    hidden.append(h)
    head = w[d + "embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], (h @ head.T)[None]


def forward_gpt2(c, w, ids, alt):
    """GPT2LMHeadModel with the hub's names (no transformer. prefix): the
    attention is make_tiny_models' (second formulation:
    torch.nn.MultiheadAttention), the MLP n_inner wide."""
    eps = c["layer_norm_epsilon"]
    ln = layer_norm_alt if alt else layer_norm
    att_fn = tm.gpt2_attention_mha if alt else tm.gpt2_attention
    h = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(len(ids))]
    hidden, atts = [], []
    for n in range(c["n_layer"]):
        p = f"h.{n}."
        hidden.append(h)
        o, att = att_fn(ln(h, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps), w, p, c)
        atts.append(att)
        h = h + o
        m = ln(h, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        m = gelu_tanh(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        h = h + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    h = ln(h, w["ln_f.weight"], w["ln_f.bias"], eps)
    hidden.append(h)
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], (h @ w["wte.weight"].T)[None]


# ---------------------------------------------------------------------------
# Configs
# ---------------------------------------------------------------------------

COMMON = {
    "hidden_size": 32,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "vocab_size": 48,
    "torch_dtype": "float32",
}

CONFIGS = {
    "tiny-olmo": dict(COMMON, **{
        "architectures": ["OlmoForCausalLM"], "model_type": "olmo",
        "hidden_act": "silu", "attention_bias": False, "clip_qkv": 3.0,
        "rope_theta": 10000.0, "rope_scaling": None, "tie_word_embeddings": False,
        "pad_token_id": 1, "eos_token_id": 47}),
    "tiny-olmo2": dict(COMMON, **{
        "architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2",
        "hidden_act": "silu", "attention_bias": False, "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_theta": 500000.0, "rope_type": "default"},
        "tie_word_embeddings": False, "pad_token_id": 1, "eos_token_id": 47}),
    "tiny-granite": dict(COMMON, **{
        "architectures": ["GraniteForCausalLM"], "model_type": "granite",
        "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "rope_scaling": None,
        "embedding_multiplier": 12.0, "residual_multiplier": 0.22,
        "attention_multiplier": 0.25, "logits_scaling": 8.0,
        "tie_word_embeddings": True}),
    "tiny-smollm3": dict(COMMON, **{
        "architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
        "num_hidden_layers": 4, "hidden_act": "silu", "attention_bias": False,
        "mlp_bias": False, "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_theta": 2000000.0, "rope_type": "default"},
        "no_rope_layers": [1, 0, 1, 1], "no_rope_layer_interval": 4,
        "use_sliding_window": True, "sliding_window": 3,
        "layer_types": ["full_attention", "sliding_attention", "full_attention",
                        "full_attention"],
        "tie_word_embeddings": True}),
    "tiny-starcoder2": dict(COMMON, **{
        "architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
        "hidden_act": "gelu_pytorch_tanh", "norm_epsilon": 1e-5, "use_bias": True,
        "rope_theta": 100000.0, "rope_scaling": None, "sliding_window": 4,
        "residual_dropout": 0.0, "embedding_dropout": 0.0, "attention_dropout": 0.0,
        "tie_word_embeddings": True}),
    "tiny-cohere": dict(COMMON, **{
        "architectures": ["CohereForCausalLM"], "model_type": "cohere",
        "hidden_act": "silu", "attention_bias": False, "layer_norm_eps": 1e-5,
        "logit_scale": 0.0625, "rope_theta": 10000.0, "rope_scaling": None,
        "use_qk_norm": False, "tie_word_embeddings": True}),
    "tiny-opt": {
        "architectures": ["OPTForCausalLM"], "model_type": "opt",
        "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2,
        "ffn_dim": 64, "max_position_embeddings": 16, "vocab_size": 48,
        "word_embed_proj_dim": 32, "do_layer_norm_before": True,
        "_remove_final_layer_norm": False, "activation_function": "relu",
        "enable_bias": True, "layer_norm_elementwise_affine": True,
        "dropout": 0.1, "attention_dropout": 0.0, "layerdrop": 0.0,
        "pad_token_id": 1, "bos_token_id": 2, "eos_token_id": 2,
        "tie_word_embeddings": True, "torch_dtype": "float32"},
    "tiny-gpt2-ninner": dict(tm.GPT2_CONFIG, **{"n_inner": 48, "vocab_size": 48}),
    "tiny-llama-bias": dict(tm.LLAMA_CONFIG, **{
        "attention_bias": True, "mlp_bias": True, "vocab_size": 48,
        "intermediate_size": 48}),
}
CONFIGS["tiny-cohere-qknorm"] = dict(CONFIGS["tiny-cohere"], use_qk_norm=True)
CONFIGS["tiny-opt-post"] = dict(CONFIGS["tiny-opt"], do_layer_norm_before=False)

SEEDS = {name: 4100 + i for i, name in enumerate(CONFIGS)}


# ---------------------------------------------------------------------------
# Made-up weights (numpy RandomState, stored float32)
# ---------------------------------------------------------------------------

QK_GAIN = 2.5


def weights_for(name, c):
    rng = np.random.RandomState(SEEDS[name])
    t = c["model_type"]
    if t == "opt":
        return opt_weights(rng, c)
    if t == "gpt2":
        return gpt2_weights(rng, c)
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    nh = c["num_attention_heads"]
    nkv = c.get("num_key_value_heads") or nh
    hd = c.get("head_dim") or d // nh
    bias = c.get("use_bias") if t == "starcoder2" else c.get("attention_bias", False)
    w = {"model.embed_tokens.weight": (0.5 * rng.standard_normal((v, d))).astype("<f4")}
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        norms = {"olmo": [], "olmo2": ["post_attention_layernorm", "post_feedforward_layernorm"],
                 "cohere": ["input_layernorm"]}.get(t, ["input_layernorm", "post_attention_layernorm"])
        for nm in norms:
            w[p + nm + ".weight"] = tm.vector(rng, d, 1.0, 0.15)
            if t == "starcoder2":
                w[p + nm + ".bias"] = tm.vector(rng, d, 0.0, 0.1)
        a = p + "self_attn."
        w[a + "q_proj.weight"] = tm.linear(rng, nh * hd, d, QK_GAIN)
        w[a + "k_proj.weight"] = tm.linear(rng, nkv * hd, d, QK_GAIN)
        w[a + "v_proj.weight"] = tm.linear(rng, nkv * hd, d)
        w[a + "o_proj.weight"] = tm.linear(rng, d, nh * hd)
        if bias:
            for nm, width in (("q", nh * hd), ("k", nkv * hd), ("v", nkv * hd), ("o", d)):
                w[a + f"{nm}_proj.bias"] = tm.vector(rng, width, 0.0, 0.2)
        if t == "olmo2":
            # larger than 1: the norm fixes |q| and |k|, the weights set the sharpness
            w[a + "q_norm.weight"] = tm.vector(rng, nh * hd, 2.0, 0.3)
            w[a + "k_norm.weight"] = tm.vector(rng, nkv * hd, 2.0, 0.3)
        if t == "cohere" and c.get("use_qk_norm"):
            w[a + "q_norm.weight"] = (2.0 + 0.3 * rng.standard_normal((nh, hd))).astype("<f4")
            w[a + "k_norm.weight"] = (2.0 + 0.3 * rng.standard_normal((nkv, hd))).astype("<f4")
        if t == "starcoder2":
            w[p + "mlp.c_fc.weight"] = tm.linear(rng, inter, d)
            w[p + "mlp.c_fc.bias"] = tm.vector(rng, inter, 0.0, 0.2)
            w[p + "mlp.c_proj.weight"] = tm.linear(rng, d, inter)
            w[p + "mlp.c_proj.bias"] = tm.vector(rng, d, 0.0, 0.2)
        else:
            w[p + "mlp.gate_proj.weight"] = tm.linear(rng, inter, d)
            w[p + "mlp.up_proj.weight"] = tm.linear(rng, inter, d)
            w[p + "mlp.down_proj.weight"] = tm.linear(rng, d, inter)
            if c.get("mlp_bias"):
                for nm, width in (("gate", inter), ("up", inter), ("down", d)):
                    w[p + f"mlp.{nm}_proj.bias"] = tm.vector(rng, width, 0.0, 0.2)
    if t != "olmo":
        w["model.norm.weight"] = tm.vector(rng, d, 1.0, 0.15)
        if t == "starcoder2":
            w["model.norm.bias"] = tm.vector(rng, d, 0.0, 0.1)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = tm.linear(rng, v, d)
    return w


def opt_weights(rng, c):
    d, ffn, v = c["hidden_size"], c["ffn_dim"], c["vocab_size"]
    x = "model.decoder."
    w = {x + "embed_tokens.weight": (0.5 * rng.standard_normal((v, d))).astype("<f4"),
         x + "embed_positions.weight":
             (0.3 * rng.standard_normal((c["max_position_embeddings"] + 2, d))).astype("<f4")}
    for n in range(c["num_hidden_layers"]):
        p = f"{x}layers.{n}."
        for nm, gain in (("q", QK_GAIN), ("k", QK_GAIN), ("v", 1.0), ("out", 1.0)):
            w[p + f"self_attn.{nm}_proj.weight"] = tm.linear(rng, d, d, gain)
            w[p + f"self_attn.{nm}_proj.bias"] = tm.vector(rng, d, 0.0, 0.2)
        for nm in ("self_attn_layer_norm", "final_layer_norm"):
            w[p + nm + ".weight"] = tm.vector(rng, d, 1.0, 0.15)
            w[p + nm + ".bias"] = tm.vector(rng, d, 0.0, 0.1)
        w[p + "fc1.weight"] = tm.linear(rng, ffn, d)
        w[p + "fc1.bias"] = tm.vector(rng, ffn, 0.0, 0.2)
        w[p + "fc2.weight"] = tm.linear(rng, d, ffn)
        w[p + "fc2.bias"] = tm.vector(rng, d, 0.0, 0.2)
    if c["do_layer_norm_before"] and not c["_remove_final_layer_norm"]:
        w[x + "final_layer_norm.weight"] = tm.vector(rng, d, 1.0, 0.15)
        w[x + "final_layer_norm.bias"] = tm.vector(rng, d, 0.0, 0.1)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = tm.linear(rng, v, c["word_embed_proj_dim"])
    return w


def gpt2_weights(rng, c):
    """tiny-gpt2's layout (make_tiny_models.gpt2_weights) with an MLP n_inner wide."""
    d, v, npos, inner = c["n_embd"], c["vocab_size"], c["n_positions"], c["n_inner"]
    w = {"wte.weight": (0.5 * rng.standard_normal((v, d))).astype("<f4"),
         "wpe.weight": (0.3 * rng.standard_normal((npos, d))).astype("<f4")}
    for n in range(c["n_layer"]):
        p = f"h.{n}."
        w[p + "ln_1.weight"] = tm.vector(rng, d, 1.0, 0.15)
        w[p + "ln_1.bias"] = tm.vector(rng, d, 0.0, 0.1)
        qkv = np.concatenate([tm.linear(rng, d, d, QK_GAIN), tm.linear(rng, d, d, QK_GAIN),
                              tm.linear(rng, d, d)])
        w[p + "attn.c_attn.weight"] = qkv.T.copy()          # Conv1D: [in, out]
        w[p + "attn.c_attn.bias"] = tm.vector(rng, 3 * d, 0.0, 0.2)
        w[p + "attn.c_proj.weight"] = tm.linear(rng, d, d).T.copy()
        w[p + "attn.c_proj.bias"] = tm.vector(rng, d, 0.0, 0.2)
        w[p + "ln_2.weight"] = tm.vector(rng, d, 1.0, 0.15)
        w[p + "ln_2.bias"] = tm.vector(rng, d, 0.0, 0.1)
        w[p + "mlp.c_fc.weight"] = tm.linear(rng, inner, d).T.copy()
        w[p + "mlp.c_fc.bias"] = tm.vector(rng, inner, 0.0, 0.2)
        w[p + "mlp.c_proj.weight"] = tm.linear(rng, d, inner).T.copy()
        w[p + "mlp.c_proj.bias"] = tm.vector(rng, d, 0.0, 0.2)
    w["ln_f.weight"] = tm.vector(rng, d, 1.0, 0.15)
    w["ln_f.bias"] = tm.vector(rng, d, 0.0, 0.1)
    return w


# ---------------------------------------------------------------------------
# Checks and the driver
# ---------------------------------------------------------------------------

def dims(c):
    if c["model_type"] == "gpt2":
        return c["n_layer"], c["n_head"], c["n_embd"], c["vocab_size"]
    return (c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"],
            c["vocab_size"])


def clip_fraction(c, w, ids):
    """Share of the q/k/v entries of every layer that clip_qkv clamps."""
    h = w["model.embed_tokens.weight"][ids]
    total = clipped = 0
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        x = layer_norm(h, None, None, 1e-5)
        for nm in ("q", "k", "v"):
            y = lin(x, w[p + f"self_attn.{nm}_proj.weight"])
            total += y.numel()
            clipped += int((y.abs() > c["clip_qkv"]).sum())
        a = attn_spec(c, n)
        o, _ = attention(x, w, p, a)
        h = h + o
        h = h + swiglu(layer_norm(h, None, None, 1e-5), w, p)
    return clipped / total


def build(name):
    c = CONFIGS[name]
    d = os.path.join(HERE, name)
    w32 = weights_for(name, c)
    tm.write_json(os.path.join(d, "config.json"), c)
    st = {k: ("F32", a) for k, a in w32.items()}
    path = os.path.join(d, "model.safetensors")
    tm.write_bytes(path, tm.safetensors_bytes(st))
    tm.check_file(path, st)
    w = tm.to_torch(w32)
    ids = torch.tensor(IDS)
    atts, hidden, logits = forward(c, w, ids)
    atts2, hidden2, logits2 = forward(c, w, ids, alt=True)
    L, H, D, V = dims(c)
    assert atts.shape == (L, 1, H, SEQ, SEQ), atts.shape
    assert hidden.shape == (L + 1, 1, SEQ, D), hidden.shape
    assert logits.shape == (1, SEQ, V), logits.shape
    assert torch.allclose(atts.sum(-1), torch.ones((), dtype=torch.float64), atol=1e-14)
    diff = max(tm.max_diff(atts, atts2), tm.max_diff(hidden, hidden2),
               tm.max_diff(logits, logits2))
    assert diff <= tm.CROSS_TOL, f"{name}: formulations differ by {diff}"
    tm.write_json(os.path.join(d, "ids.json"), IDS, indent=None, sort_keys=False)
    tm.write_npy(os.path.join(d, "attentions.npy"), atts.numpy())
    tm.write_npy(os.path.join(d, "hidden.npy"), hidden.numpy())
    tm.write_npy(os.path.join(d, "logits.npy"), logits.numpy())
    row_max = atts[:, 0, :, 1:, :].max(-1).values          # rows 1..6 (row 0 is always 1)
    extra = ""
    if c["model_type"] == "olmo":
        extra = f"  clip_qkv clamps {100 * clip_fraction(c, w, ids):.1f}% of q/k/v"
    print(f"{name:20s} layers {L} heads {H}  cross-check {diff:.1e}  row max: mean "
          f"{float(row_max.mean()):.3f}, > 0.5 in {100 * float((row_max > 0.5).double().mean()):.0f}%"
          f" of rows 1-6{extra}")
    return diff


def main():
    torch.set_num_threads(1)       # fixed reduction order, same bytes every run
    worst = max(build(name) for name in CONFIGS)
    sizes = {}
    for path in sorted(tm.WRITTEN):
        rel = os.path.relpath(path, HERE)
        sizes.setdefault(rel.split(os.sep)[0], 0)
        sizes[rel.split(os.sep)[0]] += os.path.getsize(path)
    for name, size in sizes.items():
        print(f"{name:20s} {size:7d} bytes")
        assert size <= 1_000_000
    print(f"worst disagreement between the two formulations: {worst:.2e}")


if __name__ == "__main__":
    main()
