// Observers: the engine reports each step of a computation (projections,
// scores, scaling, masking, softmax parts, weighted sums, output) to an
// Observer. Traces are written from these reports, so they show exactly what
// was computed and cannot drift from the engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/problem.h"

namespace attn {

struct TraceStep {
  std::string id;               // stable identifier: "scores", "scaled", "weights", ...
  std::string title;            // human title: "Scores Q·Kᵀ"
  std::string formula;          // "S = Q·Kᵀ"
  int64_t batch = -1;           // -1: not per batch
  int64_t head = -1;            // -1: not per head
  MatrixR values;               // the numbers (rows x cols); empty for text-only steps
  std::vector<uint8_t> masked;  // optional: one flag per value, 1 = masked cell
  std::vector<std::string> row_labels, col_labels;
  std::string note;  // one line of explanation ("factor 1/√4 = {0}")
  // The numbers "{0}", "{1}", ... of formula and note stand for: the trace
  // writers print them with the trace's precision (all digits in JSON).
  std::vector<double> numbers;
  // For the weighted sum: weights (rows x keys) and the value rows; the
  // trace writes out row i as sum_j w_ij · v_j.
  MatrixR weights, value_rows;
  std::vector<std::string> value_labels;
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void step(const TraceStep& step) = 0;
};

}  // namespace attn
