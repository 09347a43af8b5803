// JSON text, written one way: every JSON document attn writes (results,
// traces, diff summaries, tokenizer output, the HTML page's data, bench
// lines) is streamed through JsonWriter into a string, with no document
// tree in memory. Strings are escaped by append_json_string (escape.h);
// numbers are written as the document's NumberStyle says; non-finite
// numbers are the strings "nan", "inf", "-inf", which attn's reader
// accepts back. The layout of each container (one member a line, or all
// on one line) is chosen when it is opened, so each document keeps the
// look it has always had. nlohmann::json is for reading only.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/options.h"
#include "attn/tensor.h"

namespace attn {

// How a container lays out its members.
enum class JsonLayout {
  kBlock,    // one member a line, indented two spaces past the container,
             // and the closing bracket on a line of its own
  kInline,   // on one line: "a": 1, "b": [1, 2]
  kCompact,  // on one line without spaces: "a":1,"b":[1,2]
};

// How doubles are written.
enum class NumberStyle {
  // The shortest text that reads back to the same double (std::to_chars):
  // 1, 0.1, 1e-07. Results, traces, bench lines.
  kShortest,
  // As nlohmann::json's dump() writes them (its Grisu2 digits, "1.0" for an
  // integral value, "1e+20"): the diff summary and the page data, which
  // were written by it and are kept byte for byte. The diff summary wrote a
  // value that is not finite as text ("inf"), like the other styles;
  kNlohmann,
  // the page data let dump() write it, as null.
  kNlohmannNull,
};

class JsonWriter {
 public:
  // Appends to `out`. `indent` is the column of the line a top-level block
  // container closes on (its members go two further), for a document
  // written inside another text.
  explicit JsonWriter(std::string& out, NumberStyle numbers = NumberStyle::kShortest,
                      int indent = 0);

  // A container; its members follow until the matching end_*().
  JsonWriter& begin_object(JsonLayout layout);
  JsonWriter& end_object();
  JsonWriter& begin_array(JsonLayout layout);
  JsonWriter& end_array();

  // A member's name; its value follows. Only inside an object.
  JsonWriter& key(std::string_view name);

  // Values: at the top level, after a key, or as an array element.
  JsonWriter& string(std::string_view s);
  JsonWriter& integer(int64_t v);
  JsonWriter& number(double v);
  // A float32 value as the shortest text that reads back to the float.
  JsonWriter& number(float v);
  JsonWriter& boolean(bool v);
  JsonWriter& null();
  // Strings as an array on one line: ["a", "b"].
  JsonWriter& strings(const std::vector<std::string>& items,
                      JsonLayout layout = JsonLayout::kInline);

  // In an inline container: the next member starts a new line, aligned one
  // column past the container's opening bracket.
  JsonWriter& wrap();

 private:
  struct Level {
    JsonLayout layout;
    int indent;  // the column of the closing line of a block container
    int column;  // the column of the opening bracket
    bool empty;
    bool wrap;
  };

  // The separator and indentation before a value or a key.
  void next_member();
  void open(char bracket, JsonLayout layout);
  void close(char bracket);
  int member_indent() const;

  std::string& out_;
  NumberStyle numbers_;
  int indent_;
  size_t line_start_;
  bool after_key_ = false;
  std::vector<Level> levels_;
};

// A tensor as nested arrays: the innermost axis on one line, each outer
// axis one element a line (a rank-0 tensor as its number). Float32 results
// write their numbers as floats.
void write_json_tensor(JsonWriter& w, const Tensor<double>& t, DType dtype);

}  // namespace attn
