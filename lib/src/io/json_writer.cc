#include "io/json_writer.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attn/escape.h"
#include "base/number_text.h"

namespace attn {

JsonWriter::JsonWriter(std::string& out, NumberStyle numbers, int indent)
    : out_(out), numbers_(numbers), indent_(indent) {
  const size_t newline = out.rfind('\n');
  line_start_ = newline == std::string::npos ? 0 : newline + 1;
}

int JsonWriter::member_indent() const {
  if (levels_.empty()) return indent_;
  const Level& l = levels_.back();
  return l.layout == JsonLayout::kBlock ? l.indent + 2 : l.indent;
}

void JsonWriter::next_member() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& l = levels_.back();
  if (!l.empty) out_ += ',';
  if (l.layout == JsonLayout::kBlock) {
    out_ += '\n';
    line_start_ = out_.size();
    out_.append(static_cast<size_t>(l.indent + 2), ' ');
  } else if (l.wrap) {
    out_ += '\n';
    line_start_ = out_.size();
    out_.append(static_cast<size_t>(l.column + 1), ' ');
  } else if (!l.empty && l.layout == JsonLayout::kInline) {
    out_ += ' ';
  }
  l.empty = false;
  l.wrap = false;
}

void JsonWriter::open(char bracket, JsonLayout layout) {
  next_member();
  const int indent = member_indent();
  levels_.push_back({layout, indent, static_cast<int>(out_.size() - line_start_), true, false});
  out_ += bracket;
}

void JsonWriter::close(char bracket) {
  const Level l = levels_.back();
  levels_.pop_back();
  // A block container closes on a line of its own, an empty one too (the
  // values of a trace step without rows), as attn's traces always have.
  if (l.layout == JsonLayout::kBlock) {
    out_ += '\n';
    line_start_ = out_.size();
    out_.append(static_cast<size_t>(l.indent), ' ');
  }
  out_ += bracket;
}

JsonWriter& JsonWriter::begin_object(JsonLayout layout) {
  open('{', layout);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  close('}');
  return *this;
}

JsonWriter& JsonWriter::begin_array(JsonLayout layout) {
  open('[', layout);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  next_member();
  append_json_string(out_, name);
  out_ += levels_.back().layout == JsonLayout::kCompact ? ":" : ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
  next_member();
  append_json_string(out_, s);
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t v) {
  next_member();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, static_cast<size_t>(r.ptr - buf));
  return *this;
}

JsonWriter& JsonWriter::number(double v) {
  next_member();
  if (!std::isfinite(v) && numbers_ == NumberStyle::kNlohmannNull) {
    out_ += "null";
  } else if (!std::isfinite(v)) {
    out_ += '"';
    append_shortest(out_, v);
    out_ += '"';
  } else if (numbers_ == NumberStyle::kShortest) {
    append_shortest(out_, v);
  } else {
    char buf[64];
    const char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, static_cast<size_t>(end - buf));
  }
  return *this;
}

JsonWriter& JsonWriter::number(float v) {
  if (!std::isfinite(v)) return number(static_cast<double>(v));
  next_member();
  append_shortest(out_, v);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool v) {
  next_member();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  next_member();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::strings(const std::vector<std::string>& items, JsonLayout layout) {
  begin_array(layout);
  for (const std::string& s : items) string(s);
  return end_array();
}

JsonWriter& JsonWriter::wrap() {
  levels_.back().wrap = true;
  return *this;
}

namespace {

void write_level(JsonWriter& w, const double* data, const Shape& shape, size_t axis, DType dtype) {
  const int64_t n = shape[axis];
  if (axis + 1 == shape.size()) {
    w.begin_array(JsonLayout::kInline);
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == DType::kF32) {
        w.number(static_cast<float>(data[i]));
      } else {
        w.number(data[i]);
      }
    }
    w.end_array();
    return;
  }
  int64_t stride = 1;
  for (size_t a = axis + 1; a < shape.size(); ++a) stride *= shape[a];
  w.begin_array(JsonLayout::kBlock);
  for (int64_t i = 0; i < n; ++i) write_level(w, data + i * stride, shape, axis + 1, dtype);
  w.end_array();
}

}  // namespace

void write_json_tensor(JsonWriter& w, const Tensor<double>& t, DType dtype) {
  if (t.rank() == 0) {
    const double v = t.size() ? t[0] : 0.0;
    if (dtype == DType::kF32) {
      w.number(static_cast<float>(v));
    } else {
      w.number(v);
    }
    return;
  }
  write_level(w, t.data(), t.shape(), 0, dtype);
}

}  // namespace attn
