#!/usr/bin/python3
"""Golden cases for attention as current models run it (kv_heads, rope,
alibi, window, softcap, sinks), written the way the models' reference code
does it. Run with Debian's Python (python3-torch 1.13, numpy):

    /usr/bin/python3 tests/golden/make_golden_modern.py

The oracle, `model_style()`, follows the models' own code:

  * RoPE "half": Hugging Face Llama's `rotate_half` with `inv_freq`,
    `cos`/`sin` of `cat(freqs, freqs)`; partial rotary (rope.dims below
    the head width) as GPT-NeoX, rotating the first dims features;
  * RoPE "interleaved": Meta's original Llama, `torch.polar` for
    `freqs_cis` and `view_as_complex` on feature pairs;
  * GQA: `repeat_interleave` of the K/V heads over the query heads
    (Llama's `repeat_kv`);
  * ALiBi: the paper's `get_slopes` (ofirpress/attention_with_linear_biases)
    and a bias -m·|i - j|;
  * softcap: Gemma 2's `tanh(s / c) * c`;
  * sinks: gpt-oss's concatenated sink column (cat a column of sink logits
    to the scores, softmax, drop the column).

Every case is computed a second time by `independent()`, a NumPy
transcription of the formulas in docs/variants.md written with explicit
loops over batch, head and row (pair rotations by angle, slopes by the
closed formula, the sink in the denominator); the two must agree to
1e-12 or the script stops. Cases go to tests/golden/modern/ (the whole
directory is rewritten; tests/golden/cases/ belongs to make_golden.py).
"""

import collections
import json
import math
import os
import shutil
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
F64 = torch.float64
INF = float("inf")
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "modern")
TOLERANCE = 1e-9
CASES = []


def seed_for(name):
    torch.manual_seed(zlib.crc32(name.encode()))


def r(*shape, s=1.0):
    t = torch.randn(*shape, dtype=F64) * s
    flat = [float("%.3f" % v) for v in t.reshape(-1).tolist()]
    return torch.tensor(flat, dtype=F64).reshape(shape)


def to_json(x):
    if torch.is_tensor(x) or isinstance(x, np.ndarray):
        return to_json(x.tolist())
    if isinstance(x, (list, tuple)):
        return [to_json(v) for v in x]
    if isinstance(x, dict):
        return {k: to_json(v) for k, v in x.items()}
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


# ---------------------------------------------------------------------------
# The document, read back into tensors (shared by both implementations).


def setting(doc, key, default=None):
    return doc.get(key, default)


def rope_settings(doc, head_dim):
    ro = doc.get("rope")
    if ro is None or ro is False:
        return None
    ro = {} if ro is True else ro
    return dict(theta=ro.get("theta", 10000.0), dims=ro.get("dims", head_dim),
                layout=ro.get("layout", "half"), q_offset=ro.get("q_offset", 0),
                k_offset=ro.get("k_offset", 0))


def inputs(doc):
    """Q, K, V as [B][H|KV][L][d] float64 tensors after projection and split,
    plus (heads, kv_heads, batched, four_d, W_o, b_o)."""
    t = lambda key: torch.tensor(doc[key], dtype=F64)
    params = {k: torch.tensor(v, dtype=F64) for k, v in doc.get("params", {}).items()}
    torch_layout = doc.get("params_layout") == "torch"
    if "Q" in doc:
        q, k = t("Q"), t("K")
        v = t("V") if "V" in doc else k
    elif "Y" in doc:
        q, k, v = t("X"), t("Y"), t("Y")
    else:
        q = k = v = t("X")
    four_d = q.dim() == 4
    batched = q.dim() >= 3
    if q.dim() == 2:
        q, k, v = q[None], k[None], v[None]
    heads = q.shape[1] if four_d else doc.get("heads", 1)
    kv_heads = doc.get("kv_heads", heads)
    if four_d:
        return q, k, v, heads, kv_heads, batched, four_d, None, None

    def weight(name, nh):
        w = params.get(name)
        if w is None:
            return None
        if w.dim() == 3:  # per head [nh][in][d] (torch: [nh][d][in])
            if torch_layout:
                w = w.transpose(1, 2)
            return torch.cat([w[i] for i in range(nh)], dim=1)
        return w.t() if torch_layout else w

    def bias(name):
        b = params.get(name)
        return None if b is None else b.reshape(-1)

    def proj(x, name, nh):
        w = weight("W_" + name, nh)
        if w is None:
            return x
        y = x @ w
        b = bias("b_" + name)
        return y if b is None else y + b

    qp, kp, vp = proj(q, "q", heads), proj(k, "k", kv_heads), proj(v, "v", kv_heads)
    B, Lq, Lk = qp.shape[0], qp.shape[1], kp.shape[1]
    # Llama's view(bsz, q_len, num_heads, head_dim).transpose(1, 2)
    qh = qp.view(B, Lq, heads, -1).transpose(1, 2)
    kh = kp.view(B, Lk, kv_heads, -1).transpose(1, 2)
    vh = vp.view(B, Lk, kv_heads, -1).transpose(1, 2)
    wo = weight("W_o", 1)
    return qh, kh, vh, heads, kv_heads, batched, four_d, wo, bias("b_o")


def masks(doc, B, Lq, Lk):
    """Blocked cells [B][1][Lq][Lk] (True = may not attend) and the bias."""
    blocked = torch.zeros(B, 1, Lq, Lk, dtype=torch.bool)
    if "mask" in doc:
        m = torch.tensor(doc["mask"], dtype=torch.bool)
        blocked |= m.reshape((1, 1, Lq, Lk) if m.dim() == 2 else (B, 1, Lq, Lk))
    if "key_padding_mask" in doc:
        kpm = torch.tensor(doc["key_padding_mask"], dtype=torch.bool)
        blocked |= kpm.reshape(-1 if kpm.dim() == 2 else 1, 1, 1, Lk)
    if "valid_lens" in doc:
        vl = torch.tensor(doc["valid_lens"]).reshape(-1)
        blocked |= torch.arange(Lk)[None, None, None, :] >= vl.reshape(-1, 1, 1, 1)
    i = torch.arange(Lq)[:, None]
    j = torch.arange(Lk)[None, :]
    if doc.get("causal"):
        blocked |= (j > i)[None, None]
    if "window" in doc:
        w = doc["window"]
        left, right = (w, w) if isinstance(w, int) else w
        if left >= 0:
            blocked |= (j < i - left)[None, None]
        if right >= 0:
            blocked |= (j > i + right)[None, None]
    bias = torch.zeros(1, 1, Lq, Lk)
    if "attn_bias" in doc:
        bias = torch.tensor(doc["attn_bias"], dtype=F64).reshape(1, 1, Lq, Lk)
    return blocked, bias


def scale_factor(doc, d):
    variant = doc.get("variant", "scaled_dot")
    s = doc.get("scale", "sqrt_dk" if variant == "scaled_dot" else "none")
    if isinstance(s, (int, float)):
        return float(s)
    return {"sqrt_dk": 1 / math.sqrt(d), "none": 1.0, "cosine": 1.0, "dk": 1.0 / d}[s]


# ---------------------------------------------------------------------------
# The oracle: the models' reference code.


def rotate_half(x):
    """Hugging Face Llama."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_rope(x, positions, theta, dims):
    inv_freq = 1.0 / (theta ** (torch.arange(0, dims, 2, dtype=F64) / dims))
    freqs = torch.outer(positions.to(F64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    rot, rest = x[..., :dims], x[..., dims:]  # GPT-NeoX partial rotary
    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)


def meta_rope(x, positions, theta, dims):
    """Meta's Llama: precompute_freqs_cis and apply_rotary_emb."""
    freqs = 1.0 / (theta ** (torch.arange(0, dims, 2, dtype=F64)[: dims // 2] / dims))
    freqs = torch.outer(positions.to(F64), freqs)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex128
    rot, rest = x[..., :dims], x[..., dims:]
    x_ = torch.view_as_complex(rot.reshape(*rot.shape[:-1], -1, 2).contiguous())
    out = torch.view_as_real(x_ * freqs_cis).flatten(-2)
    return torch.cat((out, rest), dim=-1)


def get_slopes(n):
    """The ALiBi paper's code (Press et al.)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2) +
            get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2])


def model_style(doc):
    q, k, v, H, KV, batched, four_d, wo, bo = inputs(doc)
    B, Lq, Lk, d = q.shape[0], q.shape[2], k.shape[2], q.shape[3]
    ro = rope_settings(doc, d)
    if ro:
        fn = hf_rope if ro["layout"] == "half" else meta_rope
        q = fn(q, torch.arange(Lq) + ro["q_offset"], ro["theta"], ro["dims"])
        k = fn(k, torch.arange(Lk) + ro["k_offset"], ro["theta"], ro["dims"])
    k = torch.repeat_interleave(k, H // KV, dim=1)  # repeat_kv
    v = torch.repeat_interleave(v, H // KV, dim=1)
    if doc.get("scale") == "cosine":
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    s = torch.matmul(q, k.transpose(2, 3)) * scale_factor(doc, d)
    s = s / doc.get("temperature", 1.0)
    if "softcap" in doc:  # Gemma 2
        c = doc["softcap"]
        s = torch.tanh(s / c) * c
    blocked, bias = masks(doc, B, Lq, Lk)
    s = s + bias
    if doc.get("alibi"):
        a = doc["alibi"]
        slopes = torch.tensor(get_slopes(H) if a is True else a, dtype=F64)
        dist = (torch.arange(Lq)[:, None] - torch.arange(Lk)[None, :]).abs().to(F64)
        s = s - slopes.reshape(1, H, 1, 1) * dist
    s = s.masked_fill(blocked, -INF)
    if "sinks" in doc:  # gpt-oss
        sk = doc["sinks"]
        sk = torch.tensor([sk] * H if not isinstance(sk, list) else sk, dtype=F64)
        col = sk.reshape(1, H, 1, 1).expand(B, H, Lq, 1)
        w = torch.softmax(torch.cat([s, col], dim=-1), dim=-1)[..., :-1]
    else:
        w = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    o = torch.matmul(w, v)
    if four_d:
        out = o
    else:
        out = o.transpose(1, 2).reshape(B, Lq, -1)
        if wo is not None:
            out = out @ wo
        if bo is not None:
            out = out + bo
    if not batched:
        out, w = out[0], w[0]
    if not four_d and H == 1:
        w = w[:, 0] if batched else w[0]
    return out, w


# ---------------------------------------------------------------------------
# The second implementation: loops over the formulas of docs/variants.md.


def independent(doc):
    q, k, v, H, KV, batched, four_d, wo, bo = inputs(doc)
    q, k, v = q.numpy(), k.numpy(), v.numpy()
    B, Lq, Lk, d = q.shape[0], q.shape[2], k.shape[2], q.shape[3]
    dv = v.shape[3]
    ro = rope_settings(doc, d)

    def rotate(x, offset):
        x = x.copy()
        dims, half = ro["dims"], ro["dims"] // 2
        for i in range(x.shape[0]):
            t = offset + i
            for p in range(half):
                ang = t * ro["theta"] ** (-2.0 * p / dims)
                a_i, b_i = (p, p + half) if ro["layout"] == "half" else (2 * p, 2 * p + 1)
                a, b = x[i, a_i], x[i, b_i]
                x[i, a_i] = a * math.cos(ang) - b * math.sin(ang)
                x[i, b_i] = b * math.cos(ang) + a * math.sin(ang)
        return x

    blocked, bias = masks(doc, B, Lq, Lk)
    blocked, bias = blocked.numpy(), bias.numpy()
    slopes = None
    if doc.get("alibi"):
        a = doc["alibi"]
        if a is True:
            n2 = 1
            while n2 * 2 <= H:
                n2 *= 2
            slopes = [2.0 ** (-8.0 * (h + 1) / n2) if h < n2 else
                      2.0 ** (-4.0 * (2 * (h - n2) + 1) / n2) for h in range(H)]
        else:
            slopes = a
    sinks = doc.get("sinks")
    if sinks is not None and not isinstance(sinks, list):
        sinks = [sinks] * H
    factor = scale_factor(doc, d) / doc.get("temperature", 1.0)
    W = np.zeros((B, H, Lq, Lk))
    O = np.zeros((B, H, Lq, dv))
    for b in range(B):
        for h in range(H):
            g = h // (H // KV)
            qh, kh = q[b, h], k[b, g]
            if ro:
                qh, kh = rotate(qh, ro["q_offset"]), rotate(kh, ro["k_offset"])
            if doc.get("scale") == "cosine":
                qh = qh / np.maximum(np.linalg.norm(qh, axis=1, keepdims=True), 1e-12)
                kh = kh / np.maximum(np.linalg.norm(kh, axis=1, keepdims=True), 1e-12)
            for i in range(Lq):
                row = np.empty(Lk)
                for j in range(Lk):
                    s = float(np.dot(qh[i], kh[j])) * factor
                    if "softcap" in doc:
                        s = doc["softcap"] * math.tanh(s / doc["softcap"])
                    s += bias[0, 0, i, j]
                    if slopes is not None:
                        s -= slopes[h] * abs(i - j)
                    if blocked[b if blocked.shape[0] > 1 else 0, 0, i, j]:
                        s = -INF
                    row[j] = s
                m = row.max()
                if m == -INF:
                    continue  # zero weights, zero output (with or without a sink)
                if sinks is not None:
                    m = max(m, sinks[h])
                e = np.exp(row - m)
                z = e.sum() + (math.exp(sinks[h] - m) if sinks is not None else 0.0)
                W[b, h, i] = e / z
                O[b, h, i] = W[b, h, i] @ v[b, g]
    if four_d:
        out = O
    else:
        out = np.concatenate([O[:, h] for h in range(H)], axis=-1)
        if wo is not None:
            out = out @ wo.numpy()
        if bo is not None:
            out = out + bo.numpy()
    if not batched:
        out, W = out[0], W[0]
    if not four_d and H == 1:
        W = W[:, 0] if batched else W[0]
    return out, W


def emit(name, title, doc, what):
    out, w = model_style(doc)
    out2, w2 = independent(doc)
    for a, b_, label in ((out, out2, "output"), (w, w2, "weights")):
        a = a.detach().numpy()
        if a.shape != b_.shape or not np.all(np.abs(a - b_) <= 1e-12 * np.maximum(1, np.abs(b_))):
            print("the two implementations disagree on", label, "in", name, file=sys.stderr)
            print(a, "\n", b_, file=sys.stderr)
            sys.exit(1)
    full = collections.OrderedDict()
    full["title"] = title
    full["description"] = ("golden case generated by tests/golden/make_golden_modern.py; oracle: "
                           "PyTorch " + torch.__version__.split("a")[0] + " float64, " + what +
                           "; cross-checked at 1e-12 against an independent NumPy implementation")
    full.update(doc)
    full["expected"] = collections.OrderedDict(
        [("output", out.detach()), ("weights", w.detach()), ("tolerance", TOLERANCE)])
    CASES.append(("%03d_%s.json" % (len(CASES) + 1, name), full))


# ---------------------------------------------------------------------------
# The cases.


def proj_params(d_in, H, KV, d, dv=None, bias=False, wo=False, per_head=False):
    dv = dv or d
    p = collections.OrderedDict()
    if per_head:
        p["W_q"] = r(H, d_in, d, s=0.5)
        p["W_k"] = r(KV, d_in, d, s=0.5)
        p["W_v"] = r(KV, d_in, dv, s=0.5)
    else:
        p["W_q"] = r(d_in, H * d, s=0.5)
        p["W_k"] = r(d_in, KV * d, s=0.5)
        p["W_v"] = r(d_in, KV * dv, s=0.5)
    if bias:
        p["b_q"], p["b_k"], p["b_v"] = r(H * d, s=0.1), r(KV * d, s=0.1), r(KV * dv, s=0.1)
    if wo:
        p["W_o"] = r(H * dv, d_in, s=0.5)
        if bias:
            p["b_o"] = r(d_in, s=0.1)
    return p


def cases():
    def case(name, title, what, **doc):
        seed_for(name)
        built = collections.OrderedDict()
        for k_, v_ in doc.items():
            built[k_] = to_json(v_() if callable(v_) else v_)
        emit(name, title, built, what)

    hf = "Hugging Face rotate_half RoPE"
    meta = "Meta Llama polar/view_as_complex RoPE"
    rep = "repeat_interleave of K/V heads (repeat_kv)"
    # RoPE alone, both layouts, partial rotary, offsets, every mode.
    case("rope_half_self_2d", "RoPE, half layout, self attention", hf,
         X=lambda: r(5, 8), rope=True)
    case("rope_interleaved_self_2d", "RoPE, interleaved layout", meta,
         X=lambda: r(5, 8), rope={"layout": "interleaved"})
    case("rope_half_qkv_3d", "RoPE on batched Q, K, V", hf,
         Q=lambda: r(2, 4, 6), K=lambda: r(2, 5, 6), V=lambda: r(2, 5, 3),
         rope={"theta": 100.0})
    case("rope_interleaved_cross_3d", "RoPE interleaved, cross attention", meta,
         X=lambda: r(2, 3, 4), Y=lambda: r(2, 6, 4), rope={"layout": "interleaved", "theta": 50.0})
    case("rope_partial_dims_heads", "RoPE on 4 of 8 features of each of 2 heads (GPT-NeoX rotary_pct)",
         hf, X=lambda: r(5, 6), heads=2, rope={"dims": 4, "theta": 500000.0},
         params=lambda: proj_params(6, 2, 2, 8))
    case("rope_partial_interleaved", "RoPE interleaved on 2 of 6 features", meta,
         X=lambda: r(4, 6), rope={"dims": 2, "layout": "interleaved", "theta": 10.0})
    case("rope_decode_offsets", "RoPE for a decoding step: 2 queries after 6 cached keys", hf,
         Q=lambda: r(2, 8), K=lambda: r(8, 8), V=lambda: r(8, 4),
         rope={"q_offset": 6, "theta": 1000.0}, causal=False)
    case("rope_both_offsets_interleaved", "RoPE with query and key offsets", meta,
         Q=lambda: r(3, 4), K=lambda: r(5, 4), rope={"layout": "interleaved", "q_offset": 3,
                                                      "k_offset": 1})
    case("rope_4d", "RoPE on 4D Q/K/V", hf,
         Q=lambda: r(1, 2, 4, 4), K=lambda: r(1, 2, 4, 4), V=lambda: r(1, 2, 4, 3), rope=True)
    case("rope_cosine", "RoPE before cosine normalisation", hf,
         X=lambda: r(4, 4), rope=True, scale="cosine", temperature=0.1)
    case("rope_torch_layout_bias", "RoPE after projections with biases, torch layout", hf,
         X=lambda: r(2, 4, 6), heads=2, rope={"theta": 10.0}, params_layout="torch",
         params=lambda: {k_: (v_.transpose(-1, -2) if k_.startswith("W") else v_)
                         for k_, v_ in proj_params(6, 2, 2, 4, bias=True, wo=True).items()})
    # GQA and MQA.
    case("gqa_projections", "grouped-query attention, 4 query heads over 2 K/V heads", rep,
         X=lambda: r(5, 8), heads=4, kv_heads=2, params=lambda: proj_params(8, 4, 2, 3, bias=True, wo=True))
    case("mqa_projections_3d", "multi-query attention (kv_heads 1), batched", rep,
         X=lambda: r(2, 4, 6), heads=3, kv_heads=1, params=lambda: proj_params(6, 3, 1, 2, dv=3, wo=True))
    case("gqa_per_head_weights", "GQA with per-head weights [kv_heads][in][d]", rep,
         X=lambda: r(4, 5), heads=4, kv_heads=2, params=lambda: proj_params(5, 4, 2, 2, per_head=True))
    case("gqa_cross", "GQA in cross attention", rep,
         X=lambda: r(3, 4), Y=lambda: r(6, 4), heads=2, kv_heads=1,
         params=lambda: proj_params(4, 2, 1, 3))
    case("gqa_qkv_3d", "GQA with Q, K, V given (K/V have kv_heads·d columns)", rep,
         Q=lambda: r(2, 3, 8), K=lambda: r(2, 5, 4), V=lambda: r(2, 5, 2), heads=4, kv_heads=2)
    case("gqa_4d", "GQA with 4D Q [2][4] heads and K/V [2][2] heads", rep,
         Q=lambda: r(2, 4, 3, 2), K=lambda: r(2, 2, 5, 2), V=lambda: r(2, 2, 5, 3), kv_heads=2)
    case("gqa_torch_layout", "GQA with nn.Linear-layout weights", rep,
         X=lambda: r(4, 6), heads=2, kv_heads=1, params_layout="torch",
         params=lambda: {k_: v_.t() for k_, v_ in proj_params(6, 2, 1, 3, wo=True).items()})
    # ALiBi.
    case("alibi_paper_8_heads", "ALiBi with the paper's slopes, 8 heads", "ALiBi paper get_slopes",
         X=lambda: r(5, 16), heads=8, alibi=True, params=lambda: proj_params(16, 8, 8, 2))
    case("alibi_paper_6_heads_causal", "BLOOM-style ALiBi, 6 heads (not a power of two), causal",
         "ALiBi paper get_slopes", X=lambda: r(2, 5, 12), heads=6, alibi=True, causal=True,
         params=lambda: proj_params(12, 6, 6, 2, wo=True))
    case("alibi_slopes_given", "ALiBi with given slopes plus attn_bias", "explicit slopes",
         X=lambda: r(4, 4), heads=2, alibi=[0.5, 0.125], attn_bias=lambda: r(4, 4))
    case("alibi_cross_rect", "ALiBi with more keys than queries", "ALiBi paper get_slopes",
         Q=lambda: r(3, 4), K=lambda: r(6, 4), alibi=True)
    # Windows.
    case("window_symmetric", "sliding window w = 1", "band mask",
         X=lambda: r(6, 4), window=1)
    case("window_mistral_causal", "Mistral-style window [2, 0] with causal", "band mask",
         X=lambda: r(7, 4), window=[2, 0], causal=True)
    case("window_right_only", "window [-1, 1]: unbounded past, one key ahead", "band mask",
         X=lambda: r(5, 4), window=[-1, 1])
    case("window_cross_rect", "window on 3 queries x 7 keys", "band mask",
         Q=lambda: r(3, 4), K=lambda: r(7, 4), V=lambda: r(7, 2), window=[1, 2])
    case("window_key_padding", "window combined with a key padding mask", "band mask",
         X=lambda: r(2, 5, 4), window=[1, 1], key_padding_mask=[[0, 0, 0, 1, 1], [0, 1, 0, 0, 0]])
    # Softcap.
    case("softcap_scaled", "soft-capped scores, c = 1.5", "Gemma 2 tanh(s/c)*c",
         X=lambda: r(5, 4, s=2.0), softcap=1.5)
    case("softcap_dot_temperature", "softcap after scale and temperature", "Gemma 2 tanh(s/c)*c",
         Q=lambda: r(3, 4, s=2.0), K=lambda: r(4, 4, s=2.0), variant="dot", temperature=0.5,
         softcap=2.0)
    case("softcap_gemma2_window", "Gemma-2-style: scale query_pre_attn_scalar^-0.5, softcap, window",
         "Gemma 2 tanh(s/c)*c", X=lambda: r(6, 8), heads=2, kv_heads=1, scale=0.25, softcap=5.0,
         window=[2, 0], causal=True, rope=True, params=lambda: proj_params(8, 2, 1, 4, wo=True))
    # Sinks.
    case("sinks_scalar", "one sink logit for every head", "gpt-oss concatenated sink column",
         X=lambda: r(4, 4), sinks=0.7)
    case("sinks_per_head_masked_row", "per-head sinks; a fully masked row goes to the sink",
         "gpt-oss concatenated sink column",
         X=lambda: r(4, 4), heads=2, sinks=[0.5, -1.0],
         mask=[[1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]])
    case("sinks_valid_lens", "sinks with valid_lens", "gpt-oss concatenated sink column",
         Q=lambda: r(2, 3, 4), K=lambda: r(2, 5, 4), valid_lens=[2, 5], sinks=1.5)
    case("sinks_gptoss_window_gqa", "gpt-oss-style: sinks, window, GQA, RoPE",
         "gpt-oss concatenated sink column; " + rep,
         X=lambda: r(2, 6, 8), heads=4, kv_heads=2, window=[2, 0], causal=True,
         sinks=[0.3, -0.2, 1.0, 0.0], rope={"theta": 150000.0},
         params=lambda: proj_params(8, 4, 2, 2, bias=True, wo=True))
    # Combinations as the models run them.
    case("llama_rope_gqa_causal", "Llama-style: RoPE, GQA 4/2, causal, projections", hf + "; " + rep,
         X=lambda: r(2, 6, 8), heads=4, kv_heads=2, causal=True, rope={"theta": 500000.0},
         params=lambda: proj_params(8, 4, 2, 2, wo=True))
    case("llama_meta_interleaved_gqa", "Meta Llama: interleaved RoPE, GQA, causal", meta + "; " + rep,
         X=lambda: r(5, 8), heads=2, kv_heads=1, causal=True, rope={"layout": "interleaved"},
         params=lambda: proj_params(8, 2, 1, 4, wo=True))
    case("mistral_window_gqa", "Mistral-style: sliding window, GQA, RoPE, causal", hf + "; " + rep,
         X=lambda: r(7, 8), heads=4, kv_heads=1, window=[3, 0], causal=True, rope=True,
         params=lambda: proj_params(8, 4, 1, 2, wo=True))
    case("everything", "every key at once", "all of the above",
         X=lambda: r(2, 5, 8), heads=4, kv_heads=2, rope={"dims": 2, "layout": "interleaved"},
         alibi=True, window=[2, 1], softcap=3.0, sinks=[0.1, 0.2, 0.3, 0.4], temperature=0.7,
         key_padding_mask=[0, 0, 0, 0, 1], params=lambda: proj_params(8, 4, 2, 2, bias=True, wo=True))


def main():
    cases()
    if os.path.isdir(OUT_DIR):
        shutil.rmtree(OUT_DIR)
    os.makedirs(OUT_DIR)
    for fname, doc in CASES:
        with open(os.path.join(OUT_DIR, fname), "w") as f:
            f.write(json.dumps(to_json(doc), allow_nan=False) + "\n")
    print("wrote %d cases to %s" % (len(CASES), OUT_DIR))


if __name__ == "__main__":
    main()
