// Helpers shared by the tests: building problems from JSON text, running
// the real attn binary, temporary files.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/error.h"
#include "attn/observer.h"
#include "attn/problem.h"

namespace attn::test {

// Parses and validates a document given as JSON text (source "t.json").
Problem problem(const std::string& json);

// The step kind of a trace step's name ("scores"); throws when no step
// has that name, so a misspelt name fails its test.
StepId step_id(const std::string& name);

// Computes a document with weights kept.
Result compute_json(const std::string& json, bool weights = true);

// The message of the attn::Error thrown by f, or "" if none was thrown.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The message of building a problem from json ("" if it is valid).
std::string problem_error(const std::string& json);

struct Run {
  int code = -1;
  std::string out, err;
};

// Single-quoted for /bin/sh.
std::string quote(const std::string& s);

// Runs a /bin/sh command line whose stdout and stderr go to the files
// `out` and `err`, and returns its exit code (128 + signal) and both texts.
Run run_redirected(const std::string& command, const std::string& out, const std::string& err);

// Runs the attn binary with arguments (each passed verbatim), optional
// stdin text and extra environment assignments ("NO_COLOR=1").
// `wrapper` is a command put in front of attn (e.g. setpriv ...).
Run run_attn(const std::vector<std::string>& args, const std::string& stdin_text = "",
             const std::vector<std::string>& env = {},
             const std::vector<std::string>& wrapper = {});

// A fresh temporary directory, removed at exit of the test binary.
std::string temp_dir();
// Writes text to dir/name and returns the path.
std::string write_temp(const std::string& name, const std::string& text);

// A JSON result without its "settings" line: for comparing the numbers of
// two runs whose settings are written differently but mean the same.
std::string without_settings(const std::string& json);
std::string read_text(const std::string& path);

// U+FFFD, the replacement character, in UTF-8.
inline const std::string kFffd = "\xEF\xBF\xBD";

// Path of a file in the source tree (data/..., tests/...).
std::string source_path(const std::string& rel);

// A safetensors file `name` in the temporary directory holding one float64
// tensor "w" of n cells; returns its path.
std::string write_safetensors(const std::string& name, int64_t n);

void expect_near_all(const Tensor<double>& got, const std::vector<double>& want, double tol);

// The largest |a - b| over the elements (the shapes are expected equal).
double max_diff(const Tensor<double>& a, const Tensor<double>& b);

// A path under data/models/ of the source tree ("tiny-llama/config.json").
std::string model(const std::string& rel);

// A safetensors file in memory from (name, dtype, shape, bytes) entries.
struct Piece {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};
std::string safetensors_bytes(const std::vector<Piece>& pieces, const std::string& meta = "");

// A copy of the checkpoint directory `from` (its config.json and
// model.safetensors) as `name` in the test's temporary directory, its
// tensors changed by `change`, and `config` (when not empty) as its
// config.json. Returns the new directory.
std::string changed_checkpoint(const std::string& from, const std::string& name,
                               const std::function<void(std::vector<Piece>&)>& change,
                               const std::string& config = "");

// An .npy file's values, of rank up to max_rank (a model's stacks are 5-D).
Tensor<double> load_npy(const std::string& path, int max_rank = 5);

// Whether x is well-formed XML as far as SVG writers go: tags nest and
// close, attributes are quoted, and the only entities are the five of XML.
// *why names the first problem.
bool well_formed_xml(const std::string& x, std::string* why);

// A fenced code block of a Markdown text: its language, its text, the line
// of its opening fence (1-based), and whether an "<!-- not run" comment
// stands before it.
struct CodeBlock {
  std::string lang, text;
  int line = 0;
  bool skip = false;
};
std::vector<CodeBlock> code_blocks(const std::string& markdown);

}  // namespace attn::test
