// Traces: a computation written out step by step, the way a blog post or a
// lecture does it — inputs, projections, QKᵀ, the scale factor, bias and
// masks, row maxima, exponentials, row sums, weights, the weighted sum of
// each query written out, the output — in text, Markdown, LaTeX or JSON.
// The steps are those the engine reports to its Observer, as data; the
// writers word them (step_words) and format them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/observer.h"
#include "attn/problem.h"

namespace attn {

enum class TraceFormat { kText, kMarkdown, kLatex, kJson };

std::optional<TraceFormat> parse_trace_format(std::string_view s);
const std::vector<std::string>& trace_format_names();

struct TraceOptions {
  TraceFormat format = TraceFormat::kText;
  int precision = 4;   // digits after the point
  bool color = false;  // ANSI styling (text format on a terminal)
  int max_rows = 16;   // larger matrices are shown in part (not in JSON)
  int max_cols = 12;
  std::string showing;  // "batch 0, head 1": the part select_steps() kept, for the header
};

// The part of a trace to show (--batch, --head, --query); -1 is all.
struct TraceSelection {
  int64_t batch = -1, head = -1, query = -1;
  bool all() const { return batch < 0 && head < 0 && query < 0; }
};

// The steps of one batch entry and/or head: steps of the others are
// dropped. With a query, steps whose rows are queries (scores, weights,
// outputs, ...) keep only that row, under its own label or index; inputs
// keep every row, since keys and values come from them too.
std::vector<TraceStep> select_steps(std::vector<TraceStep> steps, const TraceSelection& sel);

// Collects the engine's steps.
class TraceRecorder : public Observer {
 public:
  void step(const TraceStep& s) override { steps_.push_back(s); }
  std::vector<TraceStep>& steps() { return steps_; }

 private:
  std::vector<TraceStep> steps_;
};

// A whole trace: a header describing the run (title, settings, shapes),
// then the steps in order.
std::string format_trace(const Problem& p, const std::vector<TraceStep>& steps,
                         const TraceOptions& o);

// Dot products between the rows of a [rows][cols] matrix (its Gram matrix),
// as the similarity steps of the self-attention blog post (sim(it, milk) vs sim(it, cat)).
MatrixR row_similarity(const double* rows, int64_t n, int64_t width);

// A step in words, written from its data: what every trace format says
// about it.
struct StepWords {
  std::string title;    // "Scores Q·Kᵀ"
  std::string formula;  // "S = Q·Kᵀ"
  std::string latex;    // the formula in LaTeX: "S = Q \cdot K^\top"
  // Of a formula that defines a matrix element by element ("E_ij = ..."):
  // the matrix's name in LaTeX ("E"), which names its table. Else empty.
  std::string latex_name;
  std::string note;  // one line of explanation ("factor 1/√d_k = 1/√4 = 0.5"), or empty
};

// digits: of the numbers a step computed (the scale factor), after the
// point; < 0 writes every digit.
StepWords step_words(const TraceStep& s, int digits);

}  // namespace attn
