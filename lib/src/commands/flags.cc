#include "commands/flags.h"

#include <Eigen/Core>
#include <cmath>

#include "attn/document.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/number_text.h"
#include "io/formats.h"
#include "kernel/instruction_set.h"

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
  if (!parse_number_word(text, &v))
    bad(flag, "expected a number, got '" + message_text(text) + "'");
  return v;
}

// "1,2" -> {1, 2}: between lo and hi comma-separated finite numbers.
std::vector<double> number_list(std::string_view flag, const std::string& text, size_t lo,
                                size_t hi) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const double v = number(flag, part);
    if (!std::isfinite(v)) bad(flag, "expected a finite number, got '" + part + "'");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() < lo || out.size() > hi) {
    bad(flag, "expected " +
                  (hi == 2 ? std::string("one or two numbers (A or A,B)")
                           : std::string("one or more numbers")) +
                  ", got '" + text + "'");
  }
  return out;
}

}  // namespace

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

const std::vector<SettingFlag>& setting_flags() {
  // Each help ends with the default; the choices follow after ": " (the
  // completion tests read them there).
  static const std::vector<SettingFlag> flags = {
      {"--mode", "NAME", "where Q, K, V come from (default: qkv with Q, cross with Y, else self)",
       mode_names()},
      {"--variant", "NAME", "scoring function (default scaled_dot)", variant_names()},
      {"--heads", "N", "number of heads: Q, K, V are split into N column blocks (default 1)", {}},
      {"--scale", "NAME",
       "score scaling, a name or a number > 0 that multiplies the scores (default sqrt_dk "
       "for scaled_dot, none for the others)",
       scale_names()},
      {"--temperature", "T", "divide the scaled scores by T > 0 (default 1)", {}},
      {"--scale-at", "NAME",
       "apply the scale factor to the scores or to the output (default scores)", scale_at_names()},
      {"--causal",
       "[ALIGN]",
       "a query attends to the keys at or before its position; ALIGN top-left (query i sees "
       "keys 0..i, PyTorch's is_causal, the default) or bottom-right (the last query sees the "
       "last key: flash-attn, a KV cache; sets --q-offset to len_k - len_q) (default: off)",
       {"true", "false", "top-left", "bottom-right"}},
      {"--q-offset",
       "N",
       "position of query 0, for RoPE, causal, window and ALiBi (default 0; a decode step's "
       "is the cache length)",
       {}},
      {"--k-offset", "N", "position of key 0 (default 0)", {}},
      {"--mask-convention", "NAME",
       "block: true = masked; keep: true = takes part, as PyTorch SDPA (default block)",
       mask_convention_names()},
      {"--mask-fill", "X", "value a masked score is replaced by (default -inf)", {}},
      {"--fully-masked", "NAME", "what a row with every key masked gets (default zero)",
       fully_masked_names()},
      {"--dropout", "P", "dropout probability on the weights, 0 <= P < 1 (default 0)", {}},
      {"--seed", "S", "seed of the dropout generator (default 0)", {}},
      {"--params-layout", "NAME",
       "math: W is [in][out]; torch: W is [out][in] as nn.Linear (default math)",
       params_layout_names()},
      {"--kv-heads",
       "N",
       "key/value heads (grouped-query attention; 1 = multi-query) (default: heads)",
       {}},
      {"--rope",
       "",
       "rotary position embedding on Q and K (true/false; default false)",
       {"true", "false"}},
      {"--rope-theta", "X", "RoPE base (default 10000; implies --rope)", {}},
      {"--rope-dims", "N", "rotated features of each head, even (default all; implies --rope)", {}},
      {"--rope-layout", "NAME",
       "RoPE feature pairs: half (HF Llama) or interleaved (Meta Llama) (default half)",
       rope_layout_names()},
      {"--rope-offset",
       "Q[,K]",
       "RoPE positions of query 0 and key 0: Q or Q,K, implies --rope (default 0,0)",
       {}},
      {"--alibi",
       "",
       "ALiBi with the paper's slopes (true/false; default false)",
       {"true", "false"}},
      {"--window",
       "W|L,R",
       "sliding window: W keys before and W after each query, or L before and R after, -1 "
       "unbounded; with --causal W keys back plus the query itself, one more than Hugging "
       "Face's sliding_window W (that is --sliding-window W) (default none)",
       {}},
      {"--sliding-window",
       "W",
       "Hugging Face's sliding_window: W keys up to and including the query, as Mistral and "
       "Gemma count them; the same as --window W-1,0 (default none)",
       {}},
      {"--softcap", "C", "soft-cap the scores: c·tanh(S/c), c > 0 (default none)", {}},
      {"--sinks",
       "X[,X...]",
       "attention sink logits: one number, or one per head (X,X,...) (default none)",
       {}},
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
    if (text == "true" || text == "1" || text.empty() || text == "top-left" || text == "top_left") {
      s.causal = true;
      s.causal_bottom_right = false;
    } else if (text == "bottom-right" || text == "bottom_right") {
      s.causal = true;
      s.causal_bottom_right = true;
    } else if (text == "false" || text == "0") {
      s.causal = false;
    } else {
      bad(flag, "expected true, false, top-left or bottom-right, got '" + text + "'");
    }
  } else if (flag == "--q-offset" || flag == "--k-offset") {
    const double v = number(flag, text);
    if (auto e = check_count(v)) bad(flag, *e);
    (flag == "--q-offset" ? s.q_offset : s.k_offset) = static_cast<int64_t>(v);
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
    const auto seed = parse_unsigned_text(text);
    if (!seed) {
      bad(flag,
          "expected an integer from 0 to 18446744073709551615, got '" + message_text(text) + "'");
    }
    s.seed = *seed;
  } else if (flag == "--params-layout") {
    s.params_layout = choice<ParamsLayout>(flag, text, parse_params_layout, params_layout_names());
  } else if (flag == "--kv-heads") {
    const double h = number(flag, text);
    if (auto e = check_heads(h)) bad(flag, *e);
    s.kv_heads = static_cast<int64_t>(h);
  } else if (flag == "--rope" || flag == "--alibi") {
    bool on = true;
    if (text == "false" || text == "0") {
      on = false;
    } else if (!(text == "true" || text == "1" || text.empty())) {
      bad(flag, "expected true or false, got '" + text + "'");
    }
    if (flag == "--rope") {
      s.rope = on;
    } else {
      s.alibi = on;
      s.alibi_slopes.reset();  // the flag means the paper's slopes
    }
  } else if (flag == "--rope-theta") {
    const double t = number(flag, text);
    if (auto e = check_rope_theta(t)) bad(flag, *e);
    s.rope_theta = t;
  } else if (flag == "--rope-dims") {
    const double d = number(flag, text);
    if (!(d >= 2 && d == std::floor(d) && d <= 1e9) || std::fmod(d, 2) != 0) {
      bad(flag, "expected an even integer >= 2, got '" + text + "'");
    }
    s.rope_dims = static_cast<int64_t>(d);
  } else if (flag == "--rope-layout") {
    s.rope_layout = choice<RopeLayout>(flag, text, parse_rope_layout, rope_layout_names());
  } else if (flag == "--rope-offset") {
    const std::vector<double> v = number_list(flag, text, 1, 2);
    for (double x : v) {
      if (auto e = check_count(x)) bad(flag, *e);
    }
    s.rope_q_offset = static_cast<int64_t>(v[0]);
    s.rope_k_offset = static_cast<int64_t>(v.size() == 2 ? v[1] : 0);
  } else if (flag == "--window") {
    const std::vector<double> v = number_list(flag, text, 1, 2);
    for (double x : v) {
      if (auto e = check_window_side(x, v.size() == 2)) bad(flag, *e);
    }
    const auto left = static_cast<int64_t>(v[0]);
    s.window = std::make_pair(left, v.size() == 2 ? static_cast<int64_t>(v[1]) : left);
  } else if (flag == "--sliding-window") {
    const double w = number(flag, text);
    if (!(w >= 1 && w <= 9007199254740992.0 && w == std::floor(w))) {
      bad(flag, "expected a whole number of keys >= 1 (the query counts as one)");
    }
    s.window = std::make_pair(static_cast<int64_t>(w) - 1, int64_t{0});
  } else if (flag == "--softcap") {
    const double c = number(flag, text);
    if (auto e = check_softcap(c)) bad(flag, *e);
    s.softcap = c;
  } else if (flag == "--sinks") {
    s.sinks = number_list(flag, text, 1, 1 << 20);
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

std::string parse_stack_flag(const std::string& text) {
  if (text != "batch" && text != "layers") {
    bad("--stack", "expected batch or layers, got '" + message_text(text) + "'");
  }
  return text;
}

double parse_nonnegative_flag(const std::string& flag, const std::string& text) {
  const double v = number(flag, text);
  if (!(v >= 0 && std::isfinite(v))) {
    bad(flag, "expected a finite number >= 0, got '" + message_text(text) + "'");
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
  v = number(flag, text);
  if (!(v >= 1 && v <= 4.6e18 && v == std::floor(v))) {
    bad(flag, "expected a positive integer such as " + example + ", got '" + text + "'");
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
      bad(flag, "empty file name; give a file, or - for stdin");
    case PathFlag::kOutput:
      bad(flag, "empty file name; give a file, or - for stdout");
    case PathFlag::kDirectory:
      bad(flag, "empty directory name");
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
  bad("--color", not_one_of(text, color_names()));
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
