#!/usr/bin/python3
"""Build the tiny mixture-of-experts models tiny-qwen2-moe, tiny-qwen3-moe and
tiny-gpt-oss (data/models/), with their reference numbers, as
make_tiny_modern.py does for Qwen 3, Gemma 3 and Mixtral.

Each forward pass is a float64 re-implementation, line by line, of
transformers' (5.x) modeling code with eager attention, run on the stored
float32 weights widened to float64. Files followed (huggingface/transformers):

* src/transformers/models/qwen2_moe/modular_qwen2_moe.py (the generated
  modeling_qwen2_moe.py is built from it) and configuration_qwen2_moe.py:
  Qwen2MoeAttention (LlamaAttention with q/k/v biases from `qkv_bias`, no
  o_proj bias), Qwen2MoeTopKRouter (softmax over all experts, top-k,
  renormalised only if `norm_topk_prob`), Qwen2MoeExperts (MixtralExperts:
  fused gate_up_proj [E, 2I, H] = gate rows then up rows, down_proj
  [E, H, I]), Qwen2MoeSparseMoeBlock (experts + sigmoid(shared_expert_gate x)
  * shared_expert(x)), Qwen2MoeDecoderLayer (dense Qwen2MoeMLP on layers in
  `mlp_only_layers` or where (i + 1) % decoder_sparse_step != 0).
* src/transformers/models/qwen3_moe/modular_qwen3_moe.py and
  configuration_qwen3_moe.py: Qwen3MoeAttention (Qwen3Attention: q_norm /
  k_norm RMSNorms over each head's head_dim features before RoPE), the
  Qwen2Moe router / experts / decoder layer, no shared expert; mask from
  MixtralModel (sliding only when config.sliding_window is not None).
* src/transformers/models/gpt_oss/modular_gpt_oss.py and
  configuration_gpt_oss.py: GptOssAttention (q/k/v/o biases, per-head
  `sinks` logit appended to each score row before the softmax and dropped
  after it: the returned weights rows sum to less than 1), layer_types
  sliding/full with sliding_window, GptOssRotaryEmbedding (yarn),
  GptOssTopKRouter (linear with bias, top-k of the logits, softmax over the
  k chosen logits), GptOssExperts (gate_up_proj [E, H, 2I] with gate in the
  even columns and up in the odd ones, clamp gate <= 7, -7 <= up <= 7,
  (up + 1) * gate * sigmoid(1.702 gate), biases), GptOssRMSNorm.
* src/transformers/integrations/moe.py (the eager experts loop),
  src/transformers/conversion_mapping.py (hub per-expert names -> fused),
  src/transformers/modeling_rope_utils.py (_compute_yarn_parameters with
  `truncate`), src/transformers/masking_utils.py (sliding_window_overlay:
  key j is seen from query i when i - window < j <= i),
  src/transformers/utils/output_capturing.py (hidden_states = embeddings,
  each layer's output, the last replaced by the final norm's output).

Everything is float64 here. transformers itself computes some of it in
float32 even for a float64 model: the RMSNorms (hidden_states.to(float32)),
the RoPE inverse frequencies and cos/sin, the Qwen routers' softmax
(dtype=torch.float) and the Qwen eager attention softmax (dtype=float32);
GptOss' attention softmax and router are in the model dtype.

Every attention module is checked against a second formulation (one head and
one query at a time with explicit loops, complex-number RoPE with the
frequencies recomputed separately, the sink added to the softmax's
denominator by hand), and every MoE block against a second one
(transformers' fused-expert loop with index_add_ for Qwen; every expert on
every token with a dense routing matrix and de-interleaved weights for
GptOss). The whole forward pass is run both ways and must agree to 1e-12.

Writes, per model: config.json, model.safetensors (float32, the hub's tensor
names), ids.json, attentions.npy (float64 [layers][1][heads][7][7]),
hidden.npy (float64 [layers + 1][1][7][hidden]) and logits.npy (float64
[1][7][vocab]). Run with ``/usr/bin/python3 data/models/make_tiny_moe.py``;
the output is byte-identical from run to run.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_models as tm  # noqa: E402  (the writers and helpers)
import make_tiny_modern as mm  # noqa: E402  (RoPE frequencies, float64)

HERE = os.path.dirname(os.path.abspath(__file__))
IDS = [2, 17, 29, 8, 33, 12, 24]
TOL = tm.CROSS_TOL

GPT_OSS_ALPHA = 1.702   # GptOssExperts.alpha, hard-coded in transformers
GPT_OSS_LIMIT = 7.0     # GptOssExperts.limit, hard-coded in transformers


# ---------------------------------------------------------------------------
# Configurations (config.json as written)
# ---------------------------------------------------------------------------

MODELS = {
    # Qwen1.5-MoE style: shared expert with a sigmoid gate, norm_topk_prob
    # false, q/k/v biases, layer 0 dense through mlp_only_layers. The RoPE
    # keys in the legacy top-level spelling (rope_theta) as the hub's
    # Qwen/Qwen1.5-MoE-A2.7B config.json has them.
    "tiny-qwen2-moe": {
        "architectures": ["Qwen2MoeForCausalLM"],
        "model_type": "qwen2_moe",
        "vocab_size": 48,
        "hidden_size": 32,
        "intermediate_size": 48,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "hidden_act": "silu",
        "max_position_embeddings": 64,
        "initializer_range": 0.02,
        "rms_norm_eps": 1e-06,
        "use_cache": True,
        "tie_word_embeddings": False,
        "rope_theta": 1000000.0,
        "rope_scaling": None,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": 3,
        "layer_types": ["full_attention", "full_attention", "full_attention"],
        "attention_dropout": 0.0,
        "decoder_sparse_step": 1,
        "moe_intermediate_size": 24,
        "shared_expert_intermediate_size": 40,
        "num_experts_per_tok": 3,
        "num_experts": 6,
        "norm_topk_prob": False,
        "output_router_logits": False,
        "router_aux_loss_coef": 0.001,
        "mlp_only_layers": [0],
        "qkv_bias": True,
        "torch_dtype": "float32",
    },
    # Qwen3-30B-A3B style: no shared expert, norm_topk_prob true, q/k norms,
    # head_dim not hidden / heads. decoder_sparse_step 2 makes layers 0 and 2
    # dense. RoPE in transformers 5's rope_parameters spelling.
    "tiny-qwen3-moe": {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "vocab_size": 40,
        "hidden_size": 32,
        "intermediate_size": 40,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 12,
        "hidden_act": "silu",
        "max_position_embeddings": 64,
        "initializer_range": 0.02,
        "rms_norm_eps": 1e-06,
        "use_cache": True,
        "tie_word_embeddings": False,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
        "attention_bias": False,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": 3,
        "attention_dropout": 0.0,
        "decoder_sparse_step": 2,
        "moe_intermediate_size": 20,
        "num_experts_per_tok": 3,
        "num_experts": 8,
        "norm_topk_prob": True,
        "output_router_logits": False,
        "router_aux_loss_coef": 0.001,
        "mlp_only_layers": [],
        "torch_dtype": "float32",
    },
    # openai/gpt-oss-20b style (its config.json spelling: rope_theta and a
    # yarn rope_scaling with truncate false), 3 layers sliding/full/sliding.
    "tiny-gpt-oss": {
        "architectures": ["GptOssForCausalLM"],
        "model_type": "gpt_oss",
        "vocab_size": 56,
        "hidden_size": 32,
        "intermediate_size": 24,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 8,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "sliding_window": 3,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
        "attention_bias": True,
        "hidden_act": "silu",
        "initializer_range": 0.02,
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-05,
        "rope_theta": 150000.0,
        "rope_scaling": {
            "rope_type": "yarn",
            "factor": 8.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": 4096,
        },
        "attention_dropout": 0.0,
        "router_aux_loss_coef": 0.9,
        "output_router_logits": False,
        "use_cache": True,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    },
}

SEEDS = {"tiny-qwen2-moe": 4101, "tiny-qwen3-moe": 4102, "tiny-gpt-oss": 4103}


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def is_moe_layer(c, n):
    """Qwen2MoeDecoderLayer.__init__'s choice (Qwen3Moe inherits it)."""
    return (n not in c["mlp_only_layers"]) and (
        c["num_experts"] > 0 and (n + 1) % c["decoder_sparse_step"] == 0)


def is_sliding(c, n):
    t = c["model_type"]
    if t == "gpt_oss":
        return c["layer_types"][n] == "sliding_attention"
    if t == "qwen2_moe":   # Qwen2MoeModel: causal_mask_mapping[layer_types[i]]
        return c["use_sliding_window"] and c["layer_types"][n] == "sliding_attention"
    if t == "qwen3_moe":   # MixtralModel: one mask for all layers
        return c["use_sliding_window"] and c.get("sliding_window") is not None
    raise ValueError(t)


# ---------------------------------------------------------------------------
# Made-up weights (numpy RandomState, fixed seed), hub tensor names
# ---------------------------------------------------------------------------

def lin(rng, out_f, in_f, gain=1.0):
    return (rng.standard_normal((out_f, in_f)) * gain / math.sqrt(in_f)).astype("<f4")


def vec(rng, n, centre=0.0, spread=0.1):
    return (centre + spread * rng.standard_normal(n)).astype("<f4")


def model_weights(c, seed):
    rng = np.random.RandomState(seed)
    t = c["model_type"]
    d, v = c["hidden_size"], c["vocab_size"]
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
    w = {"model.embed_tokens.weight": (0.5 * rng.standard_normal((v, d))).astype("<f4")}
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        w[p + "input_layernorm.weight"] = vec(rng, d, 1.0, 0.2)
        w[p + "post_attention_layernorm.weight"] = vec(rng, d, 1.0, 0.2)
        a = p + "self_attn."
        qk_gain = {"qwen2_moe": 1.6, "qwen3_moe": 1.5, "gpt_oss": 1.8}[t]
        w[a + "q_proj.weight"] = lin(rng, nh * hd, d, qk_gain)
        w[a + "k_proj.weight"] = lin(rng, nkv * hd, d, qk_gain)
        w[a + "v_proj.weight"] = lin(rng, nkv * hd, d)
        w[a + "o_proj.weight"] = lin(rng, d, nh * hd)
        if t == "qwen2_moe" and c["qkv_bias"] or t != "qwen2_moe" and c["attention_bias"]:
            w[a + "q_proj.bias"] = vec(rng, nh * hd, 0.0, 0.3)
            w[a + "k_proj.bias"] = vec(rng, nkv * hd, 0.0, 0.3)
            w[a + "v_proj.bias"] = vec(rng, nkv * hd, 0.0, 0.3)
        if t != "qwen2_moe" and c["attention_bias"]:
            w[a + "o_proj.bias"] = vec(rng, d, 0.0, 0.3)
        if t == "qwen3_moe":
            # q/k norms near 1 but larger than 1 on average: peaked scores
            w[a + "q_norm.weight"] = vec(rng, hd, 2.0, 0.4)
            w[a + "k_norm.weight"] = vec(rng, hd, 2.0, 0.4)
        if t == "gpt_oss":
            # one sink per query head; some large enough to take a visible share
            w[a + "sinks"] = (np.array([-1.0, 0.5, 1.5, 3.0]) + 0.3 * rng.standard_normal(nh)).astype("<f4")
        m = p + "mlp."
        if t == "gpt_oss":
            e_n, inter = c["num_local_experts"], c["intermediate_size"]
            w[m + "router.weight"] = lin(rng, e_n, d, 3.0)
            w[m + "router.bias"] = vec(rng, e_n, 0.0, 0.5)
            # [E, H, 2I] (x @ W): column 2j is gate j, column 2j + 1 is up j.
            # Large enough that some gates pass 7 and some ups leave [-7, 7].
            w[m + "experts.gate_up_proj"] = (rng.standard_normal((e_n, d, 2 * inter)) * 4.5
                                             / math.sqrt(d)).astype("<f4")
            w[m + "experts.gate_up_proj_bias"] = (0.5 * rng.standard_normal((e_n, 2 * inter))).astype("<f4")
            w[m + "experts.down_proj"] = (rng.standard_normal((e_n, inter, d)) * 0.3
                                          / math.sqrt(inter)).astype("<f4")
            w[m + "experts.down_proj_bias"] = (0.2 * rng.standard_normal((e_n, d))).astype("<f4")
        elif is_moe_layer(c, n):
            e_n, inter = c["num_experts"], c["moe_intermediate_size"]
            w[m + "gate.weight"] = lin(rng, e_n, d, 2.0)
            for e in range(e_n):
                x = f"{m}experts.{e}."
                w[x + "gate_proj.weight"] = lin(rng, inter, d)
                w[x + "up_proj.weight"] = lin(rng, inter, d)
                w[x + "down_proj.weight"] = lin(rng, d, inter)
            if t == "qwen2_moe":
                si = c["shared_expert_intermediate_size"]
                w[m + "shared_expert.gate_proj.weight"] = lin(rng, si, d)
                w[m + "shared_expert.up_proj.weight"] = lin(rng, si, d)
                w[m + "shared_expert.down_proj.weight"] = lin(rng, d, si)
                w[m + "shared_expert_gate.weight"] = lin(rng, 1, d, 2.0)
        else:
            inter = c["intermediate_size"]
            w[m + "gate_proj.weight"] = lin(rng, inter, d)
            w[m + "up_proj.weight"] = lin(rng, inter, d)
            w[m + "down_proj.weight"] = lin(rng, d, inter)
    w["model.norm.weight"] = vec(rng, d, 1.0, 0.2)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = lin(rng, v, d)
    return w


# ---------------------------------------------------------------------------
# Pieces shared by both formulations
# ---------------------------------------------------------------------------

def rms(x, w, eps):
    """LlamaRMSNorm / GptOssRMSNorm (transformers: in float32)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def linear(x, w, name):
    y = x @ w[name + ".weight"].T
    b = w.get(name + ".bias")
    return y if b is None else y + b


def swiglu_mlp(x, w, p):
    """Qwen2MoeMLP (GemmaMLP form): down(silu(gate x) * up x)."""
    return (F.silu(x @ w[p + "gate_proj.weight"].T) * (x @ w[p + "up_proj.weight"].T)
            ) @ w[p + "down_proj.weight"].T


def sliding_keep(s, window):
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    keep = j <= i
    if window is not None:
        keep = keep & (j > i - window)
    return keep


# ---------------------------------------------------------------------------
# Attention, formulation 1: vectorised, as the eager attention computes it
# ---------------------------------------------------------------------------

def attention(x, w, p, c, n):
    t = c["model_type"]
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
    s = x.shape[0]
    a = p + "self_attn."
    q = linear(x, w, a + "q_proj").view(s, nh, hd)
    k = linear(x, w, a + "k_proj").view(s, nkv, hd)
    v = linear(x, w, a + "v_proj").view(s, nkv, hd)
    if t == "qwen3_moe":   # per head, over head_dim, before RoPE
        q = rms(q, w[a + "q_norm.weight"], c["rms_norm_eps"])
        k = rms(k, w[a + "k_norm.weight"], c["rms_norm_eps"])
    q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
    cos, sin = mm.cos_sin(c, s)
    q, k = mm.apply_rope(q, cos, sin), mm.apply_rope(k, cos, sin)
    group = nh // nkv                       # repeat_kv: head h reads kv head h // group
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    scores = q @ k.transpose(-1, -2) * hd ** -0.5
    window = c["sliding_window"] if is_sliding(c, n) else None
    scores = scores.masked_fill(~sliding_keep(s, window), float("-inf"))
    if t == "gpt_oss":
        sinks = w[a + "sinks"].reshape(nh, 1, 1).expand(nh, s, 1)
        combined = torch.cat([scores, sinks], dim=-1)
        combined = combined - combined.max(dim=-1, keepdim=True).values
        weights = torch.softmax(combined, dim=-1)[..., :-1]     # the sink column dropped
    else:
        weights = torch.softmax(scores, dim=-1)
    o = (weights @ v).transpose(0, 1).reshape(s, nh * hd)
    return linear(o, w, a + "o_proj"), weights


# ---------------------------------------------------------------------------
# Attention, formulation 2: one head, one query at a time; complex RoPE
# ---------------------------------------------------------------------------

def inv_freq_alt(c):
    """The RoPE frequencies and attention factor, written out again from
    modeling_rope_utils (default and yarn only)."""
    hd = head_dim(c)
    if "rope_parameters" in c:
        rp = c["rope_parameters"]
        theta, scaling = rp["rope_theta"], (rp if rp.get("rope_type", "default") != "default" else None)
    else:
        theta, scaling = c["rope_theta"], c.get("rope_scaling")
    base = [1.0 / theta ** (2 * i / hd) for i in range(hd // 2)]
    if scaling is None:
        return torch.tensor(base, dtype=torch.float64), 1.0
    assert scaling["rope_type"] == "yarn"
    factor = scaling["factor"]
    orig = scaling["original_max_position_embeddings"]
    af = 0.1 * math.log(factor) + 1.0

    def dim_for(rot):
        return hd * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(theta))

    lo, hi = dim_for(scaling["beta_fast"]), dim_for(scaling["beta_slow"])
    if scaling.get("truncate", True):
        lo, hi = math.floor(lo), math.ceil(hi)
    lo, hi = max(lo, 0), min(hi, hd - 1)
    out = []
    for i in range(hd // 2):
        ramp = min(max((i - lo) / (hi - lo), 0.0), 1.0)
        keep = 1.0 - ramp                   # share of the unscaled frequency
        out.append(base[i] / factor * (1 - keep) + base[i] * keep)
    return torch.tensor(out, dtype=torch.float64), af


def rope_complex(t, c):
    """t [s, heads, hd], half-split pairs (i, i + hd/2) as complex numbers,
    times af * exp(i * pos * freq)."""
    s, hd = t.shape[0], t.shape[-1]
    freq, af = inv_freq_alt(c)
    ang = torch.outer(torch.arange(s, dtype=torch.float64), freq)
    rot = torch.polar(torch.full_like(ang, af), ang)[:, None, :]
    z = torch.complex(t[..., : hd // 2], t[..., hd // 2:]) * rot
    return torch.cat([z.real, z.imag], dim=-1)


def attention_alt(x, w, p, c, n):
    t = c["model_type"]
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
    s, d = x.shape
    a = p + "self_attn."
    eps = c["rms_norm_eps"]
    group = nh // nkv
    window = c["sliding_window"] if is_sliding(c, n) else None
    wq, wk, wv = w[a + "q_proj.weight"], w[a + "k_proj.weight"], w[a + "v_proj.weight"]
    bq = w.get(a + "q_proj.bias", torch.zeros(nh * hd, dtype=torch.float64))
    bk = w.get(a + "k_proj.bias", torch.zeros(nkv * hd, dtype=torch.float64))
    bv = w.get(a + "v_proj.bias", torch.zeros(nkv * hd, dtype=torch.float64))

    def norm_head(u, g):
        return u / math.sqrt(float((u * u).mean()) + eps) * g

    qs = torch.empty(s, nh, hd, dtype=torch.float64)
    ks = torch.empty(s, nkv, hd, dtype=torch.float64)
    vs = torch.empty(s, nkv, hd, dtype=torch.float64)
    for i in range(s):
        for h in range(nh):
            u = wq[h * hd:(h + 1) * hd] @ x[i] + bq[h * hd:(h + 1) * hd]
            qs[i, h] = norm_head(u, w[a + "q_norm.weight"]) if t == "qwen3_moe" else u
        for g in range(nkv):
            u = wk[g * hd:(g + 1) * hd] @ x[i] + bk[g * hd:(g + 1) * hd]
            ks[i, g] = norm_head(u, w[a + "k_norm.weight"]) if t == "qwen3_moe" else u
            vs[i, g] = wv[g * hd:(g + 1) * hd] @ x[i] + bv[g * hd:(g + 1) * hd]
    qs, ks = rope_complex(qs, c), rope_complex(ks, c)
    weights = torch.zeros(nh, s, s, dtype=torch.float64)
    out = torch.zeros(s, nh * hd, dtype=torch.float64)
    for h in range(nh):
        g = h // group
        for i in range(s):
            js = [j for j in range(s) if j <= i and (window is None or i - j < window)]
            logits = [float(qs[i, h] @ ks[j, g]) / math.sqrt(hd) for j in js]
            top = max(logits)
            denom = sum(math.exp(lg - top) for lg in logits)
            if t == "gpt_oss":
                sink = float(w[a + "sinks"][h])
                top2 = max(top, sink)
                denom = sum(math.exp(lg - top2) for lg in logits) + math.exp(sink - top2)
                top = top2
            for j, lg in zip(js, logits):
                weights[h, i, j] = math.exp(lg - top) / denom
                out[i, h * hd:(h + 1) * hd] += weights[h, i, j] * vs[j, g]
    return linear(out, w, a + "o_proj"), weights


# ---------------------------------------------------------------------------
# MoE blocks, formulation 1: one token at a time, its k experts in top-k order
# ---------------------------------------------------------------------------

def qwen_moe(m, w, p, c):
    top_k = c["num_experts_per_tok"]
    mp = p + "mlp."
    out = torch.zeros_like(m)
    for tok in range(m.shape[0]):
        x = m[tok]
        probs = torch.softmax(w[mp + "gate.weight"] @ x, dim=-1)   # all experts
        top_w, top_i = torch.topk(probs, top_k)
        if c["norm_topk_prob"]:
            top_w = top_w / top_w.sum()
        acc = torch.zeros_like(x)
        for slot in range(top_k):
            acc = acc + top_w[slot] * swiglu_mlp(x, w, f"{mp}experts.{int(top_i[slot])}.")
        if c["model_type"] == "qwen2_moe":
            gate = torch.sigmoid(w[mp + "shared_expert_gate.weight"][0] @ x)
            acc = acc + gate * swiglu_mlp(x, w, mp + "shared_expert.")
        out[tok] = acc
    return out


def gpt_oss_moe(m, w, p, c):
    top_k = c["num_experts_per_tok"]
    mp = p + "mlp."
    out = torch.zeros_like(m)
    for tok in range(m.shape[0]):
        x = m[tok]
        logits = w[mp + "router.weight"] @ x + w[mp + "router.bias"]
        top_v, top_i = torch.topk(logits, top_k)
        weights = torch.softmax(top_v, dim=-1)                      # over the k chosen only
        for slot in range(top_k):
            e = int(top_i[slot])
            gu = x @ w[mp + "experts.gate_up_proj"][e] + w[mp + "experts.gate_up_proj_bias"][e]
            gate, up = gu[0::2], gu[1::2]
            gate = gate.clamp(max=GPT_OSS_LIMIT)
            up = up.clamp(min=-GPT_OSS_LIMIT, max=GPT_OSS_LIMIT)
            h = (up + 1) * (gate * torch.sigmoid(gate * GPT_OSS_ALPHA))
            y = h @ w[mp + "experts.down_proj"][e] + w[mp + "experts.down_proj_bias"][e]
            out[tok] = out[tok] + weights[slot] * y
    return out


# ---------------------------------------------------------------------------
# MoE blocks, formulation 2
# ---------------------------------------------------------------------------

def qwen_moe_fused(m, w, p, c):
    """Transformers' own shape of it: the per-expert hub tensors fused as
    conversion_mapping.py does (MergeModulelist(dim=0), Concatenate(dim=1)),
    then MixtralExperts' eager loop over the experts hit, in ascending
    expert order, accumulated with index_add_."""
    e_n, top_k = c["num_experts"], c["num_experts_per_tok"]
    mp = p + "mlp."
    gate_up = torch.cat([torch.stack([w[f"{mp}experts.{e}.gate_proj.weight"] for e in range(e_n)]),
                         torch.stack([w[f"{mp}experts.{e}.up_proj.weight"] for e in range(e_n)])], dim=1)
    down = torch.stack([w[f"{mp}experts.{e}.down_proj.weight"] for e in range(e_n)])
    router_logits = F.linear(m, w[mp + "gate.weight"])
    probs = torch.softmax(router_logits, dim=-1)
    top_w, top_i = torch.topk(probs, top_k, dim=-1)
    if c["norm_topk_prob"]:
        top_w = top_w / top_w.sum(dim=-1, keepdim=True)
    final = torch.zeros_like(m)
    mask = F.one_hot(top_i, num_classes=e_n).permute(2, 1, 0)
    for e in torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()[:, 0].tolist():
        pos, tok = torch.where(mask[e])
        g, u = F.linear(m[tok], gate_up[e]).chunk(2, dim=-1)
        y = F.linear(F.silu(g) * u, down[e]) * top_w[tok, pos, None]
        final.index_add_(0, tok, y)
    if c["model_type"] == "qwen2_moe":
        shared = swiglu_mlp(m, w, mp + "shared_expert.")
        final = final + torch.sigmoid(F.linear(m, w[mp + "shared_expert_gate.weight"])) * shared
    return final


def gpt_oss_moe_dense(m, w, p, c):
    """Every expert on every token (the old inference branch of
    GptOssExperts), gate and up weights split apart first, weighted by a
    dense [tokens, experts] routing matrix (zero off the top k)."""
    e_n, top_k = c["num_local_experts"], c["num_experts_per_tok"]
    mp = p + "mlp."
    gu_w, gu_b = w[mp + "experts.gate_up_proj"], w[mp + "experts.gate_up_proj_bias"]
    g_w, u_w = gu_w[:, :, 0::2], gu_w[:, :, 1::2]
    g_b, u_b = gu_b[:, 0::2], gu_b[:, 1::2]
    logits = F.linear(m, w[mp + "router.weight"], w[mp + "router.bias"])
    route = torch.zeros(m.shape[0], e_n, dtype=torch.float64)
    for tok in range(m.shape[0]):
        order = sorted(range(e_n), key=lambda e: -float(logits[tok, e]))[:top_k]
        vals = [float(logits[tok, e]) for e in order]
        z = sum(math.exp(v - vals[0]) for v in vals)
        for e, v in zip(order, vals):
            route[tok, e] = math.exp(v - vals[0]) / z
    gate = torch.minimum(torch.einsum("th,ehi->eti", m, g_w) + g_b[:, None, :],
                         torch.tensor(GPT_OSS_LIMIT, dtype=torch.float64))
    up = torch.clamp(torch.einsum("th,ehi->eti", m, u_w) + u_b[:, None, :], -GPT_OSS_LIMIT, GPT_OSS_LIMIT)
    act = (up + 1) * gate / (1 + torch.exp(-GPT_OSS_ALPHA * gate))
    y = torch.einsum("eti,eih->eth", act, w[mp + "experts.down_proj"]) + w[mp + "experts.down_proj_bias"][:, None, :]
    return torch.einsum("eth,te->th", y, route)


# ---------------------------------------------------------------------------
# The forward pass
# ---------------------------------------------------------------------------

def forward(w, ids, c, attn_fn, moe_fns):
    t = c["model_type"]
    eps = c["rms_norm_eps"]
    h = w["model.embed_tokens.weight"][ids]
    hidden, atts = [h], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a, att = attn_fn(rms(h, w[p + "input_layernorm.weight"], eps), w, p, c, n)
        atts.append(att)
        h = h + a
        m = rms(h, w[p + "post_attention_layernorm.weight"], eps)
        if t == "gpt_oss":
            h = h + moe_fns["gpt_oss"](m, w, p, c)
        elif is_moe_layer(c, n):
            h = h + moe_fns["qwen"](m, w, p, c)
        else:
            h = h + swiglu_mlp(m, w, p + "mlp.")
        hidden.append(h)
    hidden[-1] = rms(h, w["model.norm.weight"], eps)       # output_capturing: last = after norm
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    logits = hidden[-1] @ head.T
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


PRIMARY = {"qwen": qwen_moe, "gpt_oss": gpt_oss_moe}
SECOND = {"qwen": qwen_moe_fused, "gpt_oss": gpt_oss_moe_dense}


# ---------------------------------------------------------------------------
# Checks on the made-up numbers
# ---------------------------------------------------------------------------

def routing_report(w, ids, c):
    """Replays the routers on the primary pass' inputs: which experts each
    token picks, and the margin between the k-th and (k+1)-th candidates
    (so that transformers' float32 router softmax picks the same ones)."""
    t = c["model_type"]
    eps = c["rms_norm_eps"]
    h = w["model.embed_tokens.weight"][ids]
    lines, min_gap, clamped = [], float("inf"), [0, 0, 0]
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a, _ = attention(rms(h, w[p + "input_layernorm.weight"], eps), w, p, c, n)
        h = h + a
        m = rms(h, w[p + "post_attention_layernorm.weight"], eps)
        mp = p + "mlp."
        k = c["num_experts_per_tok"]
        if t == "gpt_oss":
            score = F.linear(m, w[mp + "router.weight"], w[mp + "router.bias"])
            srt = torch.sort(score, dim=-1, descending=True).values
            min_gap = min(min_gap, float((srt[:, k - 1] - srt[:, k]).min()))
            top_i = torch.topk(score, k, dim=-1).indices
            for tok in range(m.shape[0]):
                for e in top_i[tok].tolist():
                    gu = m[tok] @ w[mp + "experts.gate_up_proj"][e] + w[mp + "experts.gate_up_proj_bias"][e]
                    gate, up = gu[0::2], gu[1::2]
                    clamped[0] += int((gate > GPT_OSS_LIMIT).sum())
                    clamped[1] += int((up.abs() > GPT_OSS_LIMIT).sum())
                    near = torch.cat([(gate - GPT_OSS_LIMIT).abs(), (up.abs() - GPT_OSS_LIMIT).abs()])
                    assert float(near.min()) > 1e-4, "a gate/up value within 1e-4 of the clamp"
                    clamped[2] += gate.numel()
            h = h + gpt_oss_moe(m, w, p, c)
        elif is_moe_layer(c, n):
            score = torch.softmax(F.linear(m, w[mp + "gate.weight"]), dim=-1)
            srt = torch.sort(score, dim=-1, descending=True).values
            min_gap = min(min_gap, float((srt[:, k - 1] - srt[:, k]).min()))
            top_i = torch.topk(score, k, dim=-1).indices
            h = h + qwen_moe(m, w, p, c)
        else:
            h = h + swiglu_mlp(m, w, p + "mlp.")
            lines.append(f"    layer {n}: dense MLP")
            continue
        used = sorted(set(top_i.flatten().tolist()))
        lines.append(f"    layer {n}: MoE, experts per token {top_i.tolist()}, experts used {used}")
    assert min_gap > 1e-4, f"router top-k margin {min_gap} too small"
    return lines, min_gap, clamped


def attention_stats(atts, c):
    lines = []
    for n in range(atts.shape[0]):
        a = atts[n, 0]
        rows = a.max(-1).values[:, 1:]          # query 0 always sees one key
        frac = float((rows > 0.5).double().mean())
        sums = a.sum(-1)
        lines.append(f"    layer {n}: rows (q >= 1) with max > 0.5: {frac:.0%}, mean row max "
                     f"{float(rows.mean()):.3f}, row sums in [{float(sums.min()):.4f}, {float(sums.max()):.4f}]"
                     + ("  sliding" if is_sliding(c, n) else ""))
        assert frac >= 0.3, f"layer {n}: attention too uniform ({frac:.0%} of rows peaked)"
    return lines


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def build(name, c):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    w32 = model_weights(c, SEEDS[name])
    tm.write_json(os.path.join(d, "config.json"), c)
    st_path = os.path.join(d, "model.safetensors")
    expected = {k: ("F32", a) for k, a in w32.items()}
    tm.write_bytes(st_path, tm.safetensors_bytes(expected))
    back = tm.check_file(st_path, expected)          # independent reader
    w = tm.to_torch({k: a for k, (tag, a) in back.items()})
    ids = torch.tensor(IDS)

    atts, hidden, logits = forward(w, ids, c, attention, PRIMARY)
    atts2, hidden2, logits2 = forward(w, ids, c, attention_alt, SECOND)
    L, nh, s, d_h, v = (c["num_hidden_layers"], c["num_attention_heads"], len(IDS),
                        c["hidden_size"], c["vocab_size"])
    assert tuple(atts.shape) == (L, 1, nh, s, s), atts.shape
    assert tuple(hidden.shape) == (L + 1, 1, s, d_h), hidden.shape
    assert tuple(logits.shape) == (1, s, v), logits.shape
    diffs = (tm.max_diff(atts, atts2), tm.max_diff(hidden, hidden2), tm.max_diff(logits, logits2))
    assert max(diffs) <= TOL, diffs
    # the RoPE frequencies of both formulations
    inv, af = mm.inv_freq_and_factor(c, s)
    inv2, af2 = inv_freq_alt(c)
    assert tm.max_diff(inv, inv2) <= 1e-15 and abs(af - af2) <= 1e-15, (inv, inv2, af, af2)
    # masks: nothing above the diagonal, nothing outside a sliding window
    for n in range(L):
        window = c["sliding_window"] if is_sliding(c, n) else None
        assert float(atts[n, 0][:, ~sliding_keep(s, window)].abs().max()) == 0.0
    if c["model_type"] == "gpt_oss":
        assert float(atts.sum(-1).max()) < 1.0      # the sink takes a share of every row
    else:
        assert tm.max_diff(atts.sum(-1), torch.ones_like(atts.sum(-1))) <= 1e-14

    tm.write_json(os.path.join(d, "ids.json"), IDS, indent=None, sort_keys=False)
    tm.write_npy(os.path.join(d, "attentions.npy"), atts.numpy())
    tm.write_npy(os.path.join(d, "hidden.npy"), hidden.numpy())
    tm.write_npy(os.path.join(d, "logits.npy"), logits.numpy())

    lines, gap, clamped = routing_report(w, ids, c)
    print(f"{name} ({c['model_type']}): attentions {tuple(atts.shape)}, hidden {tuple(hidden.shape)}, "
          f"logits {tuple(logits.shape)}")
    print(f"  second formulation: max |diff| attentions {diffs[0]:.1e}, hidden {diffs[1]:.1e}, "
          f"logits {diffs[2]:.1e}")
    print(f"  RoPE inv_freq {[round(float(f), 6) for f in inv]}, attention factor {af:.6f}")
    print("  attention:")
    for line in attention_stats(atts, c):
        print(line)
    print(f"  routing (smallest top-k margin {gap:.2e}):")
    for line in lines:
        print(line)
    if c["model_type"] == "gpt_oss":
        print(f"  SwiGLU clamp: {clamped[0]} of {clamped[2]} gates > {GPT_OSS_LIMIT}, "
              f"{clamped[1]} of {clamped[2]} ups outside +-{GPT_OSS_LIMIT}")
        assert clamped[0] > 0 and clamped[1] > 0, "the clamp is not exercised"
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    assert size <= 1 << 20, size
    print(f"  directory {size} bytes")


def main():
    torch.set_num_threads(1)
    for name, c in MODELS.items():
        build(name, c)
    for path in sorted(tm.WRITTEN):
        print(os.path.relpath(path, HERE), os.path.getsize(path))


if __name__ == "__main__":
    main()
