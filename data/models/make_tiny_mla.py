#!/usr/bin/python3
"""Build the tiny DeepSeek-V3 models (model_type ``deepseek_v3``,
DeepseekV3ForCausalLM) and their reference numbers:

* ``data/models/tiny-deepseek-v3/``: q_lora_rank set (q_a_proj ->
  q_a_layernorm -> q_b_proj), yarn RoPE scaling with mscale and
  mscale_all_dim (hub spelling ``rope_scaling`` with ``"type": "yarn"`` and a
  top-level ``rope_theta``, as DeepSeek-V3's own config.json), the
  interleaved RoPE layout (``rope_interleave: true``), attention biases,
  3 layers of which the first is dense (first_k_dense_replace 1), 8 routed
  experts in 2 groups (topk_group 1), 1 shared expert, norm_topk_prob.
* ``data/models/tiny-deepseek-v3-lite/``: q_lora_rank null (a plain
  q_proj), no RoPE scaling (v5 spelling ``rope_parameters``, as transformers
  5's save_pretrained writes it), the half-split RoPE layout
  (``rope_interleave: false``), 2 layers (dense, then MoE with n_group 1,
  norm_topk_prob false), tied embeddings, rms_norm_eps 1e-5 (the latent
  norms keep their fixed 1e-6).

Written from transformers (v5 era), read with the read_file tool:

* src/transformers/models/deepseek_v3/modular_deepseek_v3.py (commit
  000c33fdfde12e1ffafbfcdb3c926df5727a00b6): DeepseekV3Attention,
  apply_rotary_pos_emb_interleave, yarn_get_mscale, DeepseekV3TopkRouter,
  DeepseekV3MoE.route_tokens_to_experts / forward, DeepseekV3NaiveMoe
  (= MixtralExperts: gate_up_proj [E, 2I, H], down_proj [E, H, I]),
  DeepseekV3DecoderLayer (= LlamaDecoderLayer), DeepseekV3Model
  (= LlamaModel), DeepseekV3ForCausalLM (= LlamaForCausalLM);
* src/transformers/models/deepseek_v3/modeling_deepseek_v3.py (commits
  00b676f8f0489b88652a31d70751cc540dd06305, f5a9ec512fa9fe69e51ea0c6388c68d50de567b3:
  the same attention and routing, experts still a ModuleList of MLPs);
* src/transformers/models/deepseek_v3/configuration_deepseek_v3.py (commit
  001f85b38fb432858ace93f18622f07cec46d874): defaults, head_dim =
  qk_rope_head_dim, qk_head_dim = nope + rope, rope_interleave True;
* src/transformers/modeling_rope_utils.py (v5): _compute_yarn_parameters
  (factor from rope_parameters, original_max_position_embeddings defaulting
  to max_position_embeddings, attention_factor =
  mscale(f, mscale) / mscale(f, mscale_all_dim), truncate), standardize_rope_params;
* src/transformers/conversion_mapping.py: deepseek_v3 -> the qwen2_moe
  pattern (per-expert hub tensors mlp.experts.E.{gate,up,down}_proj.weight
  merged into the fused 3D parameters at load and split again at save).

Everything runs in float64 on the float32 weights widened: the RMSNorms,
the eager softmax, the router (transformers: float32 for all three even in a
float64 model) and RoPE's inv_freq / cos / sin (float32 in transformers).

Each attention is checked against a second formulation: one head at a time,
DeepSeek's "absorbed" MLA (the nope part of the query taken into the
compressed-KV space through kv_b_proj's key rows, the values read from the
normalised latent through kv_b_proj's value rows), RoPE as complex
multiplication on (2i, 2i+1) or (i, i + d/2) pairs, explicit loops over the
keys. The MoE is checked against a dense formulation with the expert choice
made by sorting in plain Python. Run with ``python3
data/models/make_tiny_mla.py``; the output is byte-identical from run to run.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_models as tm  # noqa: E402  (writers, readers, helpers)
import make_tiny_modern as mm  # noqa: E402  (RoPE scaling in float64)

HERE = os.path.dirname(os.path.abspath(__file__))
IDS = [2, 17, 29, 8, 33, 12, 24]
LATENT_EPS = 1e-6   # q_a_layernorm / kv_a_layernorm: DeepseekV3RMSNorm(dim), default eps

# Keys starting with "_" in a config are deliberate mistakes, used only to
# show how far the references move when an implementation gets one detail
# wrong (printed as "sensitivity"); they are never written.

CONFIGS = {
    "tiny-deepseek-v3": {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "vocab_size": 48,
        "hidden_size": 32,
        "intermediate_size": 64,
        "moe_intermediate_size": 16,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "n_shared_experts": 1,
        "n_routed_experts": 8,
        "routed_scaling_factor": 2.5,
        "kv_lora_rank": 16,
        "q_lora_rank": 24,
        "qk_rope_head_dim": 4,
        "v_head_dim": 6,
        "qk_nope_head_dim": 8,
        "n_group": 2,
        "topk_group": 1,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "norm_topk_prob": True,
        "hidden_act": "silu",
        "max_position_embeddings": 163840,
        "initializer_range": 0.02,
        "rms_norm_eps": 1e-6,
        "use_cache": True,
        "bos_token_id": 0,
        "eos_token_id": 1,
        "pretraining_tp": 1,
        "tie_word_embeddings": False,
        "rope_theta": 10000,
        "rope_scaling": {
            "beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
            "mscale_all_dim": 0.8, "original_max_position_embeddings": 4096, "type": "yarn"},
        "rope_interleave": True,
        "attention_bias": True,
        "attention_dropout": 0.0,
        # hub keys that transformers' DeepseekV3 does not read
        "moe_layer_freq": 1,
        "scoring_func": "sigmoid",
        "topk_method": "noaux_tc",
        "torch_dtype": "float32",
    },
    "tiny-deepseek-v3-lite": {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "vocab_size": 48,
        "hidden_size": 32,
        "intermediate_size": 48,
        "moe_intermediate_size": 12,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "n_shared_experts": 2,
        "n_routed_experts": 4,
        "routed_scaling_factor": 1.5,
        "kv_lora_rank": 16,
        "q_lora_rank": None,
        "qk_rope_head_dim": 4,
        "v_head_dim": 6,
        "qk_nope_head_dim": 8,
        "qk_head_dim": 12,
        "head_dim": 4,
        "n_group": 1,
        "topk_group": 1,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "norm_topk_prob": False,
        "hidden_act": "silu",
        "max_position_embeddings": 64,
        "initializer_range": 0.02,
        "rms_norm_eps": 1e-5,
        "use_cache": True,
        "bos_token_id": 0,
        "eos_token_id": 1,
        "pretraining_tp": 1,
        "tie_word_embeddings": True,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
        "rope_interleave": False,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "torch_dtype": "float32",
    },
}
SEEDS = {"tiny-deepseek-v3": 4101, "tiny-deepseek-v3-lite": 4102}
# std gain of the query / key up-projections (q_proj or q_b_proj, kv_b_proj)
QK_GAIN = {"tiny-deepseek-v3": 1.6, "tiny-deepseek-v3-lite": 2.5}


# ---------------------------------------------------------------------------
# Config helpers
# ---------------------------------------------------------------------------

def rope_dict(c):
    """The standardized rope_parameters (v5) from either spelling:
    rope_parameters, or rope_scaling ("type" or "rope_type") + rope_theta."""
    if c.get("rope_parameters"):
        rp = dict(c["rope_parameters"])
        rp.setdefault("rope_theta", c.get("rope_theta", 10000.0))
    else:
        rp = dict(c.get("rope_scaling") or {})
        rp.setdefault("rope_theta", c.get("rope_theta", 10000.0))
    rp.setdefault("rope_type", rp.get("type", "default"))
    rp.pop("type", None)
    if rp["rope_type"] in ("llama3", "yarn", "longrope"):
        rp.setdefault("original_max_position_embeddings", c["max_position_embeddings"])
    for key in ("beta_fast", "beta_slow", "factor"):
        if key in rp:
            rp[key] = float(rp[key])
    return rp


def interleaved(c):
    return bool(c.get("rope_interleave", True)) != bool(c.get("_flip_layout"))


def latent_eps(c):
    return c["rms_norm_eps"] if c.get("_latent_eps_from_config") else LATENT_EPS


def yarn_get_mscale(scale=1.0, mscale=1.0):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def softmax_scale(c):
    """DeepseekV3Attention.scaling: qk_head_dim^-0.5, times
    yarn_get_mscale(factor, mscale_all_dim)^2 for any non-default rope_type
    whose mscale_all_dim is set (non-zero)."""
    scale = (c["qk_nope_head_dim"] + c["qk_rope_head_dim"]) ** -0.5
    rp = rope_dict(c)
    if rp["rope_type"] != "default" and not c.get("_no_mscale"):
        mad = rp.get("mscale_all_dim", 0)
        if mad:
            m = yarn_get_mscale(rp["factor"], mad)
            scale = scale * m * m
    return scale


def cos_sin(c, seq):
    """(cos, sin) [seq, qk_rope_head_dim]: inv_freq over head_dim =
    qk_rope_head_dim, emb = cat(freqs, freqs), times the attention factor."""
    rp = rope_dict(c)
    cc = {"model_type": "deepseek_v3", "hidden_size": c["hidden_size"],
          "num_attention_heads": c["num_attention_heads"],
          "head_dim": c["qk_rope_head_dim"],
          "max_position_embeddings": c["max_position_embeddings"],
          "rope_parameters": rp}
    inv, af = mm.inv_freq_and_factor(cc, seq)
    if c.get("_af1"):
        af = 1.0
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * af, emb.sin() * af, inv, af


# ---------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------

def model_weights(c, seed, gain):
    rng = np.random.RandomState(seed)
    d, v, nh = c["hidden_size"], c["vocab_size"], c["num_attention_heads"]
    nope, rope, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    kvr, qr = c["kv_lora_rank"], c["q_lora_rank"]
    bias = c["attention_bias"]
    w = {"model.embed_tokens.weight": (0.5 * rng.standard_normal((v, d))).astype("<f4")}
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a = p + "self_attn."
        w[p + "input_layernorm.weight"] = tm.vector(rng, d, 1.0, 0.2)
        if qr is None:
            w[a + "q_proj.weight"] = tm.linear(rng, nh * (nope + rope), d, gain)
        else:
            w[a + "q_a_proj.weight"] = tm.linear(rng, qr, d)
            if bias:
                w[a + "q_a_proj.bias"] = tm.vector(rng, qr, 0.0, 0.3)
            w[a + "q_a_layernorm.weight"] = tm.vector(rng, qr, 1.0, 0.2)
            w[a + "q_b_proj.weight"] = tm.linear(rng, nh * (nope + rope), qr, gain)
        w[a + "kv_a_proj_with_mqa.weight"] = tm.linear(rng, kvr + rope, d, 2.0)
        if bias:
            w[a + "kv_a_proj_with_mqa.bias"] = tm.vector(rng, kvr + rope, 0.0, 0.3)
        w[a + "kv_a_layernorm.weight"] = tm.vector(rng, kvr, 1.0, 0.2)
        w[a + "kv_b_proj.weight"] = tm.linear(rng, nh * (nope + vd), kvr, gain)
        w[a + "o_proj.weight"] = tm.linear(rng, d, nh * vd)
        if bias:
            w[a + "o_proj.bias"] = tm.vector(rng, d, 0.0, 0.1)
        w[p + "post_attention_layernorm.weight"] = tm.vector(rng, d, 1.0, 0.2)
        if n < c["first_k_dense_replace"]:
            inter = c["intermediate_size"]
            w[p + "mlp.gate_proj.weight"] = tm.linear(rng, inter, d)
            w[p + "mlp.up_proj.weight"] = tm.linear(rng, inter, d)
            w[p + "mlp.down_proj.weight"] = tm.linear(rng, d, inter)
        else:
            e_n, mi = c["n_routed_experts"], c["moe_intermediate_size"]
            w[p + "mlp.gate.weight"] = tm.linear(rng, e_n, d, 2.0)
            w[p + "mlp.gate.e_score_correction_bias"] = tm.vector(rng, e_n, 0.05, 0.1)
            for e in range(e_n):
                x = f"{p}mlp.experts.{e}."
                w[x + "gate_proj.weight"] = tm.linear(rng, mi, d)
                w[x + "up_proj.weight"] = tm.linear(rng, mi, d)
                w[x + "down_proj.weight"] = tm.linear(rng, d, mi)
            si = mi * c["n_shared_experts"]
            w[p + "mlp.shared_experts.gate_proj.weight"] = tm.linear(rng, si, d)
            w[p + "mlp.shared_experts.up_proj.weight"] = tm.linear(rng, si, d)
            w[p + "mlp.shared_experts.down_proj.weight"] = tm.linear(rng, d, si)
    w["model.norm.weight"] = tm.vector(rng, d, 1.0, 0.2)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = tm.linear(rng, v, d)
    return w


# ---------------------------------------------------------------------------
# Formulation 1: transformers' modules, line by line
# ---------------------------------------------------------------------------

def rms(x, w, eps):
    # DeepseekV3RMSNorm (= LlamaRMSNorm); transformers casts to float32 here
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def lin(x, w, p, name):
    y = x @ w[p + name + ".weight"].T
    b = w.get(p + name + ".bias")
    return y if b is None else y + b


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def deinterleave(t):
    """apply_rotary_pos_emb_interleave's view(d/2, 2).transpose.reshape:
    (x0, x1, x2, x3, ...) -> (x0, x2, ..., x1, x3, ...)."""
    d = t.shape[-1]
    return t.reshape(*t.shape[:-1], d // 2, 2).transpose(-1, -2).reshape(t.shape)


def attention(x, w, p, c, cos, sin):
    """DeepseekV3Attention.forward (eager) for one sequence:
    x [s, hidden] -> (o_proj output [s, hidden], weights [heads, s, s])."""
    s, nh = x.shape[0], c["num_attention_heads"]
    nope, rope, vd, kvr = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"], c["kv_lora_rank"]
    a = p + "self_attn."
    if c["q_lora_rank"] is None:
        q = lin(x, w, a, "q_proj")
    else:
        q = lin(rms(lin(x, w, a, "q_a_proj"), w[a + "q_a_layernorm.weight"], latent_eps(c)), w, a, "q_b_proj")
    q = q.view(s, nh, nope + rope).transpose(0, 1)                  # [h, s, qk_head_dim]
    q_pass, q_rot = q[..., :nope], q[..., nope:]
    ckv = lin(x, w, a, "kv_a_proj_with_mqa")                        # [s, kv_lora + rope]
    k_pass, k_rot = ckv[:, :kvr], ckv[:, kvr:]
    kv = lin(rms(k_pass, w[a + "kv_a_layernorm.weight"], latent_eps(c)), w, a, "kv_b_proj")
    kv = kv.view(s, nh, nope + vd).transpose(0, 1)                  # [h, s, nope + v]
    k_pass, v = kv[..., :nope], kv[..., nope:]
    k_rot = k_rot.view(1, s, rope)                                  # one rope key for all heads
    if interleaved(c):
        q_rot, k_rot = deinterleave(q_rot), deinterleave(k_rot)
    q_rot = q_rot * cos + rotate_half(q_rot) * sin
    k_rot = k_rot * cos + rotate_half(k_rot) * sin
    k_rot = k_rot.expand(nh, s, rope)
    query = torch.cat((q_pass, q_rot), dim=-1)
    key = torch.cat((k_pass, k_rot), dim=-1)
    scores = query @ key.transpose(-1, -2) * softmax_scale(c) + tm.causal_mask(s)
    weights = tm.softmax(scores)
    o = (weights @ v).transpose(0, 1).reshape(s, nh * vd)
    return lin(o, w, a, "o_proj"), weights


def mlp(m, w, pre, act=F.silu):
    return (act(m @ w[pre + "gate_proj.weight"].T) * (m @ w[pre + "up_proj.weight"].T)
            ) @ w[pre + "down_proj.weight"].T


def route(m, w, p, c):
    """DeepseekV3TopkRouter + DeepseekV3MoE.route_tokens_to_experts."""
    e_n, g, tg, k = c["n_routed_experts"], c["n_group"], c["topk_group"], c["num_experts_per_tok"]
    logits = m @ w[p + "mlp.gate.weight"].T                          # float32 in transformers
    scores = logits.sigmoid()
    choice = scores + w[p + "mlp.gate.e_score_correction_bias"]
    group_scores = choice.view(-1, g, e_n // g).topk(2, dim=-1)[0].sum(dim=-1)
    group_idx = torch.topk(group_scores, k=tg, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores)
    group_mask.scatter_(1, group_idx, 1)
    score_mask = group_mask.unsqueeze(-1).expand(-1, g, e_n // g).reshape(-1, e_n)
    if c.get("_no_groups"):
        score_mask = torch.ones_like(score_mask)
    masked = choice.masked_fill(~score_mask.bool(), 0.0)
    if c.get("_no_bias_choice"):
        masked = scores.masked_fill(~score_mask.bool(), 0.0)
    topk_idx = torch.topk(masked, k=k, dim=-1, sorted=False)[1]
    topk_w = (choice if c.get("_bias_in_weights") else scores).gather(1, topk_idx)
    if c["norm_topk_prob"]:
        topk_w = topk_w / (topk_w.sum(dim=-1, keepdim=True) + 1e-20)
    return topk_idx, topk_w * c["routed_scaling_factor"], scores, choice, masked


def moe(m, w, p, c):
    """DeepseekV3MoE.forward with DeepseekV3NaiveMoe's fused experts (built
    here from the per-expert hub tensors as the conversion mapping does:
    gate_up_proj[e] = cat(gate_proj, up_proj), down_proj[e] = down_proj)."""
    e_n = c["n_routed_experts"]
    topk_idx, topk_w, _, _, _ = route(m, w, p, c)
    gate_up = torch.stack([torch.cat((w[f"{p}mlp.experts.{e}.gate_proj.weight"],
                                      w[f"{p}mlp.experts.{e}.up_proj.weight"]), dim=0)
                           for e in range(e_n)])
    down = torch.stack([w[f"{p}mlp.experts.{e}.down_proj.weight"] for e in range(e_n)])
    out = torch.zeros_like(m)
    mask = F.one_hot(topk_idx, num_classes=e_n).permute(2, 1, 0)    # [E, k, tokens]
    for e in range(e_n):
        slot, tok = torch.where(mask[e])
        if tok.numel() == 0:
            continue
        gate, up = F.linear(m[tok], gate_up[e]).chunk(2, dim=-1)
        y = F.linear(F.silu(gate) * up, down[e]) * topk_w[tok, slot, None]
        out.index_add_(0, tok, y)
    return out + mlp(m, w, p + "mlp.shared_experts.")


def forward(w, ids, c, attn_fn=None, moe_fn=None):
    attn_fn = attn_fn or attention
    moe_fn = moe_fn or moe
    eps = c["rms_norm_eps"]
    s = len(ids)
    cos, sin, _, _ = cos_sin(c, s)
    h = w["model.embed_tokens.weight"][torch.tensor(ids)]
    hidden, atts = [], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        hidden.append(h)
        a, att = attn_fn(rms(h, w[p + "input_layernorm.weight"], eps), w, p, c, cos, sin)
        atts.append(att)
        h = h + a
        m = rms(h, w[p + "post_attention_layernorm.weight"], eps)
        if n < c["first_k_dense_replace"]:
            h = h + mlp(m, w, p + "mlp.")
        else:
            h = h + moe_fn(m, w, p, c)
    final = rms(h, w["model.norm.weight"], eps)
    hidden.append(final)
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    logits = final @ head.T
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


# ---------------------------------------------------------------------------
# Formulation 2: absorbed MLA, one head at a time, complex RoPE; dense MoE
# ---------------------------------------------------------------------------

def attention_absorbed(x, w, p, c, _cos, _sin):
    """The same module as attention(), computed the absorbed way (see the
    module docstring); RoPE recomputed here as complex rotations."""
    s, d, nh = x.shape[0], x.shape[1], c["num_attention_heads"]
    nope, rope, vd, kvr = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"], c["kv_lora_rank"]
    a = p + "self_attn."
    _, _, inv, af = cos_sin(c, s)
    ang = torch.outer(torch.arange(s, dtype=torch.float64), inv)            # [s, rope/2]
    rot = torch.polar(torch.full_like(ang, af), ang)                         # af * e^{i pos theta}

    def to_complex(t):   # [..., rope] -> [..., rope/2] complex, pairs as the layout says
        if interleaved(c):
            return torch.complex(t[..., 0::2], t[..., 1::2])
        return torch.complex(t[..., : rope // 2], t[..., rope // 2:])

    def norm(t, wt):
        out = torch.empty_like(t)
        for i in range(t.shape[0]):
            r = t[i]
            out[i] = r / math.sqrt(float((r * r).sum()) / r.shape[0] + latent_eps(c)) * wt
        return out

    def bias(name, n):
        b = w.get(a + name + ".bias")
        return torch.zeros(n, dtype=torch.float64) if b is None else b

    if c["q_lora_rank"] is None:
        latent_q, wq = x, w[a + "q_proj.weight"]
    else:
        latent_q = norm(x @ w[a + "q_a_proj.weight"].T + bias("q_a_proj", c["q_lora_rank"]),
                        w[a + "q_a_layernorm.weight"])
        wq = w[a + "q_b_proj.weight"]
    wkv_a = w[a + "kv_a_proj_with_mqa.weight"]
    ba = bias("kv_a_proj_with_mqa", kvr + rope)
    c_kv = norm(x @ wkv_a[:kvr].T + ba[:kvr], w[a + "kv_a_layernorm.weight"])   # [s, kv_lora]
    k_pe = to_complex(x @ wkv_a[kvr:].T + ba[kvr:]) * rot                      # [s, rope/2]
    wkv_b = w[a + "kv_b_proj.weight"].view(nh, nope + vd, kvr)
    scale = softmax_scale(c)
    heads_out = torch.empty(s, nh, vd, dtype=torch.float64)
    weights = torch.zeros(nh, s, s, dtype=torch.float64)
    for h in range(nh):
        wq_h = wq[h * (nope + rope):(h + 1) * (nope + rope)]
        w_uk, w_uv = wkv_b[h, :nope], wkv_b[h, nope:]          # [nope, kv_lora], [v, kv_lora]
        q_nope = latent_q @ wq_h[:nope].T                        # [s, nope]
        q_lat = q_nope @ w_uk                                    # absorbed: [s, kv_lora]
        q_pe = to_complex(latent_q @ wq_h[nope:].T) * rot        # [s, rope/2]
        for i in range(s):
            row = []
            for j in range(i + 1):
                sc = float(q_lat[i] @ c_kv[j]) + float((q_pe[i] * k_pe[j].conj()).real.sum())
                row.append(sc * scale)
            top = max(row)
            ex = [math.exp(r - top) for r in row]
            tot = sum(ex)
            ctx = torch.zeros(kvr, dtype=torch.float64)
            for j in range(i + 1):
                weights[h, i, j] = ex[j] / tot
                ctx = ctx + weights[h, i, j] * c_kv[j]
            heads_out[i, h] = w_uv @ ctx                          # absorbed value
    o = heads_out.reshape(s, nh * vd) @ w[a + "o_proj.weight"].T + bias("o_proj", d)
    return o, weights


def moe_dense(m, w, p, c):
    e_n, g, tg, k = c["n_routed_experts"], c["n_group"], c["topk_group"], c["num_experts_per_tok"]
    per = e_n // g
    gate_w, bias = w[p + "mlp.gate.weight"], w[p + "mlp.gate.e_score_correction_bias"]
    dense_w = torch.zeros(m.shape[0], e_n, dtype=torch.float64)
    for t in range(m.shape[0]):
        sc = [1.0 / (1.0 + math.exp(-float(m[t] @ gate_w[e]))) for e in range(e_n)]
        ch = [sc[e] + float(bias[e]) for e in range(e_n)]
        gs = [sum(sorted(ch[gi * per:(gi + 1) * per], reverse=True)[:2]) for gi in range(g)]
        groups = sorted(range(g), key=lambda gi: -gs[gi])[:tg]
        eligible = [e for e in range(e_n) if e // per in groups]
        chosen = sorted(eligible, key=lambda e: -ch[e])[:k]
        tot = sum(sc[e] for e in chosen) + 1e-20 if c["norm_topk_prob"] else 1.0
        for e in chosen:
            dense_w[t, e] = sc[e] / tot * c["routed_scaling_factor"]
    out = torch.zeros_like(m)
    for e in range(e_n):
        out = out + dense_w[:, e:e + 1] * mlp(m, w, f"{p}mlp.experts.{e}.")
    return out + mlp(m, w, p + "mlp.shared_experts.")


# ---------------------------------------------------------------------------
# Checks and output
# ---------------------------------------------------------------------------

def moe_inputs(w, c, hidden):
    """{layer: the MoE's input, post_attention_layernorm(h + attention)}."""
    eps = c["rms_norm_eps"]
    cos, sin, _, _ = cos_sin(c, hidden.shape[2])
    out = {}
    for n in range(c["first_k_dense_replace"], c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        h = hidden[n][0]
        a, _ = attention(rms(h, w[p + "input_layernorm.weight"], eps), w, p, c, cos, sin)
        out[n] = rms(h + a, w[p + "post_attention_layernorm.weight"], eps)
    return out


def routing_margins(w, c, inputs):
    """Smallest gaps at the group and expert choice boundaries, and the
    lowest chosen score (it must beat masked_fill's 0.0, or the choice would
    be a tie among the masked experts)."""
    worst_group, worst_expert, chosen_min = float("inf"), float("inf"), float("inf")
    g, tg, k = c["n_group"], c["topk_group"], c["num_experts_per_tok"]
    for n, m in inputs.items():
        _, _, _, choice, masked = route(m, w, f"model.layers.{n}.", c)
        gs = choice.view(-1, g, c["n_routed_experts"] // g).topk(2, dim=-1)[0].sum(-1)
        if tg < g:
            srt = gs.sort(dim=-1, descending=True)[0]
            worst_group = min(worst_group, float((srt[:, tg - 1] - srt[:, tg]).min()))
        srt = masked.sort(dim=-1, descending=True)[0]
        worst_expert = min(worst_expert, float((srt[:, k - 1] - srt[:, k]).min()))
        chosen_min = min(chosen_min, float(srt[:, k - 1].min()))
    return worst_group, worst_expert, chosen_min


def build(name, c):
    d = os.path.join(HERE, name)
    w32 = model_weights(c, SEEDS[name], QK_GAIN[name])
    st = tm.safetensors_bytes({k: ("F32", a) for k, a in w32.items()})
    tm.write_bytes(os.path.join(d, "model.safetensors"), st)
    back = tm.check_file(os.path.join(d, "model.safetensors"),
                         {k: ("F32", a) for k, a in w32.items()})
    w = {k: tm.t64(a) for k, (tag, a) in back.items()}
    tm.write_json(os.path.join(d, "config.json"), c)

    atts, hidden, logits = forward(w, IDS, c)
    L, nh, s, dm = c["num_hidden_layers"], c["num_attention_heads"], len(IDS), c["hidden_size"]
    assert atts.shape == (L, 1, nh, s, s), atts.shape
    assert hidden.shape == (L + 1, 1, s, dm), hidden.shape
    assert logits.shape == (1, s, c["vocab_size"]), logits.shape
    assert torch.isfinite(atts).all() and torch.isfinite(hidden).all() and torch.isfinite(logits).all()
    assert tm.max_diff(atts.sum(-1), torch.ones_like(atts.sum(-1))) < 1e-14

    # second formulation, each attention and MoE module separately and the whole pass
    atts2, hidden2, logits2 = forward(w, IDS, c, attention_absorbed, moe_dense)
    worst = max(tm.max_diff(atts, atts2), tm.max_diff(hidden, hidden2), tm.max_diff(logits, logits2))
    assert worst <= tm.CROSS_TOL, (name, worst)
    cos, sin, inv, af = cos_sin(c, s)
    inputs = moe_inputs(w, c, hidden)
    attn_worst = 0.0
    for n in range(L):
        p = f"model.layers.{n}."
        x = rms(hidden[n][0], w[p + "input_layernorm.weight"], c["rms_norm_eps"])
        o1, a1 = attention(x, w, p, c, cos, sin)
        o2, a2 = attention_absorbed(x, w, p, c, cos, sin)
        attn_worst = max(attn_worst, tm.max_diff(o1, o2), tm.max_diff(a1, a2))
        if n in inputs:
            m = inputs[n]
            attn_worst = max(attn_worst, tm.max_diff(moe(m, w, p, c), moe_dense(m, w, p, c)))
    assert attn_worst <= tm.CROSS_TOL, (name, attn_worst)

    margins = routing_margins(w, c, inputs)
    assert margins[0] > 1e-6 and margins[1] > 1e-6, margins
    assert margins[2] > 1e-3, margins   # every chosen expert beats masked_fill's 0.0

    tm.write_json(os.path.join(d, "ids.json"), IDS, indent=None, sort_keys=False)
    tm.write_npy(os.path.join(d, "attentions.npy"), atts.numpy())
    tm.write_npy(os.path.join(d, "hidden.npy"), hidden.numpy())
    tm.write_npy(os.path.join(d, "logits.npy"), logits.numpy())

    sens = []
    for label, change in SENSITIVITY:
        if label.startswith("mscale") and rope_dict(c)["rope_type"] == "default":
            continue
        if label.startswith("groups") and c["topk_group"] >= c["n_group"]:
            continue
        if label.startswith("latent") and c["rms_norm_eps"] == LATENT_EPS:
            continue
        a3, h3, l3 = forward(w, IDS, dict(c, **change))
        sens.append(f"{label} {max(tm.max_diff(atts, a3), tm.max_diff(logits, l3)):.1e}")

    mx = atts.max(-1).values                                    # [L, 1, h, q]
    rows = mx[..., 1:]                                          # row 0 is always 1.0
    print(f"{name}: layers {L}, heads {nh}, softmax scale {softmax_scale(c):.6f}, "
          f"rope inv_freq {[round(float(f), 8) for f in inv]}, attention factor {af:.6f}")
    print(f"  attention max weight per row (rows 1..6): min {float(rows.min()):.3f}, "
          f"median {float(rows.median()):.3f}; rows with max > 0.5: "
          f"{int((rows > 0.5).sum())}/{rows.numel()}")
    print(f"  cross-check worst |diff| {max(worst, attn_worst):.2e}; routing margins "
          f"group {margins[0]:.3g}, expert {margins[1]:.3g}, lowest chosen score {margins[2]:.3g}")
    print("  sensitivity (max |diff| of attentions / logits): " + ", ".join(sens))
    return atts


SENSITIVITY = [
    ("rope layout flipped", {"_flip_layout": True}),
    ("mscale^2 left out of the score scale", {"_no_mscale": True}),
    ("mscale attention factor on cos/sin left out", {"_af1": True}),
    ("latent norms with rms_norm_eps", {"_latent_eps_from_config": True}),
    ("groups ignored", {"_no_groups": True}),
    ("bias left out of the choice", {"_no_bias_choice": True}),
    ("bias added to the weights", {"_bias_in_weights": True}),
]


def main():
    torch.set_num_threads(1)
    # the yarn numbers of tiny-deepseek-v3 by hand: dim 4, base 1e4, factor 40,
    # original 4096, beta 32/1: low = floor(0.654) = 0, high = ceil(1.407) = 2,
    # ramp = [0, 0.5]
    c = CONFIGS["tiny-deepseek-v3"]
    _, _, inv, af = cos_sin(c, 7)
    want = torch.tensor([1.0, 0.5 * 0.01 / 40 + 0.5 * 0.01], dtype=torch.float64)
    assert tm.max_diff(inv, want) < 1e-15, inv
    assert abs(af - (1 + 0.1 * math.log(40)) / (1 + 0.08 * math.log(40))) < 1e-15
    assert abs(softmax_scale(c) - 12 ** -0.5 * (1 + 0.08 * math.log(40)) ** 2) < 1e-15
    for name, config in CONFIGS.items():
        build(name, config)
    for path in sorted(tm.WRITTEN):
        print(os.path.relpath(path, HERE), os.path.getsize(path))


if __name__ == "__main__":
    main()
