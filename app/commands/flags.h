// Command-line text to settings: the flag spellings of every run setting and
// their parsing, so the front end only binds strings. Errors are usage
// errors (exit 2) naming the flag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/options.h"
#include "attn/output.h"
#include "attn/trace.h"
#include "commands/run.h"

namespace attn {

Format parse_format_flag(const std::string& text);
TraceFormat parse_trace_format_flag(const std::string& text);
DType parse_dtype_flag(const std::string& flag, const std::string& text);
// "cat, milk,it" -> {"cat", "milk", "it"}: a comma-separated list (labels,
// lengths), each item without its surrounding spaces; "" is one empty item.
std::vector<std::string> split_list(const std::string& text);

int parse_int_flag(const std::string& flag, const std::string& text, int lo, int hi);
// --stack of attn heatmap and attn diff: "batch" or "layers".
std::string parse_stack_flag(const std::string& text);
// A finite number >= 0 (--tolerance).
double parse_nonnegative_flag(const std::string& flag, const std::string& text);

// --max-elements: a positive integer, written plainly (268435456), in
// exponent form (1e9) or as a power of two (2^28).
int64_t parse_max_elements_flag(const std::string& text);

// --ids: token ids, comma separated ("1,2,3"), each below 2^31.
std::vector<int64_t> parse_ids_flag(const std::string& text);
// --max-input-bytes: the same forms (1073741824, 1e9, 2^30).
int64_t parse_max_input_bytes_flag(const std::string& text);

// A flag that names a file or directory given an empty value (-o ''): a
// usage error naming the flag. Without it, '' would quietly mean stdout
// for -o, or no file at all for the others.
enum class PathFlag { kInput, kOutput, kDirectory };
void check_path_flag(std::string_view flag, const std::string& path, PathFlag kind);

// The version line: "attn 0.1.0 (Eigen 3.4.0, GCC 12.2.0, kernels: AVX2+FMA)",
// the kernels' instruction set as compiled and checked on this CPU.
std::string version_text();

// --color: whether output meant for a terminal is coloured.
enum class ColorMode { kAuto, kAlways, kNever };
const std::vector<std::string>& color_names();  // auto, always, never
ColorMode parse_color_flag(const std::string& text);

// -f/--format and --trace-format as given ("" when not given).
struct FormatFlags {
  std::string format, trace_format;
};

// The result's format and the trace's: a flag when given, else the
// extension of -o (.json, .csv, .npy; .txt or none is a table; for a trace
// .json, .md, .tex, else text). A flag that contradicts the extension, a
// CSV or .npy trace, and --trace-format without --trace are usage errors.
void resolve_formats(const FormatFlags& flags, RunRequest& req);

}  // namespace attn
