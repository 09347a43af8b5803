// JSON traces: every step with its name, formula, shape and full-precision
// values, for notebooks and other tools.
#include "attn/escape.h"
#include "attn/output.h"
#include "attn/trace.h"
#include "trace/cells.h"

namespace attn::detail {

namespace {

void append_matrix(std::string& out, const MatrixR& m) {
  Tensor<double> t({m.rows(), m.cols()}, Values<double>(m.data(), m.data() + m.size()));
  append_json_tensor(out, t, DType::kF64, 4);
}

void append_strings(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_string(v[i]);
  out += ']';
}

}  // namespace

std::string json_trace(const Problem& p, const std::vector<TraceStep>& steps,
                       const TraceOptions& o) {
  std::string out = "{\n  \"title\": " + json_string(p.title) + ",\n";
  out += "  \"description\": " + json_string(p.description) + ",\n";
  out += "  \"source\": " + json_string(p.source_text) + ",\n";
  out += "  \"run\": " + json_string(describe_run(p)) + ",\n";
  out += "  \"shapes\": " + json_string(input_shapes(p) + " -> output " + output_shape(p)) + ",\n";
  if (!o.showing.empty()) out += "  \"showing\": " + json_string(o.showing) + ",\n";
  out += "  \"steps\": [";
  int n = 0;
  for (const TraceStep& s : steps) {
    out += n ? ",\n    {" : "\n    {";
    ++n;
    // The numbers of formulas and notes (scale factors) with every digit.
    const StepWords w = step_words(s, -1);
    out += "\"index\": " + std::to_string(n) + ", \"id\": " + json_string(name(s)) +
           ", \"title\": " + json_string(w.title) + ", \"formula\": " + json_string(w.formula);
    out += ", \"batch\": " + (s.batch >= 0 ? std::to_string(s.batch) : std::string("null"));
    out += ", \"head\": " + (s.head >= 0 ? std::to_string(s.head) : std::string("null"));
    out += ", \"shape\": [" + std::to_string(s.values.rows()) + ", " +
           std::to_string(s.values.cols()) + "]";
    if (!w.note.empty()) out += ", \"note\": " + json_string(w.note);
    out += ",\n     \"row_labels\": ";
    append_strings(out, s.row_labels);
    out += ", \"col_labels\": ";
    append_strings(out, s.col_labels);
    out += ",\n     \"values\": ";
    append_matrix(out, s.values);
    if (!s.masked.empty()) {
      out += ",\n     \"masked\": [";
      for (int64_t i = 0; i < s.values.rows(); ++i) {
        out += i ? ", [" : "[";
        for (int64_t j = 0; j < s.values.cols(); ++j) {
          out += (j ? ", " : "");
          out += s.masked[static_cast<size_t>(i * s.values.cols() + j)] ? "true" : "false";
        }
        out += "]";
      }
      out += "]";
    }
    if (s.id == StepId::kWeightedSum) {
      out += ",\n     \"weights\": ";
      append_matrix(out, s.weights);
      out += ",\n     \"value_rows\": ";
      append_matrix(out, s.value_rows);
      out += ", \"value_labels\": ";
      append_strings(out, s.value_labels);
    }
    out += "}";
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace attn::detail
