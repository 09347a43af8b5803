// Fuzz entry points: one function per input format that runs exactly what
// `attn run FILE` runs on such a file, up to and including the shape checks
// of build_problem and the memory limits (check_limits), then (for small
// problems only) computes, checks against `expected` and formats the result
// or emits the PyTorch program. The libFuzzer targets and the replay
// test in the normal suite call these same functions, so a reproducer
// behaves identically in both.
//
// attn::Error is the expected outcome for bad input and is swallowed; any
// other exception, a crash or a sanitizer report is a finding.
#pragma once

#include <string_view>

namespace attn::fuzz {

// A JSON input document (`attn run in.json`).
void json_document(std::string_view data);

// A CSV/TSV/text matrix taken as the X of a self-attention run
// (`attn run in.csv`).
void csv_matrix(std::string_view data);

// A NumPy .npy matrix taken as X (`attn run in.npy`).
void npy_matrix(std::string_view data);

// Arbitrary bytes as a title and labels, through every function of
// attn/escape.h and every writer (escape_entry.cc). Unlike the readers'
// entry points it checks what comes out: an output that does not decode
// back, or breaks a rule of its language, throws std::logic_error.
void escape_text(std::string_view data);

// Arbitrary words, one a line, as the arguments of the whole program
// (`attn WORD...`), run in a scratch directory with a few small inputs
// (flags_entry.cc). Exit 70, an internal error, throws std::logic_error.
void flag_words(std::string_view data);

// The bytes of a binary file (binary_entry.cc): an .npz archive when they
// start with "PK", a safetensors file otherwise, and both for one input in
// four. Every tensor and member is read within 1 MiB. Like escape_text it
// checks what the readers accept: a safetensors file whose tensors do not
// tile its data, or a view outside the bytes it came from, throws
// std::logic_error.
void binary_archive(std::string_view data);

// One of the two readers alone, whatever the bytes start with: the
// targets fuzz_safetensors and fuzz_npz, each with a corpus of its format.
void safetensors_file(std::string_view data);
void npz_archive(std::string_view data);

// A checkpoint's config.json (config_entry.cc), read through the
// architecture table beside the weights of a tiny checkpoint of its
// model_type, then one layer's attention and the forward pass on three
// token ids where the config passes.
void checkpoint_config(std::string_view data);

// A GGUF file (gguf_entry.cc): its metadata read through every accessor
// and its tensors (the first 64) viewed and read within 1 MiB, checked as
// binary_archive checks what its readers accept.
void gguf_file(std::string_view data);

// A tokenizer.json, then a NUL byte and a text (tokenizer_entry.cc): the
// file read and the text encoded with and without special tokens, each
// token made readable as `attn tokenize` shows it. A count of ids other
// than of tokens, or a readable token that is not UTF-8, throws
// std::logic_error.
void tokenizer_text(std::string_view data);

}  // namespace attn::fuzz
