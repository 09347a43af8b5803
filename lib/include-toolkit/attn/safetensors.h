// safetensors files, the format Hugging Face checkpoints are saved in: an
// 8-byte little-endian header length N, N bytes of JSON naming every tensor
// ({"name": {"dtype": "F32", "shape": [4, 8], "data_offsets": [0, 128]}},
// with an optional "__metadata__" object of strings), then the tensors'
// bytes, little endian, C order. The file is memory-mapped, so opening a
// multi-GB checkpoint reads its header and reading one tensor reads that
// tensor's pages only.
//
// Every header is checked before anything is read or allocated: its length
// against the file, the JSON, each entry's dtype, shape and offsets, the
// offsets against the data (in range, not overlapping, no gaps, nothing left
// over, as the format's own library demands), and the bytes each shape
// needs. A failure is attn::Error (kInput) naming the file and the entry.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attn/binary_array.h"
#include "attn/file_io.h"
#include "attn/json_tensor.h"
#include "attn/tensor.h"

namespace attn {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // as the header says: "F32", "BF16", "I64", ...
  ElementType type = ElementType::kF32;
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte range within the data after the header
};

class SafetensorsFile {
 public:
  // Maps `path` ("-" reads stdin whole, within max_stream_bytes) and checks
  // its header.
  static SafetensorsFile open(const std::string& path,
                              int64_t max_stream_bytes = kDefaultMaxInputBytes);
  // The same from bytes already at hand; `name` names them in messages.
  static SafetensorsFile from_bytes(FileBytes bytes, const std::string& name);
  static SafetensorsFile from_bytes(std::string bytes, const std::string& name);

  const std::string& name() const { return name_; }
  // In the order of their data in the file.
  const std::vector<SafetensorsEntry>& tensors() const { return tensors_; }
  const SafetensorsEntry* find(std::string_view tensor) const;
  // The entry called `tensor`, or an input error that names the file, the
  // nearest name and how many tensors there are.
  const SafetensorsEntry& get(std::string_view tensor) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // A view of an entry's cells in the mapped bytes (nothing is copied).
  BinaryArray view(const SafetensorsEntry& e) const;
  // The entry's cells as doubles, each checked as `kind` says; the entry's
  // bytes may be at most max_bytes (--max-input-bytes) and its cells at
  // most max_elements (--max-elements), both checked first.
  Tensor<double> read(const SafetensorsEntry& e, CellKind kind,
                      int64_t max_bytes = kDefaultMaxInputBytes,
                      int64_t max_elements = kDefaultMaxElements) const;

 private:
  void parse_header();

  FileBytes bytes_;
  std::string name_;
  std::string_view data_;  // the bytes after the header
  std::vector<SafetensorsEntry> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace attn
