#!/usr/bin/python3
"""Writes the built-in examples of current models' attention into
data/examples/ (llama, mistral_window, gemma2, gpt_oss, bloom_alibi,
rope_relative). Their `expected` numbers come from the PyTorch oracle of
tests/golden/make_golden_modern.py (the models' reference code), so
`attn run --example NAME --check` compares attn with it.

    /usr/bin/python3 scripts/make_modern_examples.py
"""

import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
import make_golden_modern as g  # noqa: E402

TOKENS = ["The", "cat", "sat", "on", "the", "mat", "and", "slept"]


def write(name, title, description, source, doc):
    g.seed_for("example " + name)
    built = collections.OrderedDict()
    built["title"] = title
    built["description"] = description
    built["source"] = source
    for k, v in doc.items():
        built[k] = g.to_json(v() if callable(v) else v)
    check = {k: v for k, v in built.items() if k not in ("title", "description", "source", "labels")}
    out, w = g.model_style(check)
    out2, w2 = g.independent(check)
    assert abs(out.numpy() - out2).max() < 1e-12 and abs(w.numpy() - w2).max() < 1e-12, name
    if name == "rope_relative":
        # The same run with every position shifted back to 0: the weights
        # must not change (RoPE scores depend on i - j only).
        plain = dict(check)
        plain["rope"] = {"theta": check["rope"]["theta"]}
        out, w = g.model_style(plain)
    built["expected"] = collections.OrderedDict(
        [("output", g.to_json(out.detach())), ("weights", g.to_json(w.detach())),
         ("tolerance", 1e-9)])
    with open(os.path.join(ROOT, "data", "examples", name + ".json"), "w") as f:
        f.write(json.dumps(built, indent=1, ensure_ascii=False) + "\n")


def main():
    r, pp = g.r, g.proj_params
    write("llama", "Llama-style attention: RoPE, grouped-query heads, causal",
          "Eight made-up token vectors of width 8 through the attention of a Llama "
          "block in miniature: 4 query heads of width 2 share 2 key/value heads "
          "(kv_heads 2: heads 0 and 1 read K/V head 0, heads 2 and 3 head 1), RoPE "
          "(theta 500000 as Llama 3) turns each head's queries and keys by their "
          "positions, and a causal mask. Look at: --trace for the RoPE angles, the "
          "rotated rows and which K/V head each query head reads; --weights for one "
          "panel per query head.",
          "Llama 3 (Meta, 2024): rope_theta 500000, num_key_value_heads < num_attention_heads; "
          "weights drawn from a fixed seed",
          dict(X=lambda: r(8, 8), labels=TOKENS, heads=4, kv_heads=2, causal=True,
               rope={"theta": 500000.0}, params=lambda: pp(8, 4, 2, 2, wo=True)))
    write("mistral_window", "Mistral-style sliding-window attention",
          "Causal attention with a sliding window of 3 keys (window [2, 0]: each "
          "query sees itself and the 2 tokens before it), RoPE and one key/value "
          "head for 2 query heads. Mistral's config sliding_window: 4096 is window "
          "[4095, 0] with causal. Look at: --weights (or --heatmap) for the band of "
          "at most 3 nonzero weights per row; --trace marks the window's cells masked.",
          "Mistral 7B (Jiang et al., 2023); weights drawn from a fixed seed",
          dict(X=lambda: r(8, 8), labels=TOKENS, heads=2, kv_heads=1, causal=True,
               window=[2, 0], rope=True, params=lambda: pp(8, 2, 1, 4, wo=True)))
    write("gemma2", "Gemma-2-style attention: soft-capped scores, local window",
          "Scores scaled by query_pre_attn_scalar^-0.5 (scale 0.25 for 16), then "
          "soft-capped: S <- c·tanh(S/c) with c = 2 (Gemma 2 uses 50, which only "
          "matters for large scores; 2 shows the effect on small ones), on a local "
          "layer with a window [3, 0] and causal. Look at: --trace for the scores "
          "before capping next to the capped ones, all inside (-2, 2).",
          "Gemma 2 (Google DeepMind, 2024): attn_logit_softcapping, query_pre_attn_scalar, "
          "sliding_window; weights drawn from a fixed seed",
          dict(X=lambda: r(8, 8, s=2.0), labels=TOKENS, heads=2, kv_heads=1, scale=0.25,
               softcap=2.0, window=[3, 0], causal=True, rope=True,
               params=lambda: pp(8, 2, 1, 4, wo=True)))
    write("gpt_oss", "gpt-oss-style attention: sinks, sliding window, grouped-query heads",
          "Each of the 4 query heads has a learned sink logit that joins every row's "
          "softmax without a value, so the weights of a row sum to less than 1 (the "
          "sink takes the rest); a window [3, 0] with causal, 2 key/value heads. "
          "Look at: --weights for row sums below 1 (more so where the scores are low "
          "against the sink), --trace for the sink's share of each row.",
          "gpt-oss (OpenAI, 2025): sinks concatenated to the scores before the softmax; "
          "weights drawn from a fixed seed",
          dict(X=lambda: r(8, 8), labels=TOKENS, heads=4, kv_heads=2, causal=True,
               window=[3, 0], sinks=[0.5, 1.5, -0.5, 2.5], rope={"theta": 150000.0},
               params=lambda: pp(8, 4, 2, 2, wo=True)))
    write("bloom_alibi", "BLOOM-style attention: ALiBi instead of position embeddings",
          "No position embedding at all: each head h adds -m_h·|i - j| to its scores, "
          "with the ALiBi paper's slopes m = 1/4, 1/16, 1/64, 1/256 for 4 heads, and a "
          "causal mask. Look at: --trace for each head's bias matrix; the first head "
          "(steepest slope) looks mostly at recent tokens, the last almost uniformly.",
          "Press, Smith and Lewis, Train Short, Test Long (ALiBi), ICLR 2022; BLOOM "
          "(BigScience, 2022); weights drawn from a fixed seed",
          dict(X=lambda: r(8, 8), labels=TOKENS, heads=4, alibi=True, causal=True,
               params=lambda: pp(8, 4, 4, 2, wo=True)))
    write("rope_relative", "RoPE depends on relative positions only",
          "The same 6 queries and keys with every position shifted by 1000 "
          "(q_offset = k_offset = 1000). RoPE turns query i by (1000 + i)·ω and key j "
          "by (1000 + j)·ω, and a dot product of two turned vectors depends only on "
          "the difference of the angles, (i - j)·ω: the scores, weights and output "
          "equal those at offset 0. The expected block holds the offset-0 numbers, so "
          "--check proves it; --rope-offset 0,0 gives them too.",
          "Su et al., RoFormer: Enhanced Transformer with Rotary Position Embedding, 2021",
          dict(X=lambda: r(6, 4), labels=TOKENS[:6],
               rope={"theta": 10000.0, "q_offset": 1000, "k_offset": 1000}))


if __name__ == "__main__":
    main()
