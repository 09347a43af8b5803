// Built-in examples: input documents compiled into the binary (from
// data/examples/*.json), so `attn run --example NAME` works wherever the
// binary is installed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct Example {
  std::string name;   // file name without .json
  std::string title;  // the document's "title"
  std::string text;   // the document itself
};

// All examples, sorted by name.
const std::vector<Example>& examples();

// The example called name, or nullptr.
const Example* find_example(std::string_view name);

// Names of all examples (for messages and completions).
std::vector<std::string> example_names();

}  // namespace attn
