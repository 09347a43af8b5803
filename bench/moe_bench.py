"""The forward pass of a small mixture-of-experts model: attn against PyTorch
(not a test: numbers to read).

  /usr/bin/python3 bench/moe_bench.py [ATTN] [--scratch DIR] [--tokens N]
                                      [--threads T] [--rounds R]

Builds once, in the scratch directory (default /tmp/attn-moe-bench), a
Qwen3-MoE-shaped checkpoint of random bf16 weights (8 layers, hidden 768,
12 heads / 4 K/V heads of width 64, per-head Q/K norms, 32 experts of
width 384 with 4 chosen per token, renormalised; vocab 32000: about 580 MB),
and a prompt of N random token ids (default 128).

Then, in rounds, times attn run --checkpoint DIR --ids ... --layer all
--dtype f32 -o stack.npy (the whole program, wall time and peak RSS) and
the same forward in PyTorch 1.13 float32, written as transformers'
Qwen3MoeModel computes it in eager mode (the router's softmax, top k,
renormalised; each expert run on its tokens in expert order and index_add_
into the output), on weights loaded beforehand as float32; only the
forward is timed. The two stacks are compared.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forward_bench as fb  # noqa: E402  (bf16, blas_of_torch, run_attn)

CONFIG = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "hidden_size": 768,
    "intermediate_size": 2048,
    "moe_intermediate_size": 384,
    "num_experts": 32,
    "num_experts_per_tok": 4,
    "norm_topk_prob": True,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
    "num_attention_heads": 12,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "num_hidden_layers": 8,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def tensors():
    c = CONFIG
    d, f, v = c["hidden_size"], c["moe_intermediate_size"], c["vocab_size"]
    hd, nh, nkv, ne = c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["num_experts"]
    out = [("model.embed_tokens.weight", (v, d), 0.02)]
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        out += [(p + "input_layernorm.weight", (d,), None),
                (p + "self_attn.q_proj.weight", (nh * hd, d), d ** -0.5),
                (p + "self_attn.k_proj.weight", (nkv * hd, d), d ** -0.5),
                (p + "self_attn.v_proj.weight", (nkv * hd, d), d ** -0.5),
                (p + "self_attn.o_proj.weight", (d, nh * hd), (nh * hd) ** -0.5),
                (p + "self_attn.q_norm.weight", (hd,), None),
                (p + "self_attn.k_norm.weight", (hd,), None),
                (p + "post_attention_layernorm.weight", (d,), None),
                (p + "mlp.gate.weight", (ne, d), d ** -0.5)]
        for e in range(ne):
            x = p + f"mlp.experts.{e}."
            out += [(x + "gate_proj.weight", (f, d), d ** -0.5),
                    (x + "up_proj.weight", (f, d), d ** -0.5),
                    (x + "down_proj.weight", (d, f), f ** -0.5)]
    out += [("model.norm.weight", (d,), None), ("lm_head.weight", (v, d), d ** -0.5)]
    return out


def build(d):
    path = os.path.join(d, "model.safetensors")
    if os.path.exists(path):
        return
    os.makedirs(d, exist_ok=True)
    header, offset = {}, 0
    for name, shape, _ in tensors():
        size = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(11)
    with open(path + ".part", "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for name, shape, scale in tensors():
            if scale is None:
                a = 1.0 + 0.1 * rng.standard_normal(shape, dtype=np.float32)
            else:
                a = scale * rng.standard_normal(shape, dtype=np.float32)
            f.write(fb.bf16(a).tobytes())
    os.rename(path + ".part", path)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)


def torch_forward(d, ids, threads):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    c = CONFIG
    raw = open(os.path.join(d, "model.safetensors"), "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    w = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        bits = np.frombuffer(raw, dtype="<u2", count=(b - a) // 2, offset=base + a)
        f32 = (bits.astype(np.uint32) << 16).view(np.float32).reshape(e["shape"])
        w[name] = torch.from_numpy(f32.copy())
    del raw
    nh, nkv, hd, d_ = (c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                       c["hidden_size"])
    ne, k = c["num_experts"], c["num_experts_per_tok"]
    eps = c["rms_norm_eps"]
    s = len(ids)
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    freqs = torch.outer(torch.arange(s, dtype=torch.float32), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((s, s), float("-inf")).triu(1)

    def rms(x, g):
        return g * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def rot(x):
        return torch.cat((-x[..., hd // 2:], x[..., : hd // 2]), dim=-1)

    def moe(p, m):
        x = m[0]
        logits = F.linear(x, w[p + "mlp.gate.weight"])
        probs = torch.softmax(logits, dim=-1)
        top, idx = torch.topk(probs, k, dim=-1)
        top = top / top.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        hit = torch.nn.functional.one_hot(idx, ne).permute(2, 1, 0)   # [E][k][tokens]
        for e in range(ne):
            slot, tok = torch.where(hit[e])
            if tok.numel() == 0:
                continue
            q = p + f"mlp.experts.{e}."
            xe = x[tok]
            y = F.linear(F.silu(F.linear(xe, w[q + "gate_proj.weight"])) *
                         F.linear(xe, w[q + "up_proj.weight"]), w[q + "down_proj.weight"])
            out.index_add_(0, tok, y * top[tok, slot, None])
        return out[None]

    def forward():
        h = w["model.embed_tokens.weight"][torch.tensor(ids)][None]
        atts = []
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            x = rms(h, w[p + "input_layernorm.weight"])
            q = F.linear(x, w[p + "self_attn.q_proj.weight"]).view(1, s, nh, hd)
            kk = F.linear(x, w[p + "self_attn.k_proj.weight"]).view(1, s, nkv, hd)
            v = F.linear(x, w[p + "self_attn.v_proj.weight"]).view(1, s, nkv, hd).transpose(1, 2)
            q = rms(q, w[p + "self_attn.q_norm.weight"]).transpose(1, 2)
            kk = rms(kk, w[p + "self_attn.k_norm.weight"]).transpose(1, 2)
            q, kk = q * cos + rot(q) * sin, kk * cos + rot(kk) * sin
            kk = kk.repeat_interleave(nh // nkv, dim=1)
            v = v.repeat_interleave(nh // nkv, dim=1)
            a = torch.softmax(q @ kk.transpose(2, 3) * hd ** -0.5 + mask, dim=-1)
            atts.append(a)
            o = (a @ v).transpose(1, 2).reshape(1, s, nh * hd)
            h = h + F.linear(o, w[p + "self_attn.o_proj.weight"])
            h = h + moe(p, rms(h, w[p + "post_attention_layernorm.weight"]))
        return torch.stack(atts)

    return forward


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attn", nargs="?", default=os.path.join(os.path.dirname(__file__), "..",
                                                            "build", "attn"))
    ap.add_argument("--scratch", default="/tmp/attn-moe-bench")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--torch-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    d = os.path.join(args.scratch, "qwen3-moe-shaped")
    build(d)
    size = os.path.getsize(os.path.join(d, "model.safetensors"))
    ids = [int(i) for i in np.random.default_rng(3).integers(0, CONFIG["vocab_size"], args.tokens)]
    if args.torch_child is not None:
        import torch
        fwd = torch_forward(d, ids, args.torch_child)
        with torch.no_grad():
            ref = fwd()
            np.save(os.path.join(args.scratch, "torch_stack.npy"), ref.numpy())
            for _ in range(args.rounds):
                t = time.perf_counter()
                fwd()
                print(f"{time.perf_counter() - t:.4f}", flush=True)
        print(f"blas {fb.blas_of_torch()} torch {torch.__version__}")
        return
    out = os.path.join(args.scratch, "stack.npy")
    torch_configs = {f"PyTorch forward, torch {args.threads} / OpenBLAS 1": (args.threads, 1),
                     f"PyTorch forward, torch 1 / OpenBLAS {args.threads}": (1, args.threads)}
    rows = {name: [] for name in torch_configs}
    rows["attn f32"] = []
    rss, about = 0, ""
    for _ in range(args.rounds):
        for name, (omp, blas) in torch_configs.items():
            env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas), OMP_NUM_THREADS=str(omp))
            r = subprocess.run([sys.executable, __file__, args.attn, "--scratch", args.scratch,
                                "--tokens", str(args.tokens), "--rounds", "2",
                                "--torch-child", str(omp)], env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(r.stderr)
            lines = r.stdout.split("\n")
            rows[name] += [float(x) for x in lines if re.fullmatch(r"[0-9.]+", x)]
            about = [x for x in lines if x.startswith("blas")][0]
        wall, m = fb.run_attn(args.attn, d, ids, "f32", args.threads, out)
        rows["attn f32"].append(wall)
        rss = max(rss, m)
    print(f"checkpoint {size / 1e6:.0f} MB (bf16), {args.tokens} tokens, {args.threads} threads; "
          f"PyTorch with {about}")
    for name, times in rows.items():
        line = f"{name:36s} median {np.median(times):.3f} s  (runs: " + \
            ", ".join(f"{t:.3f}" for t in times) + ")"
        if name == "attn f32":
            line += f"  peak RSS {rss / 1024:.0f} MB ({rss * 1024 / size:.2f}x the checkpoint)"
        print(line)
    best = min(np.median(rows[n]) for n in torch_configs)
    print(f"attn f32 (whole run) / PyTorch's faster forward: {np.median(rows['attn f32']) / best:.2f}")
    ref = np.load(os.path.join(args.scratch, "torch_stack.npy"))
    print(f"max |attn f32 - PyTorch f32| weights {float(np.abs(np.load(out) - ref).max()):.2e}")


if __name__ == "__main__":
    main()
