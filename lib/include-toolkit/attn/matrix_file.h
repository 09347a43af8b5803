// Matrix files: one tensor per file, in JSON (a nested array), CSV/TSV/text
// or NumPy .npy, chosen by extension (or by content for stdin and unknown
// extensions), or one tensor of a file that holds many: FILE.safetensors:NAME,
// FILE.npz:NAME and FILE.gguf:NAME (the name may be left out when the file
// holds one).
// Used by the matrix flags (--x, --mask, ...), the main input when it is not
// a JSON document, and --weights-out. Each format is a row of one registry
// (lib/src/io/formats.h); these functions ask it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/file_io.h"
#include "attn/json_tensor.h"
#include "attn/npz.h"
#include "attn/options.h"
#include "attn/progress.h"
#include "attn/safetensors.h"
#include "attn/tensor.h"

namespace attn {

// MatrixFormat, the tensor file formats (one row each of the format
// registry), is in attn/tensor.h, where TensorOrigin names them too.

// The format of a file: by extension (.json, .csv/.tsv/.txt/.dat, .npy,
// .safetensors, .npz, .gguf), otherwise by its first bytes.
MatrixFormat matrix_format(const std::string& path, std::string_view text);

struct MatrixData {
  Tensor<double> values;
  std::vector<std::string> row_labels;     // CSV label column
  std::vector<std::string> column_labels;  // CSV header
  // A binary file's float dtype narrower than float64 ("f32", "f16",
  // "bf16"; "" otherwise): what a check's default tolerance allows for.
  std::string stored;
  // The file and tensor it was read from; none for stdin, a pipe or a
  // device, which cannot be read again.
  std::optional<TensorOrigin> origin;
};

// A path with a tensor chosen in it: "m.safetensors:model.layers.0.w" is
// {"m.safetensors", "model.layers.0.w"}; a path without one (or a file
// whose own name has the colon) has an empty tensor. `file`, when set, is
// the file already open (a document's reference, opened inside the
// document's directory): readers read it, and name it by `path`.
struct TensorReference {
  std::string path;
  std::string tensor;
  std::optional<OpenedFile> file = std::nullopt;
};
TensorReference split_tensor_reference(const std::string& spec);

// The tensor a reference names in an open safetensors file: NAME, or the
// file's only tensor when no name is given; a file of several without a
// name is a usage error listing them.
const SafetensorsEntry& pick_tensor(const SafetensorsFile& f, const TensorReference& ref);
// The same for an .npz archive: the array's name.
std::string pick_member(const NpzArchive& a, const TensorReference& ref);

// True when a path (with or without :NAME) names a .safetensors, .npz or
// .gguf file.
bool is_multi_tensor_file(const std::string& spec);

// An input error for a PyTorch pickle (.pt, .pth, .ckpt, .pkl, .bin),
// which attn never unpickles, with the one-line conversion; nothing for
// other files.
void refuse_pickle(const std::string& path);

// Reads one matrix from a path, "-" or a FILE:NAME reference, within
// max_bytes (a whole text file, or the chosen tensor's bytes) and, for the
// binary formats, max_elements cells (checked from the header: a .npy file
// is memory-mapped, not read, until its size is known to fit).
MatrixData read_matrix(const std::string& spec, CellKind kind, const ProgressFn& progress,
                       int64_t max_bytes, int64_t max_elements = kDefaultMaxElements);
// The same for a reference already split: ref.path is opened as it is,
// never split again at a colon (or ref.file read, when it is open).
MatrixData read_matrix(const TensorReference& ref, CellKind kind, const ProgressFn& progress,
                       int64_t max_bytes, int64_t max_elements = kDefaultMaxElements);

// Parses a matrix file's text. `path` names it in messages ("-" = stdin).
// A .npy file's cells are checked against max_elements from its header.
MatrixData parse_matrix(std::string_view text, const std::string& path, CellKind kind,
                        int64_t max_elements = kDefaultMaxElements);

// A tensor as the contents of a file in the format of `path`'s extension
// (JSON unless it ends in .csv/.tsv/.txt/.dat or .npy; npy is binary,
// float64 or float32 by dtype).
std::string format_matrix_file(const Tensor<double>& t, DType dtype, const std::string& path);

}  // namespace attn
