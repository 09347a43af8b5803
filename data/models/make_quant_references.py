#!/usr/bin/python3
"""Float64 references for tiny-llama-wide-quant/'s quantized GGUF files: the
exact attention of the weights each file holds.

  /usr/bin/python3 data/models/make_quant_references.py

For each of model-Q8_0.gguf, model-Q4_K_M.gguf and model-Q4_0.gguf (written by
make_tiny_wide.py through llama_model_quantize):

1. read every tensor with libggml's own GGUF reader (gguf_init_from_file,
   ctypes through llamacpp.py's LlamaCpp, which calls
   ggml_backend_load_all_from_path first), cross-checked against
   gguf_writer.read_gguf (name, type, ne, bytes); the PyTorch shape is ggml's
   ne reversed;
2. dequantize the quantized ones row by row with
   `ggml_get_type_traits(type)->to_float` (ggml-quants.c's dequantize_row_*,
   float32 out); F32 tensors are taken as they are;
3. map llama.cpp's names back to the transformers names (make_tiny_gguf.py's
   COMMON table, inverted) and undo the converter's Q/K row permutation
   (LlamaModel.permute): within each head of width D, HF row i is GGUF row
   2i and HF row i + D/2 is GGUF row 2i + 1 (written here with explicit
   indices, checked against make_tiny_gguf.unpermute and, as a round trip,
   make_tiny_gguf.permute);
4. run make_tiny_dense.forward (the float64 Llama that wrote
   tiny-llama-wide's references; imported, not copied) on the float32 values
   widened, on tiny-llama-wide's ids.json, and write beside the GGUF files
   model-<TYPE>.attentions.npy [layers][1][heads][7][7],
   model-<TYPE>.hidden.npy [layers+1][1][7][hidden] and
   model-<TYPE>.logits.npy [1][7][vocab] (float64, tiny-llama-wide's shapes).

Cross-checks (asserted, and printed):
* the F32 path: make_tiny_gguf.convert writes the F32 GGUF of tiny-llama-wide
  in a temporary directory; steps 1-4 on it reproduce tiny-llama-wide's
  attentions.npy / hidden.npy / logits.npy to 1e-12;
* every quantized tensor's bytes are what ggml_quantize_chunk (the quantizer
  llama_model_quantize calls, no imatrix) makes of the original weights
  (tiny-llama-wide's bf16 values widened, Q/K rows permuted as the converter
  does), so the dequantized weights are the quantizer's output;
* the difference between the dequantized and the original weights, per
  tensor, in units of the block's quantization step: Q8_0 amax/127, Q4_0
  amax/8, Q5_0 amax/16 (amax over the block of 32), Q4_K (max - min)/15
  over each sub-block of 32, Q6_K amax/32 over each sub-block of 16. For the
  round-to-nearest types the quantizer's bound is asserted: Q8_0 at most
  1/2 step, Q4_0 / Q5_0 at most 1 step (the largest positive value of a
  block whose max is negative is clamped to the top level), each plus the
  fp16 rounding of the scale (2^-11 relative, times the largest level).
  K-quants choose their scales by a weighted search (make_qkx2_quants,
  make_qx_quants), which bounds nothing per element; there the error is
  printed and asserted under one step.
* llama.cpp itself on an F32 GGUF of the dequantized weights (the file's
  metadata, every tensor through to_float, still in the GGUF layout) agrees
  with these references to float32 precision (asserted: attentions 1e-5):
  the reading, the dequantization and the permutation are llama.cpp's.

Finally prints the difference between these references and llama.cpp's own
attentions and logits on the same files (llamacpp_attentions-<TYPE>.npy,
llamacpp_logits-<TYPE>.npy, written by make_tiny_wide.py), and between them
and the unquantized references (what quantizing the weights does).
llama.cpp's CPU matmuls quantize the activations too (to Q8_0 / Q8_K, the
vec_dot type of each weight type), so its numbers on the quantized files differ
from these by ~1e-2 in the attention weights (and by ~1 in logits up to
~160), while on the F32 GGUF of the same dequantized weights they agree to
~5e-7.

Re-running writes byte-identical files (tm.write_npy; one torch thread).
"""
import ctypes as C
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_tiny_models as tm  # noqa: E402
import make_tiny_dense as dense  # noqa: E402
import make_tiny_gguf as mtg  # noqa: E402
import validate_gguf  # noqa: E402
from gguf_writer import GGML_TYPE_NAME, GGML_TYPES, read_gguf, write_gguf  # noqa: E402
from llamacpp import GgmlTensor  # noqa: E402

NAME = "tiny-llama-wide"
QNAME = "tiny-llama-wide-quant"
QUANTS = ["Q8_0", "Q4_K_M", "Q4_0"]

TO_FLOAT = C.CFUNCTYPE(None, C.c_void_p, C.POINTER(C.c_float), C.c_int64)


class TypeTraits(C.Structure):   # ggml/include/ggml.h, struct ggml_type_traits
    _fields_ = [("type_name", C.c_char_p), ("blck_size", C.c_int64),
                ("blck_size_interleave", C.c_int64), ("type_size", C.c_size_t),
                ("is_quantized", C.c_bool), ("to_float", C.c_void_p),
                ("from_float_ref", C.c_void_p)]


class GgufInitParams(C.Structure):   # ggml/include/gguf.h
    _fields_ = [("no_alloc", C.c_bool), ("ctx", C.POINTER(C.c_void_p))]


class Ggml:
    """The few libggml-base calls used here, on LlamaCpp's loaded libraries."""

    def __init__(self, lib):
        b = self.b = lib.base
        b.ggml_get_type_traits.restype = C.POINTER(TypeTraits)
        b.ggml_get_type_traits.argtypes = [C.c_int]
        b.ggml_quantize_chunk.restype = C.c_size_t
        b.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64,
                                          C.c_int64, C.c_int64, C.c_void_p]
        b.gguf_init_from_file.restype = C.c_void_p
        b.gguf_init_from_file.argtypes = [C.c_char_p, GgufInitParams]
        b.gguf_free.argtypes = [C.c_void_p]
        b.gguf_get_data_offset.restype = C.c_size_t
        b.gguf_get_data_offset.argtypes = [C.c_void_p]
        b.gguf_get_n_tensors.restype = C.c_int64
        b.gguf_get_n_tensors.argtypes = [C.c_void_p]
        b.gguf_get_tensor_name.restype = C.c_char_p
        b.gguf_get_tensor_name.argtypes = [C.c_void_p, C.c_int64]
        b.gguf_get_tensor_type.restype = C.c_int
        b.gguf_get_tensor_type.argtypes = [C.c_void_p, C.c_int64]
        b.gguf_get_tensor_offset.restype = C.c_size_t
        b.gguf_get_tensor_offset.argtypes = [C.c_void_p, C.c_int64]
        b.gguf_get_tensor_size.restype = C.c_size_t
        b.gguf_get_tensor_size.argtypes = [C.c_void_p, C.c_int64]
        b.ggml_get_tensor.restype = C.c_void_p
        b.ggml_get_tensor.argtypes = [C.c_void_p, C.c_char_p]
        b.ggml_free.argtypes = [C.c_void_p]

    def traits(self, type_id):
        return self.b.ggml_get_type_traits(type_id).contents

    def read(self, path):
        """{name: (ggml type name, ne, raw bytes)} by libggml's GGUF reader."""
        ctx = C.c_void_p()
        g = self.b.gguf_init_from_file(str(path).encode(),
                                       GgufInitParams(True, C.pointer(ctx)))
        assert g, f"gguf_init_from_file refused {path}"
        try:
            with open(path, "rb") as fh:
                blob = fh.read()
            base = self.b.gguf_get_data_offset(g)
            out = {}
            for i in range(self.b.gguf_get_n_tensors(g)):
                name = self.b.gguf_get_tensor_name(g, i).decode()
                tid = self.b.gguf_get_tensor_type(g, i)
                off = base + self.b.gguf_get_tensor_offset(g, i)
                size = self.b.gguf_get_tensor_size(g, i)
                t = GgmlTensor.from_address(self.b.ggml_get_tensor(ctx, name.encode()))
                assert t.type == tid, name
                ne = list(t.ne)
                while len(ne) > 1 and ne[-1] == 1:
                    ne.pop()
                out[name] = (GGML_TYPE_NAME[tid], ne, blob[off:off + size])
            return out
        finally:
            self.b.gguf_free(g)
            self.b.ggml_free(ctx)

    def to_float(self, tname, ne, raw):
        """float32 array of PyTorch shape reversed(ne): F32 as stored, every
        other type row by row through ggml's to_float."""
        shape = tuple(reversed(ne))
        if tname == "F32":
            return np.frombuffer(raw, dtype="<f4").reshape(shape).copy()
        tid, blk, size = GGML_TYPES[tname]
        tr = self.traits(tid)
        assert tr.type_name.decode().upper() == tname and tr.blck_size == blk \
            and tr.type_size == size and tr.to_float, tname
        f = TO_FLOAT(tr.to_float)
        n_row = ne[0]
        row_bytes = n_row // blk * size
        n_rows = len(raw) // row_bytes
        assert n_rows * row_bytes == len(raw) and n_rows * n_row == int(np.prod(ne))
        src = (C.c_char * len(raw)).from_buffer_copy(raw)
        out = np.empty((n_rows, n_row), dtype=np.float32)
        for r in range(n_rows):
            f(C.addressof(src) + r * row_bytes,
              out[r].ctypes.data_as(C.POINTER(C.c_float)), n_row)
        return out.reshape(shape)

    def quantize(self, tname, a):
        """ggml_quantize_chunk of a float32 [rows][n_per_row] array, no imatrix."""
        a = np.ascontiguousarray(a, dtype=np.float32).reshape(-1, a.shape[-1])
        tid, blk, size = GGML_TYPES[tname]
        dst = C.create_string_buffer(a.shape[0] * a.shape[1] // blk * size)
        n = self.b.ggml_quantize_chunk(tid, a.ctypes.data, dst, 0, a.shape[0],
                                       a.shape[1], None)
        assert n == len(dst.raw)
        return dst.raw


def gguf_to_hf_rows(w, n_head):
    """Undoes LlamaModel.permute: per head of D rows, HF row i = GGUF row 2i,
    HF row i + D/2 = GGUF row 2i + 1."""
    D = w.shape[0] // n_head
    idx = np.empty(w.shape[0], dtype=np.int64)
    for h in range(n_head):
        for i in range(D // 2):
            idx[h * D + i] = h * D + 2 * i
            idx[h * D + i + D // 2] = h * D + 2 * i + 1
    return w[idx]


def hf_names(c):
    """{llama.cpp name: transformers name} for tiny-llama-wide's tensors."""
    names = ["model.embed_tokens.weight", "model.norm.weight"]
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        names += [p + x + ".weight" for x in (
            "input_layernorm", "post_attention_layernorm", "self_attn.q_proj",
            "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
            "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")]
    return {mtg.map_name(mtg.COMMON, k, "llama"): k for k in names}


def check_hparams(kvs, c):
    v = {k: val for k, (_, val) in kvs.items()}
    assert v["general.architecture"] == "llama"
    want = {"llama.block_count": c["num_hidden_layers"],
            "llama.embedding_length": c["hidden_size"],
            "llama.feed_forward_length": c["intermediate_size"],
            "llama.attention.head_count": c["num_attention_heads"],
            "llama.attention.head_count_kv": c["num_key_value_heads"],
            "llama.attention.key_length": c["head_dim"],
            "llama.rope.dimension_count": c["head_dim"],
            "llama.rope.freq_base": c["rope_theta"],
            "llama.vocab_size": c["vocab_size"]}
    for k, x in want.items():
        assert v[k] == x, (k, v[k], x)
    assert v["llama.attention.layer_norm_rms_epsilon"] == float(np.float32(c["rms_norm_eps"]))


def load_weights(g, path, c):
    """(tensors {name: (type, ne, bytes)}, {HF name: float32 array in the
    transformers layout})."""
    lib = g.read(path)
    kvs, py = read_gguf(path)
    check_hparams(kvs, c)
    assert list(lib) == list(py), "tensor lists differ"
    for k in lib:
        assert lib[k][0] == py[k][0] and list(lib[k][1]) == list(py[k][1]) \
            and lib[k][2] == py[k][2], k
    names = hf_names(c)
    assert set(lib) == set(names), sorted(set(lib) ^ set(names))
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    w = {}
    for gname, (tname, ne, raw) in lib.items():
        a = g.to_float(tname, ne, raw)
        hf = names[gname]
        heads = nh if hf.endswith("q_proj.weight") else nkv if hf.endswith("k_proj.weight") else 0
        if heads:
            b = gguf_to_hf_rows(a, heads)
            assert np.array_equal(b, mtg.unpermute(a, heads))
            assert np.array_equal(mtg.permute(b, nh, heads), a)
            a = b
        w[hf] = a
    return lib, w


def forward(c, w, ids):
    return dense.forward(c, {k: tm.t64(a) for k, a in w.items()}, ids)


def step_ratio(tname, orig, deq):
    """max over the tensor of |deq - orig| / the block's quantization step."""
    n = orig.shape[-1]
    o = orig.reshape(-1, n).astype(np.float64)
    e = np.abs(deq.reshape(-1, n).astype(np.float64) - o)
    if tname in ("Q8_0", "Q4_0", "Q5_0"):
        levels = {"Q8_0": 127, "Q4_0": 8, "Q5_0": 16}[tname]
        ob, eb = o.reshape(-1, 32), e.reshape(-1, 32)
        step = np.abs(ob).max(1, keepdims=True) / levels
    elif tname == "Q4_K":
        ob, eb = o.reshape(-1, 32), e.reshape(-1, 32)
        step = (ob.max(1, keepdims=True) - ob.min(1, keepdims=True)) / 15
    elif tname == "Q6_K":
        ob, eb = o.reshape(-1, 16), e.reshape(-1, 16)
        step = np.abs(ob).max(1, keepdims=True) / 32
    else:
        raise ValueError(tname)
    return float((eb / step).max())


# the quantizer's bound, in steps (see the docstring); fp16 scale rounding
# 2^-11 relative times the largest level, and a float32 margin
BOUND = {"Q8_0": 0.5 + 127 * 2.0 ** -11, "Q4_0": 1 + 8 * 2.0 ** -11,
         "Q5_0": 1 + 16 * 2.0 ** -11, "Q4_K": 1.0, "Q6_K": 1.0}


def dequantized_gguf(g, src, dst):
    """src's metadata and tensors, every tensor as F32: ggml's to_float of
    the stored blocks, in the GGUF layout (Q/K rows still permuted)."""
    kvs, t = read_gguf(src)
    kv = [(k, vt, 0 if k == "general.file_type" else v) for k, (vt, v) in kvs.items()]
    out = [(n, "F32", ne, np.ascontiguousarray(g.to_float(tn, ne, raw), dtype="<f4").tobytes())
           for n, (tn, ne, raw) in t.items()]
    write_gguf(dst, kv, out)


def check_f32(g, c, d, tmp, ids, ref, orig):
    """The converter's F32 GGUF through the same reader reproduces
    tiny-llama-wide's references."""
    f32 = os.path.join(tmp, "model.gguf")
    mtg.convert(d, f32)
    _, w = load_weights(g, f32, c)
    assert set(w) == set(orig)
    assert all(np.array_equal(w[k], orig[k]) for k in w), "F32 GGUF weights differ"
    out = forward(c, w, ids)
    diffs = [float(np.abs(o.numpy() - ref[k]).max())
             for o, k in zip(out, ("attentions", "hidden", "logits"))]
    assert max(diffs) <= 1e-12, diffs
    print(f"F32 GGUF -> {NAME}'s references: attentions {diffs[0]:.1e}, "
          f"hidden {diffs[1]:.1e}, logits {diffs[2]:.1e}")


def check_quantized(g, c, tensors, w, orig):
    """Each quantized tensor's bytes are ggml_quantize_chunk's of the original
    weights; returns {type: [max |diff|, max steps, max |weight|, tensors]}."""
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    gnames = {v: k for k, v in hf_names(c).items()}
    worst = {}
    for hf, a in w.items():
        tname, ne, raw = tensors[gnames[hf]]
        o = orig[hf]
        if tname == "F32":
            assert np.array_equal(a, o), hf
            continue
        heads = nh if hf.endswith("q_proj.weight") else nkv if hf.endswith("k_proj.weight") else 0
        src = mtg.permute(o, nh, heads) if heads else o
        assert g.quantize(tname, src) == raw, f"{hf}: not ggml_quantize_chunk's bytes"
        r = step_ratio(tname, o, a)
        assert r <= BOUND[tname] * (1 + 1e-6), (hf, tname, r)
        x = worst.setdefault(tname, [0.0, 0.0, 0.0, 0])
        x[0] = max(x[0], float(np.abs(a.astype(np.float64) - o).max()))
        x[1] = max(x[1], r)
        x[2] = max(x[2], float(np.abs(o).max()))
        x[3] += 1
    return worst


def references(g, c, d, qd, tmp, q, ids, ref, orig):
    """Writes model-<q>.{attentions,hidden,logits}.npy and prints the checks."""
    L, H, s = c["num_hidden_layers"], c["num_attention_heads"], len(ids)
    path = os.path.join(qd, f"model-{q}.gguf")
    tensors, w = load_weights(g, path, c)
    worst = check_quantized(g, c, tensors, w, orig)
    att, hid, lg = forward(c, w, ids)
    assert att.shape == (L, 1, H, s, s) and hid.shape == (L + 1, 1, s, c["hidden_size"])
    assert lg.shape == (1, s, c["vocab_size"])
    for k, a in (("attentions", att), ("hidden", hid), ("logits", lg)):
        assert a.dtype == torch.float64 and a.shape == ref[k].shape
        tm.write_npy(os.path.join(qd, f"model-{q}.{k}.npy"), a.numpy())
    print(f"{q}: every quantized tensor = ggml_quantize_chunk of the original, byte for "
          f"byte; dequantized - original:")
    for tname, (e, r, amax, n) in sorted(worst.items()):
        print(f"  {tname:5s} ({n:2d} tensors): max |diff| {e:.2e} (weights up to "
              f"{amax:.2f}), {r:.3f} step (bound {BOUND[tname]:.3f})")
    a64, l64 = att.numpy(), lg.numpy()[0]
    print(f"  these references vs {NAME}'s (unquantized): attentions "
          f"{np.abs(a64 - ref['attentions']).max():.1e}, logits "
          f"{np.abs(l64 - ref['logits'][0]).max():.1e} (logits up to "
          f"{np.abs(l64).max():.0f})")
    la = np.load(os.path.join(qd, f"llamacpp_attentions-{q}.npy")).astype(np.float64)
    ll = np.load(os.path.join(qd, f"llamacpp_logits-{q}.npy")).astype(np.float64)
    assert la.shape == a64.shape and ll.shape == l64.shape
    print(f"  llama.cpp on the file vs these references: attentions "
          f"{np.abs(la - a64).max():.1e} (per layer "
          f"{', '.join(f'{np.abs(la[i] - a64[i]).max():.1e}' for i in range(L))}), "
          f"logits {np.abs(ll - l64).max():.1e}")
    print(f"  llama.cpp on the file vs {NAME}'s (unquantized): attentions "
          f"{np.abs(la - ref['attentions']).max():.1e}, logits "
          f"{np.abs(ll - ref['logits'][0]).max():.1e}")
    # llama.cpp on the same weights in F32: no activation quantization left
    f = os.path.join(tmp, f"dequantized-{q}.gguf")
    dequantized_gguf(g, path, f)
    fa, fl = validate_gguf.run_file(d, f)
    da, dl = float(np.abs(fa - a64).max()), float(np.abs(fl - l64).max())
    print(f"  llama.cpp on an F32 GGUF of the dequantized weights vs these references: "
          f"attentions {da:.1e}, logits {dl:.1e}")
    assert da <= 1e-5 and dl <= 1e-5 * float(np.abs(l64).max()), (da, dl)


def main():
    torch.set_num_threads(1)
    d = os.path.join(HERE, NAME)
    qd = os.path.join(HERE, QNAME)
    with open(os.path.join(d, "config.json")) as fh:
        c = json.load(fh)
    with open(os.path.join(d, "ids.json")) as fh:
        ids = json.load(fh)
    with open(os.path.join(qd, "ids.json")) as fh:
        assert json.load(fh) == ids
    ids = torch.tensor(ids)
    ref = {k: np.load(os.path.join(d, k + ".npy")) for k in ("attentions", "hidden", "logits")}
    g = Ggml(validate_gguf.lib())
    # the original weights: the bf16 values widened, as the converter reads them
    orig = dict(mtg.checkpoint_items(d))
    tmp = tempfile.mkdtemp(prefix="quantref-")
    try:
        check_f32(g, c, d, tmp, ids, ref, orig)
        for q in QUANTS:
            references(g, c, d, qd, tmp, q, ids, ref, orig)
    finally:
        shutil.rmtree(tmp)
    total = sum(os.path.getsize(os.path.join(qd, f)) for f in os.listdir(qd))
    print(f"{QNAME}: {total} bytes")
    assert total < 1.6e6, total


if __name__ == "__main__":
    main()
