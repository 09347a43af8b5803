// JSON traces: every step with its name, formula, shape and full-precision
// values, for notebooks and other tools.
#include "attn/output.h"
#include "attn/trace.h"
#include "io/json_writer.h"
#include "trace/cells.h"

namespace attn::detail {

namespace {

void write_matrix(JsonWriter& w, const MatrixR& m) {
  Tensor<double> t({m.rows(), m.cols()}, Values<double>(m.data(), m.data() + m.size()));
  write_json_tensor(w, t, DType::kF64);
}

// A batch or head index; -1 (the step has none) is null.
void write_index(JsonWriter& w, int64_t i) {
  if (i >= 0) {
    w.integer(i);
  } else {
    w.null();
  }
}

}  // namespace

std::string json_trace(const Problem& p, const std::vector<TraceStep>& steps,
                       const TraceOptions& o) {
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kBlock);
  w.key("title").string(p.title);
  w.key("description").string(p.description);
  w.key("source").string(p.source_text);
  w.key("run").string(describe_run(p));
  w.key("shapes").string(input_shapes(p) + " -> output " + output_shape(p));
  if (!o.showing.empty()) w.key("showing").string(o.showing);
  w.key("steps").begin_array(JsonLayout::kBlock);
  int n = 0;
  for (const TraceStep& s : steps) {
    // One step an entry, its labels and numbers on lines of their own.
    w.begin_object(JsonLayout::kInline);
    // The numbers of formulas and notes (scale factors) with every digit.
    const StepWords words = step_words(s, -1);
    w.key("index").integer(++n).key("id").string(name(s));
    w.key("title").string(words.title).key("formula").string(words.formula);
    write_index(w.key("batch"), s.batch);
    write_index(w.key("head"), s.head);
    w.key("shape").begin_array(JsonLayout::kInline);
    w.integer(s.values.rows()).integer(s.values.cols()).end_array();
    if (!words.note.empty()) w.key("note").string(words.note);
    w.wrap().key("row_labels").strings(s.row_labels);
    w.key("col_labels").strings(s.col_labels);
    write_matrix(w.wrap().key("values"), s.values);
    if (!s.masked.empty()) {
      w.wrap().key("masked").begin_array(JsonLayout::kInline);
      for (int64_t i = 0; i < s.values.rows(); ++i) {
        w.begin_array(JsonLayout::kInline);
        for (int64_t j = 0; j < s.values.cols(); ++j) {
          w.boolean(s.masked[static_cast<size_t>(i * s.values.cols() + j)] != 0);
        }
        w.end_array();
      }
      w.end_array();
    }
    if (s.id == StepId::kWeightedSum) {
      write_matrix(w.wrap().key("weights"), s.weights);
      write_matrix(w.wrap().key("value_rows"), s.value_rows);
      w.key("value_labels").strings(s.value_labels);
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
  return out;
}

}  // namespace attn::detail
