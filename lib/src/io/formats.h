// The tensor file formats, one row each: its name, its extensions, how its
// first bytes are recognised, how it is read (parsed from bytes, or
// memory-mapped from a path), whether it holds named tensors (FILE:NAME),
// and what attn writes in it. Every command asks these rows which format
// a path or a stream is, how to read it, which formats a directory batch
// takes and which can be an output; a new format is a reader, a row in
// formats.cc and a fuzz target (docs/architecture.md).
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/binary_array.h"
#include "attn/matrix_file.h"
#include "attn/progress.h"
#include "attn/tensor.h"

namespace attn {

// What `-o FILE` writes of a run's result in a format, when FILE ends in
// the format's own extension.
enum class ResultFile {
  kNone,         // nothing: the format is no result file (-o refuses it)
  kText,         // the result as --format NAME writes it (the format's name)
  kOutputArray,  // the output tensor alone
  kArchive,      // every part of the result as a named array
};

struct TensorFormat {
  MatrixFormat id;
  const char* name;   // "csv": also --format's word when result is kText
  const char* title;  // in messages: "CSV", ".npy"
  // Its own extension (without the dot): the one attn writes, -o goes by
  // and a directory batch takes.
  const char* extension;
  // Further extensions read (and written) as this format; -o and a
  // directory batch leave them alone (a .txt there is as often a note).
  std::vector<const char*> also;
  // True when a file's first bytes are this format's; nullptr: known by
  // its extension alone. What no row claims is read as a text matrix.
  bool (*sniff)(std::string_view head);
  // Reads a whole file's bytes (`path` names it in messages; "-" is
  // stdin); nullptr for archives, which are only opened from a path.
  MatrixData (*parse)(std::string_view bytes, const std::string& path, CellKind kind,
                      int64_t max_elements);
  // Reads a file (never "-") memory-mapped, its header checked before a
  // page of data is read: the tensor ref.tensor names in an archive (or its
  // only one). max_bytes bounds the tensor's bytes (a .npy file's: all of
  // them, header included). nullptr: the file is read whole and parsed.
  MatrixData (*read_mapped)(const TensorReference& ref, CellKind kind, const ProgressFn& progress,
                            int64_t max_bytes, int64_t max_elements);
  // The tensor as it lies in the mapped file, not read yet: how attn
  // heatmap and attn diff take a stack of attention weights. A .npy array
  // (alone or in an archive) is refused above max_rank. nullptr for text
  // formats.
  BinaryArray (*view)(const TensorReference& ref, int64_t max_bytes, int max_rank);
  bool multi_tensor;  // holds named tensors, taken as FILE.ext:NAME
  // The file of one tensor (--weights-out): float64, or float32 for f32
  // where the format stores binary numbers. nullptr: attn does not write
  // a tensor in this format.
  std::string (*write)(const Tensor<double>& t, DType dtype);
  ResultFile result;
};

// Every row, in the order of MatrixFormat.
const std::vector<TensorFormat>& tensor_formats();
const TensorFormat& tensor_format(MatrixFormat id);

// The row one of whose extensions `path` ends in (case-insensitive);
// nullptr when none does.
const TensorFormat* format_by_extension(const std::string& path);
// True when `path`'s extension is one of format `id`'s.
bool has_format(const std::string& path, MatrixFormat id);
// The format of bytes by their content: the first row whose sniff takes
// them, else the text matrix (CSV), which takes anything.
const TensorFormat& sniff_format(std::string_view head);
// By extension, else by content.
const TensorFormat& format_of(const std::string& path, std::string_view head);
// The row that reads `spec` (a path or FILE:NAME) memory-mapped; nullptr
// for "-" and the formats read whole.
const TensorFormat* mapped_format(const std::string& spec);
// The row whose own extension `path` has, when that format is a result
// file (-o); nullptr otherwise (a table).
const TensorFormat* result_format(const std::string& path);

// The extensions a directory batch takes: the own extension of each
// format whose file is one input (not an archive of several tensors).
std::vector<std::string> batch_extensions();
// A file of several tensors named without :NAME: a usage error listing
// the first names to choose from (`what`: "tensors", "arrays").
[[noreturn]] void refuse_unnamed(const TensorReference& ref, const std::vector<std::string>& names,
                                 const char* what);

// ".json, .csv or .npy": a list for messages, joined with `last` ("or").
std::string extension_list(const std::vector<std::string>& extensions, const char* last);

}  // namespace attn
