"""A minimal GGUF v3 writer and reader (little-endian), enough for the tiny
models: typed metadata (scalars, strings, arrays) and tensors given as raw
bytes with a ggml type. The layout is the one of ggml/src/gguf.cpp and
gguf-py's GGUFWriter: header (magic "GGUF", version 3, tensor count, KV
count), the KV pairs, the tensor infos (name, n_dims, ne[] innermost first,
ggml type, offset from the start of the data section), padding to
general.alignment (32), then each tensor's bytes padded to the alignment.
"""
import struct

import numpy as np

# gguf value types (ggml/include/gguf.h)
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i",
           F32: "<f", BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}

# ggml types (ggml/include/ggml.h), with (block size, bytes per block)
GGML_TYPES = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18),
              "Q4_1": (3, 32, 20), "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24),
              "Q8_0": (8, 32, 34), "Q8_1": (9, 32, 36), "Q2_K": (10, 256, 84),
              "Q3_K": (11, 256, 110), "Q4_K": (12, 256, 144),
              "Q5_K": (13, 256, 176), "Q6_K": (14, 256, 210),
              "Q8_K": (15, 256, 292), "IQ4_NL": (20, 32, 18),
              "IQ4_XS": (23, 256, 136), "BF16": (30, 1, 2),
              "MXFP4": (39, 32, 17)}
GGML_TYPE_NAME = {v[0]: k for k, v in GGML_TYPES.items()}
ALIGNMENT = 32


def _str(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def _value(vtype, value):
    if vtype == STRING:
        return _str(value)
    if vtype == ARRAY:
        etype, items = value
        out = struct.pack("<IQ", etype, len(items))
        if etype == STRING:
            return out + b"".join(_str(x) for x in items)
        return out + b"".join(struct.pack(_SCALAR[etype], x) for x in items)
    return struct.pack(_SCALAR[vtype], value)


def write_gguf(path, kvs, tensors):
    """kvs: [(key, vtype, value)] (ARRAY value: (element type, list));
    tensors: [(name, ggml type name, ne (innermost first), raw bytes)]."""
    out = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(kvs))]
    seen = set()
    for key, vtype, value in kvs:
        assert key not in seen, key
        seen.add(key)
        out.append(_str(key) + struct.pack("<I", vtype) + _value(vtype, value))
    offset = 0
    blobs = []
    for name, tname, ne, raw in tensors:
        tid, blk, size = GGML_TYPES[tname]
        n = int(np.prod(ne))
        assert ne[0] % blk == 0 and len(raw) == n // blk * size, (name, ne, len(raw))
        out.append(_str(name) + struct.pack("<I", len(ne))
                   + b"".join(struct.pack("<Q", x) for x in ne)
                   + struct.pack("<IQ", tid, offset))
        pad = (-len(raw)) % ALIGNMENT
        blobs.append(raw + b"\0" * pad)
        offset += len(raw) + pad
    head = b"".join(out)
    head += b"\0" * ((-len(head)) % ALIGNMENT)
    data = head + b"".join(blobs)
    with open(path, "wb") as fh:
        fh.write(data)
    return len(data)


def read_gguf(path):
    """Returns (kvs {key: (vtype, value)} in file order, tensors {name:
    (ggml type name, ne, raw bytes)}): an independent check of what
    write_gguf wrote."""
    with open(path, "rb") as fh:
        blob = fh.read()
    assert blob[:4] == b"GGUF"
    version, n_t, n_kv = struct.unpack_from("<IQQ", blob, 4)
    assert version == 3
    pos = 24

    def rd(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, blob, pos)
        pos += struct.calcsize(fmt)
        return v[0]

    def rstr():
        nonlocal pos
        n = rd("<Q")
        s = blob[pos:pos + n].decode("utf-8")
        pos += n
        return s

    def rval(t):
        if t == STRING:
            return rstr()
        if t == ARRAY:
            et, n = rd("<I"), rd("<Q")
            return (et, [rval(et) for _ in range(n)])
        return rd(_SCALAR[t])

    kvs = {}
    for _ in range(n_kv):
        k = rstr()
        t = rd("<I")
        kvs[k] = (t, rval(t))
    infos = []
    for _ in range(n_t):
        name = rstr()
        nd = rd("<I")
        ne = [rd("<Q") for _ in range(nd)]
        tid, off = rd("<I"), rd("<Q")
        infos.append((name, GGML_TYPE_NAME[tid], ne, off))
    align = kvs.get("general.alignment", (U32, ALIGNMENT))[1]
    base = pos + ((-pos) % align)
    tensors = {}
    for name, tname, ne, off in infos:
        _, blk, size = GGML_TYPES[tname]
        nbytes = int(np.prod(ne)) // blk * size
        tensors[name] = (tname, ne, blob[base + off:base + off + nbytes])
    return kvs, tensors
