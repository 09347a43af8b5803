// Input documents: the JSON object of docs/spec.md read into typed fields, each
// tensor with the place it came from (for messages). Every key is checked
// here: unknown keys, wrong types and out-of-range settings are reported with
// the JSON path. Shapes are checked later, when the Problem is built.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/json.h"
#include "attn/json_tensor.h"
#include "attn/options.h"
#include "attn/tensor.h"

namespace attn {

// A tensor read from a document or a file, with its place for messages:
// "in.json: X", "x.csv", and the file it came from (none when its numbers
// were written in the document or computed).
struct Input {
  Tensor<double> tensor;
  std::string place;
  std::optional<TensorOrigin> origin = std::nullopt;
};

struct NamedInput {
  std::string name;  // e.g. "W_q"
  Input input;
};

struct LabelSet {
  std::vector<std::string> queries;
  std::vector<std::string> keys;
  bool shared = false;  // given as one list (for queries and keys alike)
  std::string place;
};

struct Expected {
  std::optional<Input> output;
  std::optional<Input> weights;
  std::optional<double> tolerance;
  // NumPy's allclose rule, |got − expected| ≤ atol + rtol·|expected|, when
  // either is given (--rtol, --atol); the other takes its default.
  std::optional<double> rtol, atol;
  std::string stored;  // stored as "f32", "f16" or "bf16" ("": float64 or text)
  std::string place;
};

struct InputDocument {
  std::string source;  // names the document in messages: a path, "<stdin>", "example sweet"
  std::optional<Input> X, Y, Q, K, V;
  std::vector<NamedInput> params;  // in document order
  RunSettings settings;
  std::string settings_place;             // where settings came from, for messages
  std::optional<Input> mask;              // 0/1 cells
  std::optional<Input> key_padding_mask;  // 0/1 cells
  std::optional<Input> valid_lens;        // non-negative integers
  std::optional<Input> attn_bias;         // may hold -inf
  std::optional<LabelSet> labels;
  std::string title, description, source_text;
  std::optional<Expected> expected;
  std::vector<std::string> files;  // the tensor files the document named, as read
};

// The accepted top-level keys and params keys, in documentation order.
const std::vector<std::string>& document_keys();
const std::vector<std::string>& param_keys();

// Reads the tensor a document names by a string where it would hold the
// numbers ("W_q": "w.npy", "K": "kv.safetensors:k"): given the reference,
// the place for messages and how the cells are checked, the tensor and
// its origin (the document sets the place). The caller decides which files
// a document may name (attn run: files in the document's directory).
using TensorFileReader =
    std::function<Input(const std::string& reference, const std::string& place, CellKind kind)>;

// Reads a document from JSON text. Throws attn::Error (kInput); a file
// reference without a `files` reader is an input error.
InputDocument read_document(std::string_view text, const std::string& source,
                            const TensorFileReader& files = {});

// Reads a document from an already parsed JSON value.
InputDocument document_from_json(const json::Value& root, const std::string& source,
                                 const TensorFileReader& files = {});

// Range checks shared by documents and flags; nullopt when the value is fine,
// otherwise the complaint ("must be > 0, got -1").
std::optional<std::string> check_scale(const Scale& s);
std::optional<std::string> check_temperature(double t);
std::optional<std::string> check_mask_fill(double f);
std::optional<std::string> check_dropout(double p);
std::optional<std::string> check_heads(double h);
std::optional<std::string> check_softcap(double c);
std::optional<std::string> check_rope_theta(double t);
std::optional<std::string> check_count(double n);
// One side of a sliding window: in a [left, right] pair -1 means unbounded.
std::optional<std::string> check_window_side(double w, bool pair);

}  // namespace attn
