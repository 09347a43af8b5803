#include "commands/flags.h"

#include <Eigen/Core>
#include <cmath>

#include "attn/document.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "base/names.h"
#include "base/number_text.h"
#include "io/formats.h"
#include "io/settings.h"
#include "kernel/instruction_set.h"

#ifndef ATTN_VERSION
#define ATTN_VERSION "0.0.0"
#endif

namespace attn {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t b = item.find_first_not_of(' ');
    const size_t e = item.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

Format parse_format_flag(const std::string& text) {
  return flag_choice("--format", text, parse_format, format_names());
}

TraceFormat parse_trace_format_flag(const std::string& text) {
  return flag_choice("--trace-format", text, parse_trace_format, trace_format_names());
}

DType parse_dtype_flag(const std::string& flag, const std::string& text) {
  return flag_choice(flag, text, parse_dtype, dtype_names());
}

int parse_int_flag(const std::string& flag, const std::string& text, int lo, int hi) {
  const double v = flag_number(flag, text);
  if (!(v >= lo && v <= hi && v == std::floor(v))) {
    bad_flag(flag, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                       ", got '" + text + "'");
  }
  return static_cast<int>(v);
}

std::string parse_stack_flag(const std::string& text) {
  if (text != "batch" && text != "layers") {
    bad_flag("--stack", "expected batch or layers, got '" + message_text(text) + "'");
  }
  return text;
}

double parse_nonnegative_flag(const std::string& flag, const std::string& text) {
  const double v = flag_number(flag, text);
  if (!(v >= 0 && std::isfinite(v))) {
    bad_flag(flag, "expected a finite number >= 0, got '" + message_text(text) + "'");
  }
  return v;
}

namespace {

// A limit: a positive integer, plainly (268435456), in exponent form (1e9)
// or as a power of two (2^28); `example` shows the plain and 2^ forms.
int64_t parse_limit_flag(const std::string& flag, const std::string& text,
                         const std::string& example) {
  double v = 0;
  if (text.size() > 2 && text.compare(0, 2, "2^") == 0) {
    const int e = parse_int_flag(flag, text.substr(2), 0, 62);
    return int64_t{1} << e;
  }
  v = flag_number(flag, text);
  if (!(v >= 1 && v <= 4.6e18 && v == std::floor(v))) {
    bad_flag(flag, "expected a positive integer such as " + example + ", got '" + text + "'");
  }
  return static_cast<int64_t>(v);
}

}  // namespace

std::vector<int64_t> parse_ids_flag(const std::string& text) {
  std::vector<int64_t> ids;
  for (const std::string& p : split_list(text)) {
    const auto n = parse_unsigned_text(p);
    if (!n || *n >= (uint64_t{1} << 31)) {
      throw_usage("--ids: expected token ids such as 1,2,3, got '" + message_text(p) + "'");
    }
    ids.push_back(static_cast<int64_t>(*n));
  }
  if (ids.empty()) throw_usage("--ids: expected token ids such as 1,2,3");
  return ids;
}

int64_t parse_max_elements_flag(const std::string& text) {
  return parse_limit_flag("--max-elements", text, "67108864 or 2^26");
}

int64_t parse_max_input_bytes_flag(const std::string& text) {
  return parse_limit_flag("--max-input-bytes", text, "1073741824 or 2^30");
}

void check_path_flag(std::string_view flag, const std::string& path, PathFlag kind) {
  if (!path.empty()) return;
  switch (kind) {
    case PathFlag::kInput:
      bad_flag(flag, "empty file name; give a file, or - for stdin");
    case PathFlag::kOutput:
      bad_flag(flag, "empty file name; give a file, or - for stdout");
    case PathFlag::kDirectory:
      bad_flag(flag, "empty directory name");
  }
}

std::string version_text() {
  std::string s = std::string("attn ") + ATTN_VERSION + " (Eigen " +
                  std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
                  "." + std::to_string(EIGEN_MINOR_VERSION);
#if defined(__clang__)
  s += ", clang " __clang_version__;
#elif defined(__GNUC__)
  s += ", GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
       std::to_string(__GNUC_PATCHLEVEL__);
#endif
  s += ", kernels: " + kernel::instruction_set() + ")";
  return s;
}

const std::vector<std::string>& color_names() {
  static const std::vector<std::string> names = {"auto", "always", "never"};
  return names;
}

ColorMode parse_color_flag(const std::string& text) {
  if (text == "auto") return ColorMode::kAuto;
  if (text == "always") return ColorMode::kAlways;
  if (text == "never") return ColorMode::kNever;
  bad_flag("--color", not_one_of(text, color_names()));
}

namespace {

// What -o's extension says about the format; "" when it says nothing. A
// result's formats are the registry's result files (formats.h).
std::string format_of_extension(const std::string& ext, const TensorFormat* result, bool trace) {
  if (trace) {
    if (ext == "json") return "json";
    if (ext == "md") return "markdown";
    if (ext == "tex") return "latex";
    return "";
  }
  return result ? result->name : "";
}

}  // namespace

void resolve_formats(const FormatFlags& flags, RunRequest& req) {
  const bool to_file = !req.output_path.empty() && req.output_path != "-";
  const std::string ext = to_file ? extension(req.output_path) : "";
  // The tensor format -o names, when it is a result file (.json, .csv,
  // .npy, .npz); nullptr for a table.
  const TensorFormat* result = to_file ? result_format(req.output_path) : nullptr;
  const bool trace = req.trace.enabled;
  if (!flags.trace_format.empty() && !trace) throw_usage("--trace-format needs --trace");
  if (!flags.format.empty()) req.output.format = parse_format_flag(flags.format);
  if (!flags.trace_format.empty()) {
    req.trace.options.format = parse_trace_format_flag(flags.trace_format);
  }
  if (trace && result && !parse_trace_format(result->name)) {
    throw_usage("-o " + req.output_path + ": --trace prints a trace, not " + result->title +
                "; write it to a .txt, .md, .tex or .json file");
  }
  if (trace && !flags.format.empty() && flags.trace_format.empty()) {
    // --trace --format json means the JSON trace; a CSV trace does not exist.
    if (req.output.format == Format::kCsv) {
      throw_usage(
          "--trace prints a trace, not CSV; use --trace-format text, markdown, latex or json");
    }
    if (req.output.format == Format::kJson) req.trace.options.format = TraceFormat::kJson;
  }
  if (req.emit_pytorch) return;  // a Python program, whatever the name
  const std::string implied = format_of_extension(ext, result, trace);
  if (implied.empty()) return;
  // The format flag that decides, and what it said.
  const std::string& flag_text =
      trace && !flags.trace_format.empty() ? flags.trace_format : flags.format;
  const char* flag_name = trace && !flags.trace_format.empty() ? "--trace-format" : "--format";
  if (!flag_text.empty()) {
    // An array file takes no --format at all.
    const bool binary = !trace && result->result != ResultFile::kText;
    if (binary || flag_text != implied) {
      throw_usage(std::string(flag_name) + " " + flag_text + " contradicts -o " + req.output_path +
                  " (a ." + ext + " file); drop " + flag_name + " or change the file's extension");
    }
    return;
  }
  if (trace) {
    req.trace.options.format = parse_trace_format_flag(implied);
  } else if (result->result == ResultFile::kText) {  // run_command writes arrays by the extension
    req.output.format = parse_format_flag(implied);
  }
}

}  // namespace attn
