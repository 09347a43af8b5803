// --emit-pytorch: a short, runnable Python program that recomputes a run
// with PyTorch (float64) and prints {"output": ..., "weights": ...} as
// `attn run --format json --weights` does, so attn can be cross-checked in
// one paste. Runs shaped like nn.MultiheadAttention use it (weights copied
// in); everything else is written with torch.nn.functional operations.
#pragma once

#include <string>

#include "attn/problem.h"

namespace attn {

// The program for p. `command` is quoted in its docstring. The program
// reports the weights averaged over heads when average_heads is set.
std::string emit_pytorch(const Problem& p, const std::string& command, bool average_heads);

}  // namespace attn
