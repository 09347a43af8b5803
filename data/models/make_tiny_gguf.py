#!/usr/bin/python3
"""GGUF files of the tiny checkpoints, as llama.cpp's convert_hf_to_gguf.py
writes them with --outtype f32, and llama.cpp's own numbers on them.

  /usr/bin/python3 data/models/make_tiny_gguf.py [--only tiny-x,...]
      [--no-validate] [--compare-converter LLAMA_CPP_SRC]

For every directory below whose architecture the converter handles (CONVERT,
at the end), writes DIR/model.gguf beside model.safetensors: every tensor F32
(the converter's f32 out type; 1-D tensors and norms are F32 whatever the out
type), the GGUF architecture name, the `{arch}.*` hyperparameters the
converter writes, llama.cpp's tensor names (src/llama-arch.cpp) and the
converter's tensor transformations. Then it loads the file with llama.cpp
(data/models/llamacpp.py, ctypes), runs one llama_decode of ids.json
(flash attention off, F32 KV cache) and writes llama.cpp's per-layer softmax
(`kq_soft_max-N`) as DIR/llamacpp_attentions.npy (float32
[layers][1][heads][7][7], the shape of attentions.npy), and prints the max
difference from attentions.npy and logits.npy.

The converter followed is the one of the llama.cpp the libraries were built
from (node-llama-cpp's "v0.5.0" bundle: convert_hf_to_gguf.py, the
conversion/ package and gguf-py/). Per architecture, the class and what it
does, is written out in the functions below (and summed up in docs/models.md,
"GGUF files"). --compare-converter runs that converter itself (with
stand-ins for the transformers and tqdm packages, which it imports but needs
nothing of here) on each directory and checks that both files hold the same
metadata values and bit-identical tensors.

Departures from the converter, all forced by the tiny checkpoints:
* No tokenizer: the converter cannot write a vocabulary without tokenizer
  files (it raises). Where a directory has none we write what its
  `_set_vocab_none` writes, tokenizer.ggml.model = "none", plus
  `{arch}.vocab_size` (many classes write that key anyway); llama.cpp then
  loads the model with vocab_size placeholder tokens (llama-vocab.cpp), which
  is all it needs to run ids through it.
* tiny-llama's tokenizer.json is a WordLevel model, which the converter's
  vocab paths (sentencepiece, LlamaHfVocab: BPE only, then a BPE with a
  pre-tokenizer hash) all refuse: we write its 40 tokens as a "llama"
  vocabulary the way _set_vocab_llama_hf lays one out (scores -1000,
  CONTROL for the special added tokens, NORMAL otherwise) with
  bos/unk ids from the added tokens, so a GGUF reader finds the token
  strings. llama.cpp's SPM tokenizer would not reproduce ids.json from text
  with it; only ids are run.
* feed_forward_length: GPT2Model, Phi2Model and FalconModel write
  4 * hidden_size, not n_inner / intermediate_size / ffn_hidden_size; the
  tiny configs' FFN is not 4x, and llama.cpp then refuses the files
  (ffn_up/ffn_down shapes). We write the config's width (they coincide on
  every real GPT-2 / Phi-2 / Falcon checkpoint).
* general.name is the directory name (the converter prettifies it through
  its model-card heuristics: "Tiny Llama Bias"), and general.size_label /
  basename / version are not written: provenance only, llama.cpp reads none.
* Metadata key order may differ from the converter's; values and types do not.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_tiny_models as tm  # noqa: E402
from gguf_writer import (ARRAY, BOOL, F32, STRING, U32, I32,  # noqa: E402
                         read_gguf, write_gguf)

# ---------------------------------------------------------------------------
# Metadata helpers
# ---------------------------------------------------------------------------


class Meta:
    """Ordered `{arch}.*` and general.* keys; a key written twice keeps its
    first position and its last value, as gguf-py's writer does."""

    def __init__(self, arch):
        self.arch = arch
        self.kv = {}

    def put(self, key, vtype, value):
        key = key.replace("{arch}", self.arch)
        self.kv[key] = (vtype, value)

    def u32(self, key, v):
        self.put(key, U32, int(v))

    def f32(self, key, v):
        self.put(key, F32, float(v))

    def bool(self, key, v):
        self.put(key, BOOL, bool(v))

    def str(self, key, v):
        self.put(key, STRING, str(v))

    def has(self, key):
        return key.replace("{arch}", self.arch) in self.kv

    def items(self):
        return [(k, t, v) for k, (t, v) in self.kv.items()]


def find(h, keys, default=None):
    for k in keys:
        if k in h:
            return h[k]
    return default


def rope_parameters(h):
    """TextModel.__init__: rope_parameters (or rope_scaling) with the global
    fields mirrored into it."""
    rp = h.get("rope_parameters", h.get("rope_scaling")) or {}
    rp = dict(rp)
    rope_theta = find(h, ["global_rope_theta", "rope_global_theta", "rope_theta_global",
                          "rope_theta", "rotary_emb_base"])
    local = find(h, ["local_rope_theta", "rope_local_theta", "rope_theta_local",
                     "swa_rope_theta", "rope_local_base_freq"])
    prf = find(h, ["partial_rotary_factor", "rope_pct", "rope_percent"])
    omp = find(h, ["original_max_position_embeddings"])
    if "full_attention" not in rp and "sliding_attention" not in rp:
        if local is not None:
            rp["sliding_attention"] = {"rope_theta": local}
        if "rope_theta" not in rp and rope_theta is not None:
            rp["rope_theta"] = rope_theta
        if "rope_type" not in rp and rp.get("type") is not None:
            rp["rope_type"] = rp["type"]
        if "partial_rotary_factor" not in rp and prf is not None:
            rp["partial_rotary_factor"] = prf
        if "original_max_position_embeddings" not in rp and omp is not None:
            rp["original_max_position_embeddings"] = omp
    return rp


def base_params(m, h, rp):
    """TextModel.set_gguf_parameters (conversion/base.py)."""
    m.u32("{arch}.block_count", find(h, ["n_layers", "num_hidden_layers", "n_layer", "num_layers"]))
    if (n := find(h, ["max_position_embeddings", "n_ctx", "n_positions", "max_length",
                      "max_sequence_length", "model_max_length"])) is not None:
        m.u32("{arch}.context_length", n)
    if (n := find(h, ["hidden_size", "n_embd", "dim"])) is not None:
        m.u32("{arch}.embedding_length", n)
    if (n := find(h, ["prefix_dense_intermediate_size", "dense_intermediate_size",
                      "intermediate_size", "n_inner", "hidden_dim"])) is not None:
        m.u32("{arch}.feed_forward_length", n)
    if (n := find(h, ["num_attention_heads", "n_head", "n_heads"])) is not None:
        m.u32("{arch}.attention.head_count", n)
    if (n := find(h, ["num_key_value_heads", "n_kv_heads"])) is not None:
        m.u32("{arch}.attention.head_count_kv", n)
    if h.get("is_causal") is False:
        m.bool("{arch}.attention.causal", False)
    p = rp.get("full_attention", rp)
    rope_type = p.get("rope_type")
    if rope_type is not None:
        factor = p.get("factor")
        if rope_type == "linear" and factor is not None:
            m.str("{arch}.rope.scaling.type", "linear")
            m.f32("{arch}.rope.scaling.factor", factor)
        elif rope_type == "yarn" and factor is not None:
            m.str("{arch}.rope.scaling.type", "yarn")
            m.f32("{arch}.rope.scaling.factor", factor)
            m.u32("{arch}.rope.scaling.original_context_length",
                  p["original_max_position_embeddings"])
            if (v := p.get("extrapolation_factor")) is not None:
                m.f32("{arch}.rope.scaling.yarn_ext_factor", v)
            if (v := p.get("attention_factor", p.get("attn_factor"))) is not None:
                m.f32("{arch}.rope.scaling.yarn_attn_factor", v)
            if (v := p.get("beta_fast")) is not None:
                m.f32("{arch}.rope.scaling.yarn_beta_fast", v)
            if (v := p.get("beta_slow")) is not None:
                m.f32("{arch}.rope.scaling.yarn_beta_slow", v)
        elif rope_type in ("su", "longrope"):
            m.str("{arch}.rope.scaling.type", "longrope")
        # "dynamic", "llama3", "default": nothing here
    if (v := p.get("rope_theta")) is not None:
        m.f32("{arch}.rope.freq_base", v)
    if (v := rp.get("sliding_attention", {}).get("rope_theta")) is not None:
        m.f32("{arch}.rope.freq_base_swa", v)
    if (v := find(h, ["rms_norm_eps", "norm_eps"])) is not None:
        m.f32("{arch}.attention.layer_norm_rms_epsilon", v)
    if (v := find(h, ["layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"])) is not None:
        m.f32("{arch}.attention.layer_norm_epsilon", v)
    if (v := find(h, ["num_local_experts", "num_experts", "n_routed_experts"])) is not None:
        m.u32("{arch}.expert_count", v)
    if (v := find(h, ["num_experts_per_tok", "num_experts_per_token", "top_k_experts"])) is not None:
        m.u32("{arch}.expert_used_count", v)
    if (v := h.get("n_group")) is not None:
        m.u32("{arch}.expert_group_count", v)
    if (v := h.get("topk_group")) is not None:
        m.u32("{arch}.expert_group_used_count", v)
    sf = find(h, ["score_function", "scoring_func", "score_func", "moe_router_activation",
                  "moe_router_activation_func", "expert_selection_fn"])
    if sf is not None:
        m.u32("{arch}.expert_gating_func", {"softmax": 1, "sigmoid": 2, "sqrtsoftplus": 3}[sf])
    if (hd := h.get("head_dim")) is not None:
        m.u32("{arch}.attention.key_length", hd)
        m.u32("{arch}.attention.value_length", hd)
    m.u32("general.file_type", 0)


# ---------------------------------------------------------------------------
# Tensor names (gguf-py tensor_mapping.py, restricted to what the tiny
# checkpoints hold), HF name with the layer as N -> GGUF name with N
# ---------------------------------------------------------------------------

COMMON = {
    "model.embed_tokens": "token_embd",
    "lm_head": "output",
    "model.norm": "output_norm",
    "model.layers.N.input_layernorm": "blk.N.attn_norm",
    "model.layers.N.post_attention_layernorm": "blk.N.ffn_norm",
    "model.layers.N.self_attn.q_proj": "blk.N.attn_q",
    "model.layers.N.self_attn.k_proj": "blk.N.attn_k",
    "model.layers.N.self_attn.v_proj": "blk.N.attn_v",
    "model.layers.N.self_attn.o_proj": "blk.N.attn_output",
    "model.layers.N.self_attn.q_norm": "blk.N.attn_q_norm",
    "model.layers.N.self_attn.k_norm": "blk.N.attn_k_norm",
    "model.layers.N.mlp.gate_proj": "blk.N.ffn_gate",
    "model.layers.N.mlp.up_proj": "blk.N.ffn_up",
    "model.layers.N.mlp.down_proj": "blk.N.ffn_down",
    # mixture of experts (after stacking)
    "model.layers.N.mlp.gate": "blk.N.ffn_gate_inp",
    "model.layers.N.mlp.experts.gate_proj": "blk.N.ffn_gate_exps",
    "model.layers.N.mlp.experts.up_proj": "blk.N.ffn_up_exps",
    "model.layers.N.mlp.experts.down_proj": "blk.N.ffn_down_exps",
    "model.layers.N.mlp.shared_expert.gate_proj": "blk.N.ffn_gate_shexp",
    "model.layers.N.mlp.shared_expert.up_proj": "blk.N.ffn_up_shexp",
    "model.layers.N.mlp.shared_expert.down_proj": "blk.N.ffn_down_shexp",
    "model.layers.N.mlp.shared_expert_gate": "blk.N.ffn_gate_inp_shexp",
    "model.layers.N.mlp.shared_experts.gate_proj": "blk.N.ffn_gate_shexp",
    "model.layers.N.mlp.shared_experts.up_proj": "blk.N.ffn_up_shexp",
    "model.layers.N.mlp.shared_experts.down_proj": "blk.N.ffn_down_shexp",
    "model.layers.N.mlp.gate.e_score_correction": "blk.N.exp_probs_b",
    "model.layers.N.block_sparse_moe.gate": "blk.N.ffn_gate_inp",
    "layers.N.feed_forward.experts.w1": "blk.N.ffn_gate_exps",
    "layers.N.feed_forward.experts.w2": "blk.N.ffn_down_exps",
    "layers.N.feed_forward.experts.w3": "blk.N.ffn_up_exps",
    # gemma 2/3 sandwich norms
    "model.layers.N.pre_feedforward_layernorm": "blk.N.ffn_norm",
    "model.layers.N.post_feedforward_layernorm": "blk.N.post_ffw_norm",
    # phi3 fused
    "model.layers.N.self_attn.qkv_proj": "blk.N.attn_qkv",
    "model.layers.N.mlp.gate_up_proj": "blk.N.ffn_up",
    # starcoder2
    "model.layers.N.mlp.c_fc": "blk.N.ffn_up",
    "model.layers.N.mlp.c_proj": "blk.N.ffn_down",
    # deepseek MLA
    "model.layers.N.self_attn.q_a_proj": "blk.N.attn_q_a",
    "model.layers.N.self_attn.q_a_layernorm": "blk.N.attn_q_a_norm",
    "model.layers.N.self_attn.q_b_proj": "blk.N.attn_q_b",
    "model.layers.N.self_attn.kv_a_proj_with_mqa": "blk.N.attn_kv_a_mqa",
    "model.layers.N.self_attn.kv_a_layernorm": "blk.N.attn_kv_a_norm",
    "model.layers.N.self_attn.k_b_proj": "blk.N.attn_k_b",
    "model.layers.N.self_attn.v_b_proj": "blk.N.attn_v_b",
    # gpt-oss
    "model.layers.N.mlp.router": "blk.N.ffn_gate_inp",
    "model.layers.N.self_attn.sinks": "blk.N.attn_sinks",
}
# post_attention_layernorm is the norm after the attention block (not the
# FFN's input norm) in these architectures
POST_ATTN = {"gemma2", "gemma3", "olmo2", "gpt-oss"}

GPT2 = {"wte": "token_embd", "wpe": "position_embd", "ln_f": "output_norm",
        "h.N.ln_1": "blk.N.attn_norm", "h.N.attn.c_attn": "blk.N.attn_qkv",
        "h.N.attn.c_proj": "blk.N.attn_output", "h.N.ln_2": "blk.N.ffn_norm",
        "h.N.mlp.c_fc": "blk.N.ffn_up", "h.N.mlp.c_proj": "blk.N.ffn_down",
        "lm_head": "output"}
NEOX = {"gpt_neox.embed_in": "token_embd", "embed_out": "output",
        "gpt_neox.final_layer_norm": "output_norm",
        "gpt_neox.layers.N.input_layernorm": "blk.N.attn_norm",
        "gpt_neox.layers.N.post_attention_layernorm": "blk.N.ffn_norm",
        "gpt_neox.layers.N.attention.query_key_value": "blk.N.attn_qkv",
        "gpt_neox.layers.N.attention.dense": "blk.N.attn_output",
        "gpt_neox.layers.N.mlp.dense_h_to_4h": "blk.N.ffn_up",
        "gpt_neox.layers.N.mlp.dense_4h_to_h": "blk.N.ffn_down"}
FALCON = {"transformer.word_embeddings": "token_embd", "lm_head": "output",
          "transformer.ln_f": "output_norm",
          "transformer.h.N.input_layernorm": "blk.N.attn_norm",
          # falcon-40b's new decoder: ln_mlp is ATTN_NORM, ln_attn ATTN_NORM_2
          # (tensor_mapping.py); llama.cpp's falcon feeds attn_norm_2's output
          # to the attention and attn_norm's to the MLP
          "transformer.h.N.ln_mlp": "blk.N.attn_norm",
          "transformer.h.N.ln_attn": "blk.N.attn_norm_2",
          "transformer.h.N.self_attention.query_key_value": "blk.N.attn_qkv",
          "transformer.h.N.self_attention.dense": "blk.N.attn_output",
          "transformer.h.N.mlp.dense_h_to_4h": "blk.N.ffn_up",
          "transformer.h.N.mlp.dense_4h_to_h": "blk.N.ffn_down"}
PHI2 = {"model.embed_tokens": "token_embd", "lm_head": "output",
        "model.final_layernorm": "output_norm",
        "model.layers.N.input_layernorm": "blk.N.attn_norm",
        "model.layers.N.self_attn.q_proj": "blk.N.attn_q",
        "model.layers.N.self_attn.k_proj": "blk.N.attn_k",
        "model.layers.N.self_attn.v_proj": "blk.N.attn_v",
        "model.layers.N.self_attn.dense": "blk.N.attn_output",
        "model.layers.N.mlp.fc1": "blk.N.ffn_up",
        "model.layers.N.mlp.fc2": "blk.N.ffn_down"}


def map_name(table, name, arch):
    """HF tensor name -> GGUF name through `table`, trying the suffixes
    .weight and .bias (TensorNameMap.get_name)."""
    for suffix in (".weight", ".bias", ""):
        if suffix and not name.endswith(suffix):
            continue
        stem = name[:len(name) - len(suffix)] if suffix else name
        m = re.search(r"\.(\d+)\.", "." + stem + ".")
        bid = m.group(1) if m else None
        key = re.sub(r"(^|\.)\d+(\.|$)", r"\1N\2", stem, count=1) if bid else stem
        if arch in POST_ATTN and key == "model.layers.N.post_attention_layernorm":
            out = "blk.N.post_attention_norm"
        else:
            out = table.get(key)
        if out is not None:
            out = out.replace("N", bid) if bid else out
            return out + suffix
    raise ValueError(f"cannot map tensor {name!r}")


# ---------------------------------------------------------------------------
# The converter's transformations
# ---------------------------------------------------------------------------

def permute(w, n_head, n_head_kv):
    """LlamaModel.permute: within each head, rows [x0..x(d/2-1), y0..y(d/2-1)]
    (HF's rotate_half layout) become [x0, y0, x1, y1, ...] (llama.cpp's
    interleaved RoPE pairs). Inverse: unpermute."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    shape = w.shape
    return (w.reshape(n_head, 2, shape[0] // n_head // 2, *shape[1:])
            .swapaxes(1, 2).reshape(shape))


def unpermute(w, n_head):
    """The inverse of permute (n_head = the heads of that tensor)."""
    shape = w.shape
    return (w.reshape(n_head, shape[0] // n_head // 2, 2, *shape[1:])
            .swapaxes(1, 2).reshape(shape))


class Ctx:
    def __init__(self, d, h):
        self.dir, self.h = d, h
        self.rp = rope_parameters(h)
        self.L = find(h, ["n_layers", "num_hidden_layers", "n_layer", "num_layers"])


def stack_experts(items, pattern, parts, n_experts, src_name, merged):
    """Buffers per-expert tensors (names matching `pattern`, groups: layer,
    expert) and, when a layer has all of them, yields the stacked
    [experts][out][in] tensor of each part in `parts` order (torch.stack
    (dim=0), as the MoE classes do), at the place of the last one seen."""
    buf = {}
    for name, a in items:
        m = re.match(pattern, name)
        if not m:
            yield name, a
            continue
        bid = int(m.group(1))
        buf.setdefault(bid, {})[name] = a
        if len(buf[bid]) >= n_experts * len(parts):
            for part in parts:
                yield merged(bid, part), np.stack([buf[bid].pop(src_name(bid, x, part))
                                                   for x in range(n_experts)])
    assert all(not v for v in buf.values()), "unprocessed experts"


# --- one function per converter class: (arch, meta, [(gguf name, f32 array)])

def conv_llama(ctx, items, arch="llama", undo_permute=True):
    """LlamaModel (MistralForCausalLM, MixtralForCausalLM, LlamaForCausalLM;
    GraniteModel and SmolLM3Model are subclasses)."""
    h = ctx.h
    m = Meta(arch)
    base_params(m, h, ctx.rp)
    m.u32("{arch}.vocab_size", h["vocab_size"])
    m.u32("{arch}.rope.dimension_count",
          h.get("head_dim") or h["hidden_size"] // h["num_attention_heads"])
    nh, nkv = h["num_attention_heads"], h["num_key_value_heads"]

    def modified():
        for name, a in items:
            if undo_permute:
                if name.endswith(("q_proj.weight", "q_proj.bias")):
                    a = permute(a, nh, nh)
                if name.endswith(("k_proj.weight", "k_proj.bias")):
                    a = permute(a, nh, nkv)
            yield name, a

    out = modified()
    if "num_local_experts" in h:
        out = stack_experts(out, r"model\.layers\.(\d+)\.block_sparse_moe\.experts\.(\d+)\.",
                            ["w1", "w2", "w3"], h["num_local_experts"],
                            lambda bid, x, p: f"model.layers.{bid}.block_sparse_moe.experts.{x}.{p}.weight",
                            lambda bid, part: f"layers.{bid}.feed_forward.experts.{part}.weight")
    return m, [(map_name(COMMON, n, arch), a) for n, a in out]


def conv_granite(ctx, items):
    """GraniteModel(LlamaModel): head_dim popped from hparams, then the four
    multipliers under llama.cpp's names."""
    h = dict(ctx.h)
    h.pop("head_dim", None)
    c2 = Ctx(ctx.dir, h)
    m, t = conv_llama(c2, items, "granite")
    for key, hk in (("attention.scale", "attention_multiplier"),
                    ("embedding_scale", "embedding_multiplier"),
                    ("residual_scale", "residual_multiplier"),
                    ("logit_scale", "logits_scaling")):
        if h.get(hk):
            m.f32("{arch}." + key, h[hk])
    return m, t


def conv_plain(arch, table=COMMON):
    """TextModel with no overrides (Qwen2Model, Qwen3Model, StarCoder2Model):
    base parameters, tensors renamed only."""
    def f(ctx, items):
        m = Meta(arch)
        base_params(m, ctx.h, ctx.rp)
        return m, [(map_name(table, n, arch), a) for n, a in items]
    return f


def conv_qwen_moe(arch):
    """Qwen2MoeModel / Qwen3MoeModel: base parameters + expert and shared
    expert FFN widths; per-expert tensors stacked in the order down, gate,
    up."""
    def f(ctx, items):
        h = ctx.h
        m = Meta(arch)
        base_params(m, h, ctx.rp)
        if (v := h.get("moe_intermediate_size")) is not None:
            m.u32("{arch}.expert_feed_forward_length", v)
        if (v := h.get("shared_expert_intermediate_size")) is not None:
            m.u32("{arch}.expert_shared_feed_forward_length", v)
        out = stack_experts(items, r"model\.layers\.(\d+)\.mlp\.experts\.(\d+)\.",
                            ["down_proj", "gate_proj", "up_proj"], find(h, ["num_local_experts", "num_experts"]),
                            lambda bid, x, p: f"model.layers.{bid}.mlp.experts.{x}.{p}.weight",
                            lambda bid, part: f"model.layers.{bid}.mlp.experts.{part}.weight")
        return m, [(map_name(COMMON, n, arch), a) for n, a in out]
    return f


def conv_gemma(ctx, items):
    """GemmaModel: own parameter list; lm_head dropped (tied); every
    *norm.weight + 1 (GemmaRMSNorm multiplies by 1 + w)."""
    h = ctx.h
    m = Meta("gemma")
    m.u32("{arch}.context_length", h["max_position_embeddings"])
    m.u32("{arch}.embedding_length", h["hidden_size"])
    m.u32("{arch}.block_count", ctx.L)
    m.u32("{arch}.feed_forward_length", h["intermediate_size"])
    m.u32("{arch}.attention.head_count", h["num_attention_heads"])
    m.u32("{arch}.attention.head_count_kv", h.get("num_key_value_heads", h["num_attention_heads"]))
    m.f32("{arch}.attention.layer_norm_rms_epsilon", h["rms_norm_eps"])
    m.u32("{arch}.attention.key_length", h["head_dim"])
    m.u32("{arch}.attention.value_length", h["head_dim"])
    m.u32("general.file_type", 0)
    return m, [(map_name(COMMON, n, "gemma"), a + 1 if n.endswith("norm.weight") else a)
               for n, a in items if n != "lm_head.weight"]


def conv_gemma2(ctx, items):
    """Gemma2Model: Gemma's list + both soft-caps and the sliding window."""
    h = ctx.h
    m, t = conv_gemma(ctx, items)
    m2 = Meta("gemma2")
    for k, (vt, v) in m.kv.items():
        m2.put(k.replace("gemma.", "gemma2.", 1), vt, v)
    m2.f32("{arch}.attn_logit_softcapping", h["attn_logit_softcapping"])
    m2.f32("{arch}.final_logit_softcapping", h["final_logit_softcapping"])
    m2.u32("{arch}.attention.sliding_window", h["sliding_window"])
    t = [(map_name(COMMON, n, "gemma2"), a + 1 if n.endswith("norm.weight") else a)
         for n, a in items if n != "lm_head.weight"]
    return m2, t


def conv_gemma3(ctx, items):
    """Gemma3Model: base parameters, then its own (context, heads, eps,
    head_dim, final soft-cap, sliding window unless the pattern is 1, K/V
    heads); embed_tokens cut to the tokenizer's size (here: vocab_size, no
    tokenizer); *norm.weight + 1."""
    h = ctx.h
    m = Meta("gemma3")
    base_params(m, h, ctx.rp)
    m.u32("{arch}.context_length", h.get("max_position_embeddings", 131072))
    m.u32("{arch}.attention.head_count", h.get("num_attention_heads", 8))
    m.f32("{arch}.attention.layer_norm_rms_epsilon", h.get("rms_norm_eps", 1e-6))
    m.u32("{arch}.attention.key_length", h.get("head_dim", 256))
    m.u32("{arch}.attention.value_length", h.get("head_dim", 256))
    assert h.get("attn_logit_softcapping") is None
    if h.get("final_logit_softcapping"):
        m.f32("{arch}.final_logit_softcapping", h["final_logit_softcapping"])
    if h.get("sliding_window_pattern") != 1:
        m.u32("{arch}.attention.sliding_window", h["sliding_window"])
    m.u32("{arch}.attention.head_count_kv", h.get("num_key_value_heads", 4))
    out = []
    for n, a in items:
        if "embed_tokens.weight" in n:
            a = a[:h["vocab_size"]]
        if n.endswith("norm.weight"):
            a = a + 1
        out.append((map_name(COMMON, n, "gemma3"), a))
    return m, out


def conv_phi3(ctx, items):
    """Phi3MiniModel: own parameter list; qkv_proj and gate_up_proj kept
    fused (attn_qkv, ffn_up of width 2 * intermediate); longrope factors as
    rope_factors_long/short tensors (written first) and the attention factor
    sqrt(1 + ln(s) / ln(orig)), s = max_pos / orig."""
    h, rp = ctx.h, ctx.rp
    n_embd, n_head = h["hidden_size"], h["num_attention_heads"]
    rot = rp.get("partial_rotary_factor", 1.0)
    rope_dims = int(rot * n_embd) // n_head
    max_pos = find(h, ["n_positions", "max_position_embeddings"])
    orig = rp["original_max_position_embeddings"]
    m = Meta("phi3")
    extra = []
    long_f, short_f = rp.get("long_factor"), rp.get("short_factor")
    if long_f:
        scale = max_pos / orig
        kind = rp.get("rope_type", "").lower()
        if kind in ("su", "longrope"):
            af = math.sqrt(1 + math.log(scale) / math.log(orig)) if scale > 1.0 else 1.0
        else:
            af = 0.1 * math.log(scale) + 1.0 if scale > 1.0 else 1.0
        m.f32("{arch}.rope.scaling.attn_factor", af)
        assert len(long_f) == len(short_f) == rope_dims / 2
        extra = [("rope_factors_long.weight", np.array(long_f, dtype=np.float32)),
                 ("rope_factors_short.weight", np.array(short_f, dtype=np.float32))]
    m.u32("{arch}.context_length", max_pos)
    m.u32("{arch}.rope.scaling.original_context_length", orig)
    m.u32("{arch}.embedding_length", n_embd)
    m.u32("{arch}.feed_forward_length", h["intermediate_size"])
    m.u32("{arch}.block_count", ctx.L)
    m.u32("{arch}.attention.head_count", n_head)
    m.u32("{arch}.attention.head_count_kv", h["num_key_value_heads"])
    m.f32("{arch}.attention.layer_norm_rms_epsilon", h["rms_norm_eps"])
    m.u32("{arch}.rope.dimension_count", rope_dims)
    m.f32("{arch}.rope.freq_base", rp.get("full_attention", rp)["rope_theta"])
    m.u32("general.file_type", 0)
    m.u32("{arch}.attention.sliding_window", h.get("sliding_window") or 0)
    return m, extra + [(map_name(COMMON, n, "phi3"), a) for n, a in items]


def conv_gpt2(ctx, items):
    """GPT2Model: Conv1D weights ([in, out]) of c_attn, c_proj, c_fc
    transposed to [out, in]; qkv stays fused (q, k, v side by side)."""
    h = ctx.h
    m = Meta("gpt2")
    m.u32("{arch}.block_count", ctx.L)
    m.u32("{arch}.context_length", h["n_ctx"])
    m.u32("{arch}.embedding_length", h["n_embd"])
    # the converter: 4 * n_embd (see the module docstring)
    m.u32("{arch}.feed_forward_length", h.get("n_inner") or 4 * h["n_embd"])
    m.u32("{arch}.attention.head_count", h["n_head"])
    m.f32("{arch}.attention.layer_norm_epsilon", h["layer_norm_epsilon"])
    m.u32("general.file_type", 0)
    out = []
    for n, a in items:
        if n.endswith((".attn.bias", ".attn.masked_bias")):
            continue
        if n.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight")):
            a = a.T
        out.append((map_name(GPT2, n.removeprefix("transformer."), "gpt2"), a))
    return m, out


def conv_starcoder2(ctx, items):
    return conv_plain("starcoder2")(ctx, items)


def conv_olmo(ctx, items):
    """OlmoModel: base parameters, layer_norm_epsilon forced to 1e-5,
    clamp_kqv from clip_qkv; q/k permuted as LlamaModel does."""
    h = ctx.h
    m = Meta("olmo")
    base_params(m, h, ctx.rp)
    m.f32("{arch}.attention.layer_norm_epsilon", 1e-5)
    if h.get("clip_qkv") is not None:
        m.f32("{arch}.attention.clamp_kqv", h["clip_qkv"])
    nh, nkv = h["num_attention_heads"], h.get("num_key_value_heads")
    out = []
    for n, a in items:
        if n.endswith("q_proj.weight"):
            a = permute(a, nh, nh)
        if n.endswith("k_proj.weight"):
            a = permute(a, nh, nkv)
        out.append((map_name(COMMON, n, "olmo"), a))
    return m, out


def conv_olmo2(ctx, items):
    """Olmo2Model: base parameters (+ a sliding window and its per-layer
    pattern when the config has sliding_window: Olmo 3)."""
    h = ctx.h
    m = Meta("olmo2")
    base_params(m, h, ctx.rp)
    if "sliding_window" in h:
        m.u32("{arch}.attention.sliding_window", h["sliding_window"])
        if "layer_types" in h:
            pat = [t == "sliding_attention" for t in h["layer_types"]]
        else:
            pat = [(i + 1) % 4 != 0 for i in range(h["num_hidden_layers"])]
        m.put("{arch}.attention.sliding_window_pattern", ARRAY, (BOOL, pat))
    return m, [(map_name(COMMON, n, "olmo2"), a) for n, a in items]


def conv_command_r(ctx, items):
    """CommandR2Model (CohereForCausalLM): base parameters with
    max_position_embeddings from model_max_length when present, logit_scale,
    rope scaling type none. q_norm/k_norm ([heads][head_dim]) kept as is."""
    h = dict(ctx.h)
    h["max_position_embeddings"] = find(h, ["model_max_length", "max_position_embeddings"])
    m = Meta("command-r")
    base_params(m, h, ctx.rp)
    m.f32("{arch}.logit_scale", h["logit_scale"])
    m.str("{arch}.rope.scaling.type", "none")
    return m, [(map_name(COMMON, n, "command-r"), a) for n, a in items]


def conv_gpt_oss(ctx, items):
    """GptOssModel: base parameters + sliding_window and
    expert_feed_forward_length = intermediate_size. sinks -> attn_sinks.weight;
    experts.gate_up_proj [E, H, 2I] transposed to [E, 2I, H] and split by
    parity: gate = rows 0::2, up = rows 1::2 (biases likewise);
    down_proj [E, I, H] transposed to [E, H, I]."""
    h = ctx.h
    m = Meta("gpt-oss")
    base_params(m, h, ctx.rp)
    m.u32("{arch}.attention.sliding_window", h["sliding_window"])
    m.u32("{arch}.expert_feed_forward_length", h["intermediate_size"])
    out = []
    for n, a in items:
        if n.endswith("sinks"):
            n += ".weight"
        if "down_proj" in n and "experts" in n:
            if n.endswith("_bias"):
                n = n.replace("down_proj_bias", "down_proj.bias")
            else:
                n = n.replace("down_proj", "down_proj.weight")
                a = np.swapaxes(a, -1, -2)
        if "gate_up_proj" in n:
            if n.endswith("_bias"):
                out.append((n.replace("gate_up_proj_bias", "gate_proj.bias"), a[..., ::2]))
                out.append((n.replace("gate_up_proj_bias", "up_proj.bias"), a[..., 1::2]))
            else:
                a = np.swapaxes(a, -1, -2)
                out.append((n.replace("gate_up_proj", "gate_proj.weight"), a[:, ::2, :]))
                out.append((n.replace("gate_up_proj", "up_proj.weight"), a[:, 1::2, :]))
            continue
        out.append((n, a))
    return m, [(map_name(COMMON, n, "gpt-oss"), np.ascontiguousarray(a)) for n, a in out]


def conv_deepseek2(ctx, items):
    """DeepseekV2Model (DeepseekV3ForCausalLM): MLA as MQA with one K/V head;
    kv_b_proj split per head into k_b (transposed: [heads][kv_lora][nope])
    and v_b ([heads][v_head][kv_lora]); experts stacked down, gate, up;
    e_score_correction_bias -> exp_probs_b.bias."""
    h = dict(ctx.h)
    h["num_key_value_heads"] = 1
    h["rms_norm_eps"] = h.get("rms_norm_eps", 1e-6)
    m = Meta("deepseek2")
    base_params(m, h, ctx.rp)
    has_moe = h.get("n_routed_experts") is not None
    fk = h.get("first_k_dense_replace")
    if fk is None:
        fk = h["num_hidden_layers"] if not has_moe else 0
    m.u32("{arch}.leading_dense_block_count", fk)
    kv_lora = h.get("kv_lora_rank", 512)
    m.u32("{arch}.vocab_size", h["vocab_size"])
    if h.get("q_lora_rank") is not None:
        m.u32("{arch}.attention.q_lora_rank", h["q_lora_rank"])
    m.u32("{arch}.attention.kv_lora_rank", kv_lora)
    m.u32("{arch}.attention.key_length", kv_lora + h["qk_rope_head_dim"])
    m.u32("{arch}.attention.value_length", kv_lora)
    m.u32("{arch}.attention.key_length_mla", h["qk_nope_head_dim"] + h["qk_rope_head_dim"])
    m.u32("{arch}.attention.value_length_mla", h["v_head_dim"])
    m.u32("{arch}.expert_feed_forward_length", find(h, ["moe_intermediate_size", "intermediate_size"]))
    if (v := h.get("n_routed_experts")) is not None:
        m.u32("{arch}.expert_count", v)
    m.u32("{arch}.expert_shared_count", h.get("n_shared_experts", 0))
    if (v := h.get("routed_scaling_factor")) is not None:
        m.f32("{arch}.expert_weights_scale", v)
    if h.get("norm_topk_prob"):
        m.bool("{arch}.expert_weights_norm", True)
    m.u32("{arch}.rope.dimension_count", h["qk_rope_head_dim"])
    if (v := ctx.rp.get("mscale_all_dim")) is not None:
        m.f32("{arch}.rope.scaling.yarn_log_multiplier", 0.1 * v)
    nh, vd, nope = ctx.h["num_attention_heads"], h["v_head_dim"], h["qk_nope_head_dim"]

    def modified():
        for n, a in items:
            if h.get("tie_word_embeddings", False) and n == "lm_head.weight":
                continue
            if n.endswith("e_score_correction_bias"):
                n = n.replace("e_score_correction_bias", "e_score_correction.bias")
            if n.endswith("kv_b_proj.weight"):
                kv_b = a.reshape(nh, vd + nope, a.shape[-1])
                k_b, v_b = kv_b[:, :nope], kv_b[:, nope:]
                yield n.replace("kv_b_proj", "k_b_proj"), np.ascontiguousarray(np.swapaxes(k_b, 1, 2))
                yield n.replace("kv_b_proj", "v_b_proj"), np.ascontiguousarray(v_b)
                continue
            yield n, a

    out = stack_experts(modified(), r"model\.layers\.(\d+)\.mlp\.experts\.(\d+)\.",
                        ["down_proj", "gate_proj", "up_proj"], h["n_routed_experts"],
                        lambda bid, x, p: f"model.layers.{bid}.mlp.experts.{x}.{p}.weight",
                        lambda bid, part: f"model.layers.{bid}.mlp.experts.{part}.weight")
    return m, [(map_name(COMMON, n, "deepseek2"), a) for n, a in out]


def conv_falcon(ctx, items):
    """FalconModel: query_key_value regrouped from Falcon's per-KV-group
    layout [group][q_per_group + 2][head_dim] to all q rows, then all k,
    then all v ("jploski" layout); context_length 2048 (not in config)."""
    h = ctx.h
    n_head = h.get("num_attention_heads", h.get("n_head"))
    n_kv = h.get("num_kv_heads", h.get("n_head_kv", 1))
    m = Meta("falcon")
    m.u32("{arch}.context_length", 2048)
    m.str("{arch}.tensor_data_layout", "jploski")
    m.u32("{arch}.embedding_length", h["hidden_size"])
    # the converter: 4 * hidden_size (see the module docstring)
    m.u32("{arch}.feed_forward_length", h.get("ffn_hidden_size") or 4 * h["hidden_size"])
    m.u32("{arch}.block_count", ctx.L)
    m.u32("{arch}.attention.head_count", n_head)
    m.u32("{arch}.attention.head_count_kv", n_kv)
    m.f32("{arch}.attention.layer_norm_epsilon", h["layer_norm_epsilon"])
    m.u32("general.file_type", 0)
    hd = h["hidden_size"] // n_head
    out = []
    for n, a in items:
        if "query_key_value" in n:
            qkv = a.reshape(n_kv, n_head // n_kv + 2, hd, hd * n_head)
            q = qkv[:, :-2].reshape(n_head * hd, hd * n_head)
            k = qkv[:, [-2]].reshape(n_kv * hd, hd * n_head)
            v = qkv[:, [-1]].reshape(n_kv * hd, hd * n_head)
            a = np.concatenate((q, k, v)).reshape(a.shape)
        out.append((map_name(FALCON, n, "falcon"), a))
    return m, out


def conv_phi2(ctx, items):
    """Phi2Model: own parameter list (head_count_kv = heads, rope dims =
    partial_rotary_factor * head_dim, add_bos_token false); names only."""
    h = ctx.h
    n_embd, n_head = h["hidden_size"], h["num_attention_heads"]
    m = Meta("phi2")
    m.u32("{arch}.context_length", find(h, ["n_positions", "max_position_embeddings"]))
    m.u32("{arch}.embedding_length", n_embd)
    m.u32("{arch}.feed_forward_length", h.get("intermediate_size") or 4 * n_embd)
    m.u32("{arch}.block_count", ctx.L)
    m.u32("{arch}.attention.head_count", n_head)
    m.u32("{arch}.attention.head_count_kv", n_head)
    m.f32("{arch}.attention.layer_norm_epsilon", find(h, ["layer_norm_epsilon", "layer_norm_eps"]))
    m.u32("{arch}.rope.dimension_count", int(ctx.rp["partial_rotary_factor"] * n_embd) // n_head)
    m.u32("general.file_type", 0)
    m.bool("tokenizer.ggml.add_bos_token", False)
    return m, [(map_name(PHI2, n, "phi2"), a) for n, a in items]


def conv_stablelm(ctx, items):
    """StableLMModel: own parameter list (rope dims = partial_rotary_factor *
    head_dim, use_parallel_residual default true); names only (the per-head
    q/k LayerNorms of qk_layernorm checkpoints are not converted: see the
    report)."""
    h = ctx.h
    m = Meta("stablelm")
    m.u32("{arch}.context_length", h["max_position_embeddings"])
    m.u32("{arch}.embedding_length", h["hidden_size"])
    m.u32("{arch}.block_count", ctx.L)
    m.u32("{arch}.feed_forward_length", h["intermediate_size"])
    m.u32("{arch}.rope.dimension_count",
          int(ctx.rp["partial_rotary_factor"] * (h["hidden_size"] // h["num_attention_heads"])))
    m.u32("{arch}.attention.head_count", h["num_attention_heads"])
    m.u32("{arch}.attention.head_count_kv", h["num_key_value_heads"])
    m.bool("{arch}.use_parallel_residual", h.get("use_parallel_residual", True))
    m.f32("{arch}.attention.layer_norm_epsilon", find(h, ["layer_norm_eps", "norm_eps"]))
    m.u32("general.file_type", 0)
    assert not h.get("qk_layernorm"), "the converter's StableLM q/k-norm stacking is broken"
    return m, [(map_name(COMMON, n, "stablelm"), a) for n, a in items]


def conv_gptneox(ctx, items):
    """GPTNeoXModel: query_key_value from per-head [head][q,k,v][head_dim]
    rows to all q, all k, all v (weights and biases)."""
    h = ctx.h
    n_head, n_embd = h["num_attention_heads"], h["hidden_size"]
    m = Meta("gptneox")
    m.u32("{arch}.context_length", h["max_position_embeddings"])
    m.u32("{arch}.embedding_length", n_embd)
    m.u32("{arch}.block_count", ctx.L)
    m.u32("{arch}.feed_forward_length", h["intermediate_size"])
    m.u32("{arch}.rope.dimension_count", int(h["rotary_pct"] * (n_embd // n_head)))
    m.u32("{arch}.attention.head_count", n_head)
    m.bool("{arch}.use_parallel_residual", h.get("use_parallel_residual", True))
    m.f32("{arch}.attention.layer_norm_epsilon", h["layer_norm_eps"])
    out = []
    for n, a in items:
        if re.match(r"gpt_neox\.layers\.\d+\.attention\.query_key_value\.weight", n):
            w = a.reshape(n_head, 3, n_embd // n_head, n_embd)
            a = np.concatenate([w[:, i].reshape(-1, n_embd) for i in range(3)])
        elif re.match(r"gpt_neox\.layers\.\d+\.attention\.query_key_value\.bias", n):
            b = a.reshape(n_head, 3, n_embd // n_head)
            a = np.concatenate([b[:, i].reshape(n_embd) for i in range(3)])
        out.append((map_name(NEOX, n, "gptneox"), a))
    return m, out


# HF architecture -> (converter class, function); None: not converted here
CONVERT = {
    "LlamaForCausalLM": ("LlamaModel", conv_llama),
    "MistralForCausalLM": ("LlamaModel", conv_llama),
    "MixtralForCausalLM": ("LlamaModel", conv_llama),
    "Qwen2ForCausalLM": ("Qwen2Model", conv_plain("qwen2")),
    "Qwen3ForCausalLM": ("Qwen3Model", conv_plain("qwen3")),
    "Qwen2MoeForCausalLM": ("Qwen2MoeModel", conv_qwen_moe("qwen2moe")),
    "Qwen3MoeForCausalLM": ("Qwen3MoeModel", conv_qwen_moe("qwen3moe")),
    "GemmaForCausalLM": ("GemmaModel", conv_gemma),
    "Gemma2ForCausalLM": ("Gemma2Model", conv_gemma2),
    "Gemma3ForCausalLM": ("Gemma3Model", conv_gemma3),
    "Phi3ForCausalLM": ("Phi3MiniModel", conv_phi3),
    "GPT2LMHeadModel": ("GPT2Model", conv_gpt2),
    "Starcoder2ForCausalLM": ("StarCoder2Model", conv_starcoder2),
    "OlmoForCausalLM": ("OlmoModel", conv_olmo),
    "Olmo2ForCausalLM": ("Olmo2Model", conv_olmo2),
    "GraniteForCausalLM": ("GraniteModel", conv_granite),
    "CohereForCausalLM": ("CommandR2Model", conv_command_r),
    "GptOssForCausalLM": ("GptOssModel", conv_gpt_oss),
    "DeepseekV3ForCausalLM": ("DeepseekV2Model", conv_deepseek2),
    "FalconForCausalLM": ("FalconModel", conv_falcon),
    "PhiForCausalLM": ("Phi2Model", conv_phi2),
    "StableLmForCausalLM": ("StableLMModel", conv_stablelm),
    "GPTNeoXForCausalLM": ("GPTNeoXModel", conv_gptneox),
    "SmolLM3ForCausalLM": ("SmolLM3Model", lambda c, i: conv_llama(c, i, "smollm3")),
}


# ---------------------------------------------------------------------------
# Directories: which convert, and why the others do not
# ---------------------------------------------------------------------------

# refused by the converter itself, or converted into a file llama.cpp refuses
NOT_CONVERTED = {
    "tiny-opt": "OPTForCausalLM: the converter has no OPT class",
    "tiny-opt-post": "OPTForCausalLM: the converter has no OPT class",
    "tiny-bert": "encoder (bert); not a causal LM here",
    "tiny-bert-f64": "encoder (bert): llama.cpp refuses it without a tokenizer "
                     "(token type count)",
    "tiny-roberta": "encoder (bert): as tiny-bert-f64",
    "tiny-gpt2": "its tokenizer.json is a made-up byte-level BPE whose pre-tokenizer hash "
                 "the converter does not know (it raises); tiny-gpt2-ninner covers gpt2",
    "tiny-gemma2": "query_pre_attn_scalar 16 != head_dim; tiny-gemma2-softcap covers gemma2",
    "tiny-llama-bf16": "same model as tiny-llama, bf16 shards",
    "tiny-llama-wide": "converted (F32, not kept: 2.4 MB) and quantized by make_tiny_wide.py "
                       "into tiny-llama-wide-quant/",
    "tiny-qwen2-moe": "mlp_only_layers [0]: a dense layer 0, which neither the converter "
                      "(cannot map mlp.down_proj in a qwen2moe file) nor llama.cpp's qwen2moe "
                      "has; see tiny-qwen2-moe-sparse",
    "tiny-qwen3-moe": "decoder_sparse_step 2: dense layers 0 and 2, as tiny-qwen2-moe; "
                      "see tiny-qwen3-moe-sparse",
    "tiny-phi-qkln": "qk_layernorm: the converter cannot map q_layernorm/k_layernorm "
                     "(PHI2 has no such tensors)",
    "tiny-stablelm": "qk_layernorm: the converter's per-head norm stacking returns a "
                     "generator from a generator (StableLMModel.modify_tensors) and then raises "
                     "'Unprocessed norms'",
    "tiny-falcon-mq": "old Falcon multi-query (new_decoder_architecture false) with "
                      "num_kv_heads 4 in the config: the converter takes 4 K/V heads where "
                      "transformers uses 1, and fails reshaping query_key_value",
    "tiny-cohere-qknorm": "use_qk_norm: converted, but llama.cpp's command-r loads "
                          "attn_q_norm/attn_k_norm only for 64-layer models, so it refuses "
                          "the file (4 tensors unused)",
    "tiny-deepseek-v3": "attention_bias true: converted, but llama.cpp's deepseek2 has no "
                        "attention biases and refuses the file; see tiny-deepseek-v3-nobias",
    "tiny-deepseek-v3-lite": "q_lora_rank null: llama.cpp's deepseek2 takes a model without "
                             "q_lora_rank only at 26/27 layers (its 'lite' test) and refuses it; "
                             "rope_interleave false would also need a permutation no one applies",
}


def checkpoint_items(d):
    """The safetensors tensors in the converter's order (sorted by name,
    gguf.utility.SafetensorsLocal), widened from bf16 where stored so, as
    float32 numpy arrays."""
    files = sorted(f for f in os.listdir(d) if f.startswith("model") and f.endswith(".safetensors"))
    out = {}
    for f in files:
        t, _ = tm.read_safetensors(os.path.join(d, f))
        for k, (tag, a) in t.items():
            out[k] = np.asarray(a, dtype=np.float32)
    return sorted(out.items())


# Directories whose GGUF takes its tokenizer.ggml.* keys whole from a
# vocabulary-only GGUF of the same tokenizer.json. make_tiny_text_gguf.py
# writes them, with llama.cpp's numbers on text; model_dirs() leaves them out.
VOCAB_FROM = {
    "tiny-qwen2-text": os.path.join(HERE, "..", "..", "tests", "tokenizer", "gguf", "bpe-qwen2.gguf"),
}


def vocab_meta(m, d, h):
    """tokenizer.ggml.* (see the module docstring)."""
    if os.path.basename(d) in VOCAB_FROM:
        kvs, _ = read_gguf(VOCAB_FROM[os.path.basename(d)])
        for k, (vt, v) in kvs.items():
            if k.startswith("tokenizer."):
                m.put(k, vt, v)
        return
    tj = os.path.join(d, "tokenizer.json")
    if not os.path.exists(tj):
        m.str("tokenizer.ggml.model", "none")
        if not m.has("{arch}.vocab_size"):
            m.u32("{arch}.vocab_size", h["vocab_size"])
        return
    with open(tj, encoding="utf-8") as fh:
        tok = json.load(fh)
    vocab = tok["model"]["vocab"]
    specials = {a["id"]: a["content"] for a in tok.get("added_tokens", []) if a.get("special")}
    rev = {i: s for s, i in vocab.items()}
    n = h["vocab_size"]
    tokens = [rev.get(i, f"[PAD{i}]") for i in range(n)]
    types = [3 if i in specials else (6 if re.fullmatch(r"<0x[0-9A-Fa-f]{2}>", tokens[i]) else 1)
             for i in range(n)]
    m.str("tokenizer.ggml.model", "llama")
    m.str("tokenizer.ggml.pre", "default")
    m.put("tokenizer.ggml.tokens", ARRAY, (STRING, tokens))
    m.put("tokenizer.ggml.scores", ARRAY, (F32, [-1000.0] * n))
    m.put("tokenizer.ggml.token_type", ARRAY, (I32, types))
    by_name = {v: k for k, v in specials.items()}
    if "<s>" in by_name:
        m.u32("tokenizer.ggml.bos_token_id", by_name["<s>"])
    if tok["model"].get("unk_token") in vocab:
        m.u32("tokenizer.ggml.unknown_token_id", vocab[tok["model"]["unk_token"]])
    pp = tok.get("post_processor") or {}
    single = pp.get("single", [])
    m.bool("tokenizer.ggml.add_bos_token",
           any("SpecialToken" in x and x["SpecialToken"]["id"] == "<s>" for x in single[:1]))
    m.bool("tokenizer.ggml.add_eos_token", False)


def convert(d, out_path):
    with open(os.path.join(d, "config.json")) as fh:
        h = json.load(fh)
    hf_arch = h["architectures"][0]
    _, fn = CONVERT[hf_arch]
    ctx = Ctx(d, h)
    m, tensors = fn(ctx, checkpoint_items(d))
    kv = Meta(m.arch)
    kv.str("general.architecture", m.arch)
    kv.str("general.type", "model")
    kv.str("general.name", os.path.basename(d))
    for k, (vt, v) in m.kv.items():
        kv.put(k, vt, v)
    kv.u32("general.quantization_version", 2)
    vocab_meta(kv, d, h)
    out = []
    names = set()
    for name, a in tensors:
        assert name not in names, name
        names.add(name)
        a = np.ascontiguousarray(a, dtype="<f4")
        out.append((name, "F32", list(reversed(a.shape)), a.tobytes()))
    size = write_gguf(out_path, kv.items(), out)
    return kv, out, size


# ---------------------------------------------------------------------------
# The converter itself, for --compare-converter (development only)
# ---------------------------------------------------------------------------

CONVERTER_RUNNER = r'''
import os, sys, logging
from pathlib import Path
src, stubs, d, out = sys.argv[1:5]
sys.path.insert(0, stubs); sys.path.insert(1, os.path.join(src, "gguf-py")); sys.path.insert(1, src)
import torch
for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16",
          "uint32", "uint64", "float8_e8m0fnu", "float4_e2m1fn_x2"):
    if not hasattr(torch, n):
        setattr(torch, n, type(n, (), {})())   # torch 1.13 lacks these dtypes
import gguf
from conversion import ModelBase, ModelType, get_model_architecture, get_model_class
logging.basicConfig(level=logging.ERROR)
hp = ModelBase.load_hparams(Path(d), False)
cls = get_model_class(get_model_architecture(hp, ModelType.TEXT), mmproj=False)
if not os.path.exists(os.path.join(d, "tokenizer.json")) or os.environ.get("NOVOCAB"):
    def set_vocab(self):
        self._set_vocab_none()
        if self.gguf_writer.kv_data[0].get(f"{self.gguf_writer.arch}.vocab_size") is None:
            self.gguf_writer.add_vocab_size(self.hparams["vocab_size"])
    cls.set_vocab = set_vocab
with torch.inference_mode():
    cls(Path(d), gguf.LlamaFileType.ALL_F32, Path(out), eager=True).write()
'''

STUBS = {
    "transformers/__init__.py":
        "class AutoConfig:\n    @staticmethod\n    def from_pretrained(*a, **k):\n"
        "        raise OSError('transformers is not installed')\n"
        "AutoTokenizer = AutoConfig\n",
    "tqdm/__init__.py":
        "class tqdm:\n    def __init__(self, *a, **k): pass\n    def update(self, n=1): pass\n"
        "    def close(self): pass\n    def __enter__(self): return self\n"
        "    def __exit__(self, *a): pass\n",
}


def compare_with_converter(src, d, mine):
    """Runs the converter on d (in a scratch copy where the converter needs a
    file the tiny checkpoint lacks) and compares its file with ours."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="gguf-conv-")
    for rel, text in STUBS.items():
        os.makedirs(os.path.join(tmp, "stubs", os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(tmp, "stubs", rel), "w") as fh:
            fh.write(text)
    runner = os.path.join(tmp, "run.py")
    with open(runner, "w") as fh:
        fh.write(CONVERTER_RUNNER)
    work = os.path.join(tmp, os.path.basename(d))
    os.makedirs(work)
    for f in os.listdir(d):
        if f == "config.json" or f.startswith("model") and f.endswith((".safetensors", ".json")):
            shutil.copy(os.path.join(d, f), work)
    env = dict(os.environ)
    with open(os.path.join(d, "config.json")) as fh:
        h = json.load(fh)
    if h["architectures"][0] == "Gemma3ForCausalLM" and not os.path.exists(os.path.join(d, "tokenizer.json")):
        # Gemma3Model.modify_tensors reads the vocabulary size from tokenizer.json
        with open(os.path.join(work, "tokenizer.json"), "w") as fh:
            json.dump({"model": {"vocab": {f"t{i}": i for i in range(h["vocab_size"])}},
                       "added_tokens": []}, fh)
        env["NOVOCAB"] = "1"
    theirs = os.path.join(tmp, "theirs.gguf")
    r = subprocess.run([sys.executable, runner, src, os.path.join(tmp, "stubs"), work, theirs],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        shutil.rmtree(tmp)
        return f"converter failed: {r.stderr.strip().splitlines()[-1]}"
    kv_a, t_a = read_gguf(mine)
    kv_b, t_b = read_gguf(theirs)
    shutil.rmtree(tmp)
    skip = {"general.name", "general.size_label", "general.basename", "general.version",
            "general.finetune"}
    problems = []
    for k in sorted(set(kv_a) | set(kv_b)):
        if k in skip:
            continue
        a, b = kv_a.get(k), kv_b.get(k)
        if a != b:
            problems.append(f"key {k}: ours {a} converter {b}")
    if set(t_a) != set(t_b):
        problems.append(f"tensors only ours {sorted(set(t_a) - set(t_b))}, "
                        f"only converter {sorted(set(t_b) - set(t_a))}")
    for n in sorted(set(t_a) & set(t_b)):
        if t_a[n] != t_b[n]:
            problems.append(f"tensor {n}: {t_a[n][:2]} vs {t_b[n][:2]}"
                            + (" (bytes differ)" if t_a[n][:2] == t_b[n][:2] else ""))
    order = [n for n in t_b] == [n for n in t_a]
    return "identical metadata values and tensors" + ("" if order else " (tensor order differs)") \
        if not problems else "; ".join(problems)


# ---------------------------------------------------------------------------
# Variants of checkpoints llama.cpp cannot take as they are: the same families
# in configurations it runs, with their float64 references written by the
# family's own generator (make_tiny_moe.py, make_tiny_mla.py)
# ---------------------------------------------------------------------------

VARIANTS = {
    # every layer sparse (llama.cpp's qwen2moe/qwen3moe have no dense layers)
    "tiny-qwen2-moe-sparse": ("make_tiny_moe", "tiny-qwen2-moe", {"mlp_only_layers": []}, 4111),
    "tiny-qwen3-moe-sparse": ("make_tiny_moe", "tiny-qwen3-moe", {"decoder_sparse_step": 1}, 4112),
    # no attention biases (llama.cpp's deepseek2 has none)
    "tiny-deepseek-v3-nobias": ("make_tiny_mla", "tiny-deepseek-v3", {"attention_bias": False}, 4113),
}


def build_variants():
    import copy
    import make_tiny_mla
    import make_tiny_moe
    mods = {"make_tiny_moe": make_tiny_moe, "make_tiny_mla": make_tiny_mla}
    for name, (mod, base, change, seed) in VARIANTS.items():
        m = mods[mod]
        table = m.MODELS if mod == "make_tiny_moe" else m.CONFIGS
        c = copy.deepcopy(table[base])
        c.update(change)
        m.SEEDS[name] = seed
        if mod == "make_tiny_mla":
            m.QK_GAIN[name] = m.QK_GAIN[base]
        print(f"--- {name}: {base} with {change}")
        m.build(name, c)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def model_dirs():
    out = []
    for name in sorted(os.listdir(HERE)):
        d = os.path.join(HERE, name)
        if not (name.startswith("tiny-") and os.path.isfile(os.path.join(d, "config.json"))):
            continue
        if name in NOT_CONVERTED or name in VOCAB_FROM:
            continue
        with open(os.path.join(d, "config.json")) as fh:
            if json.load(fh)["architectures"][0] in CONVERT:
                out.append(name)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated directory names")
    ap.add_argument("--no-validate", action="store_true")
    ap.add_argument("--compare-converter", metavar="LLAMA_CPP_SRC")
    ap.add_argument("--variants", action="store_true",
                    help="first (re)write the VARIANTS checkpoints and references")
    args = ap.parse_args()
    if args.variants:
        build_variants()
    names = [n for n in args.only.split(",") if n] or model_dirs()
    results = {}
    for name in names:
        d = os.path.join(HERE, name)
        path = os.path.join(d, "model.gguf")
        kv, tensors, size = convert(d, path)
        line = f"{name}: {kv.arch}, {len(tensors)} tensors, {size} bytes"
        if args.compare_converter:
            line += "\n  vs convert_hf_to_gguf.py: " + compare_with_converter(args.compare_converter, d, path)
        print(line)
        results[name] = kv
    if not args.no_validate:
        import validate_gguf
        validate_gguf.validate(names)
    for n in sorted(NOT_CONVERTED):
        print(f"not converted: {n}: {NOT_CONVERTED[n]}")


if __name__ == "__main__":
    main()
