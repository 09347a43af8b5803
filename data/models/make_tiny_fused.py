#!/usr/bin/python3
"""Build the tiny Phi-3, Phi, GPT-NeoX, StableLM and Falcon models (fused QKV
projections, partial rotary, parallel residuals) and their reference numbers.

Directories written (data/models/...):

* tiny-phi3           Phi3ForCausalLM: fused qkv_proj [q | k | v] with GQA, fused
                      gate_up_proj, RMSNorm, partial rotary (0.75), longrope with
                      the short factors (7 tokens <= original_max_position_embeddings
                      = 16), sliding window 4; legacy "rope_scaling" spelling.
* tiny-phi3-long      the same family with original_max_position_embeddings = 4 < 7,
                      so the long factors are used; transformers 5 "rope_parameters"
                      spelling, no sliding window.
* tiny-phi            PhiForCausalLM: one input LayerNorm feeding attention and MLP in
                      parallel, biases everywhere, `dense` output projection, fc1/fc2
                      gelu_new, final_layernorm, lm_head with bias, partial rotary 0.5.
* tiny-phi-qkln       the same with qk_layernorm (one LayerNorm over head_dim, shared by
                      the heads) and GQA, 3 layers.
* tiny-gpt-neox       GPTNeoXForCausalLM: fused query_key_value laid out per head
                      [head][q|k|v][head_dim], rotary_pct 0.5, parallel residual with two
                      LayerNorms, gelu (erf) MLP, embed_out head.
* tiny-stablelm       StableLmForCausalLM: sequential residual, per-head q/k LayerNorms
                      (weight only, one per head), q/k/v biases, GQA, partial rotary 0.25.
* tiny-stablelm-parallel  parallel residual (one LayerNorm), no qk norm, no q/k/v bias,
                      partial rotary 0.5.
* tiny-falcon         FalconForCausalLM, new_decoder_architecture: fused grouped QKV
                      [kv group][q.. q, k, v][head_dim], ln_attn / ln_mlp, parallel
                      attention + MLP, full rotary, no biases, tied embeddings.
* tiny-falcon-mq      old architecture, multi_query (one K/V head), parallel_attn with
                      one input_layernorm, biases, untied lm_head.

Each directory: config.json, model.safetensors (float32, transformers' state_dict
names), ids.json, attentions.npy (float64 [layers][1][heads][7][7]), hidden.npy
(float64 [layers + 1][1][7][hidden]: the embeddings, each layer's output, the last
replaced by the output of the final norm) and logits.npy (float64 [1][7][vocab]).

Everything is computed in float64 from the float32 weights widened, RoPE inverse
frequencies included (transformers computes inv_freq, cos and sin in float32 and the
longrope factors as a float32 tensor).  Each model is run twice: `forward` follows
transformers' code (views / chunks of the fused outputs, rotate_half, repeat_kv,
vectorised), `forward_alt` is an independent formulation (rows of the fused weights
gathered by explicit index lists, one head and one query at a time, RoPE as complex
multiplication of the pairs (x[j], x[j + d/2]), F.layer_norm, explicit mask loops);
attentions, hidden states and logits must agree to 1e-12.

Transformers sources followed (huggingface/transformers, 4.5x and 5.x):
  src/transformers/models/phi3/modeling_phi3.py, configuration_phi3.py
  src/transformers/models/phi/modeling_phi.py, modular_phi.py
  src/transformers/models/gpt_neox/modeling_gpt_neox.py, configuration_gpt_neox.py
  src/transformers/models/stablelm/modeling_stablelm.py
  src/transformers/models/falcon/modeling_falcon.py, configuration_falcon.py
  src/transformers/modeling_rope_utils.py (_compute_longrope_parameters,
      dynamic_rope_update.longrope_frequency_update, standardize_rope_params)
  src/transformers/masking_utils.py (sliding_window_overlay: kv > q - window)

Run with ``/usr/bin/python3 data/models/make_tiny_fused.py``; the output is
byte-identical from run to run.
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
TOL = 1e-12


# ---------------------------------------------------------------------------
# small numerical helpers (main formulation)
# ---------------------------------------------------------------------------

def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = (x - mu).pow(2).mean(-1, keepdim=True)
    y = (x - mu) / torch.sqrt(var + eps) * w
    return y if b is None else y + b


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def gelu_erf(x):           # ACT2FN["gelu"]
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def gelu_new(x):           # ACT2FN["gelu_new"] (tanh approximation)
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def silu(x):
    return x * torch.sigmoid(x)


ACT = {"gelu": gelu_erf, "gelu_new": gelu_new, "silu": silu}
ACT_ALT = {"gelu": F.gelu, "gelu_new": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu}


def lin(x, w, p, bias=True):
    """nn.Linear: x @ W^T (+ b) for the tensors named p + weight / bias."""
    y = x @ w[p + "weight"].T
    if bias and (p + "bias") in w:
        y = y + w[p + "bias"]
    return y


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def softmax(s):
    e = torch.exp(s - s.max(-1, keepdim=True).values)
    return e / e.sum(-1, keepdim=True)


# ---------------------------------------------------------------------------
# RoPE parameters: (theta, rotary dims, inverse frequencies, attention factor)
# ---------------------------------------------------------------------------

def head_dim(c):
    return c["hidden_size"] // c["num_attention_heads"]


def rope_setup(c, seq_len):
    """The rotary embedding of a config, as transformers resolves it, in float64."""
    t = c["model_type"]
    hd = head_dim(c)
    rp = c.get("rope_parameters")
    if rp is None:
        rp = dict(c.get("rope_scaling") or {})
        if t == "gpt_neox":
            rp.setdefault("rope_theta", c.get("rotary_emb_base", 10000.0))
            rp.setdefault("partial_rotary_factor", c.get("rotary_pct", 0.25))
        else:
            rp.setdefault("rope_theta", c.get("rope_theta", 10000.0))
            default_prf = {"phi": 0.5, "stablelm": 0.25}.get(t, 1.0)
            rp.setdefault("partial_rotary_factor", c.get("partial_rotary_factor", default_prf))
    rope_type = rp.get("rope_type", rp.get("type", "default"))
    theta = float(rp["rope_theta"])
    dim = int(hd * rp.get("partial_rotary_factor", 1.0))
    exponent = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    if rope_type == "default":
        return dim, 1.0 / (theta ** exponent), 1.0
    assert rope_type == "longrope", rope_type
    # standardize_rope_params: Phi3's top-level original_max_position_embeddings wins
    original = c.get("original_max_position_embeddings", rp.get("original_max_position_embeddings"))
    factor = rp.get("factor")
    if factor is None:
        factor = c["max_position_embeddings"] / original
    af = rp.get("attention_factor")
    if af is None:
        af = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    # longrope_frequency_update: long factors when max(position_ids) + 1 > original
    ext = rp["long_factor"] if seq_len > original else rp["short_factor"]
    ext = torch.tensor(ext, dtype=torch.float64)
    return dim, 1.0 / (ext * theta ** exponent), af


def cos_sin(c, seq):
    dim, inv, af = rope_setup(c, seq)
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * af, emb.sin() * af


def apply_rope(x, cos, sin):
    """apply_rotary_pos_emb on the first cos.shape[-1] features, the rest passes."""
    d = cos.shape[-1]
    rot, rest = x[..., :d], x[..., d:]
    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)


def causal_mask(seq, window=None):
    """The additive mask: 0 where key j is visible from query i, -inf elsewhere
    (transformers fills finfo.min; both give an exact 0 after the softmax)."""
    i = torch.arange(seq)[:, None]
    j = torch.arange(seq)[None, :]
    hidden = j > i
    if window is not None:
        hidden = hidden | ~(j > i - window)      # sliding_window_overlay: kv > q - window
    return torch.zeros(seq, seq, dtype=torch.float64).masked_fill(hidden, float("-inf"))


def sdpa_eager(q, k, v, c, mask):
    """eager_attention_forward: q [nh, s, hd], k / v [nkv, s, hd]."""
    nh, nkv = q.shape[0], k.shape[0]
    k = k.repeat_interleave(nh // nkv, dim=0)     # repeat_kv
    v = v.repeat_interleave(nh // nkv, dim=0)
    w = softmax(q @ k.transpose(-1, -2) * head_dim(c) ** -0.5 + mask)
    return (w @ v).transpose(0, 1).reshape(q.shape[1], -1), w


# ---------------------------------------------------------------------------
# forward passes, main formulation (one function per family)
# ---------------------------------------------------------------------------

def phi3_forward(w, ids, c):
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
    eps, s = c["rms_norm_eps"], len(ids)
    cos, sin = cos_sin(c, s)
    mask = causal_mask(s, c.get("sliding_window"))
    h = w["model.embed_tokens.weight"][ids]
    hidden, atts = [h], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        x = rms_norm(h, w[p + "input_layernorm.weight"], eps)
        qkv = lin(x, w, p + "self_attn.qkv_proj.")
        qp = nh * hd
        q = qkv[..., :qp].view(s, -1, hd).transpose(0, 1)
        k = qkv[..., qp:qp + nkv * hd].view(s, -1, hd).transpose(0, 1)
        v = qkv[..., qp + nkv * hd:].view(s, -1, hd).transpose(0, 1)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        o, att = sdpa_eager(q, k, v, c, mask)
        atts.append(att)
        h = h + lin(o, w, p + "self_attn.o_proj.")
        m = rms_norm(h, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = lin(m, w, p + "mlp.gate_up_proj.").chunk(2, dim=-1)
        h = h + lin(up * ACT[c["hidden_act"]](gate), w, p + "mlp.down_proj.")
        hidden.append(h)
    hidden[-1] = rms_norm(h, w["model.norm.weight"], eps)
    logits = lin(hidden[-1], w, "lm_head.")
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


def phi_forward(w, ids, c):
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
    eps, s = c["layer_norm_eps"], len(ids)
    cos, sin = cos_sin(c, s)
    mask = causal_mask(s)
    h = w["model.embed_tokens.weight"][ids]
    hidden, atts = [h], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a = p + "self_attn."
        x = layer_norm(h, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        q = lin(x, w, a + "q_proj.").view(s, -1, hd).transpose(0, 1)
        k = lin(x, w, a + "k_proj.").view(s, -1, hd).transpose(0, 1)
        v = lin(x, w, a + "v_proj.").view(s, -1, hd).transpose(0, 1)
        if c["qk_layernorm"]:
            q = layer_norm(q, w[a + "q_layernorm.weight"], w[a + "q_layernorm.bias"], eps)
            k = layer_norm(k, w[a + "k_layernorm.weight"], w[a + "k_layernorm.bias"], eps)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        o, att = sdpa_eager(q, k, v, c, mask)
        atts.append(att)
        attn_out = lin(o, w, a + "dense.")
        ff = lin(ACT[c["hidden_act"]](lin(x, w, p + "mlp.fc1.")), w, p + "mlp.fc2.")
        h = attn_out + ff + h
        hidden.append(h)
    hidden[-1] = layer_norm(h, w["model.final_layernorm.weight"], w["model.final_layernorm.bias"], eps)
    logits = lin(hidden[-1], w, "lm_head.")
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


def gpt_neox_forward(w, ids, c):
    hd, eps, s = head_dim(c), c["layer_norm_eps"], len(ids)
    cos, sin = cos_sin(c, s)
    mask = causal_mask(s)
    h = w["gpt_neox.embed_in.weight"][ids]
    hidden, atts = [h], []
    for n in range(c["num_hidden_layers"]):
        p = f"gpt_neox.layers.{n}."
        x = layer_norm(h, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        qkv = lin(x, w, p + "attention.query_key_value.").view(s, -1, 3 * hd).transpose(0, 1)
        q, k, v = qkv.chunk(3, dim=-1)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        o, att = sdpa_eager(q, k, v, c, mask)
        atts.append(att)
        attn_out = lin(o, w, p + "attention.dense.")

        def mlp(t):
            return lin(ACT[c["hidden_act"]](lin(t, w, p + "mlp.dense_h_to_4h.")), w, p + "mlp.dense_4h_to_h.")

        post = (w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"])
        if c["use_parallel_residual"]:
            h = mlp(layer_norm(h, *post, eps)) + attn_out + h
        else:
            a = attn_out + h
            h = mlp(layer_norm(a, *post, eps)) + a
        hidden.append(h)
    hidden[-1] = layer_norm(h, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], eps)
    logits = lin(hidden[-1], w, "embed_out.")
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


def stablelm_forward(w, ids, c):
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
    eps, s = c["layer_norm_eps"], len(ids)
    cos, sin = cos_sin(c, s)
    mask = causal_mask(s)
    h = w["model.embed_tokens.weight"][ids]
    hidden, atts = [h], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a = p + "self_attn."
        x = layer_norm(h, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        q = lin(x, w, a + "q_proj.").view(s, nh, hd).transpose(0, 1)
        k = lin(x, w, a + "k_proj.").view(s, nkv, hd).transpose(0, 1)
        v = lin(x, w, a + "v_proj.").view(s, nkv, hd).transpose(0, 1)
        if c["qk_layernorm"]:      # StableLmLayerNormPerHead: one LayerNorm (no bias) per head
            q = torch.cat([layer_norm(q[i:i + 1], w[f"{a}q_layernorm.norms.{i}.weight"], None, eps)
                           for i in range(nh)], dim=0)
            k = torch.cat([layer_norm(k[i:i + 1], w[f"{a}k_layernorm.norms.{i}.weight"], None, eps)
                           for i in range(nkv)], dim=0)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        o, att = sdpa_eager(q, k, v, c, mask)
        atts.append(att)
        attn_out = lin(o, w, a + "o_proj.")

        def mlp(t):
            g = ACT[c["hidden_act"]](lin(t, w, p + "mlp.gate_proj."))
            return lin(g * lin(t, w, p + "mlp.up_proj."), w, p + "mlp.down_proj.")

        if c["use_parallel_residual"]:
            h = h + attn_out + mlp(x)
        else:
            r = h + attn_out
            h = r + mlp(layer_norm(r, w[p + "post_attention_layernorm.weight"],
                                   w[p + "post_attention_layernorm.bias"], eps))
        hidden.append(h)
    hidden[-1] = layer_norm(h, w["model.norm.weight"], w["model.norm.bias"], eps)
    logits = lin(hidden[-1], w, "lm_head.")
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


def falcon_forward(w, ids, c):
    nh, hd = c["num_attention_heads"], head_dim(c)
    eps, s = c["layer_norm_epsilon"], len(ids)
    new_arch = c["new_decoder_architecture"]
    nkv = c["num_kv_heads"] if new_arch else (1 if c["multi_query"] else nh)
    num_ln = c.get("num_ln_in_parallel_attn") or (2 if new_arch else None)
    cos, sin = cos_sin(c, s)
    mask = causal_mask(s)
    h = w["transformer.word_embeddings.weight"][ids]
    hidden, atts = [h], []
    for n in range(c["num_hidden_layers"]):
        p = f"transformer.h.{n}."

        def ln(name, t):
            return layer_norm(t, w[p + name + ".weight"], w[p + name + ".bias"], eps)

        if new_arch and num_ln == 2:
            a_in, m_in = ln("ln_attn", h), ln("ln_mlp", h)
        else:
            a_in = ln("input_layernorm", h)
        fused = lin(a_in, w, p + "self_attention.query_key_value.")
        if new_arch:      # FalconAttention._split_heads, new_decoder_architecture
            qkv = fused.view(s, -1, nh // nkv + 2, hd)
            q = qkv[:, :, :-2]
            k = torch.broadcast_to(qkv[:, :, [-2]], q.shape)
            v = torch.broadcast_to(qkv[:, :, [-1]], q.shape)
            q, k, v = (t.flatten(1, 2).transpose(0, 1) for t in (q, k, v))
        elif not c["multi_query"]:
            qkv = fused.view(s, nh, 3, hd)
            q, k, v = (qkv[:, :, i].transpose(0, 1) for i in range(3))
        else:
            qkv = fused.view(s, nh + 2, hd)
            q, k, v = qkv[:, :-2].transpose(0, 1), qkv[:, [-2]].transpose(0, 1), qkv[:, [-1]].transpose(0, 1)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        att = softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask)    # k broadcasts (1 head)
        o = (att @ v).transpose(0, 1).reshape(s, nh * hd)
        atts.append(att)
        attn_out = lin(o, w, p + "self_attention.dense.")
        if not new_arch:
            if c["parallel_attn"]:
                m_in = a_in
            else:
                residual = attn_out + h
                m_in = ln("post_attention_layernorm", residual)
        if new_arch and c["parallel_attn"] and num_ln == 1:
            m_in = a_in
        mlp_out = lin(ACT[c.get("activation", "gelu")](lin(m_in, w, p + "mlp.dense_h_to_4h.")),
                      w, p + "mlp.dense_4h_to_h.")
        if new_arch or c["parallel_attn"]:
            mlp_out = mlp_out + attn_out
            h = mlp_out + h
        else:
            h = mlp_out + residual
        hidden.append(h)
    hidden[-1] = layer_norm(h, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], eps)
    head = w["transformer.word_embeddings.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    logits = hidden[-1] @ head.T
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


FORWARD = {"phi3": phi3_forward, "phi": phi_forward, "gpt_neox": gpt_neox_forward,
           "stablelm": stablelm_forward, "falcon": falcon_forward}


# ---------------------------------------------------------------------------
# second, independent formulation
# ---------------------------------------------------------------------------

def ln_alt(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def rms_alt(x, w, eps):
    return x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps) * w


def rope_alt(c, seq):
    """(rotary dims, complex rotations [seq, dims/2]) from scalar Python arithmetic."""
    t = c["model_type"]
    rp = c.get("rope_parameters") or c.get("rope_scaling") or {}
    if t == "gpt_neox":
        theta, frac = c.get("rotary_emb_base", 10000.0), c.get("rotary_pct", 0.25)
    else:
        theta = rp.get("rope_theta", c.get("rope_theta", 10000.0))
        frac = rp.get("partial_rotary_factor", c.get("partial_rotary_factor",
                                                     {"phi": 0.5, "stablelm": 0.25}.get(t, 1.0)))
    theta = float(theta)
    dim = int(head_dim(c) * frac)
    ext, af = [1.0] * (dim // 2), 1.0
    if rp.get("rope_type", rp.get("type")) == "longrope":
        original = c.get("original_max_position_embeddings") or rp["original_max_position_embeddings"]
        ext = rp["long_factor"] if seq > original else rp["short_factor"]
        scale = c["max_position_embeddings"] / original
        af = math.sqrt(1 + math.log(scale) / math.log(original)) if scale > 1 else 1.0
    rot = torch.empty(seq, dim // 2, dtype=torch.complex128)
    for pos in range(seq):
        for j in range(dim // 2):
            angle = pos / (ext[j] * math.pow(theta, 2.0 * j / dim))
            rot[pos, j] = complex(af * math.cos(angle), af * math.sin(angle))
    return dim, rot


def rotate_alt(x, dim, rot):
    """x [seq, hd] of one head: pairs (x[j], x[j + dim/2]) as complex numbers."""
    half = dim // 2
    z = torch.complex(x[:, :half], x[:, half:dim]) * rot
    return torch.cat((z.real, z.imag, x[:, dim:]), dim=-1)


def attention_alt(qs, ks, vs, c, window=None):
    """Per head, per query: qs list of [s, hd] (already rotated), ks / vs lists of
    the K/V heads; query head h reads K/V head h // (nh / nkv)."""
    nh, nkv = len(qs), len(ks)
    s, hd = qs[0].shape
    out = torch.zeros(s, nh * hd, dtype=torch.float64)
    weights = torch.zeros(nh, s, s, dtype=torch.float64)
    for hh in range(nh):
        kv = hh // (nh // nkv)
        for i in range(s):
            keys = [j for j in range(s) if j <= i and (window is None or i - j < window)]
            sc = torch.stack([torch.dot(qs[hh][i], ks[kv][j]) for j in keys]) / math.sqrt(hd)
            p = torch.softmax(sc, dim=0)
            weights[hh, i, keys] = p
            out[i, hh * hd:(hh + 1) * hd] = sum(p[m] * vs[kv][j] for m, j in enumerate(keys))
    return out, weights


def rows(wt, idx):
    return wt[torch.tensor(idx, dtype=torch.long)]


def proj_alt(x, w, name, idx, bias=True):
    """x @ (selected rows of the fused weight)^T (+ the same entries of the bias)."""
    y = x @ rows(w[name + "weight"], idx).T
    if bias and (name + "bias") in w:
        y = y + w[name + "bias"][torch.tensor(idx, dtype=torch.long)]
    return y


def forward_alt(w, ids, c):
    t = c["model_type"]
    nh, hd, s, d = c["num_attention_heads"], head_dim(c), len(ids), c["hidden_size"]
    dim, rot = rope_alt(c, s)
    act = ACT_ALT[c.get("hidden_act", c.get("activation", "gelu"))]
    if t == "falcon":
        nkv = c["num_kv_heads"] if c["new_decoder_architecture"] else (1 if c["multi_query"] else nh)
    else:
        nkv = c.get("num_key_value_heads", nh)
    prefix = {"phi3": "model.", "phi": "model.", "stablelm": "model.",
              "gpt_neox": "gpt_neox.", "falcon": "transformer."}[t]
    emb_name = {"gpt_neox": "gpt_neox.embed_in.weight",
                "falcon": "transformer.word_embeddings.weight"}.get(t, "model.embed_tokens.weight")
    h = torch.stack([w[emb_name][i] for i in ids])
    hidden, atts = [h], []
    window = c.get("sliding_window") if t == "phi3" else None
    for n in range(c["num_hidden_layers"]):
        p = f"{prefix}{'h' if t == 'falcon' else 'layers'}.{n}."
        # ---- the rows of q / k / v for every head ----
        if t == "phi3":
            name = p + "self_attn.qkv_proj."
            qi = [[hh * hd + e for e in range(hd)] for hh in range(nh)]
            ki = [[nh * hd + g * hd + e for e in range(hd)] for g in range(nkv)]
            vi = [[(nh + nkv) * hd + g * hd + e for e in range(hd)] for g in range(nkv)]
        elif t == "gpt_neox":
            name = p + "attention.query_key_value."
            qi = [[hh * 3 * hd + e for e in range(hd)] for hh in range(nh)]
            ki = [[hh * 3 * hd + hd + e for e in range(hd)] for hh in range(nh)]
            vi = [[hh * 3 * hd + 2 * hd + e for e in range(hd)] for hh in range(nh)]
        elif t == "falcon":
            name = p + "self_attention.query_key_value."
            if c["new_decoder_architecture"]:
                per = nh // nkv
                qi = [[((hh // per) * (per + 2) + hh % per) * hd + e for e in range(hd)] for hh in range(nh)]
                ki = [[(g * (per + 2) + per) * hd + e for e in range(hd)] for g in range(nkv)]
                vi = [[(g * (per + 2) + per + 1) * hd + e for e in range(hd)] for g in range(nkv)]
            elif c["multi_query"]:
                qi = [[hh * hd + e for e in range(hd)] for hh in range(nh)]
                ki = [[nh * hd + e for e in range(hd)]]
                vi = [[(nh + 1) * hd + e for e in range(hd)]]
            else:
                qi = [[(3 * hh) * hd + e for e in range(hd)] for hh in range(nh)]
                ki = [[(3 * hh + 1) * hd + e for e in range(hd)] for hh in range(nh)]
                vi = [[(3 * hh + 2) * hd + e for e in range(hd)] for hh in range(nh)]
        # ---- norms in front of attention / MLP ----
        if t == "phi3":
            x = rms_alt(h, w[p + "input_layernorm.weight"], c["rms_norm_eps"])
        elif t == "falcon":
            eps = c["layer_norm_epsilon"]
            if c["new_decoder_architecture"]:
                x = ln_alt(h, w[p + "ln_attn.weight"], w[p + "ln_attn.bias"], eps)
                m_in = ln_alt(h, w[p + "ln_mlp.weight"], w[p + "ln_mlp.bias"], eps)
            else:
                x = ln_alt(h, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
                m_in = x
        else:
            eps = c["layer_norm_eps"]
            x = ln_alt(h, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        # ---- per-head q / k / v ----
        if t in ("phi3", "gpt_neox", "falcon"):
            qs = [proj_alt(x, w, name, i) for i in qi]
            ks = [proj_alt(x, w, name, i) for i in ki]
            vs = [proj_alt(x, w, name, i) for i in vi]
            oname = {"phi3": "self_attn.o_proj.", "gpt_neox": "attention.dense.",
                     "falcon": "self_attention.dense."}[t]
        else:
            a = p + "self_attn."
            qs = [proj_alt(x, w, a + "q_proj.", list(range(hh * hd, (hh + 1) * hd))) for hh in range(nh)]
            ks = [proj_alt(x, w, a + "k_proj.", list(range(g * hd, (g + 1) * hd))) for g in range(nkv)]
            vs = [proj_alt(x, w, a + "v_proj.", list(range(g * hd, (g + 1) * hd))) for g in range(nkv)]
            oname = "self_attn.dense." if t == "phi" else "self_attn.o_proj."
            if c.get("qk_layernorm"):
                if t == "phi":
                    qs = [ln_alt(q, w[a + "q_layernorm.weight"], w[a + "q_layernorm.bias"], eps) for q in qs]
                    ks = [ln_alt(k, w[a + "k_layernorm.weight"], w[a + "k_layernorm.bias"], eps) for k in ks]
                else:
                    qs = [ln_alt(q, w[f"{a}q_layernorm.norms.{i}.weight"], None, eps) for i, q in enumerate(qs)]
                    ks = [ln_alt(k, w[f"{a}k_layernorm.norms.{i}.weight"], None, eps) for i, k in enumerate(ks)]
        qs = [rotate_alt(q, dim, rot) for q in qs]
        ks = [rotate_alt(k, dim, rot) for k in ks]
        o, att = attention_alt(qs, ks, vs, c, window)
        atts.append(att)
        attn_out = F.linear(o, w[p + oname + "weight"], w.get(p + oname + "bias"))
        # ---- MLP and residuals ----
        if t == "phi3":
            inter = c["intermediate_size"]
            r = h + attn_out
            m = rms_alt(r, w[p + "post_attention_layernorm.weight"], c["rms_norm_eps"])
            gate = proj_alt(m, w, p + "mlp.gate_up_proj.", list(range(inter)))
            up = proj_alt(m, w, p + "mlp.gate_up_proj.", list(range(inter, 2 * inter)))
            h = r + F.linear(act(gate) * up, w[p + "mlp.down_proj.weight"])
        elif t == "phi":
            ff = F.linear(act(F.linear(x, w[p + "mlp.fc1.weight"], w[p + "mlp.fc1.bias"])),
                          w[p + "mlp.fc2.weight"], w[p + "mlp.fc2.bias"])
            h = h + attn_out + ff
        elif t == "gpt_neox":
            def mlp(u):
                return F.linear(act(F.linear(u, w[p + "mlp.dense_h_to_4h.weight"], w[p + "mlp.dense_h_to_4h.bias"])),
                                w[p + "mlp.dense_4h_to_h.weight"], w[p + "mlp.dense_4h_to_h.bias"])
            ln2 = (w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"])
            if c["use_parallel_residual"]:
                h = h + attn_out + mlp(ln_alt(h, *ln2, eps))
            else:
                r = h + attn_out
                h = r + mlp(ln_alt(r, *ln2, eps))
        elif t == "stablelm":
            def mlp(u):
                return F.linear(act(F.linear(u, w[p + "mlp.gate_proj.weight"])) * F.linear(u, w[p + "mlp.up_proj.weight"]),
                                w[p + "mlp.down_proj.weight"])
            if c["use_parallel_residual"]:
                h = h + attn_out + mlp(x)
            else:
                r = h + attn_out
                h = r + mlp(ln_alt(r, w[p + "post_attention_layernorm.weight"],
                                   w[p + "post_attention_layernorm.bias"], eps))
        else:   # falcon, parallel in both of our configurations
            assert c["new_decoder_architecture"] or c["parallel_attn"]
            mlp_out = F.linear(act(F.linear(m_in, w[p + "mlp.dense_h_to_4h.weight"], w.get(p + "mlp.dense_h_to_4h.bias"))),
                               w[p + "mlp.dense_4h_to_h.weight"], w.get(p + "mlp.dense_4h_to_h.bias"))
            h = h + attn_out + mlp_out
        hidden.append(h)
    final = {"phi3": "model.norm.", "phi": "model.final_layernorm.", "stablelm": "model.norm.",
             "gpt_neox": "gpt_neox.final_layer_norm.", "falcon": "transformer.ln_f."}[t]
    if t == "phi3":
        hidden[-1] = rms_alt(h, w[final + "weight"], c["rms_norm_eps"])
    else:
        hidden[-1] = ln_alt(h, w[final + "weight"], w[final + "bias"], eps)
    if t == "gpt_neox":
        logits = F.linear(hidden[-1], w["embed_out.weight"])
    elif c.get("tie_word_embeddings"):
        logits = F.linear(hidden[-1], w[emb_name])
    else:
        logits = F.linear(hidden[-1], w["lm_head.weight"], w.get("lm_head.bias"))
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


# ---------------------------------------------------------------------------
# configurations
# ---------------------------------------------------------------------------

COMMON = {"hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2,
          "vocab_size": 48, "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2}

# float32-exact factors (transformers turns them into a float32 tensor)
PHI3_SHORT = [1.0, 1.25, 2.5]
PHI3_LONG = [2.0, 6.5, 24.0]

CONFIGS = {
    "tiny-phi3": dict(COMMON, **{
        "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
        "num_key_value_heads": 2, "intermediate_size": 48, "hidden_act": "silu",
        "rms_norm_eps": 1e-5, "max_position_embeddings": 64,
        "original_max_position_embeddings": 16, "partial_rotary_factor": 0.75,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "longrope", "short_factor": PHI3_SHORT, "long_factor": PHI3_LONG},
        "sliding_window": 4, "attention_dropout": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0,
        "pad_token_id": 0, "tie_word_embeddings": False, "use_cache": True}),
    "tiny-phi3-long": dict(COMMON, **{
        "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
        "num_key_value_heads": 2, "intermediate_size": 48, "hidden_act": "silu",
        "rms_norm_eps": 1e-5, "max_position_embeddings": 32,
        "original_max_position_embeddings": 4,
        "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                            "partial_rotary_factor": 0.75, "original_max_position_embeddings": 4,
                            "short_factor": PHI3_SHORT, "long_factor": PHI3_LONG},
        "sliding_window": None, "attention_dropout": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0,
        "pad_token_id": 0, "tie_word_embeddings": False, "use_cache": True}),
    "tiny-phi": dict(COMMON, **{
        "architectures": ["PhiForCausalLM"], "model_type": "phi",
        "num_key_value_heads": 4, "intermediate_size": 64, "hidden_act": "gelu_new",
        "layer_norm_eps": 1e-5, "max_position_embeddings": 64, "partial_rotary_factor": 0.5,
        "rope_theta": 10000.0, "rope_scaling": None, "qk_layernorm": False,
        "attention_dropout": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0,
        "tie_word_embeddings": False, "use_cache": True}),
    "tiny-phi-qkln": dict(COMMON, **{
        "architectures": ["PhiForCausalLM"], "model_type": "phi", "num_hidden_layers": 3,
        "num_key_value_heads": 2, "intermediate_size": 64, "hidden_act": "gelu_new",
        "layer_norm_eps": 1e-5, "max_position_embeddings": 64, "partial_rotary_factor": 0.5,
        "rope_theta": 10000.0, "rope_scaling": None, "qk_layernorm": True,
        "attention_dropout": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0,
        "tie_word_embeddings": False, "use_cache": True}),
    "tiny-gpt-neox": dict(COMMON, **{
        "architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
        "intermediate_size": 64, "hidden_act": "gelu", "rotary_pct": 0.5,
        "rotary_emb_base": 10000, "max_position_embeddings": 64, "layer_norm_eps": 1e-5,
        "use_parallel_residual": True, "attention_bias": True, "rope_scaling": None,
        "attention_dropout": 0.0, "hidden_dropout": 0.0, "classifier_dropout": 0.1,
        "bos_token_id": 0, "tie_word_embeddings": False, "use_cache": True}),
    "tiny-stablelm": dict(COMMON, **{
        "architectures": ["StableLmForCausalLM"], "model_type": "stablelm",
        "num_key_value_heads": 2, "intermediate_size": 48, "hidden_act": "silu",
        "layer_norm_eps": 1e-5, "max_position_embeddings": 64, "partial_rotary_factor": 0.25,
        "rope_theta": 10000.0, "rope_scaling": None, "qk_layernorm": True, "use_qkv_bias": True,
        "use_parallel_residual": False, "attention_dropout": 0.0, "hidden_dropout": 0.0,
        "bos_token_id": 0, "eos_token_id": 0, "tie_word_embeddings": False, "use_cache": True}),
    "tiny-stablelm-parallel": dict(COMMON, **{
        "architectures": ["StableLmForCausalLM"], "model_type": "stablelm",
        "num_key_value_heads": 4, "intermediate_size": 48, "hidden_act": "silu",
        "layer_norm_eps": 1e-5, "max_position_embeddings": 64, "partial_rotary_factor": 0.5,
        "rope_theta": 10000.0, "rope_scaling": None, "qk_layernorm": False, "use_qkv_bias": False,
        "use_parallel_residual": True, "attention_dropout": 0.0, "hidden_dropout": 0.0,
        "bos_token_id": 0, "eos_token_id": 0, "tie_word_embeddings": False, "use_cache": True}),
    "tiny-falcon": dict(COMMON, **{
        "architectures": ["FalconForCausalLM"], "model_type": "falcon",
        "num_kv_heads": 2, "new_decoder_architecture": True, "multi_query": True,
        "parallel_attn": True, "num_ln_in_parallel_attn": None, "bias": False, "alibi": False,
        "ffn_hidden_size": 64, "activation": "gelu", "layer_norm_epsilon": 1e-5,
        "max_position_embeddings": 64, "rope_theta": 10000.0, "rope_scaling": None,
        "attention_dropout": 0.0, "hidden_dropout": 0.0, "tie_word_embeddings": True,
        "use_cache": True}),
    "tiny-falcon-mq": dict(COMMON, **{
        "architectures": ["FalconForCausalLM"], "model_type": "falcon",
        "num_kv_heads": 4, "new_decoder_architecture": False, "multi_query": True,
        "parallel_attn": True, "num_ln_in_parallel_attn": None, "bias": True, "alibi": False,
        "ffn_hidden_size": 64, "activation": "gelu", "layer_norm_epsilon": 1e-5,
        "max_position_embeddings": 64, "rope_theta": 10000.0, "rope_scaling": None,
        "attention_dropout": 0.0, "hidden_dropout": 0.0, "tie_word_embeddings": False,
        "use_cache": True}),
}

SEEDS = {name: 4100 + i for i, name in enumerate(CONFIGS)}


# ---------------------------------------------------------------------------
# made-up weights (numpy RandomState, float32)
# ---------------------------------------------------------------------------

def weights(c, seed):
    rng = np.random.RandomState(seed)
    t = c["model_type"]
    d, nh, v, hd = c["hidden_size"], c["num_attention_heads"], c["vocab_size"], head_dim(c)
    nkv = c.get("num_key_value_heads", nh)
    QK_GAIN = 1.7

    def linear(out_f, in_f, gain=1.0):
        return tm.linear(rng, out_f, in_f, gain)

    def vec(n, centre=0.0, spread=0.1):
        return tm.vector(rng, n, centre, spread)

    def ln(w, name, bias=True):
        w[name + ".weight"] = vec(d, 1.0, 0.15)
        if bias:
            w[name + ".bias"] = vec(d, 0.0, 0.1)

    w = {}
    L = c["num_hidden_layers"]
    if t == "phi3":
        inter = c["intermediate_size"]
        w["model.embed_tokens.weight"] = (0.5 * rng.standard_normal((v, d))).astype("<f4")
        for n in range(L):
            p = f"model.layers.{n}."
            ln(w, p + "input_layernorm", bias=False)
            w[p + "self_attn.qkv_proj.weight"] = np.concatenate(
                [linear(nh * hd, d, QK_GAIN), linear(nkv * hd, d, QK_GAIN), linear(nkv * hd, d)])
            w[p + "self_attn.o_proj.weight"] = linear(d, nh * hd)
            ln(w, p + "post_attention_layernorm", bias=False)
            w[p + "mlp.gate_up_proj.weight"] = linear(2 * inter, d)
            w[p + "mlp.down_proj.weight"] = linear(d, inter)
        ln(w, "model.norm", bias=False)
        w["lm_head.weight"] = linear(v, d)
    elif t == "phi":
        inter = c["intermediate_size"]
        w["model.embed_tokens.weight"] = (0.5 * rng.standard_normal((v, d))).astype("<f4")
        for n in range(L):
            p = f"model.layers.{n}."
            a = p + "self_attn."
            ln(w, p + "input_layernorm")
            for name, rows_, gain in (("q_proj", nh * hd, QK_GAIN), ("k_proj", nkv * hd, QK_GAIN),
                                      ("v_proj", nkv * hd, 1.0)):
                w[a + name + ".weight"] = linear(rows_, d, gain)
                w[a + name + ".bias"] = vec(rows_, 0.0, 0.2)
            w[a + "dense.weight"] = linear(d, nh * hd)
            w[a + "dense.bias"] = vec(d, 0.0, 0.1)
            if c["qk_layernorm"]:
                for name in ("q_layernorm", "k_layernorm"):
                    w[a + name + ".weight"] = vec(hd, 1.7, 0.3)   # large: LN'd q/k, keep peaks
                    w[a + name + ".bias"] = vec(hd, 0.0, 0.3)
            w[p + "mlp.fc1.weight"] = linear(inter, d)
            w[p + "mlp.fc1.bias"] = vec(inter, 0.0, 0.1)
            w[p + "mlp.fc2.weight"] = linear(d, inter)
            w[p + "mlp.fc2.bias"] = vec(d, 0.0, 0.1)
        ln(w, "model.final_layernorm")
        w["lm_head.weight"] = linear(v, d)
        w["lm_head.bias"] = vec(v, 0.0, 0.1)
    elif t == "gpt_neox":
        inter = c["intermediate_size"]
        w["gpt_neox.embed_in.weight"] = (0.5 * rng.standard_normal((v, d))).astype("<f4")
        for n in range(L):
            p = f"gpt_neox.layers.{n}."
            ln(w, p + "input_layernorm")
            ln(w, p + "post_attention_layernorm")
            # per head [q | k | v], q and k rows with the larger gain
            blocks = []
            for hh in range(nh):
                blocks += [linear(hd, d, QK_GAIN), linear(hd, d, QK_GAIN), linear(hd, d)]
            w[p + "attention.query_key_value.weight"] = np.concatenate(blocks)
            w[p + "attention.query_key_value.bias"] = vec(3 * d, 0.0, 0.2)
            w[p + "attention.dense.weight"] = linear(d, d)
            w[p + "attention.dense.bias"] = vec(d, 0.0, 0.1)
            w[p + "mlp.dense_h_to_4h.weight"] = linear(inter, d)
            w[p + "mlp.dense_h_to_4h.bias"] = vec(inter, 0.0, 0.1)
            w[p + "mlp.dense_4h_to_h.weight"] = linear(d, inter)
            w[p + "mlp.dense_4h_to_h.bias"] = vec(d, 0.0, 0.1)
        ln(w, "gpt_neox.final_layer_norm")
        w["embed_out.weight"] = linear(v, d)
    elif t == "stablelm":
        inter = c["intermediate_size"]
        w["model.embed_tokens.weight"] = (0.5 * rng.standard_normal((v, d))).astype("<f4")
        for n in range(L):
            p = f"model.layers.{n}."
            a = p + "self_attn."
            ln(w, p + "input_layernorm")
            if not c["use_parallel_residual"]:
                ln(w, p + "post_attention_layernorm")
            for name, rows_, gain in (("q_proj", nh * hd, QK_GAIN), ("k_proj", nkv * hd, QK_GAIN),
                                      ("v_proj", nkv * hd, 1.0)):
                w[a + name + ".weight"] = linear(rows_, d, gain)
                if c["use_qkv_bias"]:
                    w[a + name + ".bias"] = vec(rows_, 0.0, 0.2)
            w[a + "o_proj.weight"] = linear(d, d)
            if c["qk_layernorm"]:
                for i in range(nh):
                    w[f"{a}q_layernorm.norms.{i}.weight"] = vec(hd, 1.7, 0.3)
                for i in range(nkv):
                    w[f"{a}k_layernorm.norms.{i}.weight"] = vec(hd, 1.7, 0.3)
            w[p + "mlp.gate_proj.weight"] = linear(inter, d)
            w[p + "mlp.up_proj.weight"] = linear(inter, d)
            w[p + "mlp.down_proj.weight"] = linear(d, inter)
        ln(w, "model.norm")
        w["lm_head.weight"] = linear(v, d)
    elif t == "falcon":
        inter = c["ffn_hidden_size"]
        bias = c["bias"]
        new_arch = c["new_decoder_architecture"]
        w["transformer.word_embeddings.weight"] = (0.5 * rng.standard_normal((v, d))).astype("<f4")
        for n in range(L):
            p = f"transformer.h.{n}."
            if new_arch:
                ln(w, p + "ln_attn")
                ln(w, p + "ln_mlp")
                kvh = c["num_kv_heads"]
                blocks = []
                for g in range(kvh):       # [q x (nh / nkv), k, v] per kv group
                    blocks += [linear(hd, d, QK_GAIN) for _ in range(nh // kvh)]
                    blocks += [linear(hd, d, QK_GAIN), linear(hd, d)]
            else:
                ln(w, p + "input_layernorm")
                assert c["multi_query"] and c["parallel_attn"]
                blocks = [linear(nh * hd, d, QK_GAIN), linear(hd, d, QK_GAIN), linear(hd, d)]
            fused = np.concatenate(blocks)
            w[p + "self_attention.query_key_value.weight"] = fused
            w[p + "self_attention.dense.weight"] = linear(d, d)
            w[p + "mlp.dense_h_to_4h.weight"] = linear(inter, d)
            w[p + "mlp.dense_4h_to_h.weight"] = linear(d, inter)
            if bias:
                w[p + "self_attention.query_key_value.bias"] = vec(fused.shape[0], 0.0, 0.2)
                w[p + "self_attention.dense.bias"] = vec(d, 0.0, 0.1)
                w[p + "mlp.dense_h_to_4h.bias"] = vec(inter, 0.0, 0.1)
                w[p + "mlp.dense_4h_to_h.bias"] = vec(d, 0.0, 0.1)
        ln(w, "transformer.ln_f")
        if not c["tie_word_embeddings"]:
            w["lm_head.weight"] = linear(v, d)
    return w


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

def expected_shapes(c):
    """{name: shape} from the config, as the *ForCausalLM state_dict has them."""
    t = c["model_type"]
    d, nh, v, hd = c["hidden_size"], c["num_attention_heads"], c["vocab_size"], head_dim(c)
    nkv = c.get("num_key_value_heads", nh)
    L = c["num_hidden_layers"]
    s = {}
    if t == "phi3":
        inter = c["intermediate_size"]
        s["model.embed_tokens.weight"] = (v, d)
        for n in range(L):
            p = f"model.layers.{n}."
            s[p + "input_layernorm.weight"] = (d,)
            s[p + "post_attention_layernorm.weight"] = (d,)
            s[p + "self_attn.qkv_proj.weight"] = ((nh + 2 * nkv) * hd, d)
            s[p + "self_attn.o_proj.weight"] = (d, nh * hd)
            s[p + "mlp.gate_up_proj.weight"] = (2 * inter, d)
            s[p + "mlp.down_proj.weight"] = (d, inter)
        s["model.norm.weight"] = (d,)
        s["lm_head.weight"] = (v, d)
    elif t == "phi":
        inter = c["intermediate_size"]
        s["model.embed_tokens.weight"] = (v, d)
        for n in range(L):
            p = f"model.layers.{n}."
            a = p + "self_attn."
            s[p + "input_layernorm.weight"] = s[p + "input_layernorm.bias"] = (d,)
            s[a + "q_proj.weight"], s[a + "q_proj.bias"] = (nh * hd, d), (nh * hd,)
            for x in ("k_proj", "v_proj"):
                s[a + x + ".weight"], s[a + x + ".bias"] = (nkv * hd, d), (nkv * hd,)
            s[a + "dense.weight"], s[a + "dense.bias"] = (d, nh * hd), (d,)
            if c["qk_layernorm"]:
                for x in ("q_layernorm", "k_layernorm"):
                    s[a + x + ".weight"] = s[a + x + ".bias"] = (hd,)
            s[p + "mlp.fc1.weight"], s[p + "mlp.fc1.bias"] = (inter, d), (inter,)
            s[p + "mlp.fc2.weight"], s[p + "mlp.fc2.bias"] = (d, inter), (d,)
        s["model.final_layernorm.weight"] = s["model.final_layernorm.bias"] = (d,)
        s["lm_head.weight"], s["lm_head.bias"] = (v, d), (v,)
    elif t == "gpt_neox":
        inter = c["intermediate_size"]
        s["gpt_neox.embed_in.weight"] = (v, d)
        for n in range(L):
            p = f"gpt_neox.layers.{n}."
            for x in ("input_layernorm", "post_attention_layernorm"):
                s[p + x + ".weight"] = s[p + x + ".bias"] = (d,)
            s[p + "attention.query_key_value.weight"] = (3 * d, d)
            s[p + "attention.query_key_value.bias"] = (3 * d,)
            s[p + "attention.dense.weight"], s[p + "attention.dense.bias"] = (d, d), (d,)
            s[p + "mlp.dense_h_to_4h.weight"], s[p + "mlp.dense_h_to_4h.bias"] = (inter, d), (inter,)
            s[p + "mlp.dense_4h_to_h.weight"], s[p + "mlp.dense_4h_to_h.bias"] = (d, inter), (d,)
        s["gpt_neox.final_layer_norm.weight"] = s["gpt_neox.final_layer_norm.bias"] = (d,)
        s["embed_out.weight"] = (v, d)
    elif t == "stablelm":
        inter = c["intermediate_size"]
        s["model.embed_tokens.weight"] = (v, d)
        for n in range(L):
            p = f"model.layers.{n}."
            a = p + "self_attn."
            s[p + "input_layernorm.weight"] = s[p + "input_layernorm.bias"] = (d,)
            if not c["use_parallel_residual"]:
                s[p + "post_attention_layernorm.weight"] = s[p + "post_attention_layernorm.bias"] = (d,)
            s[a + "q_proj.weight"] = (nh * hd, d)
            s[a + "k_proj.weight"] = s[a + "v_proj.weight"] = (nkv * hd, d)
            if c["use_qkv_bias"]:
                s[a + "q_proj.bias"] = (nh * hd,)
                s[a + "k_proj.bias"] = s[a + "v_proj.bias"] = (nkv * hd,)
            s[a + "o_proj.weight"] = (d, d)
            if c["qk_layernorm"]:
                for i in range(nh):
                    s[f"{a}q_layernorm.norms.{i}.weight"] = (hd,)
                for i in range(nkv):
                    s[f"{a}k_layernorm.norms.{i}.weight"] = (hd,)
            s[p + "mlp.gate_proj.weight"] = s[p + "mlp.up_proj.weight"] = (inter, d)
            s[p + "mlp.down_proj.weight"] = (d, inter)
        s["model.norm.weight"] = s["model.norm.bias"] = (d,)
        s["lm_head.weight"] = (v, d)
    elif t == "falcon":
        inter = c["ffn_hidden_size"]
        s["transformer.word_embeddings.weight"] = (v, d)
        if c["new_decoder_architecture"]:
            qkv_rows = (nh + 2 * c["num_kv_heads"]) * hd
        elif c["multi_query"]:
            qkv_rows = d + 2 * hd
        else:
            qkv_rows = 3 * d
        for n in range(L):
            p = f"transformer.h.{n}."
            lns = ("ln_attn", "ln_mlp") if c["new_decoder_architecture"] else ("input_layernorm",)
            for x in lns:
                s[p + x + ".weight"] = s[p + x + ".bias"] = (d,)
            s[p + "self_attention.query_key_value.weight"] = (qkv_rows, d)
            s[p + "self_attention.dense.weight"] = (d, d)
            s[p + "mlp.dense_h_to_4h.weight"] = (inter, d)
            s[p + "mlp.dense_4h_to_h.weight"] = (d, inter)
            if c["bias"]:
                s[p + "self_attention.query_key_value.bias"] = (qkv_rows,)
                s[p + "self_attention.dense.bias"] = (d,)
                s[p + "mlp.dense_h_to_4h.bias"] = (inter,)
                s[p + "mlp.dense_4h_to_h.bias"] = (d,)
        s["transformer.ln_f.weight"] = s["transformer.ln_f.bias"] = (d,)
        if not c["tie_word_embeddings"]:
            s["lm_head.weight"] = (v, d)
    return s


def main():
    torch.set_num_threads(1)
    worst = 0.0
    lines = []
    for name, c in CONFIGS.items():
        w32 = weights(c, SEEDS[name])
        shapes = expected_shapes(c)
        assert sorted(shapes) == sorted(w32), (name, set(shapes) ^ set(w32))
        for k, a in w32.items():
            assert a.shape == shapes[k] and a.dtype == np.dtype("<f4"), (name, k, a.shape)
        d = os.path.join(HERE, name)
        st = {k: ("F32", a) for k, a in w32.items()}
        tm.write_json(os.path.join(d, "config.json"), c)
        tm.write_bytes(os.path.join(d, "model.safetensors"), tm.safetensors_bytes(st))
        tm.check_file(os.path.join(d, "model.safetensors"), st)
        wt = tm.to_torch(w32)
        ids = torch.tensor(IDS)
        atts, hidden, logits = FORWARD[c["model_type"]](wt, ids, c)
        atts2, hidden2, logits2 = forward_alt(wt, IDS, c)
        L, nh, dd, v = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"], c["vocab_size"]
        assert atts.shape == (L, 1, nh, SEQ, SEQ), atts.shape
        assert hidden.shape == (L + 1, 1, SEQ, dd), hidden.shape
        assert logits.shape == (1, SEQ, v), logits.shape
        assert torch.allclose(atts.sum(-1), torch.ones((), dtype=torch.float64), atol=1e-14)
        assert torch.all(atts.triu(1) == 0)
        diffs = (tm.max_diff(atts, atts2), tm.max_diff(hidden, hidden2), tm.max_diff(logits, logits2))
        assert max(diffs) <= TOL, (name, diffs)
        worst = max(worst, *diffs)
        tm.write_json(os.path.join(d, "ids.json"), IDS, indent=None, sort_keys=False)
        tm.write_npy(os.path.join(d, "attentions.npy"), atts.numpy())
        tm.write_npy(os.path.join(d, "hidden.npy"), hidden.numpy())
        tm.write_npy(os.path.join(d, "logits.npy"), logits.numpy())
        rowmax = atts.max(-1).values[:, :, :, 1:]          # skip query 0 (always 1)
        frac = float((rowmax > 0.5).double().mean())
        dim, _, af = rope_setup(c, SEQ)
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        lines.append(f"{name:24s} rotary {dim}/{head_dim(c)} af {af:.6f}  rows max>0.5: {frac:.2f}"
                     f"  mean row max {float(rowmax.mean()):.3f}  |diff| att {diffs[0]:.1e}"
                     f" hid {diffs[1]:.1e} logit {diffs[2]:.1e}  {size} bytes")
        assert size <= 1_000_000
        assert frac >= 0.4, (name, frac)
    print("\n".join(lines))
    print(f"worst disagreement between the two formulations: {worst:.2e}")


if __name__ == "__main__":
    main()
