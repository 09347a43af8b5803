#!/usr/bin/env python3
"""Times `attn tokenize` on hostile tokenizer.json files and texts.

    python3 bench/tokenizer_hostile.py [--attn build/attn] [--keep DIR] [--no-big]

Each case is a file and a text that cost hours or gigabytes before the
tokenizer's limits (docs/tokenizers.md, "Limits"); the table there was made
with this script, once with attn before the limits and once after. Each
case runs under /usr/bin/time -v, with a 300 s timeout and no more than
12 GB of address space, and prints its wall time, peak RSS, exit status and
the first line of what attn said. --no-big leaves out the vocabularies of
4 and 14.5 million tokens (130 MB of JSON, a minute to write).
"""
import argparse
import json
import os
import re
import resource
import string
import subprocess
import sys
import tempfile


def word_level(vocab, **parts):
    d = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
         "post_processor": None, "decoder": None,
         "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}}
    d.update(parts)
    return d


def split(pattern):
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


def added(i, content, lstrip=False):
    return {"id": i, "content": content, "single_word": False, "lstrip": lstrip, "rstrip": False,
            "normalized": False, "special": True}


def vocabulary(path, n):
    """A WordLevel file of n short distinct tokens, all of id 0."""
    alphabet = string.ascii_letters + string.digits
    with open(path, "w") as f:
        f.write('{"model": {"type": "WordLevel", "unk_token": null, "vocab": {')
        for i in range(n):
            k, j = "", i
            while True:
                k += alphabet[j % 62]
                j //= 62
                if j == 0:
                    break
            f.write(('"%s":0' if i == 0 else ',"%s":0') % k)
        f.write("}}}")


def cases(d, big):
    def dump(name, obj):
        with open(os.path.join(d, name), "w") as f:
            json.dump(obj, f, ensure_ascii=False)

    def text(name, s):
        with open(os.path.join(d, name), "w") as f:
            f.write(s)

    dump("replace30.json", word_level({"[UNK]": 0, "a": 1}, normalizer={
        "type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}] * 30}))
    text("a.txt", "a")
    yield "30 Replace a -> aa, text \"a\"", "replace30.json", "a.txt"

    vocab = {"<unk>": 0}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    dump("prefix.json", {"version": "1.0", "added_tokens": [], "normalizer": None,
                         "pre_tokenizer": None, "post_processor": None, "decoder": None,
                         "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                                   "continuing_subword_prefix": "x" * 100000,
                                   "end_of_word_suffix": None, "fuse_unk": False,
                                   "byte_fallback": True, "vocab": vocab, "merges": []}})
    text("han1000.txt", "日" * 1000)
    yield "100,000-byte continuing_subword_prefix, 1,000 x 日", "prefix.json", "han1000.txt"

    if big:
        vocabulary(os.path.join(d, "vocab14m.json"), 14_500_000)
        yield "14.5 million vocabulary tokens", "vocab14m.json", "a.txt"
        vocabulary(os.path.join(d, "vocab4m.json"), 4_194_304)
        yield "4,194,304 vocabulary tokens (the limit)", "vocab4m.json", "a.txt"

    dump("lookahead.json", word_level({"[UNK]": 0}, pre_tokenizer=split("(?=a*)b")))
    text("a100k.txt", "a" * 100_000)
    text("a1m.txt", "a" * 1_000_000)
    yield "(?=a*)b, 100,000 x a", "lookahead.json", "a100k.txt"
    yield "(?=a*)b, 1,000,000 x a", "lookahead.json", "a1m.txt"

    dump("pieces.json", word_level({"[UNK]": 0}, pre_tokenizer={
        "type": "Sequence", "pretokenizers": [split("a{14}"), split("a?" * 14 + "a{14}b")]}))
    yield "a{14} then a? x 14 a{14}b, 100,000 x a", "pieces.json", "a100k.txt"

    dump("lstrip.json", word_level({"[UNK]": 0}, added_tokens=[added(1, " ", lstrip=True)]))
    text("spaces.txt", " " * 100_000)
    yield "added token \" \" with lstrip, 100,000 spaces", "lstrip.json", "spaces.txt"

    dump("added2000.json", word_level({"[UNK]": 0}, added_tokens=[
        added(i + 1, "a" * 256 + str(i)) for i in range(2000)]))
    text("a20k.txt", "a" * 20_000)
    yield "2,000 added tokens sharing 256 characters, 20,000 x a", "added2000.json", "a20k.txt"


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (12 << 30, 12 << 30))


def run(attn, d, tokenizer, text):
    cmd = ["/usr/bin/time", "-v", "timeout", "300", attn, "tokenize", "--tokenizer",
           os.path.join(d, tokenizer), "--text-file", os.path.join(d, text), "-f", "json"]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       preexec_fn=limit_memory)
    err = p.stderr
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", err).group(1)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    said = next((line for line in err.splitlines() if line.startswith("attn:")), "")
    return wall, rss, p.returncode, said


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attn", default="build/attn")
    ap.add_argument("--keep", help="write the files here and keep them")
    ap.add_argument("--no-big", action="store_true")
    args = ap.parse_args()
    d = args.keep or tempfile.mkdtemp(prefix="attn-hostile-")
    os.makedirs(d, exist_ok=True)
    for title, tokenizer, text in cases(d, not args.no_big):
        wall, rss, code, said = run(args.attn, d, tokenizer, text)
        print(f"{title}: {wall} wall, {rss / 1024:.0f} MB peak, exit {code}"
              + (f": {said[:150]}" if said else ""))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
