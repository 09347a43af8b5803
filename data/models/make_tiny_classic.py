#!/usr/bin/python3
"""Build float64 references for five "classic" families whose existing tiny
checkpoints only carry float32 attentions, as new directories:

  tiny-mistral, tiny-qwen2, tiny-gemma2-softcap, tiny-roberta, tiny-bert-f64

Each forward pass is written from transformers' modeling code (eager
attention; transformers 5.x where the index had it, else the nearest 4.5x),
run in float64 on the stored float32 weights widened. The files followed:

* src/transformers/models/mistral/modular_mistral.py, modeling_mistral.py,
  configuration_mistral.py: Llama's decoder (RMSNorm, SwiGLU, half-layout
  RoPE, GQA, scores * head_dim^-0.5, no biases); MistralModel builds
  create_sliding_window_causal_mask whenever config.sliding_window is not
  None, and every layer uses it (MistralConfig has no layer_types).
* src/transformers/models/qwen2/modeling_qwen2.py, configuration_qwen2.py:
  q/k/v with biases, o_proj without; Qwen2Config.__post_init__ sets
  sliding_window = sliding_window if use_sliding_window else None, and
  layer_types defaults to "sliding_attention" where sliding_window is not
  None and i >= max_window_layers; the decoder layer picks its mask by
  config.layer_types[i]. (4.42-4.52 built one sliding mask for every layer
  in eager / sdpa and honoured max_window_layers only in flash attention.)
* src/transformers/models/gemma2/modular_gemma2.py, modeling_gemma2.py,
  configuration_gemma2.py: embeddings * sqrt(hidden_size) (a tensor in the
  hidden states' dtype); four (1 + w) RMSNorms per layer; scores *
  query_pre_attn_scalar^-0.5, then tanh(s / cap) * cap
  (attn_logit_softcapping), then the mask; layer_types default
  "sliding_attention" on even layers; logits tanh(l / cap) * cap with
  final_logit_softcapping.
* src/transformers/models/roberta/modular_roberta.py, modeling_roberta.py:
  BertModel with RobertaEmbeddings: position ids = cumsum(ids != pad) *
  (ids != pad) + pad_token_id, i.e. pad + 1, pad + 2, ... without padding.
* src/transformers/models/bert/modeling_bert.py: embeddings LayerNorm(word +
  token_type + position); per layer LayerNorm(dense(attn) + h), then
  LayerNorm(dense(gelu(dense(h))) + h); scores * head_size^-0.5, no mask;
  nn.LayerNorm with layer_norm_eps; no final norm. BertModel(config) has a
  pooler (pooler.dense) that save_pretrained writes; it does not touch the
  hidden states. Buffers position_ids / token_type_ids are persistent=False.
* src/transformers/masking_utils.py: sliding_window_overlay keeps
  kv_idx > q_idx - sliding_window (sliding_window keys, the query's own
  included).
* src/transformers/utils/generic.py (check_model_inputs): hidden_states =
  (input of layer 0, outputs of layers 0 .. L-2, last_hidden_state); for the
  encoders last_hidden_state is layer L-1's output.

Transformers takes RMSNorm, RoPE cos/sin and the decoders' softmax in float32
even for a float64 model; here everything is float64.

Reference files per model: ids.json, attentions.npy (float64,
[layers][1][heads][7][7]), hidden.npy (float64, [layers + 1][1][7][hidden]),
logits.npy (float64, [1][7][vocab]) for the causal LMs. Each forward pass is
checked against a second formulation over the whole model (attention one head
and one query at a time with complex-number RoPE, or
torch.nn.MultiheadAttention for the encoders; norms and activations from
torch.nn.functional). Run with ``python3 data/models/make_tiny_classic.py``;
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
import make_tiny_dense as dense  # noqa: E402  (Llama-style attention, two formulations)
import make_tiny_gemma as gem  # noqa: E402  (Gemma 2 attention, two formulations)

HERE = os.path.dirname(os.path.abspath(__file__))
IDS = [2, 17, 29, 8, 33, 12, 24]
SEQ = len(IDS)
QK_GAIN = 2.5


# ---------------------------------------------------------------------------
# Configs (what v5's save_pretrained writes, with torch_dtype float32)
# ---------------------------------------------------------------------------

CONFIGS = {
    "tiny-mistral": {
        "architectures": ["MistralForCausalLM"], "model_type": "mistral",
        "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
        "hidden_act": "silu", "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
        "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
        "sliding_window": 3, "attention_dropout": 0.0, "tie_word_embeddings": False,
        "vocab_size": 48, "bos_token_id": 1, "eos_token_id": 2,
        "torch_dtype": "float32"},
    "tiny-qwen2": {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 3,
        "num_attention_heads": 4, "num_key_value_heads": 2,
        "hidden_act": "silu", "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
        "use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1,
        "layer_types": ["full_attention", "sliding_attention", "sliding_attention"],
        "attention_dropout": 0.0, "tie_word_embeddings": True, "vocab_size": 48,
        "torch_dtype": "float32"},
    "tiny-gemma2-softcap": {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
        "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
        "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
        "query_pre_attn_scalar": 12, "attn_logit_softcapping": 2.0,
        "final_logit_softcapping": 4.0, "sliding_window": 3,
        "layer_types": ["sliding_attention", "full_attention"],
        "attention_bias": False, "attention_dropout": 0.0, "tie_word_embeddings": True,
        "vocab_size": 48, "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2,
        "torch_dtype": "float32"},
    "tiny-roberta": {
        "architectures": ["RobertaModel"], "model_type": "roberta",
        "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "hidden_act": "gelu", "layer_norm_eps": 1e-5,
        "max_position_embeddings": 18, "type_vocab_size": 1, "vocab_size": 48,
        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "torch_dtype": "float32"},
    # tiny-bert's config (new weights, sharper attention, and the pooler)
    "tiny-bert-f64": dict(tm.BERT_CONFIG, pad_token_id=0, hidden_dropout_prob=0.1,
                          attention_probs_dropout_prob=0.1),
}
SEEDS = {name: 5200 + i for i, name in enumerate(CONFIGS)}


# ---------------------------------------------------------------------------
# Made-up weights (numpy RandomState, stored float32)
# ---------------------------------------------------------------------------

def decoder_weights(name, c):
    rng = np.random.RandomState(SEEDS[name])
    t = c["model_type"]
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or d // nh
    gemma = t == "gemma2"
    w = {"model.embed_tokens.weight": (0.5 * rng.standard_normal((v, d))).astype("<f4")}
    norms = (["input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
              "post_feedforward_layernorm"] if gemma
             else ["input_layernorm", "post_attention_layernorm"])
    centre = 0.0 if gemma else 1.0          # Gemma's norms multiply by (1 + w)
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        for nm in norms:
            w[p + nm + ".weight"] = tm.vector(rng, d, centre, 0.15)
        a = p + "self_attn."
        w[a + "q_proj.weight"] = tm.linear(rng, nh * hd, d, QK_GAIN)
        w[a + "k_proj.weight"] = tm.linear(rng, nkv * hd, d, QK_GAIN)
        w[a + "v_proj.weight"] = tm.linear(rng, nkv * hd, d)
        w[a + "o_proj.weight"] = tm.linear(rng, d, nh * hd)
        if t == "qwen2":                    # q, k, v biases; o_proj has none
            w[a + "q_proj.bias"] = tm.vector(rng, nh * hd, 0.0, 0.3)
            w[a + "k_proj.bias"] = tm.vector(rng, nkv * hd, 0.0, 0.3)
            w[a + "v_proj.bias"] = tm.vector(rng, nkv * hd, 0.0, 0.3)
        w[p + "mlp.gate_proj.weight"] = tm.linear(rng, inter, d)
        w[p + "mlp.up_proj.weight"] = tm.linear(rng, inter, d)
        w[p + "mlp.down_proj.weight"] = tm.linear(rng, d, inter)
    w["model.norm.weight"] = tm.vector(rng, d, centre, 0.15)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = tm.linear(rng, v, d)
    return w


def encoder_weights(name, c):
    """BertModel's / RobertaModel's state_dict: no "bert." / "roberta." prefix
    (those belong to the *ForMaskedLM & co. wrappers, which also drop the
    pooler)."""
    rng = np.random.RandomState(SEEDS[name])
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    pad = c["pad_token_id"]
    word = (0.7 * rng.standard_normal((v, d))).astype("<f4")
    pos = (0.7 * rng.standard_normal((c["max_position_embeddings"], d))).astype("<f4")
    # nn.Embedding(padding_idx=pad) rows start at zero and get no gradient:
    # word_embeddings in both, position_embeddings in RoBERTa only.
    word[pad] = 0.0
    if c["model_type"] == "roberta":
        pos[pad] = 0.0
    w = {"embeddings.word_embeddings.weight": word,
         "embeddings.position_embeddings.weight": pos,
         "embeddings.token_type_embeddings.weight":
             (0.5 * rng.standard_normal((c["type_vocab_size"], d))).astype("<f4"),
         "embeddings.LayerNorm.weight": tm.vector(rng, d, 1.0, 0.15),
         "embeddings.LayerNorm.bias": tm.vector(rng, d, 0.0, 0.1)}
    for n in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        for part, gain in (("query", QK_GAIN), ("key", QK_GAIN), ("value", 1.0)):
            w[p + f"attention.self.{part}.weight"] = tm.linear(rng, d, d, gain)
            w[p + f"attention.self.{part}.bias"] = tm.vector(rng, d, 0.0, 0.2)
        w[p + "attention.output.dense.weight"] = tm.linear(rng, d, d)
        w[p + "attention.output.dense.bias"] = tm.vector(rng, d, 0.0, 0.2)
        w[p + "attention.output.LayerNorm.weight"] = tm.vector(rng, d, 1.0, 0.15)
        w[p + "attention.output.LayerNorm.bias"] = tm.vector(rng, d, 0.0, 0.1)
        w[p + "intermediate.dense.weight"] = tm.linear(rng, inter, d)
        w[p + "intermediate.dense.bias"] = tm.vector(rng, inter, 0.0, 0.2)
        w[p + "output.dense.weight"] = tm.linear(rng, d, inter)
        w[p + "output.dense.bias"] = tm.vector(rng, d, 0.0, 0.2)
        w[p + "output.LayerNorm.weight"] = tm.vector(rng, d, 1.0, 0.15)
        w[p + "output.LayerNorm.bias"] = tm.vector(rng, d, 0.0, 0.1)
    # BertPooler (add_pooling_layer=True): saved, but no part of the hidden states
    w["pooler.dense.weight"] = tm.linear(rng, d, d)
    w["pooler.dense.bias"] = tm.vector(rng, d, 0.0, 0.1)
    return w


# ---------------------------------------------------------------------------
# Which layers slide (the v5 rules, checked against config.json)
# ---------------------------------------------------------------------------

def windows(c):
    """Per layer: the sliding window, or None for full attention."""
    t, L = c["model_type"], c["num_hidden_layers"]
    if t == "mistral":            # every layer, when sliding_window is set
        return [c.get("sliding_window")] * L
    if t == "qwen2":
        sw = c["sliding_window"] if c.get("use_sliding_window", False) else None
        default = ["sliding_attention" if sw is not None and i >= c.get("max_window_layers", 28)
                   else "full_attention" for i in range(L)]
        types = c.get("layer_types") or default
        assert types == default, "tiny-qwen2's layer_types should be v5's default"
        return [sw if ty == "sliding_attention" else None for ty in types]
    if t == "gemma2":
        default = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(L)]
        types = c.get("layer_types") or default
        assert types == default
        assert all((ty == "sliding_attention") == gem.sliding(i) for i, ty in enumerate(types))
        return [c["sliding_window"] if ty == "sliding_attention" else None for ty in types]
    return [None] * L


# ---------------------------------------------------------------------------
# Forward passes
# ---------------------------------------------------------------------------

def forward_llama_like(c, w, ids, alt=False):
    """MistralModel / Qwen2Model + lm_head: (attentions, hidden, logits)."""
    att_fn = dense.attention_loop if alt else dense.attention
    rn = dense.rms_alt if alt else dense.rms
    act = (lambda t: t * torch.sigmoid(t)) if alt else F.silu
    eps = c["rms_norm_eps"]
    win = windows(c)
    h = w["model.embed_tokens.weight"][ids]
    hidden, atts = [], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a = dense.attn_spec(c, n)          # Llama's attention; theta from rope_parameters
        a["window"] = win[n]
        hidden.append(h)
        o, att = att_fn(rn(h, w[p + "input_layernorm.weight"], eps), w, p, a)
        atts.append(att)
        h = h + o
        m = rn(h, w[p + "post_attention_layernorm.weight"], eps)
        m = (act(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
             ) @ w[p + "mlp.down_proj.weight"].T
        h = h + m
    h = rn(h, w["model.norm.weight"], eps)
    hidden.append(h)
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], (h @ head.T)[None]


def gemma_rms_alt(x, weight, eps):
    return x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps) * (weight + 1.0)


def forward_gemma2(c, w, ids, alt=False):
    """Gemma2Model + Gemma2ForCausalLM's soft-capped tied head."""
    windows(c)                                      # asserts the layer pattern
    g = dict(c, rope_theta=c["rope_parameters"]["rope_theta"])   # make_tiny_gemma's key
    att_fn = gem.attention_loop if alt else gem.attention
    rn = gemma_rms_alt if alt else gem.gemma_rms_norm
    act = (lambda t: F.gelu(t, approximate="tanh")) if alt else gem.gelu_tanh
    eps = c["rms_norm_eps"]
    h = w["model.embed_tokens.weight"][ids] * torch.tensor(c["hidden_size"] ** 0.5,
                                                           dtype=torch.float64)
    hidden, atts = [], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        hidden.append(h)
        o, att = att_fn(rn(h, w[p + "input_layernorm.weight"], eps), w, p, g, n)
        atts.append(att)
        h = h + rn(o, w[p + "post_attention_layernorm.weight"], eps)
        m = rn(h, w[p + "pre_feedforward_layernorm.weight"], eps)
        m = (act(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
             ) @ w[p + "mlp.down_proj.weight"].T
        h = h + rn(m, w[p + "post_feedforward_layernorm.weight"], eps)
    h = rn(h, w["model.norm.weight"], eps)
    hidden.append(h)
    logits = h @ w["model.embed_tokens.weight"].T
    cap = c["final_logit_softcapping"]
    if alt:     # element by element with math.tanh
        logits = torch.tensor([[math.tanh(float(x) / cap) * cap for x in row] for row in logits],
                              dtype=torch.float64)
    else:
        logits = torch.tanh(logits / cap) * cap
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], logits[None]


def encoder_attention(x, w, p, c):
    """BertSelfAttention (eager_attention_forward, v5) + BertSelfOutput.dense."""
    nh = c["num_attention_heads"]
    hs = c["hidden_size"] // nh
    s = p + "attention.self."
    q, k, v = (tm.split_heads(x @ w[s + f"{n}.weight"].T + w[s + f"{n}.bias"], nh)
               for n in ("query", "key", "value"))
    weights = tm.softmax(q @ k.transpose(-1, -2) * hs ** -0.5)     # no mask
    o = (weights @ v).transpose(0, 1).reshape(x.shape)
    dense_ = p + "attention.output.dense."
    return o @ w[dense_ + "weight"].T + w[dense_ + "bias"], weights


def forward_encoder(c, w, ids, alt=False):
    """BertModel / RobertaModel: (attentions, hidden, None)."""
    att_fn = tm.bert_attention_mha if alt else encoder_attention
    ln = tm.layer_norm_alt if alt else tm.layer_norm
    act = F.gelu if alt else tm.gelu_erf
    eps = c["layer_norm_eps"]
    e = "embeddings."
    if c["model_type"] == "roberta":
        pad = c["pad_token_id"]
        mask = (ids != pad).long()
        pos = torch.cumsum(mask, dim=0) * mask + pad       # create_position_ids_from_input_ids
    else:
        pos = torch.arange(len(ids))
    types = torch.zeros(len(ids), dtype=torch.long)
    h = w[e + "word_embeddings.weight"][ids] + w[e + "token_type_embeddings.weight"][types]
    h = h + w[e + "position_embeddings.weight"][pos]
    h = ln(h, w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"], eps)
    hidden, atts = [h], []
    for n in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        a, att = att_fn(h, w, p, c)
        atts.append(att)
        h = ln(a + h, w[p + "attention.output.LayerNorm.weight"],
               w[p + "attention.output.LayerNorm.bias"], eps)
        m = act(h @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"])
        m = m @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
        h = ln(m + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        hidden.append(h)
    return torch.stack(atts)[:, None], torch.stack(hidden)[:, None], None


def forward(c, w, ids, alt=False):
    t = c["model_type"]
    if t in ("mistral", "qwen2"):
        return forward_llama_like(c, w, ids, alt)
    if t == "gemma2":
        return forward_gemma2(c, w, ids, alt)
    return forward_encoder(c, w, ids, alt)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def weights_for(name, c):
    t = c["model_type"]
    if t in ("bert", "roberta"):
        return encoder_weights(name, c)
    return decoder_weights(name, c)


def masked_by_window(c):
    """How many (query, key) pairs with key <= query each layer's window hides."""
    out = []
    for wnd in windows(c):
        out.append(0 if wnd is None else sum(1 for i in range(SEQ) for j in range(i + 1)
                                             if i - j >= wnd))
    return out


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
    L, H, D, V = (c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"],
                  c["vocab_size"])
    assert atts.shape == (L, 1, H, SEQ, SEQ), atts.shape
    assert hidden.shape == (L + 1, 1, SEQ, D), hidden.shape
    assert atts.dtype == hidden.dtype == torch.float64
    assert torch.allclose(atts.sum(-1), torch.ones((), dtype=torch.float64), atol=1e-14)
    diff = max(tm.max_diff(atts, atts2), tm.max_diff(hidden, hidden2))
    # masked entries are exact zeros in both formulations
    for n, wnd in enumerate(windows(c)):
        i = torch.arange(SEQ)[:, None]
        j = torch.arange(SEQ)[None, :]
        causal = c["model_type"] not in ("bert", "roberta")
        hidden_pairs = (j > i) if causal else torch.zeros(SEQ, SEQ, dtype=torch.bool)
        if wnd is not None:
            hidden_pairs = hidden_pairs | (i - j >= wnd)
        assert bool((atts[n, 0][:, hidden_pairs] == 0).all()), (name, n)
        assert bool((atts[n, 0][:, ~hidden_pairs] > 0).all()), (name, n)
    tm.write_json(os.path.join(d, "ids.json"), IDS, indent=None, sort_keys=False)
    tm.write_npy(os.path.join(d, "attentions.npy"), atts.numpy())
    tm.write_npy(os.path.join(d, "hidden.npy"), hidden.numpy())
    extra = ""
    if logits is not None:
        assert logits.shape == (1, SEQ, V), logits.shape
        diff = max(diff, tm.max_diff(logits, logits2))
        tm.write_npy(os.path.join(d, "logits.npy"), logits.numpy())
        if c["model_type"] == "gemma2":
            cap = c["final_logit_softcapping"]
            raw = torch.atanh(logits / cap) * cap
            extra = (f"  |raw logits| max {float(raw.abs().max()):.2f}, "
                     f"{100 * float((raw.abs() > cap / 2).double().mean()):.0f}% past cap/2")
    assert diff <= tm.CROSS_TOL, f"{name}: formulations differ by {diff}"
    causal = c["model_type"] not in ("bert", "roberta")
    rows = atts[:, 0, :, 1:, :] if causal else atts[:, 0]   # a causal row 0 is always 1
    row_max = rows.max(-1).values
    print(f"{name:20s} layers {L} heads {H}  cross-check {diff:.1e}  row max: mean "
          f"{float(row_max.mean()):.3f}, min {float(row_max.min()):.3f}, > 0.5 in "
          f"{100 * float((row_max > 0.5).double().mean()):.0f}% of "
          f"{'rows 1-6' if causal else 'rows'}; window hides {masked_by_window(c)} pairs{extra}")
    return diff


def main():
    torch.set_num_threads(1)       # fixed reduction order, same bytes every run
    worst = max(build(name) for name in CONFIGS)
    sizes = {}
    for path in sorted(tm.WRITTEN):
        top = os.path.relpath(path, HERE).split(os.sep)[0]
        sizes[top] = sizes.get(top, 0) + os.path.getsize(path)
    for name, size in sizes.items():
        print(f"{name:20s} {size:7d} bytes")
        assert size <= 1_000_000
    print(f"worst disagreement between the two formulations: {worst:.2e}")


if __name__ == "__main__":
    main()
