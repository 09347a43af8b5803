#!/usr/bin/python3
"""llama.cpp's prefill time on a GGUF file (not a test: numbers to read).

  /usr/bin/python3 bench/llamacpp_prefill.py FILE.gguf [--tokens 128]
                                            [--threads 2] [--rounds 5]

Loads FILE (read, no mmap, no weight repacking), then per round: a fresh KV
cache (llama_memory_clear), one llama_decode of N random token ids at
positions 0..N-1 (one batch, one sequence, the last position's logits only,
flash attention off, F32 K/V cache), timed around llama_decode and
llama_synchronize. Prints each round and the median, in seconds. One warm-up
decode is run first and not counted.
"""
import argparse
import ctypes as C
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data", "models"))
from llamacpp import LlamaCpp  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    lib = LlamaCpp()
    L = lib.llama
    L.llama_get_memory.restype = C.c_void_p
    L.llama_get_memory.argtypes = [C.c_void_p]
    L.llama_memory_clear.argtypes = [C.c_void_p, C.c_bool]
    t0 = time.time()
    model = lib.load_model(args.file)
    print(f"{os.path.basename(args.file)}: loaded in {time.time() - t0:.1f} s")
    vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    ids = [int(i) for i in np.random.default_rng(3).integers(0, vocab, args.tokens)]
    n_ctx = ((args.tokens + 255) // 256) * 256
    ctx = lib.context(model, n_ctx, threads=args.threads, n_batch=args.tokens)
    times = []
    for r in range(args.rounds + 1):
        L.llama_memory_clear(L.llama_get_memory(ctx), True)
        b = lib._batch(ids, all_logits=False)
        t0 = time.perf_counter()
        rc = L.llama_decode(ctx, b)
        L.llama_synchronize(ctx)
        dt = time.perf_counter() - t0
        L.llama_batch_free(b)
        assert rc == 0, rc
        if r:
            times.append(dt)
            print(f"  round {r}: {dt:.3f} s")
    print(f"median {statistics.median(times):.3f} s for {args.tokens} tokens, {args.threads} threads "
          f"({args.tokens / statistics.median(times):.0f} tokens/s)")
    L.llama_free(ctx)
    lib.free_model(model)


if __name__ == "__main__":
    main()
