#include "attn/flags.h"

#include <Eigen/Core>
#include <cmath>

#include "attn/document.h"
#include "attn/error.h"
#include "attn/number_text.h"

#ifndef ATTN_VERSION
#define ATTN_VERSION "0.0.0"
#endif

namespace attn {

namespace {

[[noreturn]] void bad(std::string_view flag, const std::string& what) {
  throw_usage(std::string(flag) + ": " + what);
}

template <class E, class P>
E choice(std::string_view flag, const std::string& text, P parse,
         const std::vector<std::string>& names) {
  auto v = parse(text);
  if (!v) bad(flag, not_one_of(text, names));
  return *v;
}

double number(std::string_view flag, const std::string& text) {
  double v = 0;
  if (!parse_number_word(text, &v)) bad(flag, "expected a number, got '" + text + "'");
  return v;
}

}  // namespace

const std::vector<SettingFlag>& setting_flags() {
  static const std::vector<SettingFlag> flags = {
      {"--mode", "where Q, K, V come from", mode_names()},
      {"--variant", "scoring function", variant_names()},
      {"--heads", "number of heads (splits Q, K, V into column blocks)", {}},
      {"--scale", "score scaling: a name or a number that multiplies the scores", scale_names()},
      {"--temperature", "divide the scaled scores by this (> 0)", {}},
      {"--scale-at", "apply the scale factor to the scores or to the output", scale_at_names()},
      {"--causal", "query i attends to keys 0..i only (true/false)", {"true", "false"}},
      {"--mask-convention", "block: true = masked; keep: true = takes part (PyTorch SDPA)",
       mask_convention_names()},
      {"--mask-fill", "value a masked score is replaced by (default -inf)", {}},
      {"--fully-masked", "what a row with every key masked gets", fully_masked_names()},
      {"--dropout", "dropout probability on the weights, 0 <= p < 1", {}},
      {"--seed", "seed of the dropout generator", {}},
      {"--params-layout", "math: W is [in][out]; torch: W is [out][in] (nn.Linear)",
       params_layout_names()},
  };
  return flags;
}

void set_setting_flag(RunSettings& s, std::string_view flag, const std::string& text) {
  if (flag == "--mode") {
    s.mode = choice<Mode>(flag, text, parse_mode, mode_names());
  } else if (flag == "--variant") {
    s.variant = choice<Variant>(flag, text, parse_variant, variant_names());
  } else if (flag == "--heads") {
    const double h = number(flag, text);
    if (auto e = check_heads(h)) bad(flag, *e);
    s.heads = static_cast<int64_t>(h);
  } else if (flag == "--scale") {
    auto sc = parse_scale(text);
    if (!sc) bad(flag, not_one_of(text, scale_names()) + " (or a number)");
    if (auto e = check_scale(*sc)) bad(flag, *e);
    s.scale = sc;
  } else if (flag == "--temperature") {
    const double t = number(flag, text);
    if (auto e = check_temperature(t)) bad(flag, *e);
    s.temperature = t;
  } else if (flag == "--scale-at") {
    s.scale_at = choice<ScaleAt>(flag, text, parse_scale_at, scale_at_names());
  } else if (flag == "--causal") {
    if (text == "true" || text == "1" || text.empty()) {
      s.causal = true;
    } else if (text == "false" || text == "0") {
      s.causal = false;
    } else {
      bad(flag, "expected true or false, got '" + text + "'");
    }
  } else if (flag == "--mask-convention") {
    s.mask_convention =
        choice<MaskConvention>(flag, text, parse_mask_convention, mask_convention_names());
  } else if (flag == "--mask-fill") {
    const double f = number(flag, text);
    if (auto e = check_mask_fill(f)) bad(flag, *e);
    s.mask_fill = f;
  } else if (flag == "--fully-masked") {
    s.fully_masked = choice<FullyMasked>(flag, text, parse_fully_masked, fully_masked_names());
  } else if (flag == "--dropout") {
    const double p = number(flag, text);
    if (auto e = check_dropout(p)) bad(flag, *e);
    s.dropout = p;
  } else if (flag == "--seed") {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
        text.size() > 19) {
      bad(flag, "expected a non-negative integer, got '" + text + "'");
    }
    s.seed = std::stoull(text);
  } else if (flag == "--params-layout") {
    s.params_layout = choice<ParamsLayout>(flag, text, parse_params_layout, params_layout_names());
  } else {
    throw_internal("unknown setting flag " + std::string(flag));
  }
}

Format parse_format_flag(const std::string& text) {
  return choice<Format>("--format", text, parse_format, format_names());
}

TraceFormat parse_trace_format_flag(const std::string& text) {
  return choice<TraceFormat>("--trace-format", text, parse_trace_format, trace_format_names());
}

DType parse_dtype_flag(const std::string& flag, const std::string& text) {
  return choice<DType>(flag, text, parse_dtype, dtype_names());
}

int parse_int_flag(const std::string& flag, const std::string& text, int lo, int hi) {
  const double v = number(flag, text);
  if (!(v >= lo && v <= hi && v == std::floor(v))) {
    bad(flag, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                  ", got '" + text + "'");
  }
  return static_cast<int>(v);
}

int64_t parse_max_elements_flag(const std::string& text) {
  double v = 0;
  if (text.size() > 2 && text.compare(0, 2, "2^") == 0) {
    const int e = parse_int_flag("--max-elements", text.substr(2), 0, 62);
    return int64_t{1} << e;
  }
  v = number("--max-elements", text);
  if (!(v >= 1 && v <= 4.6e18 && v == std::floor(v))) {
    bad("--max-elements", "expected a positive integer such as 67108864 or 2^26, got '" + text + "'");
  }
  return static_cast<int64_t>(v);
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
#if defined(__AVX2__) && defined(__FMA__)
  s += ", AVX2+FMA";
#endif
  s += ")";
  return s;
}

}  // namespace attn
