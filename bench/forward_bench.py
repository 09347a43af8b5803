"""The forward pass of a Qwen2.5-0.5B-shaped model: attn against PyTorch
(not a test: numbers to read).

  /usr/bin/python3 bench/forward_bench.py [ATTN] [--scratch DIR] [--tokens N]
                                          [--threads T] [--rounds R]

Builds once, in the scratch directory (default /tmp/attn-forward-bench), a
checkpoint of random bf16 weights with Qwen2.5-0.5B's shapes and config
(24 layers, hidden 896, 14 heads / 2 K/V heads, head width 64, FFN 4864,
vocab 151936, q/k/v biases, tied embeddings: 988 MB), and a prompt of N
random token ids (default 128).

Then, in rounds (each round runs every one of them once, so that the
machine's slow spells fall on all alike), times:
- attn run --checkpoint DIR --ids ... --layer all --dtype f32 -o stack.npy
  (the whole program: reading the mapped bf16 weights, the forward pass,
  every layer's weights kept, the stack written), wall time and peak RSS
  (GNU time's %M);
- the same forward in PyTorch 1.13, float32, written as transformers'
  Qwen2Model computes it (eager attention, output_attentions), on the
  weights loaded beforehand and converted to float32; only the forward is
  timed (torch.no_grad). PyTorch uses the BLAS that libblas.so.3 points
  to: with Debian's libopenblas0-pthread it is OpenBLAS (the script prints
  which), whose threads are not torch.set_num_threads's: T threads run as
  torch T / OpenBLAS 1 and as torch 1 / OpenBLAS T, each in its own
  process, and the faster is the peer.
- attn in float64 (the default), for the record;
- with build/forward_time beside the attn program: attn's forward alone,
  timed the way PyTorch's is (model_attention called again and again in
  one warm process; each call still maps the checkpoint and widens its
  bf16 weights, where PyTorch starts from float32 weights in memory).

The stacks of the two are compared (max |difference| of the weights).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

CONFIG = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "num_hidden_layers": 24,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "hidden_act": "silu",
    "tie_word_embeddings": True,
    "use_sliding_window": False,
    "sliding_window": 32768,
    "max_window_layers": 21,
    "torch_dtype": "bfloat16",
}


def tensors():
    c = CONFIG
    d, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = d // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * hd
    out = [("model.embed_tokens.weight", (v, d), 0.02)]
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        out += [(p + "input_layernorm.weight", (d,), None),
                (p + "self_attn.q_proj.weight", (d, d), d ** -0.5),
                (p + "self_attn.q_proj.bias", (d,), 0.1),
                (p + "self_attn.k_proj.weight", (kv, d), d ** -0.5),
                (p + "self_attn.k_proj.bias", (kv,), 0.1),
                (p + "self_attn.v_proj.weight", (kv, d), d ** -0.5),
                (p + "self_attn.v_proj.bias", (kv,), 0.1),
                (p + "self_attn.o_proj.weight", (d, d), d ** -0.5),
                (p + "post_attention_layernorm.weight", (d,), None),
                (p + "mlp.gate_proj.weight", (f, d), d ** -0.5),
                (p + "mlp.up_proj.weight", (f, d), d ** -0.5),
                (p + "mlp.down_proj.weight", (d, f), f ** -0.5)]
    out.append(("model.norm.weight", (d,), None))
    return out


def bf16(a):
    """float32 -> bfloat16 bits, round to nearest even."""
    b = a.astype("<f4").view("<u4").astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype("<u2")


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
    rng = np.random.default_rng(7)
    with open(path + ".part", "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for name, shape, scale in tensors():
            if scale is None:   # norms near 1
                a = 1.0 + 0.1 * rng.standard_normal(shape, dtype=np.float32)
            else:
                a = scale * rng.standard_normal(shape, dtype=np.float32)
            f.write(bf16(a).tobytes())
    os.rename(path + ".part", path)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)


def blas_of_torch():
    maps = open(f"/proc/{os.getpid()}/maps").read()
    for lib in ("openblas", "libblas.so", "mkl"):
        m = re.search(r"(\S*" + lib + r"\S*)", maps)
        if m:
            return os.path.realpath(m.group(1))
    return "unknown"


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
    nh, nkv, d_ = c["num_attention_heads"], c["num_key_value_heads"], c["hidden_size"]
    hd = d_ // nh
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

    def forward():
        h = w["model.embed_tokens.weight"][torch.tensor(ids)][None]
        atts = []
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            x = rms(h, w[p + "input_layernorm.weight"])
            q = F.linear(x, w[p + "self_attn.q_proj.weight"], w[p + "self_attn.q_proj.bias"])
            k = F.linear(x, w[p + "self_attn.k_proj.weight"], w[p + "self_attn.k_proj.bias"])
            v = F.linear(x, w[p + "self_attn.v_proj.weight"], w[p + "self_attn.v_proj.bias"])
            q = q.view(1, s, nh, hd).transpose(1, 2)
            k = k.view(1, s, nkv, hd).transpose(1, 2)
            v = v.view(1, s, nkv, hd).transpose(1, 2)
            q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
            k = k.repeat_interleave(nh // nkv, dim=1)
            v = v.repeat_interleave(nh // nkv, dim=1)
            a = torch.softmax(q @ k.transpose(2, 3) * hd ** -0.5 + mask, dim=-1)
            atts.append(a)
            o = (a @ v).transpose(1, 2).reshape(1, s, d_)
            h = h + F.linear(o, w[p + "self_attn.o_proj.weight"])
            m = rms(h, w[p + "post_attention_layernorm.weight"])
            g = F.linear(m, w[p + "mlp.gate_proj.weight"])
            u = F.linear(m, w[p + "mlp.up_proj.weight"])
            h = h + F.linear(F.silu(g) * u, w[p + "mlp.down_proj.weight"])
        return torch.stack(atts)

    return forward


def run_attn(attn, d, ids, dtype, threads, out):
    cmd = ["/usr/bin/time", "-f", "%e %M", attn, "run", "--checkpoint", d, "--ids",
           ",".join(map(str, ids)), "--layer", "all", "--dtype", dtype, "--threads",
           str(threads), "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    wall, rss = r.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attn", nargs="?", default=os.path.join(os.path.dirname(__file__), "..",
                                                            "build", "attn"))
    ap.add_argument("--scratch", default="/tmp/attn-forward-bench")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--torch-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    d = os.path.join(args.scratch, "qwen2.5-0.5b-shaped")
    build(d)
    size = os.path.getsize(os.path.join(d, "model.safetensors"))
    ids = [int(i) for i in np.random.default_rng(3).integers(0, CONFIG["vocab_size"], args.tokens)]
    if args.torch_child is not None:   # one PyTorch configuration, in its own process
        import torch
        t = time.perf_counter()
        fwd = torch_forward(d, ids, args.torch_child)
        print(f"load {time.perf_counter() - t:.4f}", flush=True)
        with torch.no_grad():
            ref = fwd()   # warm-up, and the stack to compare with
            np.save(os.path.join(args.scratch, "torch_stack.npy"), ref.numpy())
            for _ in range(args.rounds):
                t = time.perf_counter()
                fwd()
                print(f"{time.perf_counter() - t:.4f}", flush=True)
        print(f"blas {blas_of_torch()} torch {torch.__version__}")
        return
    out = os.path.join(args.scratch, "stack.npy")
    # PyTorch's threads are its own (torch.set_num_threads, OpenMP) and its
    # BLAS's (OPENBLAS_NUM_THREADS): T threads is either T of one and 1 of
    # the other; both run and the faster is the peer. T of each would be
    # 2T threads on T cores, which spin against each other.
    torch_configs = {f"PyTorch forward, torch {args.threads} / OpenBLAS 1": (args.threads, 1),
                     f"PyTorch forward, torch 1 / OpenBLAS {args.threads}": (1, args.threads)}
    rows = {"attn f32": [], "attn f64": []}
    for name in torch_configs:
        rows[name] = []
    forward_time = os.path.join(os.path.dirname(os.path.abspath(args.attn)), "forward_time")
    if os.path.exists(forward_time):
        rows["attn f32 forward alone"] = []
    rss = {"attn f32": 0, "attn f64": 0}
    about = ""
    loads = {name: [] for name in torch_configs}
    # The machine's speed drifts over tens of seconds (a shared VM): every
    # round runs each peer once, so that a slow spell falls on all of them.
    # A PyTorch child loads the weights, runs the forward once to warm up,
    # then times 2 forwards; forward_time likewise warms up and times 2.
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
            loads[name].append(float([x for x in lines if x.startswith("load")][0].split()[1]))
        wall, m = run_attn(args.attn, d, ids, "f32", args.threads, out)
        rows["attn f32"].append(wall)
        rss["attn f32"] = max(rss["attn f32"], m)
        if "attn f32 forward alone" in rows:
            r = subprocess.run([forward_time, d, ",".join(map(str, ids)), "--dtype", "f32",
                                "--threads", str(args.threads), "--rounds", "2"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(r.stderr)
            rows["attn f32 forward alone"] += [float(x) for x in r.stdout.split()]
    loads = {name: float(np.median(v)) for name, v in loads.items()}
    print(f"checkpoint {size / 1e6:.0f} MB (bf16), {args.tokens} tokens, {args.threads} threads; "
          f"PyTorch with {about}")
    ref = np.load(os.path.join(args.scratch, "torch_stack.npy"))
    got = np.load(out)
    diff = float(np.abs(got - ref).max())
    wall, m = run_attn(args.attn, d, ids, "f64", args.threads, out)
    rows["attn f64"].append(wall)
    rss["attn f64"] = m
    got64 = np.load(out)
    diff64 = float(np.abs(got64 - ref).max())
    for name, times in rows.items():
        line = f"{name:22s} median {np.median(times):.3f} s  (runs: " + \
            ", ".join(f"{t:.3f}" for t in times) + ")"
        if name in rss:
            line += f"  peak RSS {rss[name] / 1024:.0f} MB ({rss[name] * 1024 / size:.2f}x the checkpoint)"
        print(line)
    for name, load in loads.items():
        print(f"{name}: loading the weights (safetensors read, bf16 to float32) {load:.3f} s, "
              f"load + forward {load + np.median(rows[name]):.3f} s")
    best = min(np.median(rows[n]) for n in torch_configs)
    print(f"attn f32 (whole run) / PyTorch's faster forward: {np.median(rows['attn f32']) / best:.2f}")
    if "attn f32 forward alone" in rows:
        alone = np.median(rows["attn f32 forward alone"])
        print(f"attn f32 forward alone / PyTorch's faster forward: {alone / best:.2f}")
    print(f"max |attn f32 - PyTorch f32| weights {diff:.2e}; attn f64 - PyTorch f32 {diff64:.2e}")


if __name__ == "__main__":
    main()
