#!/usr/bin/python3
"""GGUF files of forward_bench.py's Qwen2.5-0.5B-shaped checkpoint, for
timing llama.cpp against attn (not a test: files to time with).

  /usr/bin/python3 bench/make_gguf_bench.py [--scratch DIR] [--out DIR]

Reads DIR/qwen2.5-0.5b-shaped/ (model.safetensors, bf16, and config.json;
bench/forward_bench.py builds it, default DIR /tmp/attn-forward-bench; built
here the same way when absent) and
writes into --out (default the same scratch directory):
- qwen2.5-0.5b-shaped-F16.gguf: as convert_hf_to_gguf.py --outtype f16 does
  it (data/models/make_tiny_gguf.py's Qwen2Model conversion: qwen2
  architecture, every 2-D tensor F16, 1-D tensors (norms, biases) F32; no
  tokenizer files here, so tokenizer.ggml.model "none" and qwen2.vocab_size);
- qwen2.5-0.5b-shaped-Q8_0.gguf and -Q4_K_M.gguf: llama_model_quantize of it.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data", "models"))
import make_tiny_gguf as mg  # noqa: E402
from gguf_writer import write_gguf  # noqa: E402
from llamacpp import LlamaCpp  # noqa: E402


def read_bf16_safetensors(path):
    """{name: float32 array} from a bf16 safetensors file (any data order)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    n = int.from_bytes(bytes(raw[:8]), "little")
    header = json.loads(bytes(raw[8:8 + n]).decode())
    header.pop("__metadata__", None)
    base = 8 + n
    out = {}
    for name, info in header.items():
        assert info["dtype"] == "BF16", name
        a, b = info["data_offsets"]
        bits = raw[base + a:base + b].view("<u2")
        out[name] = (bits.astype(np.uint32) << 16).view(np.float32).reshape(info["shape"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scratch", default="/tmp/attn-forward-bench")
    ap.add_argument("--out", default=None)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    d = os.path.join(args.scratch, "qwen2.5-0.5b-shaped")
    out_dir = args.out or args.scratch
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        sys.path.insert(0, HERE)
        import forward_bench   # builds the checkpoint as forward_bench.py does
        print(f"building {d} (forward_bench.build)")
        forward_bench.build(d)
    with open(os.path.join(d, "config.json")) as fh:
        h = json.load(fh)
    t0 = time.time()
    w = read_bf16_safetensors(os.path.join(d, "model.safetensors"))
    meta, tensors = mg.CONVERT[h["architectures"][0]][1](mg.Ctx(d, h), sorted(w.items()))
    kv = mg.Meta(meta.arch)
    kv.str("general.architecture", meta.arch)
    kv.str("general.type", "model")
    kv.str("general.name", "qwen2.5-0.5b-shaped")
    for k, (vt, v) in meta.kv.items():
        kv.put(k, vt, v)
    kv.u32("general.file_type", 1)   # LLAMA_FTYPE_MOSTLY_F16
    kv.u32("general.quantization_version", 2)
    mg.vocab_meta(kv, d, h)
    out = []
    for name, a in tensors:
        # convert_hf_to_gguf: 1-D tensors and *_norm.weight F32, the rest F16
        if a.ndim <= 1 or name.endswith("_norm.weight"):
            out.append((name, "F32", list(reversed(a.shape)), np.ascontiguousarray(a, "<f4").tobytes()))
        else:
            out.append((name, "F16", list(reversed(a.shape)), np.ascontiguousarray(a, "<f2").tobytes()))
    f16 = os.path.join(out_dir, "qwen2.5-0.5b-shaped-F16.gguf")
    size = write_gguf(f16, kv.items(), out)
    print(f"{f16}: {size / 1e6:.0f} MB ({time.time() - t0:.0f} s)")
    lib = LlamaCpp()
    for q in ("Q8_0", "Q4_K_M"):
        t0 = time.time()
        path = os.path.join(out_dir, f"qwen2.5-0.5b-shaped-{q}.gguf")
        lib.quantize(f16, path, q, threads=args.threads)
        print(f"{path}: {os.path.getsize(path) / 1e6:.0f} MB ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
