#include "attn/examples.h"

#include <algorithm>

#include "attn/json.h"
#include "examples_data.h"

namespace attn {

const std::vector<Example>& examples() {
  static const std::vector<Example> all = [] {
    std::vector<Example> v;
    for (size_t i = 0; i < detail::kExampleCount; ++i) {
      Example e;
      e.name = detail::kExamples[i].name;
      e.text = detail::kExamples[i].text;
      try {
        json::Value doc = json::parse(e.text, e.name);
        if (const json::Value* t = doc.find("title"); t && t->is_string()) e.title = t->as_string();
      } catch (...) {
        // A broken example is reported when it is run; the list still works.
      }
      v.push_back(std::move(e));
    }
    std::sort(v.begin(), v.end(), [](const Example& a, const Example& b) { return a.name < b.name; });
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
