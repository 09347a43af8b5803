#!/usr/bin/env python3
"""Writes the references attn's dequantization is held to, bit for bit:
ggml's own to_float (dequantize_row_* of ggml-quants.c, through libggml's
type traits) of blocks that ggml_quantize_chunk made from random rows, with
and without an importance matrix, and of blocks written byte by byte
(random bytes, and every scale at the edges of float16: zeros, subnormals,
the largest values, infinities and NaNs, with quants all 0, all 1 or mixed).

For each block type T, tests/gguf/quant/T.blocks holds the blocks and
T.f32 ggml's floats for them (little-endian float32, block after block);
f16.f32 holds ggml_fp16_to_fp32 of each of the 65536 halfs, in order.
tests/element_types_test.cc compares attn's to_float with them.

types.gguf, written by ggml's own GGUF writer (gguf_write_to_file), holds
a metadata value of every GGUF type and an array of each (ggml's writer
makes no nested arrays: tests/gguf_test.cc builds those itself) and a
[2][256] tensor of each type attn reads: cell i is (i - 256) / 8 in F32,
F16 and BF16, and a block type's blocks are the first of T.blocks;
tests/gguf_test.cc reads it.

Run at development time with llama.cpp's shared libraries (any directory
holding libggml-base.so, e.g. node-llama-cpp's prebuilt binaries):
    /usr/bin/python3 tests/gguf/make_quant_cases.py [LIBDIR]
It is deterministic: the same libraries write the same files.
"""
import ctypes
import os
import struct
import sys

import numpy as np

LIBDIR = (sys.argv[1] if len(sys.argv) > 1 else
          "/work/llama/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quant")

base = ctypes.CDLL(os.path.join(LIBDIR, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)


class TypeTraits(ctypes.Structure):  # struct ggml_type_traits (ggml.h)
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64),
                ("blck_size_interleave", ctypes.c_int64), ("type_size", ctypes.c_size_t),
                ("is_quantized", ctypes.c_bool), ("to_float", ctypes.c_void_p),
                ("from_float_ref", ctypes.c_void_p)]


ToFloat = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64)
base.ggml_get_type_traits.restype = ctypes.POINTER(TypeTraits)
base.ggml_get_type_traits.argtypes = [ctypes.c_int]
base.ggml_quantize_chunk.restype = ctypes.c_size_t
base.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                     ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
base.ggml_fp16_to_fp32.restype = ctypes.c_float
base.ggml_fp16_to_fp32.argtypes = [ctypes.c_uint16]
base.ggml_bf16_to_fp32.restype = ctypes.c_float
base.ggml_bf16_to_fp32.argtypes = [ctypes.c_uint16]

# name, ggml type, whether quantizing takes an importance matrix, the byte
# offsets of the block's float16 scales (d, and the min where it has one).
TYPES = [
    ("q4_0", 2, True, [0]),
    ("q4_1", 3, True, [0, 2]),
    ("q5_0", 6, True, [0]),
    ("q5_1", 7, True, [0, 2]),
    ("q8_0", 8, False, [0]),
    ("q2_k", 10, True, [80, 82]),
    ("q3_k", 11, True, [108]),
    ("q4_k", 12, True, [0, 2]),
    ("q5_k", 13, True, [0, 2]),
    ("q6_k", 14, True, [208]),
    ("iq4_nl", 20, True, [0]),
    ("iq4_xs", 23, True, [0]),
]

ROW = 256  # cells per quantized row: whole blocks of every type
EDGE_HALFS = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF,
              0x7C00, 0xFC00, 0x7E00]
EDGE_FILLS = [0x00, 0xFF, 0x5A]


def traits(t):
    return base.ggml_get_type_traits(t).contents


def to_float(t, blocks, cells):
    out = np.zeros(cells, dtype=np.float32)
    buf = ctypes.create_string_buffer(bytes(blocks), len(blocks))
    ToFloat(traits(t).to_float)(buf, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), cells)
    return out


def quantize(t, row, imatrix):
    size = traits(t).type_size * ROW // traits(t).blck_size
    dst = ctypes.create_string_buffer(size)
    src = np.ascontiguousarray(row, dtype=np.float32)
    qw = None if imatrix is None else np.ascontiguousarray(imatrix, dtype=np.float32)
    n = base.ggml_quantize_chunk(t, src.ctypes.data, dst, 0, 1, ROW,
                                 None if qw is None else qw.ctypes.data)
    assert n == size, (t, n, size)
    return dst.raw


def rows(rng):
    """Rows to quantize: random ones, and the edges of what a weight holds."""
    r = [rng.standard_normal(ROW) for _ in range(6)]
    r.append(np.zeros(ROW))                                   # all zero
    r.append(rng.standard_normal(ROW) * 1e4)                  # near float16's largest
    r.append(rng.standard_normal(ROW) * 1e30)                 # scales past float16: inf
    r.append(rng.standard_normal(ROW) * 1e-6)                 # subnormal float16 scales
    r.append(rng.standard_normal(ROW) * 1e-30)                # scales that round to 0
    outlier = rng.standard_normal(ROW) * 0.01
    outlier[77] = 100.0
    r.append(outlier)                                         # one large value
    r.append(np.full(ROW, 0.5))                               # constant
    r.append(-np.abs(rng.standard_normal(ROW)))               # all negative
    r.append(np.where(np.arange(ROW) % 2 == 0, 1.0, -1.0))   # alternating signs
    r.append(rng.integers(-8, 8, ROW).astype(np.float64))    # small integers
    return r


def write_types_gguf():
    """types.gguf through ggml's gguf_* writer: metadata of every type and a
    tensor of each type attn reads (the first two rows of T.blocks)."""
    g = base
    g.gguf_init_empty.restype = ctypes.c_void_p
    g.gguf_write_to_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_bool]
    g.gguf_write_to_file.restype = ctypes.c_bool

    class InitParams(ctypes.Structure):
        _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p),
                    ("no_alloc", ctypes.c_bool)]

    g.ggml_init.restype = ctypes.c_void_p
    g.ggml_init.argtypes = [InitParams]
    g.ggml_new_tensor_2d.restype = ctypes.c_void_p
    g.ggml_new_tensor_2d.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    g.ggml_get_data.restype = ctypes.c_void_p
    g.ggml_get_data.argtypes = [ctypes.c_void_p]
    g.ggml_set_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    g.gguf_add_tensor.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    ctx = g.gguf_init_empty()

    def setter(name, ctype):
        f = getattr(g, "gguf_set_val_" + name)
        f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctype]
        return f

    setter("u8", ctypes.c_uint8)(ctx, b"test.u8", 200)
    setter("i8", ctypes.c_int8)(ctx, b"test.i8", -100)
    setter("u16", ctypes.c_uint16)(ctx, b"test.u16", 60000)
    setter("i16", ctypes.c_int16)(ctx, b"test.i16", -30000)
    setter("u32", ctypes.c_uint32)(ctx, b"test.u32", 4000000000)
    setter("i32", ctypes.c_int32)(ctx, b"test.i32", -2000000000)
    setter("f32", ctypes.c_float)(ctx, b"test.f32", 0.1)
    setter("bool", ctypes.c_bool)(ctx, b"test.bool", True)
    setter("str", ctypes.c_char_p)(ctx, b"test.string", "héllo".encode())
    setter("u64", ctypes.c_uint64)(ctx, b"test.u64", 2**63 - 1)
    setter("i64", ctypes.c_int64)(ctx, b"test.i64", -(2**63))
    setter("f64", ctypes.c_double)(ctx, b"test.f64", 0.1)
    g.gguf_set_arr_data.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p,
                                    ctypes.c_size_t]
    arrays = [("u8", 0, "<u1", [0, 255]), ("i8", 1, "<i1", [-128, 127]),
              ("u16", 2, "<u2", [0, 65535]), ("i16", 3, "<i2", [-32768, 32767]),
              ("u32", 4, "<u4", [0, 4294967295]), ("i32", 5, "<i4", [-2147483648, 7]),
              ("f32", 6, "<f4", [1.5, -0.25]), ("bool", 7, "<u1", [1, 0]),
              ("u64", 10, "<u8", [0, 2**53]), ("i64", 11, "<i8", [-(2**53), 3]),
              ("f64", 12, "<f8", [2.5, -1e300])]
    for name, t, dtype, values in arrays:
        a = np.array(values, dtype=dtype)
        g.gguf_set_arr_data(ctx, ("test.array." + name).encode(), t, a.ctypes.data, len(values))
    g.gguf_set_arr_str.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                   ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
    words = [b"<s>", "▁the".encode(), b"", "它".encode()]
    g.gguf_set_arr_str(ctx, b"test.array.str", (ctypes.c_char_p * 4)(*words), 4)

    mem = InitParams(64 << 20, None, False)
    gctx = g.ggml_init(mem)
    first = {"f32": 0, "f16": 1, "bf16": 30}
    tensors = [(n, t) for n, t in first.items()] + [(name, t) for name, t, _, _ in TYPES]
    for name, t in tensors:
        tr = traits(t)
        row_bytes = tr.type_size * ROW // tr.blck_size
        if name in first:  # (i - 256) / 8 for cell i: exact in each of them
            cells = ((np.arange(2 * ROW) - 256) / 8).astype(np.float32)
            raw = {"f32": cells.astype("<f4").tobytes(),
                   "f16": cells.astype("<f2").tobytes(),
                   "bf16": (cells.view("<u4") >> 16).astype("<u2").tobytes()}[name]
        else:
            raw = open(os.path.join(OUT, name + ".blocks"), "rb").read()[:2 * row_bytes]
        tensor = g.ggml_new_tensor_2d(gctx, t, ROW, 2)
        ctypes.memmove(g.ggml_get_data(tensor), raw, len(raw))
        g.ggml_set_name(tensor, name.encode())
        g.gguf_add_tensor(ctx, tensor)
    path = os.path.join(OUT, "types.gguf")
    assert g.gguf_write_to_file(ctx, path.encode(), False)
    return f"types.gguf: {len(tensors)} tensors, {len(arrays) + 13} keys"


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20240601)
    summary = []
    for name, t, takes_imatrix, halfs in TYPES:
        tr = traits(t)
        bs, bb = tr.blck_size, tr.type_size
        blocks = bytearray()
        quantized = 0
        for row in rows(rng):
            blocks += quantize(t, row, None)
            quantized += 1
            if takes_imatrix:
                blocks += quantize(t, row, rng.uniform(0.01, 4.0, ROW))
                quantized += 1
        for _ in range(16):  # any bytes at all
            blocks += rng.integers(0, 256, bb, dtype=np.uint8).tobytes()
        edge = 0
        for i, h in enumerate(EDGE_HALFS):
            for fill in EDGE_FILLS:
                b = bytearray([fill] * bb)
                for k, off in enumerate(halfs):
                    struct.pack_into("<H", b, off, EDGE_HALFS[(i + 5 * k) % len(EDGE_HALFS)])
                blocks += b
                edge += 1
        n = len(blocks) // bb
        cells = n * bs
        ref = to_float(t, blocks, cells)
        with open(os.path.join(OUT, name + ".blocks"), "wb") as f:
            f.write(bytes(blocks))
        with open(os.path.join(OUT, name + ".f32"), "wb") as f:
            f.write(ref.astype("<f4").tobytes())
        summary.append(f"{name}: {n} blocks ({quantized} rows of {ROW} quantized, 16 random, "
                       f"{edge} edge), {cells} cells")

    halfs = np.array([base.ggml_fp16_to_fp32(h) for h in range(65536)], dtype=np.float32)
    with open(os.path.join(OUT, "f16.f32"), "wb") as f:
        f.write(halfs.astype("<f4").tobytes())
    # bfloat16 is the upper half of a float32 in ggml too: checked here, so
    # the test can hold attn to that rule alone.
    for h in range(65536):
        got = struct.unpack("<I", struct.pack("<f", base.ggml_bf16_to_fp32(h)))[0]
        assert got == h << 16 or (h & 0x7F80 == 0x7F80 and h & 0x7F), hex(h)
    summary.append("f16: 65536 halfs")
    summary.append(write_types_gguf())
    print("\n".join(summary))


main()
