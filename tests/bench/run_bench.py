#!/usr/bin/python3
"""Runs attn's benchmarks next to its peers in one run and writes
docs/performance.md.

    /usr/bin/python3 tests/bench/run_bench.py [--attn build/attn] [--io-bench build/io_bench]
                                        [--quick] [--out docs/performance.md]

Peers, when Debian's python3-torch / python3-numpy are installed:
PyTorch bmm + softmax + bmm, PyTorch's fused scaled-dot-product attention
(torch.nn.functional._scaled_dot_product_attention in 1.13), and NumPy
(matmul + softmax + matmul). Every timing is the median of at least 3
repeats lasting at least 1 s after a warm-up, as `attn bench` does. FLOPs
are counted as 4·n²·d per head. The machine is shared and noisy: compare
numbers within one run, and read the ratios rather than the absolutes.
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:  # the peers are optional
    np = None
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


def set_blas_threads(threads):
    """Pins the threads of the OpenBLAS that NumPy and PyTorch call.

    Debian's numpy and torch both use the system OpenBLAS (pthreads build),
    which starts one thread per core whatever torch.set_num_threads says: a
    "1 thread" peer would really run on 2 cores. Returns whether it worked.
    """
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "libopenblas" in line}
    except OSError:
        return False
    for path in paths:
        try:
            ctypes.CDLL(path).openblas_set_num_threads(ctypes.c_int(threads))
            return True
        except (OSError, AttributeError):
            continue
    return False


def timed(fn, min_reps=3, min_seconds=1.0):
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def best_of(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def gflops(n, d, heads, seconds):
    return 4.0 * heads * n * n * d / seconds / 1e9


def attn_bench(attn, n, d, heads, dtype, weights, threads, extra=()):
    cmd = [attn, "bench", "--n", str(n), "--d", str(d), "--heads", str(heads), "--dtype", dtype,
           "--threads", str(threads), "--json"] + list(extra)
    if not weights:
        cmd.append("--no-weights")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def torch_peers(n, d, heads, dtype, threads):
    if torch is None:
        return {}
    torch.set_num_threads(threads)
    set_blas_threads(threads)
    tdt = torch.float32 if dtype == "f32" else torch.float64
    g = torch.Generator().manual_seed(1)
    q = torch.rand(heads, n, d, generator=g, dtype=tdt) * 2 - 1
    k = torch.rand(heads, n, d, generator=g, dtype=tdt) * 2 - 1
    v = torch.rand(heads, n, d, generator=g, dtype=tdt) * 2 - 1
    scale = 1.0 / d ** 0.5

    def bmm():
        with torch.no_grad():
            w = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * scale, dim=-1)
            return torch.bmm(w, v)

    def fused():
        with torch.no_grad():
            return F._scaled_dot_product_attention(q, k, v, need_attn_weights=False)[0]

    out = {"torch bmm+softmax+bmm": timed(bmm)}
    out["torch fused SDPA"] = timed(fused)
    return out


def numpy_peer(n, d, heads, dtype, threads):
    if np is None:
        return {}
    set_blas_threads(threads)
    ndt = np.float32 if dtype == "f32" else np.float64
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-1, 1, (heads, n, d)).astype(ndt) for _ in range(3))
    scale = ndt(1.0 / d ** 0.5)

    def run():
        s = np.matmul(q, k.transpose(0, 2, 1)) * scale
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        return np.matmul(s, v)

    return {"numpy": timed(run)}


def machine():
    info = {"python": platform.python_version()}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = re.search(r"Model name:\s*(.*)", lscpu)
        info["cpu"] = model.group(1).strip() if model else "?"
        flags = re.search(r"Flags:\s*(.*)", lscpu)
        flags = flags.group(1).split() if flags else []
        info["simd"] = " ".join(f for f in ("avx2", "fma", "avx512f", "avx512vl") if f in flags)
    except OSError:
        info["cpu"] = "?"
    info["cores"] = os.cpu_count()
    info["blas_pinned"] = set_blas_threads(os.cpu_count() or 1)
    info["torch"] = torch.__version__ if torch else "not installed"
    info["numpy"] = np.__version__ if np else "not installed"
    try:
        info["load"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        pass
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attn", default="build/attn")
    ap.add_argument("--io-bench", default="build/io_bench")
    ap.add_argument("--out", default="docs/performance.md")
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    args = ap.parse_args()

    ns = [512, 2048] if args.quick else [512, 2048, 8192]
    d = 64
    # The long sequence, start-up and the file readers first, while the
    # machine is fresh: measured after the grid (whose peers hold gigabytes),
    # the readers once came out 30% below a quiet run minutes later.
    big = None
    if not args.quick:
        big = attn_bench(args.attn, 32768, d, 1, "f32", False, 1)
        print(json.dumps(big), flush=True)

    # End to end: the blog example, and importing torch.
    e2e = {}
    if shutil.which("hyperfine"):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            cmds = [f"{args.attn} run --example sweet"]
            if torch is not None:
                cmds.append(f"{sys.executable} -c 'import torch'")
            subprocess.run(["hyperfine", "--warmup", "3", "--export-json", f.name, "--shell=none"] + cmds,
                           check=True, capture_output=True)
            for r in json.load(open(f.name))["results"]:
                e2e[r["command"]] = (r["median"], r["stddev"])

    # Reading an 8192x64 matrix.
    io = []
    if np is not None and os.path.exists(args.io_bench):
        with tempfile.TemporaryDirectory() as tmp:
            x = np.random.default_rng(0).standard_normal((8192, 64))
            csv, js = os.path.join(tmp, "m.csv"), os.path.join(tmp, "m.json")
            np.savetxt(csv, x, delimiter=",")
            with open(js, "w") as f:
                json.dump(x.tolist(), f)
            out = subprocess.run([args.io_bench, csv, js, "5"], check=True, capture_output=True, text=True).stdout
            for line in out.splitlines():
                r = json.loads(line)
                io.append((r["reader"], r["mb_per_s"]))
            csv_bytes, js_bytes = os.path.getsize(csv), os.path.getsize(js)
            # Best of 5, as io_bench reports attn's readers.
            s = best_of(lambda: np.loadtxt(csv, delimiter=","), 5)
            io.append(("numpy.loadtxt (csv)", csv_bytes / s / 1e6))
            s = best_of(lambda: json.load(open(js)), 5)
            io.append(("python json.load (json)", js_bytes / s / 1e6))

    rows = []  # (n, heads, dtype, threads, what, seconds, gflops)
    attn_results = {}
    for dtype in ("f32", "f64"):
        for heads in (1, 8):
            for n in ns:
                for threads in (1, 2):
                    for weights in (False, True):
                        r = attn_bench(args.attn, n, d, heads, dtype, weights, threads)
                        what = "attn (weights kept)" if weights else "attn (output only)"
                        attn_results[(n, heads, dtype, threads, weights)] = r
                        rows.append((n, heads, dtype, threads, what, r["seconds"], r["gflops"]))
                        print(json.dumps(r), flush=True)
                    peers = {}
                    peers.update(torch_peers(n, d, heads, dtype, threads))
                    peers.update(numpy_peer(n, d, heads, dtype, threads))
                    for what, s in peers.items():
                        rows.append((n, heads, dtype, threads, what, s, gflops(n, d, heads, s)))
                        print(json.dumps({"peer": what, "n": n, "heads": heads, "dtype": dtype,
                                          "threads": threads, "seconds": s,
                                          "gflops": gflops(n, d, heads, s)}), flush=True)

    write_report(args.out, rows, attn_results, big, e2e, io, machine(), ns)


def write_report(path, rows, attn_results, big, e2e, io, mach, ns):
    L = []
    L.append("# Performance\n")
    L.append("Measured by `tests/bench/run_bench.py` (this file is its output; rerun with "
             "`/usr/bin/python3 tests/bench/run_bench.py` after `scripts/dev.sh demo`).\n")
    L.append(f"- date: {datetime.date.today()}; machine: {mach.get('cpu')}, {mach.get('cores')} cores, "
             f"{mach.get('simd')}; load average at the end {mach.get('load', '?')}")
    L.append(f"- peers: PyTorch {mach['torch']}, NumPy {mach['numpy']} (Debian packages); their OpenBLAS "
             f"{'pinned to the thread count of each row (openblas_set_num_threads)' if mach.get('blas_pinned') else 'NOT pinned: peer rows may use every core'}")
    L.append("- self-attention on random inputs, head width d = 64, FLOPs counted as 4·n²·d per head; "
             "median of ≥3 runs and ≥1 s after a warm-up; attn numbers from `attn bench` "
             "(the kernels of `attn run`, no file I/O)\n")

    def table(dtype, heads, threads):
        L.append(f"\n### {dtype}, {heads} head{'s' if heads > 1 else ''}, {threads} thread{'s' if threads > 1 else ''}\n")
        L.append("| n | " + " | ".join(sorted({r[4] for r in rows})) + " |")
        names = sorted({r[4] for r in rows})
        L.append("|---:|" + "---:|" * len(names))
        for n in ns:
            cells = []
            for name in names:
                m = [r for r in rows if r[0] == n and r[1] == heads and r[2] == dtype and r[3] == threads and r[4] == name]
                cells.append(f"{m[0][6]:.1f}" if m else "–")
            L.append(f"| {n} | " + " | ".join(cells) + " |")

    L.append("\n## Throughput (GFLOP/s, higher is better)\n")
    for dtype in ("f32", "f64"):
        for heads in (1, 8):
            for threads in (1, 2):
                table(dtype, heads, threads)

    L.append("\n## Targets\n")
    def get(n, heads, dtype, threads, weights):
        return attn_results.get((n, heads, dtype, threads, weights))
    def best_torch(n, heads, dtype, threads):
        m = [r for r in rows if r[0] == n and r[1] == heads and r[2] == dtype and r[3] == threads and r[4].startswith("torch")]
        return max(m, key=lambda r: r[6]) if m else None
    nbig = max(ns)
    t = get(nbig, 1, "f32", 1, False)
    if t:
        bt = best_torch(nbig, 1, "f32", 1)
        ratio = f"{t['gflops'] / bt[6]:.2f}× {bt[4]} ({bt[6]:.1f})" if bt else "no PyTorch"
        L.append(f"- f32, 1 thread, n = {nbig}, output only: **{t['gflops']:.1f} GFLOP/s** (target ≥ 55), "
                 f"{ratio} (target ≥ 2.5×)")
    t = get(nbig, 1, "f64", 1, False)
    if t:
        L.append(f"- f64, 1 thread, n = {nbig}, output only: **{t['gflops']:.1f} GFLOP/s** (target ≥ 27)")
    for n in ns:
        if n < 2048:
            continue
        for dtype in ("f32", "f64"):
            one, two = get(n, 1, dtype, 1, False), get(n, 1, dtype, 2, False)
            if one and two:
                L.append(f"- 2 threads vs 1, n = {n}, {dtype}, output only: **{one['seconds'] / two['seconds']:.2f}×** (target ≥ 1.8×)")
    for dtype in ("f32", "f64"):
        w, o = get(2048, 1, dtype, 1, True), get(2048, 1, dtype, 1, False)
        if w and o:
            L.append(f"- weights kept vs output only, n = 2048, {dtype}: **{w['seconds'] / o['seconds']:.2f}×** the time (target ≤ 1.4×)")
    if big:
        L.append(f"- n = 32768, f32, output only: {big['seconds']:.2f} s ({big['gflops']:.1f} GFLOP/s), "
                 f"peak RSS **{big['peak_rss_mb']:.1f} MB** (target ≤ 100 MB; the weights alone would be 4 GB)")
    for cmd, (med, sd) in e2e.items():
        L.append(f"- `{cmd}`: median **{med * 1e3:.1f} ms** ± {sd * 1e3:.1f} (hyperfine)")
    if io:
        d = dict(io)
        for mine, peer, name in (("attn csv", "numpy.loadtxt (csv)", "CSV"), ("attn json", "python json.load (json)", "JSON")):
            if mine in d and peer in d:
                L.append(f"- {name} input of 8192×64: attn {d[mine]:.0f} MB/s vs {peer} {d[peer]:.0f} MB/s: "
                         f"**{d[mine] / d[peer]:.1f}×** (target ≥ 5×)")
        L.append("\n| reader | MB/s |\n|---|---:|")
        for name, mbs in io:
            L.append(f"| {name} | {mbs:.0f} |")
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "performance_notes.md")
    if os.path.exists(notes):  # hand-written: what the numbers mean, what is left
        with open(notes) as f:
            L.append("\n" + f.read().rstrip("\n"))
    L.append("\n## Raw numbers\n")
    L.append("| n | heads | dtype | threads | what | seconds | GFLOP/s |")
    L.append("|---:|---:|---|---:|---|---:|---:|")
    for r in rows:
        L.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.4f} | {r[6]:.1f} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
