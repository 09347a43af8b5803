#!/usr/bin/python3
"""Writes the .npy fixtures of tests/npy_test.cc and tests/npy_cli_test.cc.

NumPy is the independent oracle: every good file here is written by NumPy's
own np.save / np.lib.format.write_array, and the expected attention results
are computed with NumPy, not with attn. Run with Debian's python3 (the
python3-numpy package); the C++ tests only read the committed files.

    /usr/bin/python3 tests/npy/make_fixtures.py   # rewrites tests/npy/*.npy

Values of the dtype fixtures follow formulas the C++ tests recompute:
value(i) = (i - 5) * 0.25 for floats and i - 5 for signed ints, with i the
flat (C-order) index; unsigned ints are i; bools are i % 3 == 0.
"""

import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def save(name, a, version=None):
    with open(path(name), "wb") as f:
        np.lib.format.write_array(f, a, version=version, allow_pickle=True)


def raw_npy(name, header, data=b""):
    """A file with a header NumPy itself would not write (padding as NumPy)."""
    header = header.encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * (pad % 64) + b"\n"
    with open(path(name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data)


def floats(shape, dtype):
    n = int(np.prod(shape))
    return ((np.arange(n) - 5) * 0.25).astype(dtype).reshape(shape)


def ints(shape, dtype):
    n = int(np.prod(shape))
    return (np.arange(n) - 5).astype(dtype).reshape(shape)


def attention(q, k, v, mask=None, bias=None):
    """softmax(Q K^T / sqrt(d) + bias) V over the last two axes; mask True = blocked."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w


def main():
    # Every accepted dtype, ranks 1 to 4, NumPy's default header (1.0).
    save("f8_2d.npy", floats((3, 4), "<f8"))
    save("f4_2d.npy", floats((3, 4), "<f4"))
    save("f8_4d.npy", floats((2, 2, 2, 3), "<f8"))
    save("i4_1d.npy", ints((5,), "<i4"))
    save("i8_3d.npy", ints((2, 3, 4), "<i8"))
    save("i1_1d.npy", ints((4,), "i1"))
    save("i2_1d.npy", ints((4,), "<i2"))
    save("u1_1d.npy", np.arange(4, dtype="u1"))
    save("u2_1d.npy", np.arange(4, dtype="<u2"))
    save("u4_1d.npy", np.arange(4, dtype="<u4"))
    save("u8_1d.npy", np.arange(4, dtype="<u8"))
    save("b1_2d.npy", (np.arange(9) % 3 == 0).reshape(3, 3))
    # The same float64 matrix under format versions 2.0 and 3.0.
    save("f8_2d_v2.npy", floats((3, 4), "<f8"), version=(2, 0))
    save("f8_2d_v3.npy", floats((3, 4), "<f8"), version=(3, 0))
    # Non-finite values: a nan at [3][1] (refused in X, fine in a bias).
    nf = floats((4, 2), "<f8")
    nf[3, 1] = np.nan
    save("nonfinite.npy", nf)
    save("mask_bad.npy", np.array([[0, 1], [2, 0]], dtype="<i8"))

    # Files attn refuses.
    save("fortran.npy", np.asfortranarray(floats((3, 4), "<f8")))
    save("big_endian.npy", floats((3, 4), ">f8"))
    save("object.npy", np.array([1, "a", None], dtype=object))
    save("complex.npy", np.arange(3, dtype="<c16"))
    save("unicode.npy", np.array(["cat", "milk"]))
    save("structured.npy", np.zeros(2, dtype=[("a", "<f8"), ("b", "<i4")]))
    save("scalar.npy", np.array(3.5))
    save("rank5.npy", np.zeros((1, 1, 1, 2, 2)))
    save("empty.npy", np.zeros((0, 3)))
    full = np.zeros((100, 64))
    save("truncated.npy", full)
    with open(path("truncated.npy"), "rb+") as f:
        f.truncate(128 + 4096)  # header (128 bytes) and 4096 of 51200 data bytes
    raw_npy("huge_shape.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }")
    raw_npy("overflow_shape.npy",
            "{'descr': '<f8', 'fortran_order': False, "
            "'shape': (4294967296, 4294967296, 4294967296), }")
    with open(path("two_arrays.npy"), "wb") as f:
        np.save(f, floats((2, 2), "<f8"))
        np.save(f, floats((2, 2), "<f8"))
    with open(path("not_npy.npy"), "w") as f:
        f.write("1,2\n3,4\n")

    # Self-attention: attn run X.npy must give softmax(X X^T / sqrt(d)) X.
    rng = np.random.default_rng(20240607)
    x = rng.standard_normal((5, 4))
    save("X.npy", x)
    out, w = attention(x, x, x)
    save("expected_output.npy", out)
    save("expected_weights.npy", w)
    # The same X as float32 on disk (the values attn reads are the float32s).
    x32 = x.astype("<f4")
    save("X_f32.npy", x32)
    save("expected_output_f32_input.npy", attention(*(x32.astype("<f8"),) * 3)[0])
    # A causal boolean mask from --mask (True = may not attend).
    causal = np.triu(np.ones((5, 5), dtype=bool), k=1)
    save("causal_mask.npy", causal)
    save("expected_output_causal.npy", attention(x, x, x, causal)[0])
    # A float bias from --bias, with a -inf (a key that query 0 may not see).
    bias = rng.standard_normal((5, 5))
    bias[0, 1] = -np.inf
    save("bias.npy", bias)
    save("expected_output_bias.npy", attention(x, x, x, bias=bias)[0])
    # Batched: [2][3][4] in, [2][3][4] out.
    xb = rng.standard_normal((2, 3, 4))
    save("X_batched.npy", xb)
    save("expected_output_batched.npy", attention(xb, xb, xb)[0])


if __name__ == "__main__":
    main()
