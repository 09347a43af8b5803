// --emit-pytorch: a short, runnable Python program that recomputes a run
// with PyTorch (float64) and prints {"output": ..., "weights": ...} as
// `attn run --format json --weights` does, so attn can be cross-checked in
// one paste. Runs shaped like nn.MultiheadAttention use it (weights copied
// in); everything else is written with torch.nn.functional operations.
// Large tensors read from files are loaded from them (with NumPy), small
// ones written out, so the program stays short next to a checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/problem.h"

namespace attn {

// Tensors of at least this many values that the run read from a file
// (p.origins) are loaded from that file by the program; smaller ones, and
// every tensor written in the document or computed, are written out.
constexpr int64_t kLoadFromFiles = 4096;

// The program for p. `command` is quoted in its docstring. The program
// reports the weights averaged over heads when average_heads is set.
// `load_from` is the size from which tensors are loaded (tests lower it);
// `dtype` the precision the program computes in (the run's --dtype).
std::string emit_pytorch(const Problem& p, const std::string& command, bool average_heads,
                         int64_t load_from = kLoadFromFiles, DType dtype = DType::kF64);

// A checkpoint's layer run from token ids, as --emit-pytorch writes it:
// transformers loads `checkpoint` (a directory) in eager attention and
// `dtype`, runs it on `ids` with output_attentions=True and compares layer
// `layer`'s weights with attn's, in the .npy `numbers` (a path relative to
// the program's directory). Every string is a Python literal.
struct ModelProgram {
  std::string command, checkpoint, numbers;
  std::vector<int64_t> ids;
  int64_t layer = 0;
  DType dtype = DType::kF64;
};
std::string emit_pytorch_model(const ModelProgram& m);

}  // namespace attn
