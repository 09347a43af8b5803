#!/usr/bin/python3
"""llama.cpp's numbers on the tiny GGUF files, against the float64
references.

  /usr/bin/python3 data/models/validate_gguf.py [DIR_NAME ...] [--file NAME.gguf]

For each directory: loads DIR/model.gguf (or --file) with
llama_model_load_from_file, runs one llama_decode of ids.json (positions 0..6,
flash attention off, F32 K/V cache, every position's logits), collects each
layer's `kq_soft_max-N` through the eval callback, writes them as
DIR/llamacpp_attentions.npy (float32 [layers][1][heads][7][7], the layout of
attentions.npy; for a quantized file DIR/llamacpp_attentions-<TYPE>.npy),
and prints the max |difference| from attentions.npy and logits.npy, per
layer.

Where llama.cpp computes something else than transformers for that
architecture and config (KNOWN below: a sliding window it ignores, a fixed
layer pattern, YaRN's `truncate`, ...), the script also runs the repository's
own float64 re-implementation (make_tiny_*.py) with the config changed to
what llama.cpp computes, and prints the difference from that: it is what
shows the conversion right in those cases.
"""
import copy
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from llamacpp import LlamaCpp, layer_attentions  # noqa: E402

_LIB = None


def lib():
    global _LIB
    if _LIB is None:
        _LIB = LlamaCpp()
    return _LIB


# ---------------------------------------------------------------------------
# What llama.cpp computes differently, and the float64 model of it
# ---------------------------------------------------------------------------

def _classic(c, w, ids):
    import make_tiny_classic as m
    return m.forward(c, w, ids)


def _dense(c, w, ids):
    import make_tiny_dense as m
    return m.forward(c, w, ids)


def _phi3(c, w, ids):
    import make_tiny_fused as m
    return m.phi3_forward(w, ids, c)


def _modern(c, w, ids):
    import make_tiny_modern as m
    atts, hidden = m.forward(w, ids, c)
    return atts, hidden, None


def _moe(c, w, ids):
    import make_tiny_moe as m
    return m.forward(w, ids, c, m.attention, m.PRIMARY)


def _mla(c, w, ids):
    import make_tiny_mla as m
    return m.forward(w, ids, c)


def _set(**kw):
    def f(c):
        c.update(kw)
    return f


def _phi3_llamacpp(c):
    c["sliding_window"] = None
    c["rope_scaling"] = dict(c["rope_scaling"], short_factor=c["rope_scaling"]["long_factor"])


def _deepseek_mscale(c):
    c["rope_scaling"] = dict(c["rope_scaling"], mscale=c["rope_scaling"]["mscale_all_dim"])


def _yarn_truncate(c):
    c["rope_scaling"] = dict(c["rope_scaling"], truncate=True)


KNOWN = {
    # name: (why llama.cpp differs, config change, float64 forward)
    "tiny-mistral": ("llama.cpp's llama architecture has no sliding window (window 3 ignored)",
                     _set(sliding_window=None), _classic),
    "tiny-qwen2": ("llama.cpp's qwen2 has no sliding window (layers 1-2 window 3 ignored)",
                   _set(use_sliding_window=False, layer_types=None), _classic),
    "tiny-starcoder2": ("llama.cpp's starcoder2 has no sliding window (window 4 ignored)",
                        _set(sliding_window=None), _dense),
    "tiny-phi3": ("llama.cpp's phi3 reads sliding_window and then disables it (phi3.cpp: "
                  "'Phi SWA is currently disabled'), and picks the long RoPE factors by the "
                  "context size, padded to 256 > original_max_position_embeddings 16 "
                  "(llama_model::get_rope_factors), where transformers picks by the sequence "
                  "length (7: short)", _phi3_llamacpp, _phi3),
    "tiny-mixtral": ("llama arch: no sliding window (4 ignored), and no dynamic NTK RoPE "
                     "(transformers rescales since 7 > max_position_embeddings 4; the converter "
                     "writes nothing for 'dynamic')",
                     _set(sliding_window=None, rope_scaling=None), _modern),
    "tiny-smollm3": ("llama.cpp's smollm3 has no sliding window and fixes the NoPE layers to "
                     "every 4th ((il + 1) % 4 == 0: layer 3), where the config says layer 1",
                     _set(use_sliding_window=False,
                          layer_types=["full_attention"] * 4, no_rope_layers=[1, 1, 1, 0]),
                     _dense),
    "tiny-gpt-oss": ("YaRN: llama.cpp always floors/ceils the correction range "
                     "(ggml_rope_yarn_corr_dims); the config has truncate false",
                     _yarn_truncate, _moe),
    "tiny-gemma3": ("llama.cpp's gemma3 fixes the sliding pattern to 6 (layers 0-4 of every 6 "
                    "sliding) and the converter writes no pattern: layer 1 (global in the "
                    "config, pattern 2) is sliding with the local base there",
                    _set(sliding_window_pattern=6), _modern),
    "tiny-deepseek-v3-nobias": ("llama.cpp reads no yarn `mscale` and, for deepseek2, takes it "
                                "equal to mscale_all_dim (llama-context.cpp, 'we assume mscale == "
                                "1.0f' / the DeepSeek-V2 special case): the cos/sin factor "
                                "mscale/mscale_all_dim term becomes 1 where the config's mscale 1.0, "
                                "mscale_all_dim 0.8 give 1.057", _deepseek_mscale, _mla),
    "tiny-gemma2-softcap": ("llama.cpp's gemma2 scales q by 1/sqrt(head_dim) (by "
                            "1/sqrt(hidden/heads) for the 27B), not query_pre_attn_scalar^-0.5 "
                            "(12 here)", _set(query_pre_attn_scalar=8), _classic),
}

# GELU: ggml's CPU gelu (GGML_GELU_FP16) reads a table indexed by the input
# rounded to fp16, and llama.cpp uses the tanh form where transformers' "gelu"
# is erf's (gpt-neox, falcon): differences of 1e-4..1e-3 after the first MLP.
GELU = {"tiny-gemma", "tiny-gemma2-softcap", "tiny-gemma3", "tiny-gpt-neox",
        "tiny-gpt2-ninner", "tiny-starcoder2", "tiny-falcon", "tiny-phi"}


def counterfactual(name, d):
    import torch
    import make_tiny_models as tm
    why, change, fwd = KNOWN[name]
    with open(os.path.join(d, "config.json")) as fh:
        c = json.load(fh)
    c = copy.deepcopy(c)
    change(c)
    t, _ = tm.read_safetensors(os.path.join(d, "model.safetensors"))
    w = tm.to_torch({k: a for k, (tag, a) in t.items()})
    with open(os.path.join(d, "ids.json")) as fh:
        ids = torch.tensor(json.load(fh))
    torch.set_num_threads(1)
    atts, _, logits = fwd(c, w, ids)
    return why, atts.numpy(), None if logits is None else logits.numpy()


def per_layer(a, ref):
    return [float(np.abs(a[i] - ref[i]).max()) for i in range(ref.shape[0])]


def run_file(d, path):
    L = lib()
    model = L.load_model(path)
    try:
        with open(os.path.join(d, "ids.json")) as fh:
            ids = json.load(fh)
        logits, atts = L.forward(model, ids)
        n_layer = L.llama.llama_model_n_layer(model)
        att = layer_attentions(atts, n_layer)[:, None].astype(np.float32)
        return att, logits
    finally:
        L.free_model(model)


def validate(names, file_name="model.gguf", out_name="llamacpp_attentions.npy", quiet=False):
    summary = {}
    for name in names:
        d = os.path.join(HERE, name)
        path = os.path.join(d, file_name)
        try:
            att, logits = run_file(d, path)
        except RuntimeError as e:
            print(f"{name}/{file_name}: llama.cpp: {str(e).splitlines()[0]} "
                  f"{str(e).strip().splitlines()[-2:]}")
            summary[name] = None
            continue
        np.save(os.path.join(d, out_name), att)
        ref = np.load(os.path.join(d, "attentions.npy"))
        assert ref.shape == att.shape, (ref.shape, att.shape)
        da = per_layer(att, ref)
        line = f"{name}/{file_name}: attentions max |diff| {max(da):.1e} (per layer " \
               + ", ".join(f"{x:.1e}" for x in da) + ")"
        dl = None
        if os.path.exists(os.path.join(d, "logits.npy")):
            dl = float(np.abs(logits - np.load(os.path.join(d, "logits.npy"))[0]).max())
            line += f", logits {dl:.1e}"
        summary[name] = (max(da), dl)
        if name in KNOWN:
            why, catts, clog = counterfactual(name, d)
            dc = per_layer(att, catts)
            line += f"\n    llama.cpp differs here: {why}.\n    against the float64 model of " \
                    f"that: attentions {max(dc):.1e} (per layer " + ", ".join(f"{x:.1e}" for x in dc) + ")"
            if clog is not None:
                line += f", logits {float(np.abs(logits - clog[0]).max()):.1e}"
            summary[name] = (max(da), dl, max(dc))
        if name in GELU:
            line += "\n    (GELU: ggml's fp16-table gelu, tanh form; see the module comment)"
        if not quiet:
            print(line)
    return summary


def main():
    args = sys.argv[1:]
    file_name = "model.gguf"
    if "--file" in args:
        i = args.index("--file")
        file_name = args[i + 1]
        del args[i:i + 2]
    import make_tiny_gguf
    names = args or make_tiny_gguf.model_dirs()
    out = "llamacpp_attentions.npy" if file_name == "model.gguf" else \
        "llamacpp_attentions-" + file_name.removeprefix("model-").removesuffix(".gguf") + ".npy"
    validate(names, file_name, out)


if __name__ == "__main__":
    main()
