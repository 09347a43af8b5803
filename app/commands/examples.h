// Built-in examples: input documents compiled into the binary (from
// data/examples/*.json), plus documents generated from a fixed random seed
// when they are too big to store (the cross-attention tutorial's 512-wide
// projections), so `attn run --example NAME` works wherever the binary is
// installed.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct Example {
  std::string name;                   // file name without .json
  std::string title;                  // the document's "title"
  std::function<std::string()> make;  // the document's text

  std::string text() const { return make(); }
};

// All examples, sorted by name.
const std::vector<Example>& examples();

// The example called name, or nullptr.
const Example* find_example(std::string_view name);

// Names of all examples (for messages and completions).
std::vector<std::string> example_names();

// The cross-attention tutorial's example: query (2,10,512), context (2,20,512), 8 heads
// of 64, projections and output projection drawn from SplitMix64 with seed
// value 4 (uniform in ±1/√512, as nn.Linear initializes them).
std::string cross_shapes_example();

}  // namespace attn
