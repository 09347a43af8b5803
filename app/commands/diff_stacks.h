// `attn diff A B` of two stacks of a model's weights without --layer:
// every layer and head compared at once (attn/analysis.h compare_heads):
// the largest |B − A| and the mean Jensen–Shannon divergence of the rows,
// as [layer][head]; two sentences of different lengths on the tokens they
// share, aligned as difflib aligns them, the others named.
#pragma once

#include <string>

#include "commands/diff_command.h"
#include "commands/matrix_input.h"

namespace attn {

struct StackSide {
  const std::string& name;  // as messages name it
  const MatrixInput& m;     // [layers][batch][heads][q][k], with its labels when a result
};

// Returns 0, or 1 when --tolerance is given and the largest |B − A| is above it.
int diff_stacks(const DiffRequest& req, const StackSide& a, const StackSide& b, Console& console);

}  // namespace attn
