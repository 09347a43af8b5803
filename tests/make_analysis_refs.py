#!/usr/bin/python3
"""Float64 references for attn's analyses of a model's attention
(docs/analyses.md), written from their definitions and nothing of attn's:

* head summaries (entropy in nats, first, previous, self, distance): the mean
  over the query rows, leaving out the rows whose query sees a single key
  (a causal model's first query) and, for previous, a query with no
  previous token; over several sentences numpy.nanmean and numpy.nanstd
  (ddof 0) of the per-sentence values;
* attention rollout (Abnar & Zuidema 2020): A_hat = rownorm(0.5 * fuse(A) +
  0.5 * I), R_0 = A_hat_0, R_l = A_hat_l @ R_(l-1), fuse = mean, max, min;
* value norms (Kobayashi et al. 2020): alpha_ij * ||v_j W_O^h||, v with its
  bias, W_O^h the rows of the output projection (as x @ W_O) that multiply
  head h's output;
* the logit lens: every hidden state through the final norm and the
  unembedding (soft-capped or scaled as the model's logits are), the last
  state (already normed) through the unembedding only; predictions are the
  top K of softmax over the vocabulary;
* the per-head difference of two stacks: max |B - A| and the mean over the
  query rows of the Jensen-Shannon divergence, on the tokens difflib's
  SequenceMatcher matches;
* difflib's matching blocks of token sequences.

The forward passes are the float64 re-implementations that made the tiny
checkpoints' references (data/models/make_tiny_classic.py for Qwen 2 and
BERT, make_tiny_models.py's Llama attention), on the weights read back from
each model.safetensors. Run with ``/usr/bin/python3 tests/make_analysis_refs.py``;
it writes tests/analysis/, the same bytes every run.
"""

import difflib
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = os.path.join(ROOT, "data", "models")
OUT = os.path.join(HERE, "analysis")
sys.path.insert(0, MODELS)
import make_tiny_classic as mc  # noqa: E402  (Qwen 2 and BERT forward passes)
import make_tiny_models as tm  # noqa: E402  (safetensors reader, Llama attention)

STATS = ["entropy", "first", "previous", "self", "distance"]


def weights(name):
    tensors, _ = tm.read_safetensors(os.path.join(MODELS, name, "model.safetensors"))
    return {k: torch.from_numpy(np.array(a, dtype=np.float64)) for k, (_, a) in tensors.items()}


def config(name):
    with open(os.path.join(MODELS, name, "config.json")) as f:
        return json.load(f)


def write_npy(name, a):
    np.save(os.path.join(OUT, name), np.ascontiguousarray(a, dtype="<f8"))


# ---------------------------------------------------------------------------
# Head summaries
# ---------------------------------------------------------------------------

def head_summary(panel, stat, shift, causal):
    """One [q][k] panel: query i at key position i + shift; with `causal` it
    sees keys 0 .. i + shift."""
    q, k = panel.shape
    values = []
    for i in range(q):
        w = panel[i]
        pos = i + shift
        seen = min(k, pos + 1) if causal else k
        if seen <= 1 or w.sum() == 0:
            continue
        if stat == "entropy":
            v = -sum(x * math.log(x) for x in w if x > 0)
        elif stat == "first":
            v = w[0]
        elif stat == "previous":
            if pos < 1:
                continue
            v = w[pos - 1]
        elif stat == "self":
            v = w[pos]
        else:
            v = sum(w[j] * abs(pos - j) for j in range(k))
        values.append(v)
    return float(np.mean(values)) if values else float("nan")


def alignment(stack):
    """(shift, causal) of a stack [..][q][k], from its zeros."""
    q, k = stack.shape[-2:]
    shift = 0
    first = stack.reshape(-1, q, k)[0, 0]
    if k > q and (first[1:] != 0).any():
        shift = k - q
    causal = all((stack[..., i, i + shift + 1:] == 0).all() for i in range(q))
    return shift, causal


def summaries(stack, stat):
    """[layers][1][heads][q][k] -> [layers][heads]."""
    shift, causal = alignment(stack)
    return [[head_summary(stack[l, 0, h], stat, shift, causal) for h in range(stack.shape[2])]
            for l in range(stack.shape[0])]


# ---------------------------------------------------------------------------
# Rollout, value norms
# ---------------------------------------------------------------------------

def rollout(stack, fusion):
    out, r = [], None
    for l in range(stack.shape[0]):
        a = stack[l, 0]
        f = {"mean": a.mean(0), "max": a.max(0), "min": a.min(0)}[fusion]
        a_hat = 0.5 * f + 0.5 * np.eye(f.shape[0])
        a_hat = a_hat / a_hat.sum(-1, keepdims=True)
        r = a_hat if r is None else a_hat @ r
        out.append(r[None, None])
    return np.stack(out)          # [layers][1][1][q][q]


def value_norms(alpha, values, w_o):
    """alpha [heads][q][k], values [heads][k][dv] (each query head's),
    w_o [heads * dv][hidden] (as x @ W_O)."""
    h_n, _, dv = values.shape
    out = np.empty_like(alpha)
    for h in range(h_n):
        norms = np.linalg.norm(values[h] @ w_o[h * dv:(h + 1) * dv], axis=-1)
        out[h] = alpha[h] * norms[None, :]
    return out


def rms(x, w, eps, unit=False):
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return y * ((1.0 + w) if unit else w)


def layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    y = (x - m) / np.sqrt(v + eps) * w
    return y if b is None else y + b


def qwen2_values(name):
    c, w = config(name), weights(name)
    hidden = np.load(os.path.join(MODELS, name, "hidden.npy"))
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = c["hidden_size"] // nh
    out = []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        x = rms(hidden[n, 0], w[p + "input_layernorm.weight"].numpy(), c["rms_norm_eps"])
        v = x @ w[p + "self_attn.v_proj.weight"].numpy().T + w[p + "self_attn.v_proj.bias"].numpy()
        per = nh // nkv
        vals = np.stack([v[:, (h // per) * hd:(h // per + 1) * hd] for h in range(nh)])
        out.append((vals, w[p + "self_attn.o_proj.weight"].numpy().T))
    return out


def gpt2_values(name):
    c, w = config(name), weights(name)
    hidden = np.load(os.path.join(MODELS, name, "hidden.npy"))
    d, nh = c["n_embd"], c["n_head"]
    hd = d // nh
    out = []
    for n in range(c["n_layer"]):
        p = f"h.{n}."
        key = lambda s: s if s in w else "transformer." + s  # noqa: E731
        x = layer_norm(hidden[n, 0], w[key(p + "ln_1.weight")].numpy(),
                       w[key(p + "ln_1.bias")].numpy(), c["layer_norm_epsilon"])
        qkv = x @ w[key(p + "attn.c_attn.weight")].numpy() + w[key(p + "attn.c_attn.bias")].numpy()
        v = qkv[:, 2 * d:3 * d]
        vals = np.stack([v[:, h * hd:(h + 1) * hd] for h in range(nh)])
        out.append((vals, w[key(p + "attn.c_proj.weight")].numpy()))   # Conv1D: [in][out]
    return out


def deepseek_values(name):
    c, w = config(name), weights(name)
    hidden = np.load(os.path.join(MODELS, name, "hidden.npy"))
    nh, dn, dv, rkv = (c["num_attention_heads"], c["qk_nope_head_dim"], c["v_head_dim"],
                       c["kv_lora_rank"])
    out = []
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        x = rms(hidden[n, 0], w[p + "input_layernorm.weight"].numpy(), c["rms_norm_eps"])
        a = p + "self_attn."
        ckv = x @ w[a + "kv_a_proj_with_mqa.weight"].numpy().T
        if a + "kv_a_proj_with_mqa.bias" in w:
            ckv = ckv + w[a + "kv_a_proj_with_mqa.bias"].numpy()
        kv = rms(ckv[:, :rkv], w[a + "kv_a_layernorm.weight"].numpy(), 1e-6) @ \
            w[a + "kv_b_proj.weight"].numpy().T
        vals = np.stack([kv[:, h * (dn + dv) + dn:(h + 1) * (dn + dv)] for h in range(nh)])
        out.append((vals, w[a + "o_proj.weight"].numpy().T))
    return out


# ---------------------------------------------------------------------------
# The logit lens
# ---------------------------------------------------------------------------

def lens(name):
    """[layers + 1][q][vocab]: each hidden state through the final norm (the
    last is normed already) and the unembedding, with the model's logit
    soft-cap or scale."""
    c, w = config(name), weights(name)
    hidden = np.load(os.path.join(MODELS, name, "hidden.npy"))[:, 0]
    t = c["model_type"]
    head = w["lm_head.weight"] if "lm_head.weight" in w else w["model.embed_tokens.weight"]
    head = head.numpy()
    out = []
    for s in range(hidden.shape[0]):
        h = hidden[s]
        if s < hidden.shape[0] - 1:
            if t == "cohere":
                h = layer_norm(h, w["model.norm.weight"].numpy(), None, c["layer_norm_eps"])
            else:
                h = rms(h, w["model.norm.weight"].numpy(), c["rms_norm_eps"],
                        unit=t.startswith("gemma"))
        logits = h @ head.T
        if t == "gemma2" and c.get("final_logit_softcapping"):
            cap = c["final_logit_softcapping"]
            logits = np.tanh(logits / cap) * cap
        if t == "granite":
            logits = logits / c["logits_scaling"]
        if t == "cohere":
            logits = logits * c["logit_scale"]
        out.append(logits)
    out = np.stack(out)
    final = np.load(os.path.join(MODELS, name, "logits.npy"))[0]
    assert np.abs(out[-1] - final).max() <= 1e-12 * np.abs(final).max(), name
    return out


def top_k(logits, k):
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    order = np.argsort(-logits, axis=-1, kind="stable")[..., :k]
    return order, np.take_along_axis(p, order, -1)


def llama_hidden(name, ids):
    """tiny-llama's forward (make_tiny_models.llama_attention per layer):
    the hidden states after the final norm, [q][hidden]."""
    c, w = config(name), weights(name)
    eps = c["rms_norm_eps"]
    h = w["model.embed_tokens.weight"][torch.tensor(ids)]
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        a, _ = tm.llama_attention(tm.rms_norm(h, w[p + "input_layernorm.weight"], eps), w, p, c)
        h = h + a
        m = tm.rms_norm(h, w[p + "post_attention_layernorm.weight"], eps)
        h = h + (F.silu(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
                 ) @ w[p + "mlp.down_proj.weight"].T
    return tm.rms_norm(h, w["model.norm.weight"], eps), w


# ---------------------------------------------------------------------------
# Differences of two stacks
# ---------------------------------------------------------------------------

def js(p, q):
    p, q = p / p.sum(), q / q.sum()
    m = 0.5 * (p + q)
    return 0.5 * sum(a * math.log(a / b) for a, b in zip(p, m) if a > 0) + \
        0.5 * sum(a * math.log(a / b) for a, b in zip(q, m) if a > 0)


def head_differences(a, b, ta, tb):
    L, H = a.shape[0], a.shape[2]
    max_abs = np.zeros((L, H))
    jsd = np.zeros((L, H))
    for l in range(L):
        for h in range(H):
            pa = a[l, 0, h][np.ix_(ta, ta)]
            pb = b[l, 0, h][np.ix_(tb, tb)]
            max_abs[l, h] = np.abs(pb - pa).max()
            jsd[l, h] = np.mean([js(pa[r], pb[r]) for r in range(len(ta))])
    return max_abs, jsd


def matching(a, b):
    pairs = []
    for blk in difflib.SequenceMatcher(None, a, b).get_matching_blocks():
        pairs += [[blk.a + t, blk.b + t] for t in range(blk.size)]
    return pairs


# ---------------------------------------------------------------------------

def stack_of(name, ids):
    c = config(name)
    att, _, _ = mc.forward(c, weights(name), torch.tensor(ids))
    return att.numpy()


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    refs = {}

    # Head summaries of the tiny models' own stacks: causal (Qwen 2, with a
    # sliding window), not causal (BERT), and a KV cache's bottom-right
    # queries (the last 4 of Qwen 2's 7 over all 7 keys).
    qwen = np.load(os.path.join(MODELS, "tiny-qwen2", "attentions.npy"))
    bert = np.load(os.path.join(MODELS, "tiny-bert-f64", "attentions.npy"))
    cache = np.ascontiguousarray(qwen[:, :, :, 3:, :])
    write_npy("cache_stack.npy", cache)
    refs["summaries"] = {
        key: {s: summaries(stack, s) for s in STATS}
        for key, stack in (("tiny-qwen2", qwen), ("tiny-bert-f64", bert), ("cache", cache))}

    # Over sentences: the per-sentence summaries' nanmean and nanstd.
    sentences = {"tiny-qwen2": [[3, 17, 29, 8], [41], [2, 17, 29, 8, 33, 12, 24],
                                [5, 9, 40, 11, 2, 6, 30, 31, 47], [12, 12, 12]],
                 "tiny-bert-f64": [[2, 17, 29, 8], [7], [2, 17, 29, 8, 33, 12, 24],
                                   [5, 9, 30, 11, 2, 6]]}
    refs["sentences"] = {}
    for name, all_ids in sentences.items():
        per = {s: [] for s in STATS}
        for ids in all_ids:
            st = stack_of(name, ids)
            for s in STATS:
                per[s].append(summaries(st, s))
        entry = {"ids": all_ids}
        with np.errstate(all="ignore"):
            for s in STATS:
                v = np.array(per[s])
                entry[s] = {"mean": np.nanmean(v, 0).tolist(), "sd": np.nanstd(v, 0).tolist(),
                            "counts": (~np.isnan(v)).sum(0).tolist()}
        refs["sentences"][name] = entry

    # Rollout.
    for key, stack in (("tiny-qwen2", qwen), ("tiny-bert-f64", bert)):
        for fusion in ("mean", "max", "min"):
            write_npy(f"rollout_{key}_{fusion}.npy", rollout(stack, fusion))

    # Value norms: GQA with a value bias (Qwen 2), Conv1D's fused c_attn
    # (GPT-2), latent attention's values per head (DeepSeek-V3).
    for key, fn in (("tiny-qwen2", qwen2_values), ("tiny-gpt2-ninner", gpt2_values),
                    ("tiny-deepseek-v3", deepseek_values)):
        att = np.load(os.path.join(MODELS, key, "attentions.npy"))
        layers = fn(key)
        out = np.stack([value_norms(att[n, 0], v, wo)[None] for n, (v, wo) in enumerate(layers)])
        write_npy(f"value_norm_{key}.npy", out)

    # The logit lens, and the predictions of its last state.
    refs["lens"] = {}
    for key in ("tiny-qwen2", "tiny-gemma2-softcap", "tiny-granite", "tiny-cohere"):
        lg = lens(key)
        write_npy(f"lens_{key}.npy", lg)
        ids, p = top_k(lg, 3)
        refs["lens"][key] = {"ids": ids.tolist(), "p": p.tolist()}

    # tiny-llama's predictions with tokens (its tokenizer's vocabulary).
    llama_ids = [1, 17, 29, 8, 33, 12, 24]
    last, w = llama_hidden("tiny-llama", llama_ids)
    logits = (last @ w["lm_head.weight"].T).numpy()
    write_npy("logits_tiny-llama.npy", logits[None])
    with open(os.path.join(MODELS, "tiny-llama", "tokenizer.json")) as f:
        vocab = {i: t for t, i in json.load(f)["model"]["vocab"].items()}
    ids, p = top_k(logits, 3)
    refs["predictions"] = {"model": "tiny-llama", "ids": llama_ids, "top_ids": ids.tolist(),
                           "top_tokens": [[vocab[int(i)] for i in row] for row in ids],
                           "p": p.tolist()}

    # Two sentences of different lengths through Qwen 2, as attn run writes
    # them (-f json, the ids as labels), and their per-head difference.
    ids_a = [2, 17, 29, 8, 33, 12, 24]
    ids_b = [2, 17, 40, 29, 8, 12, 24, 24, 5]
    diff = {}
    stacks = {}
    for side, ids in (("a", ids_a), ("b", ids_b)):
        st = stack_of("tiny-qwen2", ids)
        stacks[side] = st
        labels = [f"t{i}" for i in ids]
        doc = {"labels": {"queries": labels, "keys": labels}, "weights": st.tolist(),
               "weights_axes": ["layers", "batch", "heads", "queries", "keys"]}
        with open(os.path.join(OUT, f"diff_{side}.json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
    pairs = matching([f"t{i}" for i in ids_a], [f"t{i}" for i in ids_b])
    ta, tb = [p_[0] for p_ in pairs], [p_[1] for p_ in pairs]
    max_abs, jsd = head_differences(stacks["a"], stacks["b"], ta, tb)
    diff["pairs"] = pairs
    diff["max_abs"] = max_abs.tolist()
    diff["js"] = jsd.tolist()
    # The same sentence against itself with other weights: position by position.
    same_max, same_js = head_differences(qwen, stacks["a"], list(range(7)), list(range(7)))
    diff["same_max_abs"] = same_max.tolist()
    refs["diff"] = diff

    # difflib's matching blocks: short sequences, and long ones where
    # popular tokens (more than 1% of b, past 200 tokens) start no match.
    rng = np.random.RandomState(49)
    cases = [("a b c d".split(), "a x c d".split()), ("the cat sat".split(), "a dog".split()),
             ("x y x y x".split(), "y x y".split()), ([], "a".split())]
    for n in (250, 400):
        a = [f"w{int(t)}" for t in rng.randint(0, 12, n)]
        b = list(a)
        for _ in range(30):
            b.insert(int(rng.randint(0, len(b))), f"w{int(rng.randint(0, 40))}")
            del b[int(rng.randint(0, len(b)))]
        cases.append((a, b))
    refs["matching"] = [{"a": a, "b": b, "pairs": matching(a, b)} for a, b in cases]

    with open(os.path.join(OUT, "refs.json"), "w") as f:
        json.dump(refs, f, indent=1, allow_nan=True)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"tests/analysis: {len(os.listdir(OUT))} files, {total} bytes")


if __name__ == "__main__":
    main()
