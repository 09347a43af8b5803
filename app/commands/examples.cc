#include "commands/examples.h"

#include <algorithm>

#include <cmath>

#include "attn/json.h"
#include "base/number_text.h"
#include "commands/examples_data.h"
#include "kernel/dropout.h"

namespace attn {

namespace {

// Uniform numbers in [-a, a] from the project's counter-based generator,
// rounded to 4 decimals so the document stays readable and exact.
class Draw {
 public:
  explicit Draw(uint64_t seed) : seed_(seed) {}
  double next(double a) {
    const double u = dropout_uniform(seed_, counter_++);
    return std::round((2 * u - 1) * a * 1e4) / 1e4;
  }

 private:
  uint64_t seed_;
  uint64_t counter_ = 0;
};

void append_array(std::string& out, Draw& d, const std::vector<int64_t>& shape, size_t axis,
                  double a) {
  out += '[';
  for (int64_t i = 0; i < shape[axis]; ++i) {
    if (i) out += axis + 1 == shape.size() ? ", " : ",\n  ";
    if (axis + 1 == shape.size()) {
      append_shortest(out, d.next(a) + 0.0);
    } else {
      append_array(out, d, shape, axis + 1, a);
    }
  }
  out += ']';
}

std::string title_of(const std::string& text, const std::string& name) {
  try {
    json::Value doc = json::parse(text, name);
    if (const json::Value* t = doc.find("title"); t && t->is_string()) return t->as_string();
  } catch (...) {
    // A broken example is reported when it is run; the list still works.
  }
  return "";
}

}  // namespace

std::string cross_shapes_example() {
  Draw d(4);
  const double w = 1 / std::sqrt(512.0);
  std::string s =
      "{\n\"title\": \"Cross-attention shapes: 8 heads of 64 and an output projection\",\n"
      "\"description\": \"A query sequence (2,10,512) attends to a context (2,20,512) through "
      "projections W_q, W_k, W_v (512 -> 8 heads x 64), and W_o brings the concatenated heads "
      "back to 512: output (2,10,512), weights (2,8,10,20). The numbers are made up: inputs "
      "uniform in [-1, 1], weights uniform in +-1/sqrt(512) as nn.Linear initializes them, drawn "
      "with attn's SplitMix64 generator (seed value 4) and rounded to 4 decimals. This is "
      "nn.MultiheadAttention(512, 8) with these weights (see --emit-pytorch).\",\n"
      "\"source\": \"a PyTorch cross-attention tutorial (a CrossAttention module with query "
      "(2,10,512), context (2,20,512) and 8 heads of 64)\",\n"
      "\"mode\": \"cross\",\n\"heads\": 8,\n\"X\": ";
  append_array(s, d, {2, 10, 512}, 0, 1.0);
  s += ",\n\"Y\": ";
  append_array(s, d, {2, 20, 512}, 0, 1.0);
  s += ",\n\"params\": {";
  const char* names[] = {"W_q", "W_k", "W_v", "W_o"};
  for (int i = 0; i < 4; ++i) {
    s += std::string(i ? ",\n" : "\n") + "\"" + names[i] + "\": ";
    append_array(s, d, {512, 512}, 0, w);
    s += ",\n\"b_" + std::string(names[i] + 2) + "\": ";
    append_array(s, d, {512}, 0, w);
  }
  s += "}\n}\n";
  return s;
}

const std::vector<Example>& examples() {
  static const std::vector<Example> all = [] {
    std::vector<Example> v;
    for (size_t i = 0; i < detail::kExampleCount; ++i) {
      const std::string text = detail::kExamples[i].text;
      const std::string name = detail::kExamples[i].name;
      v.push_back(Example{name, title_of(text, name), [text] { return text; }});
    }
    v.push_back(Example{"cross_shapes",
                        "Cross-attention shapes: 8 heads of 64 and an output projection "
                        "(weights drawn from a fixed random seed)",
                        cross_shapes_example});
    std::sort(v.begin(), v.end(),
              [](const Example& a, const Example& b) { return a.name < b.name; });
    return v;
  }();
  return all;
}

const Example* find_example(std::string_view name) {
  for (const Example& e : examples()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const Example& e : examples()) names.push_back(e.name);
  return names;
}

}  // namespace attn
