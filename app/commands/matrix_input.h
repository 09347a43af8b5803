// The matrix a command draws or compares, read from a file as `attn heatmap`
// and `attn diff` take it: a JSON array or a member of an attn result
// document (with the document's labels), a CSV or .npy matrix, or a tensor
// of FILE.npz:NAME or FILE.safetensors:NAME.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/binary_array.h"
#include "attn/progress.h"
#include "attn/tensor.h"

namespace attn {

struct MatrixInput {
  Tensor<double> values;
  std::vector<std::string> row_labels, col_labels;
  std::string key;  // the member of a JSON document read ("weights"); "" otherwise
  // What an attn result says of its figure: its title, settings line, the
  // axes of its weights ("batch", "heads", "queries", "keys") and which
  // weights are masked (same shape, 1 = masked); empty when it does not.
  std::string title, settings;
  std::vector<std::string> axes;
  std::vector<uint8_t> masked;
};

// A binary array (.npy, FILE.npz:NAME, FILE.safetensors:NAME) as it lies in
// the file, not read yet; nullopt for text inputs.
std::optional<BinaryArray> view_binary_matrix(const std::string& spec, int64_t max_input_bytes);

// A binary array's numbers, after checking they fit in max_input_bytes and
// max_elements (before anything is allocated).
Tensor<double> read_binary_matrix(const BinaryArray& a, const std::string& name,
                                  int64_t max_input_bytes, int64_t max_elements);

// An attn result saved with -o FILE.npz (it has "settings" and "output"
// members): the member `key` (or the one named FILE.npz:NAME; default
// "weights", else "output") with the labels, title, settings, axes and
// masked cells, as read_text_matrix reads a JSON result. nullopt for any
// other input, .npz archives that are not results included.
std::optional<MatrixInput> read_npz_result(const std::string& spec, const std::string& key,
                                           int64_t max_input_bytes, int64_t max_elements);

// A model's stack saved with attn run --layer all -o FILE.npz (members
// weights, tokens, ids, ...): the reference of its weights (FILE.npz:weights)
// and its tokens, which label the queries and keys. nullopt for any other
// input.
struct NpzStack {
  std::string weights;
  std::vector<std::string> tokens;
};
std::optional<NpzStack> read_npz_stack(const std::string& spec, int64_t max_input_bytes);

// A text input ("-" is stdin): a JSON array, the member `key` of a JSON
// object (default "weights", else "output"; an attn result's "labels" name
// its rows and, for weights and scores, its columns), or a CSV matrix with
// its labels. `name` names the input in messages. JSON arrays may have
// rank 1 to max_rank (5 for stacks of attention weights).
MatrixInput read_text_matrix(const std::string& path, const std::string& key,
                             const std::string& name, int64_t max_input_bytes,
                             ProgressSink* progress, int max_rank = 4);

}  // namespace attn
