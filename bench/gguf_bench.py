"""attn's whole run on a GGUF file against llama.cpp's prefill on the same
file and threads (not a test: numbers to read).

  /usr/bin/python3 bench/gguf_bench.py [ATTN] [--scratch DIR] [--tokens 128]
                                       [--threads 2] [--rounds 5] [--isa avx2]

The files are bench/make_gguf_bench.py's: the Qwen2.5-0.5B-shaped checkpoint
of forward_bench.py as Q8_0 and Q4_K_M GGUF (made by llama.cpp's own
quantizer), in DIR (default /tmp/attn-forward-bench). In rounds (each runs
every case once, so that the machine's slow spells fall on all alike):
- attn run --checkpoint FILE.gguf --ids ... --layer all --dtype f32
  -o stack.npy: the whole program, reading the mapped file, every layer's
  weights kept and written (wall time and peak RSS, GNU time);
- bench/llamacpp_prefill.py FILE.gguf: llama.cpp's decode of the same number
  of tokens (last position's logits only, flash attention off, an F32 KV
  cache), the decode alone, the model loaded beforehand.
Prints the medians and attn / llama.cpp.

--isa avx2 holds both to AVX2 and FMA on a CPU that has more (AVX-512, VNNI):
attn through ATTN_KERNEL=avx2, llama.cpp by loading only its Haswell CPU
backend (a folder of links beside the scratch files), which is the machine
class of a laptop or a Zen 3 desktop.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attn", nargs="?", default=os.path.join(HERE, "..", "build", "attn"))
    ap.add_argument("--scratch", default="/tmp/attn-forward-bench")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--isa", choices=["native", "avx2"], default="native")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.isa == "avx2":
        sys.path.insert(0, os.path.join(HERE, "..", "data", "models"))
        from llamacpp import DEFAULT_LIB_DIR  # noqa: E402
        libs = os.environ.get("LLAMACPP_LIB_DIR", DEFAULT_LIB_DIR)
        only = os.path.join(args.scratch, "llamacpp-avx2")
        os.makedirs(only, exist_ok=True)
        for name in os.listdir(libs):
            if name.startswith("libggml-cpu-") and name != "libggml-cpu-haswell.so":
                continue
            link = os.path.join(only, name)
            if not os.path.lexists(link):
                os.symlink(os.path.join(libs, name), link)
        env["LLAMACPP_LIB_DIR"] = only
        env["ATTN_KERNEL"] = "avx2"
    files = {q: os.path.join(args.scratch, f"qwen2.5-0.5b-shaped-{q}.gguf")
             for q in ("Q8_0", "Q4_K_M")}
    for f in files.values():
        if not os.path.exists(f):
            sys.exit(f"{f} is missing: run bench/make_gguf_bench.py first")
    ids = ",".join(str(int(i)) for i in np.random.default_rng(3).integers(0, 151936, args.tokens))
    out = os.path.join(args.scratch, "gguf_stack.npy")
    attn, cpp, rss = {q: [] for q in files}, {q: [] for q in files}, {q: 0 for q in files}
    for _ in range(args.rounds):
        for q, f in files.items():
            r = subprocess.run([sys.executable, os.path.join(HERE, "llamacpp_prefill.py"), f,
                                "--tokens", str(args.tokens), "--threads", str(args.threads),
                                "--rounds", "1"], capture_output=True, text=True, env=env)
            if r.returncode != 0:
                sys.exit(r.stderr)
            cpp[q].append(float(re.findall(r"median ([0-9.]+)", r.stdout)[-1]))
            r = subprocess.run(["/usr/bin/time", "-f", "%e %M", args.attn, "run", "--checkpoint", f,
                                "--ids", ids, "--layer", "all", "--dtype", "f32", "--threads",
                                str(args.threads), "-o", out], capture_output=True, text=True, env=env)
            if r.returncode != 0:
                sys.exit(r.stderr)
            wall, m = r.stderr.strip().splitlines()[-1].split()
            attn[q].append(float(wall))
            rss[q] = max(rss[q], int(m))
    for q, f in files.items():
        size = os.path.getsize(f)
        a, c = np.median(attn[q]), np.median(cpp[q])
        print(f"{q:7s} attn whole run {a:.3f} s (runs {', '.join(f'{t:.3f}' for t in attn[q])}), "
              f"llama.cpp prefill {c:.3f} s (runs {', '.join(f'{t:.3f}' for t in cpp[q])}): "
              f"attn / llama.cpp {a / c:.2f}; attn peak RSS {rss[q] / 1024:.0f} MB, the file "
              f"{size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
