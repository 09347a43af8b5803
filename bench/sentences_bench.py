"""Head summaries over a corpus, and of one long input, through a
Qwen2.5-0.5B-shaped model: attn against PyTorch (not a test: numbers to
read, docs/performance.md "Head summaries over many sentences").

  /usr/bin/python3 bench/sentences_bench.py [ATTN] [--scratch DIR] [--sentences N]
                                            [--threads T] [--rounds R] [--long N]

Uses bench/forward_bench.py's checkpoint (random bf16 weights with
Qwen2.5-0.5B's shapes and config, 988 MB, built once in its scratch
directory), beside a WordLevel tokenizer.json whose token "wI" is id I,
and a corpus of N sentences (default 1,000) of 10 to 30 random ids, one
JSON string a line ("w17 w4032 ..."), so that both sides run the same ids.

In rounds (each runs every peer once, so that the machine's slow spells
fall on all alike), times:
- attn run --checkpoint DIR --texts corpus.jsonl --layer all --summary
  previous -f json --dtype f32 (the whole program: reading and checking
  the corpus, tokenizing it twice, the forward passes 32 sentences a
  batch, the summaries), wall time and peak RSS (GNU time's %M);
- PyTorch 1.13, float32, the forward bench's Qwen2Model written out, on
  the same batches of 32 right-padded to their longest sentence with the
  attention mask (causal and padding), output_attentions, and the same
  summary of each sentence's real tokens (the weight on the previous
  token, the mean over the query rows 1 .. n-1), its mean over the
  sentences; only the forward passes and the summaries are timed (the
  weights are loaded, and widened to float32, beforehand). Threads as
  forward_bench.py runs them: T of torch and 1 of OpenBLAS, and 1 and T,
  each in a process of its own; the faster is the peer (--peers blas: only
  the second, which is the faster by 2x on the 2-core VM).
Then, once: attn's peak RSS over N/10 sentences (flat with N?), and one
input of --long tokens (default 2048) with --summary entropy, which holds
no stack of weights (24 x 14 x 2048^2 floats would be 5.6 GB).

The two sides' means are compared (max |difference|).
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
import forward_bench as fb  # noqa: E402  (the checkpoint, and PyTorch's Qwen2 layers)

BATCH = 32


def tokenizer_json(vocab):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
            "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {f"w{i}": i for i in range(vocab)},
                      "unk_token": "w0"}}


def setup(scratch, n):
    src = os.path.join(scratch, "qwen2.5-0.5b-shaped")
    fb.build(src)
    d = os.path.join(scratch, "qwen2.5-0.5b-shaped-words")
    os.makedirs(d, exist_ok=True)
    for name in ("model.safetensors", "config.json"):
        if not os.path.exists(os.path.join(d, name)):
            os.symlink(os.path.join(src, name), os.path.join(d, name))
    tj = os.path.join(d, "tokenizer.json")
    if not os.path.exists(tj):
        with open(tj, "w") as f:
            json.dump(tokenizer_json(fb.CONFIG["vocab_size"]), f)
    rng = np.random.default_rng(49)
    sentences = [rng.integers(0, fb.CONFIG["vocab_size"], int(rng.integers(10, 31))).tolist()
                 for _ in range(n)]
    corpus = os.path.join(scratch, f"corpus{n}.jsonl")
    with open(corpus, "w") as f:
        for s in sentences:
            f.write(json.dumps(" ".join(f"w{i}" for i in s)) + "\n")
    return d, corpus, sentences


def torch_summary(d, sentences, threads):
    """The peer: batches of 32, right-padded, with their attention mask."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    c = fb.CONFIG
    raw = open(os.path.join(d, "model.safetensors"), "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    w = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        bits = np.frombuffer(raw, dtype="<u2", count=(b - a) // 2, offset=8 + n + a)
        w[name] = torch.from_numpy((bits.astype(np.uint32) << 16).view(np.float32)
                                   .reshape(e["shape"]).copy())
    del raw
    nh, nkv, hid = c["num_attention_heads"], c["num_key_value_heads"], c["hidden_size"]
    hd = hid // nh
    eps = c["rms_norm_eps"]
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))

    def rms(x, g):
        return g * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def rot(x):
        return torch.cat((-x[..., hd // 2:], x[..., : hd // 2]), dim=-1)

    def run():
        sums = np.zeros((c["num_hidden_layers"], nh))
        for start in range(0, len(sentences), BATCH):
            batch = sentences[start:start + BATCH]
            B, s = len(batch), max(len(x) for x in batch)
            ids = torch.zeros((B, s), dtype=torch.long)
            real = torch.zeros((B, s), dtype=torch.bool)
            for i, x in enumerate(batch):
                ids[i, :len(x)] = torch.tensor(x)
                real[i, :len(x)] = True
            freqs = torch.outer(torch.arange(s, dtype=torch.float32), inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
            # transformers' 4-D mask: causal, and the padded keys hidden.
            allowed = torch.ones(s, s, dtype=torch.bool).tril()[None] & real[:, None, :]
            mask = torch.zeros(B, 1, s, s).masked_fill(~allowed[:, None], float("-inf"))
            h = w["model.embed_tokens.weight"][ids]
            for layer in range(c["num_hidden_layers"]):
                p = f"model.layers.{layer}."
                x = rms(h, w[p + "input_layernorm.weight"])
                q = F.linear(x, w[p + "self_attn.q_proj.weight"], w[p + "self_attn.q_proj.bias"])
                k = F.linear(x, w[p + "self_attn.k_proj.weight"], w[p + "self_attn.k_proj.bias"])
                v = F.linear(x, w[p + "self_attn.v_proj.weight"], w[p + "self_attn.v_proj.bias"])
                q = q.view(B, s, nh, hd).transpose(1, 2)
                k = k.view(B, s, nkv, hd).transpose(1, 2)
                v = v.view(B, s, nkv, hd).transpose(1, 2)
                q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
                k = k.repeat_interleave(nh // nkv, dim=1)
                v = v.repeat_interleave(nh // nkv, dim=1)
                a = torch.softmax(q @ k.transpose(2, 3) * hd ** -0.5 + mask, dim=-1)
                # The weight on the previous token of rows 1 .. n-1, each
                # sentence's mean, per head.
                prev = torch.diagonal(a, offset=-1, dim1=2, dim2=3)  # [B][H][s-1]
                for i, x in enumerate(batch):
                    sums[layer] += prev[i, :, :len(x) - 1].mean(-1).double().numpy()
                o = (a @ v).transpose(1, 2).reshape(B, s, hid)
                h = h + F.linear(o, w[p + "self_attn.o_proj.weight"])
                m = rms(h, w[p + "post_attention_layernorm.weight"])
                g = F.linear(m, w[p + "mlp.gate_proj.weight"])
                u = F.linear(m, w[p + "mlp.up_proj.weight"])
                h = h + F.linear(F.silu(g) * u, w[p + "mlp.down_proj.weight"])
        return sums / len(sentences)

    return run


def run_attn(attn, args):
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", attn] + args, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    wall, rss = r.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss), r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attn", nargs="?", default=os.path.join(os.path.dirname(__file__), "..",
                                                            "build", "attn"))
    ap.add_argument("--scratch", default="/tmp/attn-forward-bench")
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--long", type=int, default=2048)
    ap.add_argument("--peers", choices=["both", "blas"], default="both",
                    help="both thread arrangements of PyTorch, or only torch 1 / OpenBLAS T "
                         "(the faster one on a 2-core VM)")
    ap.add_argument("--torch-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    d, corpus, sentences = setup(args.scratch, args.sentences)
    if args.torch_child is not None:
        import torch
        fn = torch_summary(d, sentences, args.torch_child)
        with torch.no_grad():
            t = time.perf_counter()
            means = fn()
            print(f"{time.perf_counter() - t:.3f}")
        np.save(os.path.join(args.scratch, "torch_previous.npy"), means)
        print(f"torch {torch.__version__}")
        return
    size = os.path.getsize(os.path.join(d, "model.safetensors"))
    flags = ["run", "--checkpoint", d, "--layer", "all", "--dtype", "f32", "--threads",
             str(args.threads), "-f", "json", "-q"]
    torch_configs = {f"PyTorch, torch {args.threads} / OpenBLAS 1": (args.threads, 1),
                     f"PyTorch, torch 1 / OpenBLAS {args.threads}": (1, args.threads)}
    if args.peers == "blas":
        del torch_configs[f"PyTorch, torch {args.threads} / OpenBLAS 1"]
    rows = {"attn f32": []}
    rows.update({name: [] for name in torch_configs})
    rss = 0
    got = None
    for _ in range(args.rounds):
        for name, (omp, blas) in torch_configs.items():
            env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas), OMP_NUM_THREADS=str(omp))
            r = subprocess.run([sys.executable, __file__, args.attn, "--scratch", args.scratch,
                                "--sentences", str(args.sentences), "--torch-child", str(omp)],
                               env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(r.stderr)
            rows[name].append(float([x for x in r.stdout.split("\n")
                                     if re.fullmatch(r"[0-9.]+", x)][0]))
        wall, m, out = run_attn(args.attn, flags + ["--texts", corpus, "--summary", "previous"])
        rows["attn f32"].append(wall)
        rss = max(rss, m)
        got = np.array(json.loads(out)["values"])
    n = args.sentences
    print(f"checkpoint {size / 1e6:.0f} MB (bf16), {n} sentences of 10-30 tokens, "
          f"{args.threads} threads, --summary previous")
    for name, times in rows.items():
        line = (f"{name:32s} median {np.median(times):7.2f} s, {n / np.median(times):6.2f} "
                f"sentences/s  (runs: " + ", ".join(f"{t:.2f}" for t in times) + ")")
        if name == "attn f32":
            line += f"  peak RSS {rss / 1024:.0f} MB ({rss * 1024 / size:.2f}x the checkpoint)"
        print(line)
    best = min(np.median(rows[x]) for x in torch_configs)
    print(f"attn sentences/s over PyTorch's: {best / np.median(rows['attn f32']):.2f}")
    ref = np.load(os.path.join(args.scratch, "torch_previous.npy"))
    print(f"max |attn f32 - PyTorch f32| of the means: {np.abs(got - ref).max():.2e}")
    # Flat with the corpus's length: the same run over a tenth of it.
    small, _, _ = setup(args.scratch, max(1, n // 10))
    _, m_small, _ = run_attn(args.attn, flags + ["--texts", os.path.join(
        args.scratch, f"corpus{max(1, n // 10)}.jsonl"), "--summary", "previous"])
    print(f"peak RSS over {max(1, n // 10)} sentences {m_small / 1024:.0f} MB, over {n} "
          f"{rss / 1024:.0f} MB")
    # One long input, no stack held.
    ids = np.random.default_rng(5).integers(0, fb.CONFIG["vocab_size"], args.long).tolist()
    wall, m, _ = run_attn(args.attn, flags + ["--ids", ",".join(map(str, ids)), "--summary",
                                              "entropy"])
    print(f"{args.long} tokens, --summary entropy: {wall:.2f} s, peak RSS {m / 1024:.0f} MB "
          f"({m * 1024 / size:.2f}x the checkpoint; the limit 1.5x + 512 MB is "
          f"{(1.5 * size + 512 * 2**20) / 2**20:.0f} MB)")


if __name__ == "__main__":
    main()
