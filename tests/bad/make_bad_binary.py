"""Writes the broken .safetensors, .npz and .gguf files of the bad-input corpus.

Each file is a mistake a user or a damaged download could produce; its
NAME.expected sidecar pins the exit code and message. Rerun after changing
a case: python3 tests/bad/make_bad_binary.py (NumPy only).
"""
import io
import json
import os
import struct
import warnings
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def st(header, data=b"", length=None, raw_header=None):
    text = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    n = len(text) if length is None else length
    return struct.pack("<Q", n) + text + data


def f32(*values):
    return np.asarray(values, dtype="<f4").tobytes()


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def npz(members, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as z:
        for name, arr in members.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = compress
            z.writestr(info, npy(arr))
    return buf.getvalue()


two = f32(1, 2, 3, 4)
cases = {
    "st_too_short.safetensors": b"\x05\x00\x00",
    "st_header_past_end.safetensors": st({}, length=4096),
    "st_header_huge.safetensors": struct.pack("<Q", 1 << 40) + b"{}      ",
    "st_header_not_object.safetensors": st(None, raw_header=b"[1,2]"),
    "st_header_bad_json.safetensors": st(None, raw_header=b'{"x": {"dtype": "F32",}}'),
    "st_unknown_dtype.safetensors": st({"x": entry("F128", [1, 1], 0, 16)}, b"\0" * 16),
    "st_no_offsets.safetensors": st({"x": {"dtype": "F32", "shape": [2, 2]}}, two),
    "st_negative_shape.safetensors": st({"x": entry("F32", [-2, 2], 0, 16)}, two),
    "st_offsets_past_data.safetensors": st({"x": entry("F32", [2, 2], 0, 16)}, two[:8]),
    "st_offsets_backwards.safetensors": st({"x": entry("F32", [2, 2], 16, 0)}, two),
    "st_shape_mismatch.safetensors": st({"x": entry("F32", [3, 2], 0, 16)}, two),
    "st_huge_shape.safetensors": st({"x": entry("F32", [1 << 40, 1 << 40], 0, 16)}, two),
    "st_overlap.safetensors": st(
        {"a": entry("F32", [2, 2], 0, 16), "b": entry("F32", [2], 8, 16)}, two),
    "st_gap.safetensors": st({"x": entry("F32", [2], 8, 16)}, two),
    "st_trailing_bytes.safetensors": st({"x": entry("F32", [2], 0, 8)}, two),
    "st_metadata_number.safetensors": st(
        {"__metadata__": {"format": 1}, "x": entry("F32", [2, 2], 0, 16)}, two),
    "st_nan.safetensors": st({"x": entry("F32", [2, 2], 0, 16)}, f32(1, 2, float("nan"), 4)),
    "st_two_tensors.safetensors": st(
        {"a": entry("F32", [2], 0, 8), "b": entry("F32", [2], 8, 16)}, two),
    "st_missing_name.safetensors": st(
        {"model.q_proj.weight": entry("F32", [2, 2], 0, 16)}, two),
    # [[2, 2]] is a list of numbers to a JSON reader that packs arrays; not a shape.
    "st_nested_shape.safetensors": st(None, raw_header=b'{"w":{"dtype":"F32","shape":[[2,2]],"data_offsets":[0,16]}}') + two,
    "st_rank5.safetensors": st({"x": entry("F32", [1, 1, 1, 2, 2], 0, 16)}, two),
    "npz_not_zip.npz": b"this is not a zip archive at all",
    "npz_two_arrays.npz": npz({"a": np.eye(2), "b": np.ones((2, 2))}),
    "npz_missing_name.npz": npz({"attentions": np.eye(2)}),
}

# A stored member whose bytes were changed after the CRC was written.
damaged = bytearray(npz({"x": np.eye(2)}))
at = damaged.find(b"\x93NUMPY") + 130
damaged[at] ^= 0x40
cases["npz_crc_mismatch.npz"] = bytes(damaged)

# A deflated member cut short: the directory says more than is there.
whole = npz({"x": np.arange(64.0).reshape(8, 8)}, zipfile.ZIP_DEFLATED)
cut = bytearray(whole)
cd = cut.rfind(b"PK\x01\x02")
struct.pack_into("<I", cut, cd + 20, struct.unpack_from("<I", cut, cd + 20)[0] + 4096)
cases["npz_member_past_end.npz"] = bytes(cut)

# Looser than the formats' own readers (serde's integers, NumPy's bools,
# Python's zipfile): each must be refused, not read.
cases["st_offsets_float.safetensors"] = st(
    None, raw_header=b'{"x":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16.0]}}') + two
cases["st_shape_float.safetensors"] = st(
    None, raw_header=b'{"x":{"dtype":"F32","shape":[2.0,2],"data_offsets":[0,16]}}') + two
cases["st_nul_after_header.safetensors"] = st(
    None, raw_header=b'{"x":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}\0\0\0') + two
cases["st_bool_bytes.safetensors"] = st({"x": entry("BOOL", [2, 2], 0, 4)}, bytes([0, 1, 2, 255]))
cases["st_f64_short.safetensors"] = st({"x": entry("F64", [2, 2], 0, 16)}, two)
# Sizes from the header, refused before the data is decoded.
cases["st_over_max_elements.safetensors"] = st({"x": entry("U8", [1, 2000], 0, 2000)},
                                               b"\1" * 2000)
cases["npy_u8_over_max_elements.npy"] = npy(np.ones((1, 2000), dtype=np.uint8))
cases["npy_f16_over_max_elements.npy"] = npy(np.ones((4, 500), dtype=np.float16))


def two_entries_one_name():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for arr in (np.eye(2), np.ones((2, 2))):
            info = zipfile.ZipInfo("x.npy", date_time=(2026, 1, 1, 0, 0, 0))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Duplicate name": the point of the case
                z.writestr(info, npy(arr))
    return buf.getvalue()


cases["npz_duplicate_names.npz"] = two_entries_one_name()

# The directory entry of "b" points at the local header of "a".
shared = bytearray(npz({"a": np.eye(2), "b": np.ones((2, 2))}))
cd_b = shared.rfind(b"PK\x01\x02")
struct.pack_into("<I", shared, cd_b + 42, 0)
cases["npz_shared_member.npz"] = bytes(shared)

cases["nul_after_document.json"] = b"[[1, 2], [3, 4]]\n\0[[5, 6]]\n"


def gguf(tensors, version=3, kv=b"", n_kv=0):
    """A GGUF file of (name, ne, ggml type, bytes, offset or None) tensors."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), n_kv) + kv
    data = b""
    for name, ne, t, raw, offset in tensors:
        data += b"\0" * (-len(data) % 32)
        head += struct.pack("<Q", len(name)) + name + struct.pack("<I", len(ne))
        head += b"".join(struct.pack("<Q", d) for d in ne)
        head += struct.pack("<IQ", t, len(data) if offset is None else offset)
        data += raw
    return head + b"\0" * (-len(head) % 32) + data


cases["gguf_version1.gguf"] = gguf([(b"x", [2, 2], 0, two, None)], version=1)
cases["gguf_iq2_xxs.gguf"] = gguf([(b"x", [256], 16, b"\0" * 66, None)])
cases["gguf_truncated.gguf"] = gguf([(b"x", [2, 2], 0, two, None)])[:-4]
cases["gguf_overlap.gguf"] = gguf([(b"a", [2, 2], 0, two, None), (b"b", [2], 0, two[:8], 0)])
cases["gguf_two_tensors.gguf"] = gguf([(b"a", [2, 2], 0, two, None), (b"b", [2, 2], 0, two, None)])
cases["gguf_nan.gguf"] = gguf([(b"x", [2, 2], 0, f32(1, 2, float("nan"), 4), None)])
cases["gguf_bad_alignment.gguf"] = gguf(
    [], kv=struct.pack("<Q", 17) + b"general.alignment" + struct.pack("<II", 4, 48), n_kv=1)

for name, data in cases.items():
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
