#!/usr/bin/env python3
"""Writes seed inputs for the fuzzers: tests/fuzz/make_seeds.py OUT_DIR

OUT_DIR/json, OUT_DIR/csv and OUT_DIR/npy receive the example documents and
matrices under data/, the JSON documents and CSV texts quoted in the unit
tests, the .npy fixtures of tests/npy, and hand-written edge cases (bad
syntax, odd shapes, extreme numbers, every setting). OUT_DIR/escape receives
the titles of data/ and hostile texts: the end of each output language's
strings, comments and documents, control characters and invalid UTF-8.
OUT_DIR/flags receives command lines, one word a line: those the unit tests
run (literal words only) and hand-written ones naming the inputs the flags
fuzzer keeps in its scratch directory. OUT_DIR/binary receives the
.safetensors and .npz files of tests/bad and data/models (those of at most
4096 bytes, the target's max_len) and hand-written ones: tensors of every
dtype attn reads, empty and rank-0 tensors, metadata; archives with stored,
deflated and ZIP64 members. OUT_DIR/gguf receives GGUF files: the small
ones of tests/gguf (ggml's own writer) and hand-written ones of every
value type, nested arrays, versions 2 and 3, another alignment, and a
tensor of each type attn reads. Seeds only start a
campaign; what is kept is the merged corpus in tests/fuzz/<target>/corpus.
"""
import glob
import hashlib
import json
import os
import re
import struct
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write(out, target, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def c_unescape(s):
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape")


def raw_strings(path):
    text = open(path, encoding="utf-8").read()
    return re.findall(r'R"\((.*?)\)"', text, re.S)


JSON_SEEDS = [
    '{"X": [[1, 0], [0, 1]]}',
    '{"X": [[1, 2], [3, 4]], "heads": 2, "params": {"W_q": [[1, 0], [0, 1]]}}',
    '{"X": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "valid_lens": [1, 2]}',
    '{"Q": [[[[1, 2]]]], "K": [[[[1, 2]]]], "V": [[[[1, 2]]]], "mode": "qkv"}',
    '{"X": [[1, 2]], "Y": [[3, 4], [5, 6]], "mode": "cross"}',
    '{"X": [[1, 2], [3, 4]], "variant": "additive", "params": {"W_q": [[1], [1]], '
    '"W_k": [[1], [1]], "w_v": [1]}}',
    '{"X": [[1, 2], [3, 4]], "variant": "single_layer", "params": {"w": [1, 1]}}',
    '{"X": [[1, 2], [3, 4]], "Y": [[1, 2]], "mode": "cross", "variant": "biattention", '
    '"params": {"w_in": [1, 1], "w_mem": [1, 1], "dot_scale": [1, 1]}}',
    '{"X": [[1, 2], [3, 4]], "scale": "cosine", "temperature": 0.5, "scale_at": "output"}',
    '{"X": [[1, 2], [3, 4]], "scale": "norm"}',
    '{"X": [[1, 2], [3, 4]], "scale": "long_seq", "causal": true}',
    '{"X": [[1, 2], [3, 4]], "scale": 0.125, "dropout": 0.5, "seed": 7}',
    '{"X": [[1, 2], [3, 4]], "mask": [[1, 0], [1, 1]], "mask_convention": "keep", '
    '"fully_masked": "uniform"}',
    '{"X": [[1, 2], [3, 4]], "mask": [[1, 1], [1, 1]], "fully_masked": "error"}',
    '{"X": [[1, 2], [3, 4]], "mask": [[true, false], [false, false]], "fully_masked": "nan"}',
    '{"X": [[1, 2], [3, 4]], "attn_bias": [[0, "-inf"], ["-inf", 0]], "mask_fill": -1e9}',
    '{"X": [[1, 2], [3, 4]], "key_padding_mask": [0, 1]}',
    '{"X": [[1, 2], [3, 4]], "params_layout": "torch", "params": {"W_q": [[1, 0], [0, 1]], '
    '"b_q": [0, 0], "W_o": [[1, 0], [0, 1]], "b_o": [1, 1]}}',
    '{"X": [[1, 2], [3, 4]], "labels": ["a", "b"], "title": "t", "description": "d", '
    '"source": "s"}',
    '{"X": [[1, 2], [3, 4]], "expected": {"output": [[1, 2], [3, 4]], '
    '"weights": [[0.5, 0.5], [0.5, 0.5]], "tolerance": 1e-3}}',
    '{"X": [[1e308, -1e308], [5e-324, 0]]}',
    '{"X": [[1, 2], [3, 4]], "heads": 1000000}',
    '{"X": [[]]}', '{"X": []}', '{"X": [[[[[1]]]]]}', '{"X": 1}', '{"X": "a"}',
    '{}', '[]', '', ' ', '{', '[[1,2],[3,4]]', '{"X": [[1, 2], [3]]}',
    '{"X": [[NaN, 1]]}', '{"X": [[1, 2],]}', "{'X': [[1]]}", '{"X": [[1]] // c\n}',
    '{"X": [[1]], "X": [[2]]}', '{"x": [[1]]}', '\ufeff{"X": [[1]]}',
    '{"X": [[1]], "title": "\\ud800"}', '{"X": [[1]], "title": "\\u00e9\\n\\t"}',
    '{"X": [[1.5e, 2]]}', '{"X": [[-0, 01]]}', '{"X": [[1]]}\n\n{"X": [[1]]}',
    '[' * 70 + ']' * 70, '{"a":' * 70 + '1' + '}' * 70,
    '{"X": [[1, 2], [3, 4]], "valid_lens": [[1, 2], [0, 2]]}',
    '{"X": [[1, 2], [3, 4]], "valid_lens": 5}',
]

CSV_SEEDS = [
    '1,2\n3,4\n', '1\t2\n3\t4\n', '1;2\n3;4\n', '1 2\n3 4\n', ' 1   2 \r\n3 4\r\n',
    'a,b\n1,2\n3,4\n', 'x,a,b\nr1,1,2\nr2,3,4\n', 'a,b\nr1,1,2\nr2,3,4\n',
    '# comment\n1,2 # tail\n\n3,4\n', '\ufeff1,2\n3,4\n', '1,2\n3\n', '1,,2\n', ',\n',
    '', '\n', '#\n', 'a\n', 'nan,1\n', 'inf,-inf\n', '1e308,1e-320\n', '0x10,1\n',
    '"a",1\n"b",2\n', '"a,b",1\n', '1,2,\n3,4,\n', '1.5.5,2\n', '-,+\n', '1 ,2\n3, 4\n',
    '\t\t\n1\n', 'a;b\tc d\n1;2\t3 4\n', '1\r2\r', '\x00,1\n', 'é,1\nü,2\n',
    '1,2\n3,4', '[[1,2],[3,4]]', '{"X": 1}',
]


def npy(header, data=b"", version=(1, 0)):
    """A .npy file with this header dict text, padded the way NumPy pads."""
    major = version[0]
    hlen_size = 2 if major == 1 else 4
    h = header.encode("latin-1")
    pad = (-(6 + 2 + hlen_size + len(h) + 1)) % 64
    h = h + b" " * pad + b"\n"
    prefix = b"\x93NUMPY" + bytes(version)
    prefix += struct.pack("<H" if hlen_size == 2 else "<I", len(h))
    return prefix + h + data


def npy_seeds():
    f8 = lambda *v: struct.pack("<%dd" % len(v), *v)
    out = [
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f8(1, 2, 3, 4)),
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
            struct.pack("<6f", *range(6))),
        npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2, 2), }",
            struct.pack("<4q", 1, -2, 3, 2**62)),
        npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", b"\x01\x00\x00\x02"),
        npy("{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }", struct.pack("<3H", 1, 2, 3)),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", f8(1, 2, 3, 4)),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f8(1, 2, 3, 4),
            (2, 0)),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f8(1, 2, 3, 4),
            (3, 0)),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f8(1, 2, 3)),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2), }"),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8(1)),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 2), }"),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
            f8(float("nan"), float("inf"), 1, 2)),
        npy("{'descr': '>f8', 'fortran_order': False, 'shape': (1, 1), }", b"\0" * 8),
        npy("{'descr': '<c16', 'fortran_order': False, 'shape': (1, 1), }", b"\0" * 16),
        npy("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1, 1), }", b"\0" * 8),
        npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", f8(1, 2, 3, 4)),
        npy("{'descr': '<f8', 'shape': (2, 2), 'fortran_order': False}", f8(1, 2, 3, 4)),
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,2,)}", f8(1, 2, 3, 4)),
        npy("{'descr': \"<f8\", 'fortran_order': 0, 'shape': (-1, 2), }", f8(1, 2)),
        npy("{}"), npy(""), npy("{'descr': '<f8'"),
        b"\x93NUMPY", b"\x93NUMPY\x01\x00", b"\x93NUMPY\x01\x00\xff\xff{", b"\x93NUMPY\x09\x00",
        b"", b"1,2\n3,4\n",
    ]
    return out


def safetensors(tensors, metadata=None):
    """A safetensors file: tensors is a list of (name, dtype, shape, bytes),
    laid end to end in that order; the header is padded with spaces to a
    multiple of 8 bytes, as the format's own library writes it."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, cells in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(cells)]}
        data += cells
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def zip_archive(members, zip64=False):
    """A ZIP file as np.savez (method 0) and np.savez_compressed (method 8)
    write it: members is a list of (name, data, method). With zip64 the
    directory gives sizes and offsets in ZIP64 extra fields and the archive
    ends with the ZIP64 end-of-directory record and its locator."""
    local, central = b"", b""
    for name, data, method in members:
        name = name.encode("utf-8")
        crc = zlib.crc32(data)
        if method == 8:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            raw = c.compress(data) + c.flush()
        else:
            raw = data
        offset = len(local)
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(raw),
                             len(data), len(name), 0) + name + raw
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, len(data), len(raw), offset)
            sizes = (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
        else:
            extra = b""
            sizes = (len(raw), len(data), offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45 if zip64 else 20,
                               45 if zip64 else 20, 0, method, 0, 0, crc, sizes[0], sizes[1],
                               len(name), len(extra), 0, 0, 0, 0, sizes[2]) + name + extra
    n = len(members)
    out = local + central
    if zip64:
        end64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(central),
                           len(local))
        out += struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
        return out + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                                 0xFFFFFFFF, 0)
    return out + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), len(local), 0)


def binary_seeds():
    f4 = lambda *v: struct.pack("<%df" % len(v), *v)
    f8 = lambda *v: struct.pack("<%dd" % len(v), *v)
    every_dtype = [
        ("f64", "F64", [2], f8(1, -2)),
        ("f32", "F32", [2, 2], f4(0.25, 0.25, 0.5, 0)),
        ("f16", "F16", [2], b"\x00\x3c\x00\x7c"),
        ("bf16", "BF16", [2], b"\x80\x3f\xc0\x7f"),
        ("e4m3", "F8_E4M3", [3], b"\x38\x7f\xff"),
        ("e5m2", "F8_E5M2", [3], b"\x3c\x7c\xfc"),
        ("i64", "I64", [1], struct.pack("<q", -2**63)),
        ("i32", "I32", [1], struct.pack("<i", -7)),
        ("i16", "I16", [1], struct.pack("<h", 300)),
        ("i8", "I8", [2], b"\x80\x7f"),
        ("u64", "U64", [1], struct.pack("<Q", 2**64 - 1)),
        ("u32", "U32", [1], struct.pack("<I", 7)),
        ("u16", "U16", [1], struct.pack("<H", 65535)),
        ("u8", "U8", [2], b"\x00\xff"),
        ("mask", "BOOL", [2, 2], b"\x01\x00\x00\x01"),
    ]
    attn_f32 = f4(0.5, 0.5, 0.25, 0.75)
    npy_f8 = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f8(1, 2, 3, 4))
    npy_f4 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", attn_f32)
    npy_b1 = npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", b"\1\0\0\1")
    npy_5 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 2, 2), }", attn_f32)
    return [
        safetensors([("attn", "F32", [1, 1, 2, 2], attn_f32)]),
        safetensors(every_dtype, {"format": "pt", "note": "every dtype"}),
        safetensors([("empty", "F32", [0, 3], b""), ("scalar", "F64", [], f8(3.5)),
                     ("none", "U8", [0], b"")]),
        safetensors([("rank5", "F16", [1, 1, 1, 2, 2], b"\x00\x3c" * 4)]),
        safetensors([]),
        safetensors([], {}),
        zip_archive([("attentions.npy", npy_f4, 0)]),
        zip_archive([("attentions.npy", npy_f4, 8)]),
        zip_archive([("x.npy", npy_f8, 0), ("mask.npy", npy_b1, 8), ("stack.npy", npy_5, 0)]),
        zip_archive([("attentions.npy", npy_f8, 0), ("w.npy", npy_5, 8)], zip64=True),
        zip_archive([]),
    ]


ESCAPE_SEEDS = [
    b"plain title",
    b't"""\nimport os; print(\'INJECTED\')\n"""',
    b"it's \\ a \"quote\" \\",
    b"\\end{document} % # $ & _ { } ~ ^",
    b"</script><script>alert(1)</script>",
    b"<!-- --> ]]> <![CDATA[ &amp; &#0;",
    b"| a | b |\n|---|---|\n- item\n1. item\n# heading\n```",
    b"`code` ``two`` *em* _em_ [link](u) $x$",
    b"a,b;c\td \"q\" #c\r\nnext",
    b"1e5", b"nan", b"-inf", b"e5", b" pad ", b"",
    b"nul\x00 esc\x1b[2J cr\r del\x7f",
    b"\xc2\x85 \xc2\x9b \xe2\x80\xa8 \xe2\x80\xae rlo \xef\xbb\xbf",
    b"\xff\xfe bad \xc3 \xe2\x82 \xf0\x9f\x98",
    b"\xc0\xaf \xe0\x80\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \x80\xbf",
    b"\xef\xbf\xbe \xef\xbf\xbf \xef\xbf\xbd caf\xc3\xa9 \xf0\x9d\x84\x9e",
]

# Command lines over the scratch directory of flags_entry.cc (in.json,
# x.csv, mask.json, w.json), one word a line.
FLAGS_SEEDS = [
    "run\n--example\nsweet",
    "run\n--example\nsweet\n--trace\n--trace-format\nlatex",
    "run\nin.json\n--heads\n2\n--kv-heads\n1\n--rope\n--rope-dims\n2",
    "run\nin.json\n--window\n1,0\n--softcap\n5\n--sinks\n0.5\n--trace",
    "run\nx.csv\n--mask\nmask.json\n-f\njson\n-w\n-o\nout.json",
    "run\nx.csv\n--alibi\n--causal\n--heatmap\nh.svg\n--of\nbias",
    "run\n--example\nllama\n--trace\n--query\n2\n--head\n1",
    "run\n--example\ncausal\n--emit-pytorch",
    "run\nin.json\n--valid-lens\n2\n--labels\nx,y,z\n--similarity\n-f\ncsv",
    "run\nin.json\n--max-elements\n1e3\n--max-input-bytes\n2^10\n--precision\n17",
    "run\nin.json\n--rope-offset\n3,1\n--rope-theta\n1e4\n--rope-layout\ninterleaved",
    "run\nin.json\n--scale\n0.5\n--scale-at\noutput\n--dtype\nf32\n--threads\n2",
    "run\n.\n--out-dir\nres\n-f\ncsv",
    "heatmap\nw.json\n-o\nw.png\n--max-size\n64",
    "examples\nshow\ngemma2",
    "help\nrun",
    "--version",
    "run\n--example\nsweet\n--format\njson\n--format\ncsv",
    "run\n--exampel\nsweet",
]


def small_tokenizer(path, merges=60):
    """A tokenizer.json with its structure kept (normalizer, pre-tokenizer,
    post-processor, added tokens, the model's options) and its vocabulary
    cut to what its first merges, unknown token and added tokens need."""
    d = json.load(open(path, encoding="utf-8"))
    m = d["model"]
    vocab = m["vocab"]
    keep = set()
    kept_merges = []
    for merge in m.get("merges", [])[:merges]:
        a, b = merge.split(" ", 1) if isinstance(merge, str) else merge
        keep.update([a, b, a + b])
        kept_merges.append(merge)
    if m.get("unk_token"):
        keep.add(m["unk_token"])
    if d.get("added_tokens"):
        d["added_tokens"] = d["added_tokens"][:8]
        keep.update(t["content"] for t in d["added_tokens"])
    # A few single characters and byte-fallback pieces, and every token of
    # a small vocabulary.
    keep.update([t for t in vocab if len(t) == 1][:40])
    keep.update([t for t in vocab if t.startswith("<0x")][::16])
    if len(vocab) <= 64:
        keep.update(vocab)
    m["vocab"] = {t: i for t, i in vocab.items() if t in keep}
    if "merges" in m:
        m["merges"] = kept_merges
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def tokenizer_seeds():
    """A tokenizer.json of each family the repository holds, made small, each
    with a NUL byte and a text: the hard texts of tests/tokenizer/texts.json
    (three per file), an empty text, and texts with its added tokens."""
    files = sorted(glob.glob(os.path.join(ROOT, "data", "tokenizers", "*", "tokenizer.json")))
    files += sorted(glob.glob(os.path.join(ROOT, "data", "models", "*", "tokenizer.json")))
    texts = json.load(open(os.path.join(ROOT, "tests", "tokenizer", "texts.json"), encoding="utf-8"))
    out = []
    for n, path in enumerate(files):
        small = small_tokenizer(path)
        added = [t["content"] for t in json.loads(small).get("added_tokens") or []]
        chosen = [texts[(3 * n + k) % len(texts)] for k in range(3)]
        chosen += ["", " ".join(added[:3]) + " x  y\n", "  " + "".join(added[:2]) + "  "]
        for text in chosen:
            out.append(small.encode("utf-8") + b"\0" + text.encode("utf-8", "surrogatepass"))
    return out


def command_lines(text):
    """The literal word lists of run_attn({...}) calls in a test file."""
    for m in re.finditer(r'run_attn(?:_capped)?\(\{((?:\s*"(?:[^"\\]|\\.)*"\s*,?)+)\}', text):
        words = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))
        yield "\n".join(c_unescape(w) for w in words)


def gguf(kv=(), tensors=(), version=3, alignment=32):
    """A GGUF file: kv is a list of (key, type, value bytes), tensors of
    (name, ne, ggml type, bytes); the data aligned to `alignment`."""
    def s(x):
        return struct.pack("<Q", len(x)) + x
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kv))
    for key, t, value in kv:
        head += s(key) + struct.pack("<I", t) + value
    data = b""
    for name, ne, t, raw in tensors:
        data += b"\0" * (-len(data) % alignment)
        head += s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        head += struct.pack("<IQ", t, len(data))
        data += raw
    if tensors:
        head += b"\0" * (-len(head) % alignment)
    return head + data


def gguf_seeds():
    u32 = lambda v: struct.pack("<I", v)
    u64 = lambda v: struct.pack("<Q", v)
    string = lambda x: u64(len(x)) + x
    every_value = [
        (b"u8", 0, b"\xc8"), (b"i8", 1, b"\x9c"), (b"u16", 2, b"\x60\xea"),
        (b"i16", 3, b"\xd0\x8a"), (b"u32", 4, u32(7)), (b"i32", 5, u32(0xFFFFFFF9)),
        (b"f32", 6, struct.pack("<f", 0.1)), (b"bool", 7, b"\x01"),
        (b"general.name", 8, string(b"tiny")), (b"u64", 10, u64(2**63 - 1)),
        (b"i64", 11, u64(2**64 - 5)), (b"f64", 12, struct.pack("<d", -1e300)),
        (b"tokenizer.ggml.tokens", 9, u32(8) + u64(3) + string(b"<s>") + string(b"a") + string(b"")),
        (b"tokenizer.ggml.scores", 9, u32(6) + u64(2) + struct.pack("<ff", 0.5, -1.0)),
        (b"tokenizer.ggml.token_type", 9, u32(5) + u64(2) + u32(1) + u32(3)),
        (b"nested", 9, u32(9) + u64(2) + u32(4) + u64(1) + u32(1) + u32(8) + u64(1) + string(b"x")),
        (b"empty", 9, u32(12) + u64(0)),
    ]
    f32 = struct.pack("<4f", 1.0, -2.5, 0.0, 3.0)
    yield gguf(every_value)
    yield gguf(every_value, version=2)
    yield gguf([(b"general.alignment", 4, u32(64))],
               [(b"a", [4], 0, f32), (b"b", [2, 2], 0, f32)], alignment=64)
    yield gguf([], [(b"w", [4, 1, 1, 1], 0, f32)])
    # One block of each type attn reads (its bytes count, not its values).
    blocks = [(1, 1, 2), (30, 1, 2), (28, 1, 8), (24, 1, 1), (25, 1, 2), (26, 1, 4), (27, 1, 8),
              (2, 32, 18), (3, 32, 20), (6, 32, 22), (7, 32, 24), (8, 32, 34), (10, 256, 84),
              (11, 256, 110), (12, 256, 144), (13, 256, 176), (14, 256, 210), (20, 32, 18),
              (23, 256, 136)]
    for t, cells, size in blocks:
        raw = bytes((i * 37 + 11) % 256 for i in range(size))
        if cells == 1:
            raw = raw * 4
            cells = 4
        # A float16 scale of 1.0 where the block starts with one.
        yield gguf([(b"general.architecture", 8, string(b"llama"))],
                   [(b"t", [cells], t, raw)])
    yield gguf([(b"k", 8, string(b"v"))], [(b"bad", [256], 16, b"\0" * 66)])  # IQ2_XXS
    yield gguf([], [(b"a", [8], 0, b"\0" * 32), (b"b", [4], 0, b"\0" * 16)])


def main():
    out = sys.argv[1]
    for p in sorted(glob.glob(os.path.join(ROOT, "data", "**", "*.json"), recursive=True)):
        write(out, "json", open(p, "rb").read())
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "**", "*.json"),
                              recursive=True)):
        write(out, "json", open(p, "rb").read())
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "*.cc"))):
        for s in raw_strings(p):
            if s.lstrip().startswith(("{", "[")):
                write(out, "json", s)
    for s in JSON_SEEDS:
        write(out, "json", s)

    for p in sorted(glob.glob(os.path.join(ROOT, "data", "csv", "*"))):
        write(out, "csv", open(p, "rb").read())
    csv_test = os.path.join(ROOT, "tests", "csv_test.cc")
    if os.path.exists(csv_test):
        text = open(csv_test, encoding="utf-8").read()
        for m in re.finditer(r'parse_csv\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
            parts = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))
            write(out, "csv", c_unescape("".join(parts)))
        for m in re.finditer(r'csv_error\(\s*"((?:[^"\\]|\\.)*)"', text):
            write(out, "csv", c_unescape(m.group(1)))
    for s in CSV_SEEDS:
        write(out, "csv", s)

    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "npy", "*.npy"))):
        write(out, "npy", open(p, "rb").read())
    for b in npy_seeds():
        write(out, "npy", b)

    for pattern in ("tests/bad/*.safetensors", "tests/bad/*.npz", "data/**/*.safetensors",
                    "data/**/*.npz"):
        for p in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
            if os.path.getsize(p) <= 4096:
                write(out, "binary", open(p, "rb").read())
    for b in binary_seeds():
        write(out, "binary", b)

    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "gguf", "**", "*.gguf"),
                              recursive=True)):
        if os.path.getsize(p) <= 16384:
            write(out, "gguf", open(p, "rb").read())
    for b in gguf_seeds():
        write(out, "gguf", b)

    for p in sorted(glob.glob(os.path.join(ROOT, "data", "**", "*.json"), recursive=True)):
        m = re.search(rb'"title":\s*"((?:[^"\\]|\\.)*)"', open(p, "rb").read())
        if m:
            write(out, "escape", m.group(1))
    for b in ESCAPE_SEEDS:
        write(out, "escape", b)

    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "*.cc"))):
        for line in command_lines(open(p, encoding="utf-8").read()):
            write(out, "flags", line)
    for line in FLAGS_SEEDS:
        write(out, "flags", line)

    for b in tokenizer_seeds():
        write(out, "tokenizer", b)


if __name__ == "__main__":
    main()
