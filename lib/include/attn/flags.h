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

namespace attn {

// Sets the setting of `flag` ("--mode", "--scale", ...) from its text.
void set_setting_flag(RunSettings& s, std::string_view flag, const std::string& text);

// The flags set_setting_flag() understands, with the values they accept
// (empty for free-form values), for help texts and completions.
struct SettingFlag {
  std::string flag;
  std::string help;
  std::vector<std::string> choices;
};
const std::vector<SettingFlag>& setting_flags();

Format parse_format_flag(const std::string& text);
TraceFormat parse_trace_format_flag(const std::string& text);
DType parse_dtype_flag(const std::string& flag, const std::string& text);
int parse_int_flag(const std::string& flag, const std::string& text, int lo, int hi);

// --max-elements: a positive integer, written plainly (268435456), in
// exponent form (1e9) or as a power of two (2^28).
int64_t parse_max_elements_flag(const std::string& text);

// The version line: "attn 0.1.0 (Eigen 3.4.0, GCC 12.2.0)".
std::string version_text();

}  // namespace attn
