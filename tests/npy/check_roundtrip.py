#!/usr/bin/python3
"""Checks by hand that .npy files written by attn load in NumPy unchanged.

The C++ tests read attn's files back with attn's own reader; this script
closes the loop with NumPy as the reader. It runs the attn binary on the
committed fixtures, loads every result with np.load(allow_pickle=False) and
compares it with NumPy's own attention. Needs Debian's python3-numpy.

    /usr/bin/python3 tests/npy/check_roundtrip.py build/attn

Prints one line per check and exits 1 if any check fails.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def fixture(name):
    return os.path.join(HERE, name)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_roundtrip.py PATH/TO/attn")
    attn = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:

        def run(args, out_name):
            out = os.path.join(tmp, out_name)
            subprocess.run([attn, "run", *args, "-o", out], check=True)
            return out

        def check(label, path, expected, dtype, tol):
            nonlocal failures
            a = np.load(path, allow_pickle=False)
            ok = (a.dtype == np.dtype(dtype) and a.shape == expected.shape
                  and a.flags.c_contiguous)
            err = float(np.max(np.abs(a.astype("<f8") - expected))) if ok else float("nan")
            ok = ok and err <= tol
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {label}: dtype {a.dtype.str} shape {a.shape} "
                  f"max |attn - numpy| = {err:.3g} (tolerance {tol:g})")

        expected = np.load(fixture("expected_output.npy"))
        check("run X.npy -o out.npy", run([fixture("X.npy")], "out.npy"), expected, "<f8", 1e-12)
        check("run X.npy --dtype f32 -o out.npy",
              run([fixture("X.npy"), "--dtype", "f32"], "out32.npy"), expected, "<f4", 1e-5)
        w = os.path.join(tmp, "w.npy")
        run([fixture("X.npy"), "--weights-out", w], "unused.npy")
        check("run X.npy --weights-out w.npy", w, np.load(fixture("expected_weights.npy")), "<f8",
              1e-12)
        check("run --x X.npy --mask causal_mask.npy",
              run(["--x", fixture("X.npy"), "--mask", fixture("causal_mask.npy")], "causal.npy"),
              np.load(fixture("expected_output_causal.npy")), "<f8", 1e-12)
        check("run X_batched.npy", run([fixture("X_batched.npy")], "batched.npy"),
              np.load(fixture("expected_output_batched.npy")), "<f8", 1e-12)
        # The bytes attn writes for a NumPy array are the bytes NumPy writes.
        out = run([fixture("X.npy")], "same.npy")
        x = np.load(out)
        same = open(out, "rb").read()
        with open(os.path.join(tmp, "numpy.npy"), "wb") as f:
            np.save(f, x)
        identical = open(os.path.join(tmp, "numpy.npy"), "rb").read() == same
        failures += not identical
        print(f"{'ok  ' if identical else 'FAIL'} np.save of the loaded output gives the same bytes")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
