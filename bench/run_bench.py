#!/usr/bin/python3
"""Runs attn's benchmarks next to its peers in one run and writes
docs/performance.md.

    /usr/bin/python3 bench/run_bench.py [--attn build/attn] [--io-bench build/io_bench]
                                        [--fma-peak build/fma_peak] [--node node]
                                        [--quick] [--min-seconds 1] [--out docs/performance.md]

Peers, when Debian's python3-torch / python3-numpy are installed:
PyTorch bmm + softmax + bmm, PyTorch's fused scaled-dot-product attention
(torch.nn.functional._scaled_dot_product_attention in 1.13), and NumPy
(matmul + softmax + matmul). ONNX Runtime (float32 only), when node, the
onnxruntime-node package (see bench/README.md; this script installs
nothing) and python3-onnx are there: one com.microsoft MultiHeadAttention
node, and one opset-23 Attention node (from the installed onnx's schema
when it knows the op, else from the op's published signature);
bench/ort_bench.js times them, after their output has been
checked against NumPy at n = 64. Every timing is the median of at least 3
repeats lasting at least 1 s after a warm-up, as `attn bench` does. FLOPs
are counted as 4·n²·d per head.

The limit: build/fma_peak measures the FMA peak of the machine (f32, f64,
the widest vectors the CPU has, 1 and 2 threads) in the same run, and every
throughput is also shown as a percentage of it.

The machine is shared and noisy: compare numbers within one run, and read
the ratios rather than the absolutes. A full run takes about 15 minutes on
the 2-core VM, --quick (n = 512 and 2048 only) 2 to 4 minutes (with OpenBLAS
under NumPy and PyTorch; see bench/README.md).
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
try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    onnx = None

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_SECONDS = 1  # every timing lasts at least this long (--min-seconds)


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


def timed(fn, min_reps=3):
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < MIN_SECONDS:
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


# The weights kept rows stop at attn bench's default --max-elements: 8 heads
# of 8192 x 8192 would be 4 GB in double, as attn::compute returns them.
MAX_KEPT = 1 << 26


def attn_bench(attn, n, d, heads, dtype, weights, threads, extra=()):
    cmd = [attn, "bench", "--n", str(n), "--d", str(d), "--heads", str(heads), "--dtype", dtype,
           "--threads", str(threads), "--json"] + list(extra)
    if not weights:
        cmd.append("--no-weights")
    if MIN_SECONDS != 1:
        cmd += ["--seconds", str(MIN_SECONDS)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


# Today's attention in the streaming kernel: each feature with a causal mask,
# f32, 8 heads, 1 thread, output only, against plain causal attention per
# visited key. (name, attn bench flags, keys a query row visits).
FEATURE_N, FEATURE_HEADS, FEATURE_WINDOW = 4096, 8, 1024
FEATURES = [
    ("causal", [], "causal"),
    ("causal + RoPE", ["--rope"], "causal"),
    ("causal + ALiBi", ["--alibi"], "causal"),
    ("causal + soft-cap 50", ["--softcap", "50"], "causal"),
    ("causal + sink", ["--sinks", "0.5"], "causal"),
    (f"window {FEATURE_WINDOW},0", ["--window", f"{FEATURE_WINDOW},0"], "window"),
    ("causal, GQA 8 query heads per KV head", ["--kv-heads", "1"], "causal"),
]


def visited_keys(n, kind):
    """Keys the query rows visit in all: causal i + 1 each, a window of L before at most L + 1."""
    if kind == "causal":
        return n * (n + 1) // 2
    return sum(min(i + 1, FEATURE_WINDOW + 1) for i in range(n))


# Rounds of the feature table: each runs every feature once, in turn, and a
# feature's ratio to causal is the median over the rounds of its ratio to
# the causal run of the same round. One run of each, minutes apart, moved a
# ratio by up to 8% on the shared VM (ALiBi 1.11× in one run, 1.02-1.03× in
# alternating runs straight after).
FEATURE_ROUNDS = 3


def features(attn, n, rounds=FEATURE_ROUNDS):
    """[(name, result, visited keys, time per visited key over causal's)] of FEATURES at n.

    The result is the feature's run of median time.
    """
    runs = {name: [] for name, _, _ in FEATURES}
    for _ in range(rounds):
        for name, flags, kind in FEATURES:
            extra = flags + (["--causal"] if kind == "causal" else [])
            r = attn_bench(attn, n, 64, FEATURE_HEADS, "f32", False, 1, extra)
            print(json.dumps({"feature": name, **r}), flush=True)
            runs[name].append(r)
    base_name, _, base_kind = FEATURES[0]
    base = [r["seconds"] / visited_keys(n, base_kind) for r in runs[base_name]]
    out = []
    for name, _, kind in FEATURES:
        keys = visited_keys(n, kind)
        ratio = statistics.median(r["seconds"] / keys / b for r, b in zip(runs[name], base))
        med = sorted(runs[name], key=lambda r: r["seconds"])[len(runs[name]) // 2]
        out.append((name, med, keys, ratio))
    return out


# The targets' ratios are also measured in pairs: attn and ORT's
# MultiHeadAttention (or one thread and two) run back to back, PAIR_ROUNDS
# rounds, and the ratio is the median over the rounds of each pair's. In
# the grid the two sides of a ratio run minutes apart, and the shared VM
# moves in between: two threads over one at n = 2048 read 1.87x in a
# committed run and 1.94-1.96x in five alternating pairs straight after.
PAIR_ROUNDS = 3


def paired_ratios(attn, ort, ns, rounds=PAIR_ROUNDS):
    """{("ort", n, heads, threads): attn / ORT MHA throughput, ("threads", n, dtype): 2 threads / 1}.

    n of ns from 2048, f32 against ORT (when it runs here), output only.
    """
    op = ort["ops"].get(ORT_MHA) if ort else None
    got = {}
    for _ in range(rounds):
        for n in (n for n in ns if n >= 2048):
            if op:
                for heads in (1, 8):
                    for threads in (1, 2):
                        a = attn_bench(attn, n, 64, heads, "f32", False, threads)
                        o = ort_peers(ort, n, 64, heads, "f32", threads, only=ORT_MHA)[ORT_MHA]
                        got.setdefault(("ort", n, heads, threads), []).append(o / a["seconds"])
                        print(json.dumps({"pair": "attn / ORT MHA", "n": n, "heads": heads, "threads": threads,
                                          "ratio": o / a["seconds"]}), flush=True)
            for dtype in ("f32", "f64"):
                one = attn_bench(attn, n, 64, 1, dtype, False, 1)
                two = attn_bench(attn, n, 64, 1, dtype, False, 2)
                got.setdefault(("threads", n, dtype), []).append(one["seconds"] / two["seconds"])
                print(json.dumps({"pair": "2 threads / 1", "n": n, "dtype": dtype,
                                  "ratio": one["seconds"] / two["seconds"]}), flush=True)
    return {k: statistics.median(v) for k, v in got.items()}


def fma_peaks(path):
    """The machine's FMA peak from build/fma_peak: (peaks, why not).

    peaks maps (dtype, threads) to the entry of the widest vectors the CPU
    has ("gflops_cpu" is the rate over the threads' own CPU time, which a
    busy machine does not lower, "gflops" over wall time); the list of all
    entries, available or not, is under "all".
    """
    if not os.path.exists(path):
        return None, f"{path} not found (cmake --build build --target fma_peak)"
    out = json.loads(subprocess.run([path], check=True, capture_output=True, text=True).stdout)
    peaks = {"all": out["peaks"], "chains": out["chains"]}
    for p in out["peaks"]:
        key = (p["dtype"], p["threads"])
        if p["gflops"] is not None and (key not in peaks or p["bits"] > peaks[key]["bits"]):
            peaks[key] = p
    return peaks, None


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


# ONNX Runtime, through node: one-node models built here with onnx.helper,
# timed by bench/ort_bench.js. Each op says how to build its model and
# how its tensors map to and from attn's [heads][n][d].
ORT_MHA, ORT_ATT23 = "ORT MHA", "ORT Attention-23"
ORT_CHECK_N, ORT_CHECK_HEADS, ORT_TOLERANCE = 64, 2, 1e-4


def mha_op():
    """com.microsoft MultiHeadAttention: query, key, value [1][n][heads·d]."""

    def build(path, n, heads, d):
        dims = [1, n, heads * d]
        names = ["query", "key", "value"]
        node = helper.make_node("MultiHeadAttention", names, ["output"], domain="com.microsoft",
                                num_heads=heads)
        graph = helper.make_graph([node], "mha", [helper.make_tensor_value_info(x, TensorProto.FLOAT, dims)
                                                  for x in names],
                                  [helper.make_tensor_value_info("output", TensorProto.FLOAT, dims)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 8
        onnx.save(model, path)
        return [(x, dims) for x in names]

    return {"build": build,
            "to_model": lambda x: x.transpose(1, 0, 2).reshape(1, x.shape[1], -1),
            "from_model": lambda y, heads, n, d: y.reshape(n, heads, d).transpose(1, 0, 2)}


# What the opset-23 Attention op must take for the model below: 4-D inputs,
# its schema's own words for Q in onnx 1.18 and later.
ATT23_LAYOUT = "4D tensor with shape (batch_size, q_num_heads, q_sequence_length, head_size)"
# Its inputs and output as the ONNX operator reference publishes them (Q, K,
# V; Y), for an onnx too old to know the op: Debian 12's 1.12 stops at
# opset 17. A model file needs no schema, only the runtime does.
ATT23_INPUTS, ATT23_OUTPUT = ["Q", "K", "V"], "Y"


def attention23_op():
    """The standard opset-23 Attention on [1][heads][n][d], or why not.

    An installed onnx that knows the op decides its input and output names,
    and must describe Q as 4-D (batch, heads, sequence, head size); an
    older one (no opset 23) writes the node from the published signature.
    Either way ort_setup checks the model's output against NumPy before
    anything is timed. No attribute is set: the scale defaults to
    1/√head_size, and q_num_heads/kv_num_heads are only for 3-D inputs.
    Returns (op, None, how it was built) or (None, why not, None).
    """
    if onnx is None:
        return None, "python3-onnx is not installed", None
    try:
        schema = onnx.defs.get_schema("Attention", 23, "")
    except onnx.defs.SchemaError:
        schema = None
    if schema:
        q = schema.inputs[0].description.replace("`", "")
        if ATT23_LAYOUT not in q:
            return None, f"opset-23 Attention's Q is not described as a {ATT23_LAYOUT} in onnx {onnx.__version__}: {q!r}", None
        names = [x.name for x in schema.inputs[:3]]
        out = schema.outputs[0].name
        how = f"inputs and layout from the installed onnx {onnx.__version__}'s schema"
    else:
        names, out = ATT23_INPUTS, ATT23_OUTPUT
        how = (f"the installed python3-onnx {onnx.__version__} has no opset-23 Attention (its newest opset is "
               f"{onnx.defs.onnx_opset_version()}), so the node is written from the op's published signature "
               "(Q, K, V [batch, heads, n, head size] to Y); ONNX Runtime runs it")

    def build(path, n, heads, d):
        dims = [1, heads, n, d]
        node = helper.make_node("Attention", names, [out])
        graph = helper.make_graph([node], "attention23", [helper.make_tensor_value_info(x, TensorProto.FLOAT, dims)
                                                          for x in names],
                                  [helper.make_tensor_value_info(out, TensorProto.FLOAT, dims)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        model.ir_version = 11  # the IR version of opset 23
        onnx.save(model, path)
        return [(x, dims) for x in names]

    return {"build": build, "to_model": lambda x: x[None],
            "from_model": lambda y, heads, n, d: y.reshape(heads, n, d)}, None, how


def ort_run(ort, spec):
    path = os.path.join(ort["dir"], "spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    r = subprocess.run([ort["node"], os.path.join(HERE, "ort_bench.js"), path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"run_bench: ort_bench.js failed on {spec['model']}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def reference_attention(q, k, v):
    """softmax(QKᵀ/√d)·V in float64, per head, on [heads][n][d]."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.matmul(q, k.transpose(0, 2, 1)) / np.sqrt(q.shape[-1])
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.matmul(s / s.sum(axis=-1, keepdims=True), v)


def ort_setup(node, tmp):
    """What of ONNX Runtime can be measured here, each op checked once.

    Returns {"version", "ops": {name: op}, "why": {name: reason not
    measured}, "check": {name: max error at n = 64}}. An op whose output
    does not match NumPy's stops the run: its numbers would mean nothing.
    """
    ort = {"version": None, "ops": {}, "why": {}, "how": {}, "check": {}, "node": node, "dir": tmp}
    why = None
    if np is None:
        why = "NumPy, which checks ORT's output, is not installed"
    elif onnx is None:
        why = "python3-onnx, which builds the models, is not installed (apt-get install python3-onnx)"
    elif shutil.which(node) is None:
        why = f"{node} not found (apt-get install nodejs)"
    else:
        r = subprocess.run([node, os.path.join(HERE, "ort_bench.js"), "--version"], capture_output=True, text=True)
        if r.returncode != 0:
            why = (f"{r.stderr.strip()}: install it with `npm install --ignore-scripts` in bench "
                   "(see bench/README.md)")
        else:
            ort["version"] = json.loads(r.stdout)["ort"]
    if why:
        ort["why"] = {ORT_MHA: why, ORT_ATT23: why}
        return ort
    ort["ops"][ORT_MHA] = mha_op()
    op, why, how = attention23_op()
    if op:
        ort["ops"][ORT_ATT23] = op
        ort["how"][ORT_ATT23] = how
    else:
        ort["why"][ORT_ATT23] = why
    n, heads, d = ORT_CHECK_N, ORT_CHECK_HEADS, 64
    rng = np.random.default_rng(2)
    q, k, v = (rng.uniform(-1, 1, (heads, n, d)).astype(np.float32) for _ in range(3))
    want = reference_attention(q, k, v)
    for name, op in ort["ops"].items():
        model = os.path.join(tmp, "check.onnx")
        inputs = op["build"](model, n, heads, d)
        spec = {"model": model, "threads": 1, "inputs": [], "min_reps": 1, "min_seconds": 0,
                "output_file": os.path.join(tmp, "check.out")}
        for (input_name, dims), x in zip(inputs, (q, k, v)):
            spec["inputs"].append({"name": input_name, "dims": dims, "file": os.path.join(tmp, input_name)})
            np.ascontiguousarray(op["to_model"](x), dtype="<f4").tofile(spec["inputs"][-1]["file"])
        ort_run(ort, spec)
        got = op["from_model"](np.fromfile(spec["output_file"], dtype="<f4"), heads, n, d)
        err = float(np.abs(got - want).max())
        if not err <= ORT_TOLERANCE:
            sys.exit(f"run_bench: {name} does not compute softmax(QKᵀ/√d)·V: max |error| {err:.3g} "
                     f"against NumPy at n = {n}, {heads} heads, d = {d} (tolerance {ORT_TOLERANCE}); "
                     "its model in bench/run_bench.py is wrong")
        ort["check"][name] = err
        print(json.dumps({"ort_check": name, "n": n, "heads": heads, "max_abs_error": err}), flush=True)
    return ort


def ort_peers(ort, n, d, heads, dtype, threads, only=None):
    """Seconds per session.run of each op (or of `only`); MultiHeadAttention takes float32 only."""
    out = {}
    if dtype != "f32":
        return out
    for name, op in ort["ops"].items():
        if only and name != only:
            continue
        model = os.path.join(ort["dir"], "bench.onnx")
        inputs = op["build"](model, n, heads, d)
        r = ort_run(ort, {"model": model, "threads": threads, "min_reps": 3, "min_seconds": MIN_SECONDS,
                          "inputs": [{"name": x, "dims": dims} for x, dims in inputs]})
        out[name] = r["seconds"]
    return out


def loaded_blas():
    """The BLAS libraries NumPy and PyTorch were given (Debian's alternatives)."""
    try:
        with open("/proc/self/maps") as f:
            return sorted({os.path.basename(line.split()[-1]) for line in f
                           if re.search(r"/lib[^/]*blas[^/]*\.so", line)})
    except OSError:
        return []


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
    info["blas"] = loaded_blas()
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
    ap.add_argument("--fma-peak", default="build/fma_peak")
    ap.add_argument("--node", default="node", help="the node that runs bench/ort_bench.js")
    ap.add_argument("--out", default="docs/performance.md")
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    ap.add_argument("--min-seconds", type=int, default=1,
                    help="shortest timing of each row, whole seconds as `attn bench --seconds` takes "
                         "(default 1; 0, just 3 runs, only for development)")
    args = ap.parse_args()
    global MIN_SECONDS
    MIN_SECONDS = args.min_seconds
    started = time.time()

    ns = [512, 2048] if args.quick else [512, 2048, 8192]
    d = 64
    # The limit, and the ORT models checked, before anything long.
    peaks, peaks_why = fma_peaks(args.fma_peak)
    print(json.dumps({"fma_peak": peaks["all"] if peaks else peaks_why}), flush=True)
    blas = loaded_blas()
    if blas and not any("openblas" in b for b in blas):
        print(f"run_bench: NumPy and PyTorch run on {', '.join(blas)}, not OpenBLAS: their rows will be "
              "slow and the run long (an hour or more in full); apt-get install libopenblas0-pthread",
              file=sys.stderr, flush=True)
    ort_dir = tempfile.TemporaryDirectory()
    ort = ort_setup(args.node, ort_dir.name)
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
                        if weights and heads * n * n > MAX_KEPT:
                            continue  # attn bench's own limit (--max-elements): the table says so
                        r = attn_bench(args.attn, n, d, heads, dtype, weights, threads)
                        what = "attn (weights kept)" if weights else "attn (output only)"
                        attn_results[(n, heads, dtype, threads, weights)] = r
                        rows.append((n, heads, dtype, threads, what, r["seconds"], r["gflops"]))
                        print(json.dumps(r), flush=True)
                    peers = {}
                    peers.update(torch_peers(n, d, heads, dtype, threads))
                    peers.update(numpy_peer(n, d, heads, dtype, threads))
                    peers.update(ort_peers(ort, n, d, heads, dtype, threads))
                    for what, s in peers.items():
                        rows.append((n, heads, dtype, threads, what, s, gflops(n, d, heads, s)))
                        print(json.dumps({"peer": what, "n": n, "heads": heads, "dtype": dtype,
                                          "threads": threads, "seconds": s,
                                          "gflops": gflops(n, d, heads, s)}), flush=True)

    feats = features(args.attn, FEATURE_N if not args.quick else 2048)
    pairs = paired_ratios(args.attn, ort, ns)

    ort_dir.cleanup()
    mach = machine()
    mach["minutes"] = (time.time() - started) / 60
    mach["min_seconds"] = MIN_SECONDS
    write_report(args.out, rows, attn_results, big, e2e, io, mach, ns, peaks, peaks_why, ort, feats, pairs)


# The columns of the throughput tables, in this order; other peers follow.
COLUMNS = ["attn (output only)", "attn (weights kept)", ORT_MHA, ORT_ATT23, "torch fused SDPA",
           "torch bmm+softmax+bmm", "numpy"]


def write_report(path, rows, attn_results, big, e2e, io, mach, ns, peaks, peaks_why, ort, feats, pairs):
    def peak(dtype, threads):
        return peaks.get((dtype, threads)) if peaks else None

    def pct(gflops, dtype, threads):
        p = peak(dtype, threads)
        return f"{100 * gflops / p['gflops_cpu']:.0f}%" if p else None

    L = []
    L.append("# Performance\n")
    L.append("Measured by `bench/run_bench.py` (this file is its output; rerun with "
             "`/usr/bin/python3 bench/run_bench.py` after `scripts/dev.sh demo` and `cmake --build build`, which builds the benchmark programs).\n")
    L.append(f"- date: {datetime.date.today()}; machine: {mach.get('cpu')}, {mach.get('cores')} cores, "
             f"{mach.get('simd')}; load average at the end {mach.get('load', '?')}; "
             f"the run took {mach['minutes']:.0f} min")
    if mach.get("blas_pinned"):
        blas = "their OpenBLAS pinned to the thread count of each row (openblas_set_num_threads)"
    elif mach.get("blas") and not any("openblas" in b for b in mach["blas"]):
        blas = (f"**their BLAS is {', '.join(mach['blas'])}, not OpenBLAS**: Debian's reference BLAS "
                "(libblas3) is an order of magnitude slower, so these rows say little about NumPy and "
                "PyTorch (`apt-get install libopenblas0-pthread` selects OpenBLAS)")
    else:
        blas = "their OpenBLAS NOT pinned: peer rows may use every core"
    L.append(f"- peers: PyTorch {mach['torch']}, NumPy {mach['numpy']} (Debian packages); {blas}")
    if ort["version"]:
        checks = ", ".join(f"{name} {err:.1e}" for name, err in ort["check"].items())
        L.append(f"- ONNX Runtime {ort['version']} (onnxruntime-node, CPU, `bench/ort_bench.js`): one "
                 "com.microsoft `MultiHeadAttention` node on query, key, value [1, n, heads·64] (\"ORT MHA\") "
                 "and one opset-23 `Attention` node on [1, heads, n, 64] (\"ORT Attention-23\"), float32 only; "
                 "intraOpNumThreads = the row's threads, interOpNumThreads = 1, every graph optimization; "
                 f"output checked against NumPy at n = {ORT_CHECK_N}, {ORT_CHECK_HEADS} heads "
                 f"(max |error|: {checks}; tolerance {ORT_TOLERANCE})")
    for name in (ORT_MHA, ORT_ATT23):
        if name in ort["why"]:
            L.append(f"- **{name} not measured**: {ort['why'][name]}")
        elif name in ort["how"]:
            L.append(f"- {name}: {ort['how'][name]}")
    L.append("- self-attention on random inputs, head width d = 64, FLOPs counted as 4·n²·d per head; "
             f"median of ≥3 runs and ≥{mach['min_seconds']:g} s after a warm-up; attn numbers from `attn bench` "
             "(the kernels of `attn run`, no file I/O)\n")

    L.append("\n## The limit: the FMA peak\n")
    if peaks:
        L.append(f"`build/fma_peak` in the same run: {peaks['chains']} independent FMA chains in registers, "
                 "2 flops per lane per FMA, best of 5; the 2-thread figure runs two threads at once. "
                 "The percentages below divide a row's GFLOP/s (wall time) by the CPU-time peak of its "
                 "dtype and thread count, widest vectors: a busy machine lowers the rows, not the "
                 "peak. Wall-time peak in brackets: far below the CPU-time one, the machine was busy.\n")
        L.append("| dtype | vectors | 1 thread | 2 threads |")
        L.append("|---|---|---:|---:|")
        for dtype in ("f32", "f64"):
            for bits in (256, 512):
                cells = []
                for threads in (1, 2):
                    p = [x for x in peaks["all"] if x["dtype"] == dtype and x["bits"] == bits and x["threads"] == threads]
                    if not p:
                        cells.append("–")
                    elif p[0]["gflops"] is None:
                        cells.append(p[0]["why"])
                    else:
                        used = peak(dtype, threads) is p[0]
                        cell = f"{p[0]['gflops_cpu']:.1f} ({p[0]['gflops']:.1f})"
                        cells.append(f"**{cell}**" if used else cell)
                isa = "AVX-512F" if bits == 512 else "AVX2+FMA"
                L.append(f"| {dtype} | {bits}-bit ({isa}) | " + " | ".join(cells) + " |")
        L.append("\nGFLOP/s; in bold the peak the percentages use.")
    else:
        L.append(f"**Not measured**: {peaks_why}. The tables show no percentages.")

    names = [c for c in COLUMNS if c in {r[4] for r in rows} or c in (ORT_MHA, ORT_ATT23)]
    names += sorted({r[4] for r in rows} - set(names))

    def find(n, heads, dtype, threads, name):
        m = [r for r in rows if r[0] == n and r[1] == heads and r[2] == dtype and r[3] == threads and r[4] == name]
        return m[0] if m else None

    def table(dtype, heads, threads):
        L.append(f"\n### {dtype}, {heads} head{'s' if heads > 1 else ''}, {threads} thread{'s' if threads > 1 else ''}\n")
        cols = [c for c in names if dtype == "f32" or c not in (ORT_MHA, ORT_ATT23)]
        # attn's output-only throughput over each ORT op's, f32 only.
        peers = [c for c in (ORT_MHA, ORT_ATT23) if dtype == "f32" and c not in ort["why"]]
        L.append("| n | " + " | ".join(cols + [f"attn / {c}" for c in peers]) + " |")
        L.append("|---:|" + "---:|" * (len(cols) + len(peers)))
        for n in ns:
            cells = []
            for name in cols:
                r = find(n, heads, dtype, threads, name)
                p = r and pct(r[6], dtype, threads)
                cells.append("–" if not r else f"{r[6]:.1f} ({p})" if p else f"{r[6]:.1f}")
            a = find(n, heads, dtype, threads, "attn (output only)")
            for c in peers:
                o = find(n, heads, dtype, threads, c)
                cells.append(f"{a[6] / o[6]:.2f}×" if a and o else "–")
            L.append(f"| {n} | " + " | ".join(cells) + " |")

    L.append("\n## Throughput (GFLOP/s, higher is better; % of the FMA peak)\n")
    L.append(f"Weights kept is not run where heads·n² exceeds {MAX_KEPT} (2^26, `attn bench`'s default "
             "`--max-elements`): 8 heads at n = 8192 would keep 4 GB of weights in double.\n")
    L.append("ONNX Runtime runs in float32 only (its `MultiHeadAttention` takes no float64), so the "
             "f64 tables have no ORT columns. \"attn / ORT MHA\" and \"attn / ORT Attention-23\" divide "
             "attn's output-only throughput by that op's; the targets are set against MHA.")
    for name in (ORT_MHA, ORT_ATT23):
        if name in ort["why"]:
            L.append(f"\nThe {name} column is empty: {ort['why'][name]}.")
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
    def of_peak(r):
        p = pct(r["gflops"], r["dtype"], r["threads"])
        return f", {p} of the {r['dtype']} peak" if p else ""
    def also_att23(a, n, heads, threads):
        o = find(n, heads, "f32", threads, ORT_ATT23)
        return f"; ORT Attention-23 {o[6]:.1f}: {a['gflops'] / o[6]:.2f}×" if o else ""
    def paired(key):
        r = pairs.get(key)
        return f"; **{r:.2f}×** in {PAIR_ROUNDS} rounds of back-to-back runs" if r else ""
    if pairs:
        L.append(f"Each ratio to ORT MHA, and of two threads to one, is given twice: from the tables above, "
                 f"whose two sides ran minutes apart, and as the median of {PAIR_ROUNDS} rounds of the two "
                 "run back to back (`attn bench` and then ORT, or one thread and then two), which the "
                 "shared VM's drift does not move as much.\n")
    nbig = max(ns)
    t = get(nbig, 1, "f32", 1, False)
    if t:
        bt = best_torch(nbig, 1, "f32", 1)
        ratio = f"{t['gflops'] / bt[6]:.2f}× {bt[4]} ({bt[6]:.1f})" if bt else "no PyTorch"
        o = find(nbig, 1, "f32", 1, ORT_MHA)
        vs_ort = (f", **{t['gflops'] / o[6]:.2f}×** ORT MHA{paired(('ort', nbig, 1, 1))} (target ≥ 1.15×"
                  f"{also_att23(t, nbig, 1, 1)})" if o else "")
        L.append(f"- f32, 1 thread, n = {nbig}, output only: **{t['gflops']:.1f} GFLOP/s**{of_peak(t)} "
                 f"(target ≥ 80%){vs_ort}, {ratio}")
    t = get(nbig, 1, "f64", 1, False)
    if t:
        L.append(f"- f64, 1 thread, n = {nbig}, output only: **{t['gflops']:.1f} GFLOP/s**{of_peak(t)} (target ≥ 75%)")
    for heads in (1, 8):
        for n in ns:
            if n < 2048:
                continue
            for threads in (1, 2):
                a, o = get(n, heads, "f32", threads, False), find(n, heads, "f32", threads, ORT_MHA)
                if a and o:
                    L.append(f"- f32, {heads} head{'s' if heads > 1 else ''}, {threads} thread{'s' if threads > 1 else ''}, "
                             f"n = {n}, output only: attn {a['gflops']:.1f}{of_peak(a)}, ORT MHA {o[6]:.1f}: "
                             f"**{a['gflops'] / o[6]:.2f}×** ORT{paired(('ort', n, heads, threads))} "
                             f"(target ≥ 1.1×){also_att23(a, n, heads, threads)}")
    for n in ns:
        if n < 2048:
            continue
        for dtype in ("f32", "f64"):
            one, two = get(n, 1, dtype, 1, False), get(n, 1, dtype, 2, False)
            if one and two:
                L.append(f"- 2 threads vs 1, n = {n}, {dtype}, output only: **{one['seconds'] / two['seconds']:.2f}×**"
                         f"{paired(('threads', n, dtype))} (target ≥ 1.9×)")
    for dtype in ("f32", "f64"):
        w, o = get(2048, 1, dtype, 1, True), get(2048, 1, dtype, 1, False)
        if w and o:
            first = ""
            if "first_seconds" in w and "first_seconds" in o:
                # One pass in a fresh process: the map's pages come from the system.
                first = (f"; a single run (the first pass, its memory fresh from the system): "
                         f"{w['first_seconds'] / o['first_seconds']:.2f}×")
            L.append(f"- weights kept vs output only, n = 2048, {dtype}: **{w['seconds'] / o['seconds']:.2f}×** the time "
                     f"(target ≤ 1.3×; medians of the repeats, which reuse the memory the program freed){first}")
    if big:
        L.append(f"- n = 32768, f32, output only: {big['seconds']:.2f} s ({big['gflops']:.1f} GFLOP/s{of_peak(big)}), "
                 f"peak RSS **{big['peak_rss_mb']:.1f} MB** (target ≤ 100 MB; the weights alone would be 4 GB)")
    for cmd, (med, sd) in e2e.items():
        L.append(f"- `{cmd}`: median **{med * 1e3:.1f} ms** ± {sd * 1e3:.1f} (hyperfine)")
    if io:
        d = dict(io)
        for mine, peer, name in (("attn csv", "numpy.loadtxt (csv)", "CSV"), ("attn json", "python json.load (json)", "JSON")):
            if mine in d and peer in d:
                # JSON goes through nlohmann_json's SAX parser, 3-5x slower than the
                # former hand-written one, by choice: big matrices belong in .npy.
                target = "target ≥ 5×" if name == "CSV" else "nlohmann_json; big matrices belong in .npy"
                L.append(f"- {name} input of 8192×64: attn {d[mine]:.0f} MB/s vs {peer} {d[peer]:.0f} MB/s: "
                         f"**{d[mine] / d[peer]:.1f}×** ({target})")
        L.append("\n| reader | MB/s |\n|---|---:|")
        for name, mbs in io:
            L.append(f"| {name} | {mbs:.0f} |")
    if feats:
        n = feats[0][1]["n"]
        L.append(f"\n## Today's attention in the streaming kernel\n")
        L.append(f"`attn bench --n {n} --heads {FEATURE_HEADS} --threads 1 --no-weights` with each feature "
                 "(f32): the time per visited key against plain causal attention's (target: within 10%, "
                 "a window that much faster for visiting fewer keys; GQA at least as fast per query head as "
                 f"multi-head). {FEATURE_ROUNDS} rounds, each running every row once in turn; a row's ratio is "
                 "the median over the rounds of its time per key over the causal run's of the same round, "
                 "and its seconds the median of its runs.\n")
        L.append("| run | seconds | keys visited | per visited key vs causal | path |")
        L.append("|---|---:|---:|---:|---|")
        for name, r, keys, ratio in feats:
            L.append(f"| {name} | {r['seconds']:.4f} | {keys} | {ratio:.2f}× | {r['path']} |")
    notes = os.path.join(HERE, "performance_notes.md")
    if os.path.exists(notes):  # hand-written: what the numbers mean, what is left
        with open(notes) as f:
            L.append("\n" + f.read().rstrip("\n"))
    L.append("\n## Raw numbers\n")
    L.append("| n | heads | dtype | threads | what | seconds | GFLOP/s | % of peak |")
    L.append("|---:|---:|---|---:|---|---:|---:|---:|")
    for r in rows:
        L.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.4f} | {r[6]:.1f} | {pct(r[6], r[2], r[3]) or '–'} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
