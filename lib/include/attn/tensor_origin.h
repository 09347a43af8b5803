// Where a tensor of a run was read from: the file as the run opened it,
// the tensor within it, how its text was laid out, and what attn did to it
// after reading. --emit-pytorch loads a large tensor from there instead of
// writing out its numbers. Readers fill it in; build_problem keeps it per
// tensor of the Problem.
#pragma once

#include <cstdint>
#include <string>

#include "attn/tensor.h"

namespace attn {

struct TensorOrigin {
  enum class Format { kNpy, kNpz, kSafetensors, kCsv, kJson, kGguf };
  Format format = Format::kNpy;
  // As the run opened it: relative to the directory attn ran in, or
  // absolute. Only regular files have an origin (not stdin or a pipe).
  std::string path;
  std::string tensor;  // the .npz member, .safetensors or .gguf tensor; "" otherwise
  // CSV: the delimiter (' ': spaces and tabs), and whether a header row and
  // a label column stand before the numbers.
  char delimiter = ',';
  bool header = false, label_column = false;
  // What attn did after reading, in this order: kept columns [first_column,
  // first_column + columns) of the last axis (GPT-2's c_attn holds W_q, W_k
  // and W_v side by side; -1: every column), then added `add` to every cell
  // (Gemma 3's norm weights are 1 + w).
  int64_t first_column = 0, columns = -1;
  double add = 0;
  // The shape after those steps, the tensor's shape in the document
  // (build_problem sets it).
  Shape shape;
};

}  // namespace attn
