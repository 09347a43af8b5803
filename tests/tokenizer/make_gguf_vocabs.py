#!/usr/bin/env python3
"""Writes tests/tokenizer/gguf/: small vocabulary-only GGUF files made from
this project's own small tokenizer.json files (data/tokenizers/small-*), and
beside each NAME.gguf a NAME.expected.json holding llama.cpp's
llama_tokenize ids for every text of tests/tokenizer/texts.json, three ways:
"special" (add_special), "no_special" (neither) and "parse_special" (both).

  PYTHONPATH=/path/to/llama.cpp/gguf-py python3 tests/tokenizer/make_gguf_vocabs.py

Needs numpy, llama.cpp's gguf-py (to write the files) and llama.cpp's shared
libraries (data/models/llamacpp.py finds them; LLAMACPP_LIB_DIR overrides).
Deterministic: the same inputs give the same bytes.
"""
import ctypes as C
import json
import os
import sys

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "data", "models"))
from llamacpp import LlamaCpp  # noqa: E402

SRC = os.path.join(ROOT, "data", "tokenizers")
OUT = os.path.join(HERE, "gguf")

# name: (source tokenizer.json, tokenizer.ggml.model, pre, settings)
VOCABS = {
    "spm-llama2": ("small-llama2", "llama", None, {}),
    "spm-gemma3": ("small-gemma3", "llama", None, {"add_space_prefix": False,
                                                   "bos": "<bos>", "eos": "<eos>",
                                                   "unk": "<unk>"}),
    "bpe-llama-bpe": ("small-llama3", "gpt2", "llama-bpe",
                      {"bos": "<|begin_of_text|>", "eos": "<|end_of_text|>"}),
    "bpe-qwen2": ("small-qwen3", "gpt2", "qwen2",
                  {"bos": "<|endoftext|>", "eos": "<|endoftext|>", "add_bos": False}),
    "bpe-gpt-2": ("small-gpt4o", "gpt2", "gpt-2",
                  {"bos": "<|endoftext|>", "eos": "<|endoftext|>"}),
    "bpe-default": ("small-llama3", "gpt2", "default", {}),
    "bpe-deepseek-llm": ("small-llama3", "gpt2", "deepseek-llm", {}),
    "bpe-deepseek-v3": ("small-llama3", "gpt2", "deepseek-v3", {}),
    "bpe-falcon": ("small-llama3", "gpt2", "falcon", {}),
    "bpe-starcoder": ("small-llama3", "gpt2", "starcoder", {}),
    "bpe-gpt-4o": ("small-gpt4o", "gpt2", "gpt-4o", {}),
    "wpm-bert": ("small-bert", "bert", None, {}),
}

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6


def vocabulary(tj):
    """Tokens by id, their types and scores, and the merges as strings."""
    model = tj["model"]
    n = max(list(model["vocab"].values()) + [a["id"] for a in tj["added_tokens"]]) + 1
    tokens = [None] * n
    types = [NORMAL] * n
    for t, i in model["vocab"].items():
        tokens[i] = t
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            types[i] = BYTE
    for a in tj["added_tokens"]:
        tokens[a["id"]] = a["content"]
        types[a["id"]] = CONTROL if a["special"] else USER_DEFINED
    unk = model.get("unk_token")
    for i, t in enumerate(tokens):
        if t is None:
            tokens[i] = f"[PAD{i}]"
            types[i] = USER_DEFINED
        elif t == unk:
            types[i] = UNKNOWN
    if model.get("type") == "WordPiece":
        # convert_hf_to_gguf.py's BERT vocabulary: ▁ before a word's first
        # piece, ## taken off the others, [..] tokens kept.
        def phantom(t):
            if t.startswith("[") and t.endswith("]"):
                return t
            return t[2:] if t.startswith("##") else "\u2581" + t
        tokens = [phantom(t) for t in tokens]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    # SentencePiece scores: a merged token scores by its merge's rank.
    scores = [0.0] * n
    ids = {t: i for i, t in enumerate(tokens)}
    for rank, m in enumerate(merges):
        a, b = m.split(" ", 1)
        if a + b in ids:
            scores[ids[a + b]] = -float(rank + 1)
    return tokens, types, scores, merges


def write(name, source, model, pre, opts):
    tj = json.load(open(os.path.join(SRC, source, "tokenizer.json"), encoding="utf-8"))
    tokens, types, scores, merges = vocabulary(tj)
    ids = {t: i for i, t in enumerate(tokens)}
    arch = "bert" if model == "bert" else "llama"
    path = os.path.join(OUT, name + ".gguf")
    w = gguf.GGUFWriter(path, arch)
    w.add_name("attn-" + name)
    w.add_block_count(1)
    w.add_context_length(512)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    if arch == "bert":
        w.add_layer_norm_eps(1e-12)
        w.add_causal_attention(False)
        w.add_pooling_type(gguf.PoolingType.CLS)
    else:
        w.add_layer_norm_rms_eps(1e-5)
        w.add_rope_dimension_count(16)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    if model == "llama":
        w.add_token_scores(scores)
    if model == "gpt2":
        w.add_token_merges(merges)
    if model == "bert":
        w.add_bos_token_id(ids["[CLS]"])
        w.add_sep_token_id(ids["[SEP]"])
        w.add_unk_token_id(ids["[UNK]"])
        w.add_pad_token_id(ids["[PAD]"])
        w.add_mask_token_id(ids["[MASK]"])
    for key, add in (("bos", w.add_bos_token_id), ("eos", w.add_eos_token_id),
                     ("unk", w.add_unk_token_id)):
        if key in opts:
            add(ids[opts[key]])
    if "add_bos" in opts:
        w.add_add_bos_token(opts["add_bos"])
    if "add_space_prefix" in opts:
        w.add_add_space_prefix(opts["add_space_prefix"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def tokenize(lib, vocab, text, add_special, parse_special):
    b = text.encode("utf-8")
    cap = len(b) * 4 + 16
    buf = (C.c_int32 * cap)()
    n = lib.llama.llama_tokenize(vocab, b, len(b), buf, cap, add_special, parse_special)
    if n < 0:
        raise RuntimeError(f"llama_tokenize: {n}")
    return list(buf[:n])


def main():
    os.makedirs(OUT, exist_ok=True)
    texts = json.load(open(os.path.join(HERE, "texts.json"), encoding="utf-8"))
    lib = LlamaCpp()
    L = lib.llama
    L.llama_tokenize.restype = C.c_int32
    L.llama_tokenize.argtypes = [C.c_void_p, C.c_char_p, C.c_int32, C.POINTER(C.c_int32),
                                 C.c_int32, C.c_bool, C.c_bool]
    for name, (source, model, pre, opts) in VOCABS.items():
        path = write(name, source, model, pre, opts)
        p = L.llama_model_default_params()
        p.vocab_only = True
        m = L.llama_model_load_from_file(path.encode(), p)
        if not m:
            raise RuntimeError(f"llama.cpp refused {path}:\n{lib.last_log(15)}")
        vocab = L.llama_model_get_vocab(m)
        cases = []
        for t in texts:
            cases.append({"text": t,
                          "special": tokenize(lib, vocab, t, True, False),
                          "no_special": tokenize(lib, vocab, t, False, False),
                          "parse_special": tokenize(lib, vocab, t, True, True)})
        L.llama_model_free(m)
        doc = {"oracle": "llama.cpp llama_tokenize (node-llama-cpp v0.5.0 libllama)",
               "source": f"data/tokenizers/{source}/tokenizer.json",
               "model": model, "pre": pre, "cases": cases}
        with open(os.path.join(OUT, name + ".expected.json"), "w", encoding="utf-8") as f:
            f.write("{\n")
            for k in ("oracle", "source", "model", "pre"):
                f.write(f"  {json.dumps(k)}: {json.dumps(doc[k])},\n")
            f.write('  "cases": [\n')
            f.write(",\n".join("    " + json.dumps(c, ensure_ascii=False) for c in cases))
            f.write("\n  ]\n}\n")
        print(name, len(cases), "texts", sum(len(c["special"]) for c in cases), "ids")


if __name__ == "__main__":
    main()
