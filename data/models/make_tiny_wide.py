#!/usr/bin/python3
"""tiny-llama-wide: a Llama wide enough for ggml's K-quants (every matmul row,
the input width, a multiple of 256), its float64 references, and its GGUF
quantizations by llama.cpp with llama.cpp's attentions on each.

  /usr/bin/python3 data/models/make_tiny_wide.py

tiny-llama-wide/: LlamaForCausalLM, hidden 256, 2 layers, 4 heads of width
32, 2 K/V heads (GQA), SwiGLU width 256, vocab 64, tied embeddings. Every
matmul row is 256 wide except o_proj's (128: 4 heads x 32), which Q4_K_M
therefore stores in its fallback type (llama_model_quantize: "not divisible
by 256") - a file with mixed block types, on purpose within the size limit
(heads of width 64 would make each directory exceed 1.5 MB). model.safetensors is stored in bfloat16 (the references are on
the bf16 values widened, as tiny-llama-bf16's), to keep the directory near
1 MB; config.json, ids.json, float64 attentions.npy / hidden.npy / logits.npy
from make_tiny_dense.py's Llama (the forward of tiny-llama-bias), checked
against make_tiny_models.py's llama_forward (a separate implementation) to
1e-12.

tiny-llama-wide-quant/: the quantized files (a second directory so that each
stays under 1.5 MB): model-Q8_0.gguf, model-Q4_K_M.gguf, model-Q4_0.gguf,
written by llama_model_quantize from the F32 GGUF of make_tiny_gguf.py's
conversion (not kept), ids.json, and llama.cpp's attentions on each file
(llamacpp_attentions-<TYPE>.npy, float32) and logits (llamacpp_logits-<TYPE>.npy).
The references for them stay in ../tiny-llama-wide/.
"""
import json
import math
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

NAME = "tiny-llama-wide"
QNAME = "tiny-llama-wide-quant"
IDS = [2, 17, 29, 8, 33, 12, 24]
QUANTS = ["Q8_0", "Q4_K_M", "Q4_0"]

CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "num_hidden_layers": 2,
    "rope_theta": 10000.0,
    "max_position_embeddings": 128,
    "rms_norm_eps": 1e-6,
    "vocab_size": 64,
    "attention_bias": False,
    "mlp_bias": False,
    "hidden_act": "silu",
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": True,
}


def weights(c):
    rng = np.random.RandomState(2561)
    d, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    w = {"model.embed_tokens.weight": rng.standard_normal((v, d)).astype("<f4")}
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        w[p + "input_layernorm.weight"] = tm.vector(rng, d, 1.0, 0.2)
        w[p + "self_attn.q_proj.weight"] = tm.linear(rng, nh * hd, d, 1.8)
        w[p + "self_attn.k_proj.weight"] = tm.linear(rng, nkv * hd, d, 1.8)
        w[p + "self_attn.v_proj.weight"] = tm.linear(rng, nkv * hd, d)
        w[p + "self_attn.o_proj.weight"] = tm.linear(rng, d, nh * hd)
        w[p + "post_attention_layernorm.weight"] = tm.vector(rng, d, 1.0, 0.2)
        w[p + "mlp.gate_proj.weight"] = tm.linear(rng, inter, d)
        w[p + "mlp.up_proj.weight"] = tm.linear(rng, inter, d)
        w[p + "mlp.down_proj.weight"] = tm.linear(rng, d, inter)
    w["model.norm.weight"] = tm.vector(rng, d, 1.0, 0.2)
    return w


def main():
    torch.set_num_threads(1)
    c = CONFIG
    d = os.path.join(HERE, NAME)
    os.makedirs(d, exist_ok=True)
    w32 = weights(c)
    bits = {k: tm.f32_to_bf16_bits(a) for k, a in w32.items()}
    st = {k: ("BF16", b) for k, b in bits.items()}
    tm.write_json(os.path.join(d, "config.json"), c)
    tm.write_bytes(os.path.join(d, "model.safetensors"), tm.safetensors_bytes(st))
    back, _ = tm.read_safetensors(os.path.join(d, "model.safetensors"))
    w = {k: tm.t64(a) for k, (tag, a) in back.items()}
    ids = torch.tensor(IDS)
    atts, hidden, logits = dense.forward(c, w, ids)
    L, H, s = c["num_hidden_layers"], c["num_attention_heads"], len(IDS)
    assert atts.shape == (L, 1, H, s, s) and hidden.shape == (L + 1, 1, s, 256)
    assert logits.shape == (1, s, 64)
    # second formulation: make_tiny_models.py's llama_forward (its own RoPE,
    # repeat_kv and softmax)
    _, _, atts2 = tm.llama_forward(w, ids, c, tm.llama_attention)
    diff = tm.max_diff(atts, atts2)
    assert diff <= 1e-12, diff
    tm.write_json(os.path.join(d, "ids.json"), IDS, indent=None, sort_keys=False)
    tm.write_npy(os.path.join(d, "attentions.npy"), atts.numpy())
    tm.write_npy(os.path.join(d, "hidden.npy"), hidden.numpy())
    tm.write_npy(os.path.join(d, "logits.npy"), logits.numpy())
    rows = atts[:, 0, :, 1:, :].max(-1).values
    print(f"{NAME}: attentions {tuple(atts.shape)}, second formulation {diff:.1e}, "
          f"rows with max > 0.5: {float((rows > 0.5).double().mean()):.0%}")

    # GGUF: the converter's F32 file (scratch), then llama_model_quantize
    import make_tiny_gguf
    import validate_gguf
    from llamacpp import LlamaCpp
    qd = os.path.join(HERE, QNAME)
    os.makedirs(qd, exist_ok=True)
    shutil.copy(os.path.join(d, "ids.json"), qd)
    tmp = tempfile.mkdtemp(prefix="wide-gguf-")
    f32 = os.path.join(tmp, "model.gguf")
    make_tiny_gguf.convert(d, f32)
    lib = LlamaCpp()
    ref = atts.numpy()
    for q in ["F32"] + QUANTS:
        path = f32 if q == "F32" else os.path.join(qd, f"model-{q}.gguf")
        if q != "F32":
            lib.quantize(f32, path, q, threads=1)
        att, lg = validate_gguf.run_file(d, path)
        if q != "F32":
            np.save(os.path.join(qd, f"llamacpp_attentions-{q}.npy"), att)
            np.save(os.path.join(qd, f"llamacpp_logits-{q}.npy"), lg)
        da = float(np.abs(att - ref).max())
        dl = float(np.abs(lg - logits.numpy()[0]).max())
        size = os.path.getsize(path)
        print(f"  {q}: {size} bytes, llama.cpp vs float64: attentions {da:.1e}, logits {dl:.1e}")
    shutil.rmtree(tmp)
    for dd in (d, qd):
        total = sum(os.path.getsize(os.path.join(dd, f)) for f in os.listdir(dd))
        print(f"  {os.path.basename(dd)}: {total} bytes")


if __name__ == "__main__":
    main()
