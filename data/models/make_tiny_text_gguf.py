#!/usr/bin/python3
"""tiny-qwen2-text/: a tiny Qwen2 model whose GGUF file carries a real
tokenizer, so that `attn run --checkpoint model.gguf --text ...` is tested
end to end (the other tiny GGUFs carry none, or one that cannot spell text).

  /usr/bin/python3 data/models/make_tiny_text_gguf.py

Writes, in data/models/tiny-qwen2-text/:
* config.json and model.safetensors: a Qwen2ForCausalLM (2 layers, hidden
  32, 4 query heads sharing 2 key/value heads, tied embeddings) whose
  vocabulary is the 588 tokens of data/tokenizers/small-qwen3, with random
  weights (seed 4301);
* tokenizer.json: a copy of data/tokenizers/small-qwen3/tokenizer.json, so
  that the transformers directory spells text as the GGUF file does;
* model.gguf: the same weights as make_tiny_gguf.py converts them, with the
  tokenizer.ggml.* keys of tests/tokenizer/gguf/bpe-qwen2.gguf (the
  vocabulary-only file made from the same tokenizer.json by
  tests/tokenizer/make_gguf_vocabs.py: a byte-level BPE, pre "qwen2");
* llamacpp_text.json: TEXTS below and, for each, llama.cpp's
  llama_tokenize ids on model.gguf (add_special, no parse_special);
* llamacpp_attentions_textI.npy: for text I, llama.cpp's per-layer softmax
  (`kq_soft_max-N` through the eval callback; flash attention off, F32 K/V
  cache) of one llama_decode of those ids, float32 [layers][1][heads][n][n]
  (the layout of attn's `--layer all` stack).

Needs numpy and llama.cpp's shared libraries (data/models/llamacpp.py finds
them; LLAMACPP_LIB_DIR overrides). Deterministic: the same inputs give the
same bytes.
"""
import ctypes as C
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_tiny_gguf as mg  # noqa: E402
import make_tiny_models as tm  # noqa: E402
from gguf_writer import read_gguf  # noqa: E402
from llamacpp import LlamaCpp, layer_attentions  # noqa: E402

NAME = "tiny-qwen2-text"
TOKENIZER = os.path.join(ROOT, "data", "tokenizers", "small-qwen3", "tokenizer.json")
VOCAB_GGUF = os.path.join(ROOT, "tests", "tokenizer", "gguf", "bpe-qwen2.gguf")
SEED = 4301
TEXTS = [
    "The cat sat on the mat.",
    "Hello world, 2025!  It's 3.14 and café 你好",
]


def config(vocab_size):
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "hidden_act": "silu",
        "hidden_size": 32,
        "intermediate_size": 64,
        "max_position_embeddings": 256,
        "max_window_layers": 2,
        "model_type": "qwen2",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06,
        "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
        "sliding_window": None,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "use_sliding_window": False,
        "vocab_size": vocab_size,
    }


def weights(c):
    rng = np.random.RandomState(SEED)
    h, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    d = h // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * d

    def w(*shape, scale):
        return ("F32", (rng.standard_normal(shape) * scale).astype(np.float32))

    out = {"model.embed_tokens.weight": w(v, h, scale=0.5),
           "model.norm.weight": ("F32", (1 + 0.1 * rng.standard_normal(h)).astype(np.float32))}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out[p + "input_layernorm.weight"] = ("F32", (1 + 0.1 * rng.standard_normal(h)).astype(np.float32))
        out[p + "post_attention_layernorm.weight"] = (
            "F32", (1 + 0.1 * rng.standard_normal(h)).astype(np.float32))
        out[p + "self_attn.q_proj.weight"] = w(h, h, scale=0.4)
        out[p + "self_attn.q_proj.bias"] = w(h, scale=0.2)
        out[p + "self_attn.k_proj.weight"] = w(kv, h, scale=0.4)
        out[p + "self_attn.k_proj.bias"] = w(kv, scale=0.2)
        out[p + "self_attn.v_proj.weight"] = w(kv, h, scale=0.3)
        out[p + "self_attn.v_proj.bias"] = w(kv, scale=0.1)
        out[p + "self_attn.o_proj.weight"] = w(h, h, scale=0.2)
        out[p + "mlp.gate_proj.weight"] = w(f, h, scale=0.2)
        out[p + "mlp.up_proj.weight"] = w(f, h, scale=0.2)
        out[p + "mlp.down_proj.weight"] = w(h, f, scale=0.15)
    return out


def write_model(d):
    kvs, _ = read_gguf(VOCAB_GGUF)
    vocab_size = len(kvs["tokenizer.ggml.tokens"][1][1])
    c = config(vocab_size)
    os.makedirs(d, exist_ok=True)
    tm.write_json(os.path.join(d, "config.json"), c)
    tm.write_bytes(os.path.join(d, "model.safetensors"), tm.safetensors_bytes(weights(c)))
    shutil.copyfile(TOKENIZER, os.path.join(d, "tokenizer.json"))
    # make_tiny_gguf.py's conversion, whose vocab_meta copies VOCAB_FROM[NAME].
    assert os.path.samefile(mg.VOCAB_FROM[NAME], VOCAB_GGUF)
    kv, tensors, size = mg.convert(d, os.path.join(d, "model.gguf"))
    print(f"{NAME}: {kv.arch}, {len(tensors)} tensors, {size} bytes, vocabulary {vocab_size}")
    return c


def oracle(d, c):
    lib = LlamaCpp()
    L = lib.llama
    L.llama_tokenize.restype = C.c_int32
    L.llama_tokenize.argtypes = [C.c_void_p, C.c_char_p, C.c_int32, C.POINTER(C.c_int32),
                                 C.c_int32, C.c_bool, C.c_bool]
    model = lib.load_model(os.path.join(d, "model.gguf"))
    vocab = L.llama_model_get_vocab(model)
    cases = []
    for i, text in enumerate(TEXTS):
        b = text.encode("utf-8")
        buf = (C.c_int32 * (len(b) * 4 + 16))()
        n = L.llama_tokenize(vocab, b, len(b), buf, len(buf), True, False)
        assert n > 0, n
        ids = list(buf[:n])
        _, captured = lib.forward(model, ids)
        a = layer_attentions(captured, c["num_hidden_layers"])
        tm.write_npy(os.path.join(d, f"llamacpp_attentions_text{i}.npy"), a[:, None], dtype="<f4")
        cases.append({"text": text, "ids": ids})
        print(f"  text {i}: {len(ids)} ids {ids}")
    lib.free_model(model)
    tm.write_json(os.path.join(d, "llamacpp_text.json"), cases, indent=None, sort_keys=False)


def main():
    d = os.path.join(HERE, NAME)
    c = write_model(d)
    oracle(d, c)


if __name__ == "__main__":
    main()
