#!/usr/bin/python3
"""Write a tokenizer.json beside each tiny model, so that
``attn run --checkpoint data/models/tiny-llama --text "The cat sat on the mat"``
goes from a sentence to the model's attention.

Each file has the structure of its family's real tokenizer.json (Llama's
Metaspace and <s> template, GPT-2's byte-level pre-tokenizer, BERT's
normalizer, pre-tokenizer, WordPiece and [CLS]/[SEP]) over the tiny
model's vocabulary of 40 ids: the seven tokens of its reference sentence
(tokens.json, ids.json, written by make_tiny_models.py) at their ids, and
placeholders for the others. Run with ``python3 data/models/make_tiny_tokenizers.py``
(standard library only); output is byte-identical from run to run.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 40


def read(name, what):
    with open(os.path.join(HERE, name, what), encoding="utf-8") as f:
        return json.load(f)


def vocab_of(name, extra):
    """The model's tokens at their ids, the given extra ones, placeholders."""
    vocab = dict(zip(read(name, "tokens.json"), read(name, "ids.json")))
    vocab.update(extra)
    taken = set(vocab.values())
    for i in range(VOCAB):
        if i not in taken:
            vocab[f"<unused{i}>"] = i
    return dict(sorted(vocab.items(), key=lambda kv: kv[1]))


def added(content, i):
    return {"id": i, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


def write(name, tokenizer):
    with open(os.path.join(HERE, name, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    llama = vocab_of("tiny-llama", {"<unk>": 0})
    write("tiny-llama", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added("<unk>", 0), added("<s>", 1)],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                    "split": True},
        "model": {"type": "WordLevel", "vocab": llama, "unk_token": "<unk>"},
    })
    gemma = vocab_of("tiny-gemma2", {"<pad>": 0, "<eos>": 1})
    write("tiny-gemma2", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added("<pad>", 0), added("<eos>", 1), added("<bos>", 2)],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<bos>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                    "split": True},
        "model": {"type": "WordLevel", "vocab": gemma, "unk_token": "<pad>"},
    })
    gpt2 = vocab_of("tiny-gpt2", {"<|endoftext|>": 0})
    write("tiny-gpt2", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added("<|endoftext|>", 0)],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "WordLevel", "vocab": gpt2, "unk_token": "<|endoftext|>"},
    })
    bert = vocab_of("tiny-bert", {"[PAD]": 0, "[UNK]": 1})
    write("tiny-bert", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added("[PAD]", 0), added("[UNK]", 1), added("[CLS]", 2),
                         added("[SEP]", 3)],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": bert},
    })


if __name__ == "__main__":
    main()
