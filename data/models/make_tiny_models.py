#!/usr/bin/python3
"""Build three tiny Hugging Face-style models and their reference numbers.

The weights are made up (drawn from numpy generators with a fixed random
state), but the files use the exact layout Hugging Face writes:

* ``config.json`` with the field names of ``transformers.LlamaConfig``,
  ``transformers.GPT2Config`` and ``transformers.BertConfig``;
* ``.safetensors`` files with the tensor names that ``LlamaForCausalLM``,
  ``GPT2LMHeadModel`` (hub checkpoint naming, no ``transformer.`` prefix) and
  ``BertModel`` save, including a sharded BF16 copy of the Llama model with
  its ``model.safetensors.index.json``.

The reference numbers are computed by a float64 PyTorch re-implementation of
the forward passes of ``LlamaModel`` / ``LlamaAttention`` (RoPE, grouped-query
attention), ``GPT2Model`` / ``GPT2Attention`` and ``BertModel`` /
``BertSelfAttention``, starting from the stored (float32 or bfloat16) weights
cast to float64.  Every attention module is checked against a second,
independent formulation (Meta's complex-number RoPE for Llama,
``torch.nn.MultiheadAttention`` for GPT-2 and BERT), and every safetensors
file is read back with a separate little reader.

Run with ``python3 data/models/make_tiny_models.py`` (needs numpy and torch).
Output is byte-identical from run to run.
"""

import hashlib
import io
import json
import math
import os
import struct
import sys
import zipfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SEQ = 7                # tokens per sentence (batch of one)
CROSS_TOL = 1e-12      # agreement required between the two formulations


# ---------------------------------------------------------------------------
# safetensors writer / reader
# ---------------------------------------------------------------------------

# dtype tag -> (numpy little-endian dtype used for the raw bytes, bytes per item)
ST_DTYPES = {
    "F64": ("<f8", 8),
    "F32": ("<f4", 4),
    "F16": ("<f2", 2),
    "BF16": ("<u2", 2),   # stored as raw 16-bit patterns (see f32_to_bf16_bits)
    "I64": ("<i8", 8),
    "BOOL": ("|b1", 1),
}


def f32_to_bf16_bits(values):
    """Round float32 values to bfloat16, returning the uint16 bit patterns.

    Round to nearest, ties to even, done on the float32 bit pattern: add
    0x7FFF plus the lowest kept bit, then drop the low 16 bits.  NaN becomes
    the quiet NaN 0x7FC0 (sign kept), as PyTorch does.  Infinities and values
    that round past the largest bfloat16 become +-inf, as they should.
    """
    f = np.ascontiguousarray(values, dtype="<f4")
    u = f.view("<u4").astype(np.uint64)          # 64-bit: no overflow on add
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(f)
    rounded[nan] = 0x7FC0 | ((u[nan] >> 16) & 0x8000)
    return rounded.astype("<u2")


def bf16_bits_to_f32(bits):
    """Exact widening of bfloat16 bit patterns to float32."""
    return (np.asarray(bits, dtype="<u2").astype("<u4") << 16).view("<f4")


def safetensors_bytes(tensors):
    """Serialise {name: (dtype_tag, ndarray)} like the official library.

    For "BF16" the array must already hold the uint16 bit patterns.
    Tensors are laid out contiguously in the order of their sorted names;
    the JSON header is compact and padded with spaces to a multiple of 8.
    """
    header = {"__metadata__": {"format": "pt"}}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        tag, arr = tensors[name]
        np_dtype, _ = ST_DTYPES[tag]
        data = np.ascontiguousarray(arr, dtype=np_dtype).tobytes(order="C")
        header[name] = {"dtype": tag, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + b"".join(chunks)


def read_safetensors(path_or_bytes):
    """Independent reader: returns {name: (dtype_tag, ndarray)} (BF16 decoded
    to float32) and the metadata, after checking the layout strictly."""
    if isinstance(path_or_bytes, bytes):
        blob = path_or_bytes
    else:
        with open(path_or_bytes, "rb") as fh:
            blob = fh.read()
    assert len(blob) >= 8, "file shorter than its length prefix"
    (n,) = struct.unpack_from("<Q", blob, 0)
    assert 8 + n <= len(blob), "header runs past the end of the file"
    assert n % 8 == 0, "header not padded to 8 bytes"
    raw = blob[8:8 + n].decode("utf-8")
    assert raw.startswith("{") and raw.rstrip(" ").endswith("}"), "bad header"
    header = json.loads(raw)
    buf = blob[8 + n:]
    meta = header.pop("__metadata__", None)
    spans = sorted((v["data_offsets"][0], v["data_offsets"][1], k)
                   for k, v in header.items())
    pos = 0
    for begin, end, name in spans:
        assert begin == pos, f"{name}: gap or overlap at {begin} (expected {pos})"
        assert begin <= end <= len(buf), f"{name}: offsets outside the file"
        pos = end
    assert pos == len(buf), "trailing bytes after the last tensor"
    # the official writer orders the data by name when dtypes are all equal
    assert [s[2] for s in spans] == sorted(header), "data not in name order"
    out = {}
    for name, info in header.items():
        tag, shape = info["dtype"], tuple(info["shape"])
        begin, end = info["data_offsets"]
        np_dtype, size = ST_DTYPES[tag]
        count = int(np.prod(shape, dtype=np.int64))
        assert end - begin == count * size, f"{name}: size does not match shape"
        arr = np.frombuffer(buf[begin:end], dtype=np_dtype).reshape(shape)
        if tag == "BF16":
            arr = bf16_bits_to_f32(arr).reshape(shape)
        out[name] = (tag, arr)
    return out, meta


# ---------------------------------------------------------------------------
# small deterministic file helpers
# ---------------------------------------------------------------------------

WRITTEN = []   # every file this run wrote, for the report


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
    WRITTEN.append(path)


def write_json(path, obj, indent=2, sort_keys=True):
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    write_bytes(path, (text + "\n").encode("utf-8"))


def npy_bytes(arr):
    bio = io.BytesIO()
    np.lib.format.write_array(bio, np.ascontiguousarray(arr), allow_pickle=False)
    return bio.getvalue()


def write_npy(path, arr, dtype="<f8"):
    write_bytes(path, npy_bytes(np.asarray(arr, dtype=dtype)))


def write_npz(path, **arrays):
    """Like np.savez_compressed, but with a fixed zip entry date so that the
    file is identical on every run (numpy stamps the current time)."""
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, npy_bytes(arrays[key]))
    write_bytes(path, bio.getvalue())


def t64(a):
    """numpy (float32 / bf16-decoded) array -> float64 torch tensor."""
    return torch.from_numpy(np.asarray(a, dtype=np.float64).copy())


def max_diff(a, b):
    return float((torch.as_tensor(a) - torch.as_tensor(b)).abs().max())


# ---------------------------------------------------------------------------
# made-up weights
# ---------------------------------------------------------------------------

def linear(rng, out_f, in_f, gain=1.0):
    """[out_features, in_features], std gain/sqrt(fan_in), stored as float32."""
    return (rng.standard_normal((out_f, in_f)) * gain / math.sqrt(in_f)).astype("<f4")


def vector(rng, n, centre=0.0, spread=0.1):
    return (centre + spread * rng.standard_normal(n)).astype("<f4")


# ---------------------------------------------------------------------------
# 1. Llama (LlamaForCausalLM): RMSNorm, RoPE, grouped-query attention, SwiGLU
# ---------------------------------------------------------------------------

LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
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
    "hidden_act": "silu",
    "torch_dtype": "float32",
    "tie_word_embeddings": False,
}
LLAMA_TOKENS = ["<s>", "\u2581The", "\u2581cat", "\u2581sat", "\u2581on", "\u2581the", "\u2581mat"]
LLAMA_IDS = [1, 17, 29, 8, 33, 12, 24]


def llama_weights():
    c = LLAMA_CONFIG
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    rng = np.random.default_rng(20261123)
    w = {"model.embed_tokens.weight": rng.standard_normal((v, d)).astype("<f4")}
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        w[p + "input_layernorm.weight"] = vector(rng, d, 1.0, 0.2)
        # a little extra gain on q/k so that the attention patterns are peaked
        w[p + "self_attn.q_proj.weight"] = linear(rng, nh * hd, d, 1.5)
        w[p + "self_attn.k_proj.weight"] = linear(rng, nkv * hd, d, 1.5)
        w[p + "self_attn.v_proj.weight"] = linear(rng, nkv * hd, d)
        w[p + "self_attn.o_proj.weight"] = linear(rng, d, nh * hd)
        w[p + "post_attention_layernorm.weight"] = vector(rng, d, 1.0, 0.2)
        w[p + "mlp.gate_proj.weight"] = linear(rng, inter, d)
        w[p + "mlp.up_proj.weight"] = linear(rng, inter, d)
        w[p + "mlp.down_proj.weight"] = linear(rng, d, inter)
    w["model.norm.weight"] = vector(rng, d, 1.0, 0.2)
    w["lm_head.weight"] = linear(rng, v, d)
    return w


def rms_norm(x, weight, eps):
    # LlamaRMSNorm: x * rsqrt(mean(x^2) + eps) * weight
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(seq, head_dim, theta):
    # LlamaRotaryEmbedding: the frequency of pair i is used twice, for
    # dimensions i and i + head_dim/2 (the "half-split" layout of HF weights).
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def causal_mask(seq):
    return torch.triu(torch.full((seq, seq), float("-inf"), dtype=torch.float64), 1)


def softmax(scores):
    e = torch.exp(scores - scores.max(-1, keepdim=True).values)
    return e / e.sum(-1, keepdim=True)


def llama_attention(x, w, p, c):
    """LlamaAttention.forward for one sequence: x [seq, hidden] ->
    (output after o_proj [seq, hidden], weights [heads, seq, seq])."""
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    s = x.shape[0]
    q = (x @ w[p + "self_attn.q_proj.weight"].T).view(s, nh, hd).transpose(0, 1)
    k = (x @ w[p + "self_attn.k_proj.weight"].T).view(s, nkv, hd).transpose(0, 1)
    v = (x @ w[p + "self_attn.v_proj.weight"].T).view(s, nkv, hd).transpose(0, 1)
    cos, sin = rope_cos_sin(s, hd, c["rope_theta"])
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    # repeat_kv: query head i reads key/value head i // (nh // nkv)
    group = nh // nkv
    k = k.repeat_interleave(group, dim=0)
    v = v.repeat_interleave(group, dim=0)
    scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + causal_mask(s)
    weights = softmax(scores)
    o = (weights @ v).transpose(0, 1).reshape(s, nh * hd)
    return o @ w[p + "self_attn.o_proj.weight"].T, weights


def llama_attention_meta(x, w, p, c):
    """Second formulation: Meta's original llama code.  Meta's q/k weights
    interleave the rotary pairs (dims 2i, 2i+1); HF's conversion script
    permutes them into the half-split layout.  Undo that permutation, then
    rotate with complex multiplication by exp(i * pos * freq)."""
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    d, s = x.shape[1], x.shape[0]

    def unpermute(wt, heads):   # inverse of convert_llama_weights_to_hf.permute
        return wt.view(heads, 2, hd // 2, d).transpose(1, 2).reshape(heads * hd, d)

    wq = unpermute(w[p + "self_attn.q_proj.weight"], nh)
    wk = unpermute(w[p + "self_attn.k_proj.weight"], nkv)
    freqs = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64)[: hd // 2] / hd))
    angles = torch.outer(torch.arange(s, dtype=torch.float64), freqs)
    freqs_cis = torch.polar(torch.ones_like(angles), angles)            # [s, hd/2]

    def rotate(t):   # t [s, heads, hd] with interleaved pairs
        tc = torch.view_as_complex(t.reshape(s, t.shape[1], hd // 2, 2).contiguous())
        return torch.view_as_real(tc * freqs_cis[:, None, :]).reshape(t.shape)

    xq = rotate((x @ wq.T).view(s, nh, hd))
    xk = rotate((x @ wk.T).view(s, nkv, hd))
    xv = (x @ w[p + "self_attn.v_proj.weight"].T).view(s, nkv, hd)
    group = nh // nkv
    out = torch.empty(s, nh, hd, dtype=torch.float64)
    weights = torch.empty(nh, s, s, dtype=torch.float64)
    for h in range(nh):             # explicit per-head loop, kv head h // group
        kv = h // group
        sc = torch.einsum("id,jd->ij", xq[:, h], xk[:, kv]) / math.sqrt(hd)
        sc = sc.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
        weights[h] = torch.softmax(sc, dim=-1)
        out[:, h] = weights[h] @ xv[:, kv]
    return out.reshape(s, nh * hd) @ w[p + "self_attn.o_proj.weight"].T, weights


def llama_forward(w, ids, c, attention, norm=rms_norm, act=F.silu):
    eps = c["rms_norm_eps"]
    h = w["model.embed_tokens.weight"][ids]
    xs, outs, atts = [], [], []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        x = norm(h, w[p + "input_layernorm.weight"], eps)
        a, att = attention(x, w, p, c)
        xs.append(x), outs.append(a), atts.append(att)
        h = h + a
        m = norm(h, w[p + "post_attention_layernorm.weight"], eps)
        gate = m @ w[p + "mlp.gate_proj.weight"].T
        up = m @ w[p + "mlp.up_proj.weight"].T
        h = h + (act(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    return xs, outs, torch.stack(atts)[:, None]   # [layers, batch=1, heads, s, s]


# ---------------------------------------------------------------------------
# 2. GPT-2 (GPT2LMHeadModel): learned positions, LayerNorm, Conv1D, gelu_new
# ---------------------------------------------------------------------------

GPT2_CONFIG = {
    "architectures": ["GPT2LMHeadModel"],
    "model_type": "gpt2",
    "n_embd": 32,
    "n_head": 4,
    "n_layer": 2,
    "n_positions": 64,
    "n_ctx": 64,
    "vocab_size": 40,
    "layer_norm_epsilon": 1e-5,
    "scale_attn_weights": True,
    "activation_function": "gelu_new",
    "torch_dtype": "float32",
}
GPT2_TOKENS = ["The", "\u0120cat", "\u0120sat", "\u0120on", "\u0120the", "\u0120mat", "."]
GPT2_IDS = [21, 5, 38, 14, 27, 9, 2]


def gpt2_weights():
    c = GPT2_CONFIG
    d, v, npos = c["n_embd"], c["vocab_size"], c["n_positions"]
    rng = np.random.default_rng(20261124)
    w = {"wte.weight": rng.standard_normal((v, d)).astype("<f4"),
         "wpe.weight": (0.5 * rng.standard_normal((npos, d))).astype("<f4")}
    for n in range(c["n_layer"]):
        p = f"h.{n}."
        w[p + "ln_1.weight"] = vector(rng, d, 1.0, 0.2)
        w[p + "ln_1.bias"] = vector(rng, d)
        # Conv1D stores [in_features, out_features]; forward is x @ W + b
        w[p + "attn.c_attn.weight"] = linear(rng, 3 * d, d, 1.5).T.copy()
        w[p + "attn.c_attn.bias"] = vector(rng, 3 * d)
        w[p + "attn.c_proj.weight"] = linear(rng, d, d).T.copy()
        w[p + "attn.c_proj.bias"] = vector(rng, d)
        w[p + "ln_2.weight"] = vector(rng, d, 1.0, 0.2)
        w[p + "ln_2.bias"] = vector(rng, d)
        w[p + "mlp.c_fc.weight"] = linear(rng, 4 * d, d).T.copy()
        w[p + "mlp.c_fc.bias"] = vector(rng, 4 * d)
        w[p + "mlp.c_proj.weight"] = linear(rng, d, 4 * d).T.copy()
        w[p + "mlp.c_proj.bias"] = vector(rng, d)
    w["ln_f.weight"] = vector(rng, d, 1.0, 0.2)
    w["ln_f.bias"] = vector(rng, d)
    return w


def layer_norm(x, weight, bias, eps):
    mu = x.mean(-1, keepdim=True)
    var = (x - mu).pow(2).mean(-1, keepdim=True)        # biased variance
    return (x - mu) / torch.sqrt(var + eps) * weight + bias


def gelu_new(x):
    # NewGELUActivation: the tanh approximation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def gelu_erf(x):
    # BERT's "gelu": the exact erf form
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def split_heads(t, nh):
    s, d = t.shape
    return t.view(s, nh, d // nh).transpose(0, 1)       # [heads, s, head_dim]


def gpt2_attention(x, w, p, c):
    """GPT2Attention.forward: Conv1D qkv, split q|k|v, causal softmax."""
    nh, d = c["n_head"], c["n_embd"]
    qkv = x @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
    q, k, v = (split_heads(t, nh) for t in qkv.split(d, dim=-1))
    scores = q @ k.transpose(-1, -2)
    if c["scale_attn_weights"]:
        scores = scores / math.sqrt(v.shape[-1])
    weights = softmax(scores + causal_mask(x.shape[0]))
    o = (weights @ v).transpose(0, 1).reshape(x.shape)
    return o @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"], weights


def mha_from(in_w, in_b, out_w, out_b, d, nh):
    """torch.nn.MultiheadAttention in float64 with the given torch-layout
    weights (in_proj [3d, d] = q;k;v rows, out_proj [d, d])."""
    mha = torch.nn.MultiheadAttention(d, nh, bias=True, batch_first=True,
                                      dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(in_w)
        mha.in_proj_bias.copy_(in_b)
        mha.out_proj.weight.copy_(out_w)
        mha.out_proj.bias.copy_(out_b)
    return mha.eval()


def gpt2_attention_mha(x, w, p, c):
    d, nh = c["n_embd"], c["n_head"]
    mha = mha_from(w[p + "attn.c_attn.weight"].T, w[p + "attn.c_attn.bias"],
                   w[p + "attn.c_proj.weight"].T, w[p + "attn.c_proj.bias"], d, nh)
    s = x.shape[0]
    mask = torch.ones(s, s, dtype=torch.bool).triu(1)    # True = not allowed
    with torch.no_grad():
        out, att = mha(x[None], x[None], x[None], attn_mask=mask,
                       need_weights=True, average_attn_weights=False)
    return out[0], att[0]


def gpt2_forward(w, ids, c, attention, ln=layer_norm, act=gelu_new):
    eps = c["layer_norm_epsilon"]
    h = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(len(ids))]
    xs, outs, atts = [], [], []
    for n in range(c["n_layer"]):
        p = f"h.{n}."
        x = ln(h, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        a, att = attention(x, w, p, c)
        xs.append(x), outs.append(a), atts.append(att)
        h = h + a
        m = ln(h, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        m = act(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        h = h + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return xs, outs, torch.stack(atts)[:, None]


# ---------------------------------------------------------------------------
# 3. BERT (BertModel): post-norm encoder, bidirectional attention
# ---------------------------------------------------------------------------

BERT_CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "hidden_size": 32,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    "vocab_size": 40,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
    "position_embedding_type": "absolute",
    "torch_dtype": "float32",
}
BERT_TOKENS = ["[CLS]", "the", "cat", "sat", "on", "mat", "[SEP]"]
BERT_IDS = [2, 11, 26, 35, 19, 30, 3]


def bert_weights():
    c = BERT_CONFIG
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    rng = np.random.default_rng(20261125)
    w = {
        "embeddings.word_embeddings.weight": rng.standard_normal((v, d)).astype("<f4"),
        "embeddings.position_embeddings.weight":
            (0.5 * rng.standard_normal((c["max_position_embeddings"], d))).astype("<f4"),
        "embeddings.token_type_embeddings.weight":
            (0.5 * rng.standard_normal((c["type_vocab_size"], d))).astype("<f4"),
        "embeddings.LayerNorm.weight": vector(rng, d, 1.0, 0.2),
        "embeddings.LayerNorm.bias": vector(rng, d),
    }
    for n in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        for part, gain in (("query", 1.5), ("key", 1.5), ("value", 1.0)):
            w[p + f"attention.self.{part}.weight"] = linear(rng, d, d, gain)
            w[p + f"attention.self.{part}.bias"] = vector(rng, d)
        w[p + "attention.output.dense.weight"] = linear(rng, d, d)
        w[p + "attention.output.dense.bias"] = vector(rng, d)
        w[p + "attention.output.LayerNorm.weight"] = vector(rng, d, 1.0, 0.2)
        w[p + "attention.output.LayerNorm.bias"] = vector(rng, d)
        w[p + "intermediate.dense.weight"] = linear(rng, inter, d)
        w[p + "intermediate.dense.bias"] = vector(rng, inter)
        w[p + "output.dense.weight"] = linear(rng, d, inter)
        w[p + "output.dense.bias"] = vector(rng, d)
        w[p + "output.LayerNorm.weight"] = vector(rng, d, 1.0, 0.2)
        w[p + "output.LayerNorm.bias"] = vector(rng, d)
    return w


def bert_attention(x, w, p, c):
    """BertSelfAttention + BertSelfOutput.dense (before its LayerNorm)."""
    nh = c["num_attention_heads"]
    s = p + "attention.self."
    q, k, v = (split_heads(x @ w[s + f"{n}.weight"].T + w[s + f"{n}.bias"], nh)
               for n in ("query", "key", "value"))
    weights = softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]))   # no mask
    o = (weights @ v).transpose(0, 1).reshape(x.shape)
    dense = p + "attention.output.dense."
    return o @ w[dense + "weight"].T + w[dense + "bias"], weights


def bert_attention_mha(x, w, p, c):
    d, nh = c["hidden_size"], c["num_attention_heads"]
    s = p + "attention.self."
    mha = mha_from(torch.cat([w[s + f"{n}.weight"] for n in ("query", "key", "value")]),
                   torch.cat([w[s + f"{n}.bias"] for n in ("query", "key", "value")]),
                   w[p + "attention.output.dense.weight"],
                   w[p + "attention.output.dense.bias"], d, nh)
    with torch.no_grad():
        out, att = mha(x[None], x[None], x[None], need_weights=True,
                       average_attn_weights=False)
    return out[0], att[0]


def bert_forward(w, ids, c, attention, ln=layer_norm, act=gelu_erf):
    eps = c["layer_norm_eps"]
    e = "embeddings."
    h = (w[e + "word_embeddings.weight"][ids]
         + w[e + "position_embeddings.weight"][torch.arange(len(ids))]
         + w[e + "token_type_embeddings.weight"][torch.zeros(len(ids), dtype=torch.long)])
    h = ln(h, w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"], eps)
    xs, outs, atts = [], [], []
    for n in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        a, att = attention(h, w, p, c)
        xs.append(h), outs.append(a), atts.append(att)
        h = ln(a + h, w[p + "attention.output.LayerNorm.weight"],
               w[p + "attention.output.LayerNorm.bias"], eps)
        m = act(h @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"])
        m = m @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
        h = ln(m + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return xs, outs, torch.stack(atts)[:, None]


# Second formulations of the non-attention parts, built from torch.nn pieces,
# so that the cross-check covers the whole path into every layer.

def rms_norm_alt(x, weight, eps):
    return weight * (x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps))


def layer_norm_alt(x, weight, bias, eps):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def llama_forward_alt(w, ids, c):
    return llama_forward(w, ids, c, llama_attention_meta, norm=rms_norm_alt,
                         act=lambda t: t * torch.sigmoid(t))


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

def to_torch(weights, decode_bf16=False):
    out = {}
    for k, a in weights.items():
        out[k] = t64(bf16_bits_to_f32(a) if decode_bf16 else a)
    return out


def write_refs(outdir, tokens, ids, xs, outs, atts, extra_attention_files=False):
    write_json(os.path.join(outdir, "tokens.json"), tokens, indent=None, sort_keys=False)
    write_json(os.path.join(outdir, "ids.json"), ids, indent=None, sort_keys=False)
    for n, (x, a) in enumerate(zip(xs, outs)):
        write_npy(os.path.join(outdir, f"x_layer{n}.npy"), x.numpy())
        write_npy(os.path.join(outdir, f"attn_out_layer{n}.npy"), a.numpy())
    att32 = atts.numpy().astype("<f4")
    write_npy(os.path.join(outdir, "attentions.npy"), att32, dtype="<f4")
    if extra_attention_files:
        write_bytes(os.path.join(outdir, "attentions.safetensors"),
                    safetensors_bytes({"attentions": ("F32", att32)}))
        write_npz(os.path.join(outdir, "attentions.npz"), attentions=att32)


def check_file(path, expected):
    """Read a safetensors file back and compare with {name: (tag, array)}."""
    got, meta = read_safetensors(path)
    assert meta == {"format": "pt"}, meta
    assert sorted(got) == sorted(expected), f"{path}: tensor names differ"
    for name, (tag, arr) in expected.items():
        gtag, garr = got[name]
        assert gtag == tag, f"{name}: dtype {gtag} != {tag}"
        want = bf16_bits_to_f32(arr) if tag == "BF16" else arr
        assert garr.shape == want.shape, f"{name}: shape"
        assert garr.dtype.itemsize == want.dtype.itemsize
        assert garr.tobytes() == np.ascontiguousarray(want).tobytes(), f"{name}: values"
    return got


def self_test_bf16():
    cases = [
        (1.0, 0x3F80),
        (1.0 + 2.0 ** -8, 0x3F80),            # exact tie, 0x3F80 is even: down
        (1.0 + 3 * 2.0 ** -9, 0x3F81),        # above the tie: up
        (1.0 + 2.0 ** -7 + 2.0 ** -8, 0x3F82),  # tie with odd 0x3F81: up to even
        (1.0 + 2.0 ** -9, 0x3F80),            # below the tie: down
        (-2.0, 0xC000),
        (0.0, 0x0000),
        (-0.0, 0x8000),
        (3.140625, 0x4049),
        (float("inf"), 0x7F80),
        (float("-inf"), 0xFF80),
        (float(np.finfo(np.float32).max), 0x7F80),   # rounds past the top: inf
        (float(np.finfo(np.float32).tiny), 0x0080),
        (float("nan"), 0x7FC0),
    ]
    vals = np.array([v for v, _ in cases], dtype="<f4")
    bits = f32_to_bf16_bits(vals)
    for (v, want), got in zip(cases, bits):
        assert int(got) == want, f"bf16({v!r}) = {int(got):#06x}, want {want:#06x}"
    # agree with PyTorch's own conversion on many random values
    r = np.random.default_rng(7).standard_normal(100000).astype("<f4") * 1e3
    r = np.concatenate([r, vals[:-1]])
    tb = torch.from_numpy(r).to(torch.bfloat16).view(torch.int16).numpy().view("<u2")
    assert np.array_equal(tb, f32_to_bf16_bits(r)), "bf16 rounding differs from torch"
    assert bf16_bits_to_f32(np.array([0x3F81], dtype="<u2"))[0] == 1.0 + 2.0 ** -7
    print(f"bf16 rounding: {len(cases)} hand cases and {r.size} values agree with torch")


def self_test_safetensors():
    """Round trip every dtype through the writer and the reader in memory."""
    rng = np.random.default_rng(99)
    src = {
        "f64": ("F64", rng.standard_normal((2, 3))),
        "f32": ("F32", rng.standard_normal((3,)).astype("<f4")),
        "f16": ("F16", rng.standard_normal((2, 2, 2)).astype("<f2")),
        "bf16": ("BF16", f32_to_bf16_bits(rng.standard_normal(5))),
        "i64": ("I64", np.arange(-3, 4, dtype="<i8").reshape(7, 1)),
        "bool": ("BOOL", np.array([[True, False, True]])),
        "scalar": ("F32", np.array(2.5, dtype="<f4")),
    }
    blob = safetensors_bytes(src)
    got, _ = read_safetensors(blob)
    for name, (tag, arr) in src.items():
        want = bf16_bits_to_f32(arr) if tag == "BF16" else arr
        assert got[name][0] == tag and np.array_equal(got[name][1], want), name
    print("safetensors writer/reader: round trip of F64 F32 F16 BF16 I64 BOOL ok")


def main():
    torch.set_num_threads(1)        # fixed reduction order, same bytes every run
    self_test_bf16()
    self_test_safetensors()
    report = []

    # ---- tiny-llama (float32) ----------------------------------------------
    d = os.path.join(HERE, "tiny-llama")
    c = LLAMA_CONFIG
    w32 = llama_weights()
    write_json(os.path.join(d, "config.json"), c)
    st = {k: ("F32", a) for k, a in w32.items()}
    write_bytes(os.path.join(d, "model.safetensors"), safetensors_bytes(st))
    check_file(os.path.join(d, "model.safetensors"), st)
    wt = to_torch(w32)
    ids = torch.tensor(LLAMA_IDS)
    xs, outs, atts = llama_forward(wt, ids, c, llama_attention)
    xs2, outs2, atts2 = llama_forward_alt(wt, ids, c)
    report.append(("tiny-llama", xs, outs, atts, xs2, outs2, atts2))
    write_refs(d, LLAMA_TOKENS, LLAMA_IDS, xs, outs, atts, extra_attention_files=True)
    check_file(os.path.join(d, "attentions.safetensors"),
               {"attentions": ("F32", atts.numpy().astype("<f4"))})
    with np.load(os.path.join(d, "attentions.npz")) as z:
        assert np.array_equal(z["attentions"], atts.numpy().astype("<f4"))

    # ---- tiny-llama-bf16 (same weights rounded, two shards) ----------------
    d = os.path.join(HERE, "tiny-llama-bf16")
    cb = dict(c, torch_dtype="bfloat16")
    wb = {k: f32_to_bf16_bits(a) for k, a in w32.items()}
    write_json(os.path.join(d, "config.json"), cb)
    shards = {"model-00001-of-00002.safetensors": {}, "model-00002-of-00002.safetensors": {}}
    for k, a in wb.items():
        first = k == "model.embed_tokens.weight" or k.startswith("model.layers.0.")
        shards["model-0000%d-of-00002.safetensors" % (1 if first else 2)][k] = ("BF16", a)
    weight_map = {}
    total = 0
    for fname, tensors in shards.items():
        write_bytes(os.path.join(d, fname), safetensors_bytes(tensors))
        check_file(os.path.join(d, fname), tensors)
        for k, (_, a) in tensors.items():
            weight_map[k] = fname
            total += a.nbytes
    write_json(os.path.join(d, "model.safetensors.index.json"),
               {"metadata": {"total_size": total}, "weight_map": weight_map})
    # the decoded BF16 values are the rounded float32 values, within half a bf16 ulp
    for k in w32:
        dec = bf16_bits_to_f32(wb[k])
        assert np.all(np.abs(dec - w32[k]) <= np.abs(w32[k]) * 2.0 ** -8), k
    wt = to_torch(wb, decode_bf16=True)
    xs, outs, atts = llama_forward(wt, ids, cb, llama_attention)
    xs2, outs2, atts2 = llama_forward_alt(wt, ids, cb)
    report.append(("tiny-llama-bf16", xs, outs, atts, xs2, outs2, atts2))
    write_refs(d, LLAMA_TOKENS, LLAMA_IDS, xs, outs, atts)

    # ---- tiny-gpt2 ------------------------------------------------------------
    d = os.path.join(HERE, "tiny-gpt2")
    c = GPT2_CONFIG
    w = gpt2_weights()
    write_json(os.path.join(d, "config.json"), c)
    st = {k: ("F32", a) for k, a in w.items()}
    write_bytes(os.path.join(d, "model.safetensors"), safetensors_bytes(st))
    check_file(os.path.join(d, "model.safetensors"), st)
    wt = to_torch(w)
    ids = torch.tensor(GPT2_IDS)
    xs, outs, atts = gpt2_forward(wt, ids, c, gpt2_attention)
    xs2, outs2, atts2 = gpt2_forward(wt, ids, c, gpt2_attention_mha, ln=layer_norm_alt,
                                     act=lambda t: F.gelu(t, approximate="tanh"))
    report.append(("tiny-gpt2", xs, outs, atts, xs2, outs2, atts2))
    write_refs(d, GPT2_TOKENS, GPT2_IDS, xs, outs, atts)

    # ---- tiny-bert ------------------------------------------------------------
    d = os.path.join(HERE, "tiny-bert")
    c = BERT_CONFIG
    w = bert_weights()
    write_json(os.path.join(d, "config.json"), c)
    st = {k: ("F32", a) for k, a in w.items()}
    write_bytes(os.path.join(d, "model.safetensors"), safetensors_bytes(st))
    check_file(os.path.join(d, "model.safetensors"), st)
    wt = to_torch(w)
    ids = torch.tensor(BERT_IDS)
    xs, outs, atts = bert_forward(wt, ids, c, bert_attention)
    xs2, outs2, atts2 = bert_forward(wt, ids, c, bert_attention_mha, ln=layer_norm_alt,
                                     act=F.gelu)
    report.append(("tiny-bert", xs, outs, atts, xs2, outs2, atts2))
    write_refs(d, BERT_TOKENS, BERT_IDS, xs, outs, atts)

    # ---- cross-checks -----------------------------------------------------
    worst = 0.0
    for name, xs, outs, atts, xs2, outs2, atts2 in report:
        dx = max(max_diff(a, b) for a, b in zip(xs, xs2))
        do = max(max_diff(a, b) for a, b in zip(outs, outs2))
        da = max_diff(atts, atts2)
        worst = max(worst, dx, do, da)
        peak = float(atts.max(-1).values.mean())
        print(f"{name:16s} max |diff|: x {dx:.2e}  attn_out {do:.2e}  weights {da:.2e}"
              f"   (mean row max of the weights {peak:.3f})")
        assert atts.shape == (len(xs), 1, 4, SEQ, SEQ)
        assert torch.allclose(atts.sum(-1), torch.ones(()).double(), atol=1e-14)
    assert worst <= CROSS_TOL, f"cross-check disagreement {worst}"

    total = 0
    for path in sorted(WRITTEN):
        with open(path, "rb") as fh:
            data = fh.read()
        total += len(data)
        print(f"{len(data):8d}  {hashlib.sha256(data).hexdigest()[:16]}  "
              f"{os.path.relpath(path, HERE)}")
    print(f"{total} bytes in {len(WRITTEN)} files")
    assert total <= 1_000_000


if __name__ == "__main__":
    sys.exit(main())
