#include "io/settings.h"

#include <cmath>
#include <utility>

#include "attn/document.h"
#include "attn/error.h"
#include "attn/json_tensor.h"
#include "attn/rope_scaling.h"
#include "base/names.h"
#include "base/number_text.h"

namespace attn {

void JsonAt::fail(const std::string& what) const { throw_input(place_path(source, path), what); }

double JsonAt::number() const {
  if (!v.is_number()) fail("expected a number, got " + json::describe(v));
  if (!std::isfinite(v.as_number())) fail("number out of the double range");
  return v.as_number();
}

double JsonAt::extended_number() const {
  if (v.is_number()) return number();
  double x = 0;
  if (v.is_string() && parse_number_word(v.as_string(), &x) && !std::isfinite(x)) return x;
  fail("expected a number or \"-inf\", got " + json::describe(v));
}

std::vector<double> JsonAt::numbers(const std::string& forms) const {
  if (v.is_number()) return {number()};
  if (!v.is_array() || v.size() == 0) fail("expected " + forms + ", got " + json::describe(v));
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i) {
    out.push_back(at(v.element(i), path + "[" + std::to_string(i) + "]").number());
  }
  return out;
}

int64_t JsonAt::count() const {
  const double n = number();
  if (auto e = check_count(n)) fail(*e);
  return static_cast<int64_t>(n);
}

std::string JsonAt::string() const {
  if (!v.is_string()) fail("expected a string, got " + json::describe(v));
  return v.as_string();
}

std::string unknown_key(const std::string& key, const std::vector<std::string>& accepted) {
  std::string near = closest_name(key, accepted);
  const std::string shown = message_text(key);
  if (!near.empty()) return "unknown key \"" + shown + "\"; did you mean \"" + near + "\"?";
  // Nothing close: still name the nearest by edit distance, and the list.
  std::string s = "unknown key \"" + shown + "\" (closest accepted key: \"" +
                  nearest_name(key, accepted) + "\"); accepted keys: ";
  for (size_t i = 0; i < accepted.size(); ++i) {
    if (i) s += ", ";
    s += accepted[i];
  }
  return s;
}

void bad_flag(std::string_view flag, const std::string& what) {
  throw_usage(std::string(flag) + ": " + what);
}

double flag_number(std::string_view flag, const std::string& text) {
  double v = 0;
  if (!parse_number_word(text, &v))
    bad_flag(flag, "expected a number, got '" + message_text(text) + "'");
  return v;
}

namespace {

using Form = Setting::Form;

// "1,2" -> {1, 2}: between lo and hi comma-separated finite numbers.
std::vector<double> number_list(std::string_view flag, const std::string& text, size_t lo,
                                size_t hi) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const double v = flag_number(flag, part);
    if (!std::isfinite(v)) bad_flag(flag, "expected a finite number, got '" + part + "'");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() < lo || out.size() > hi) {
    bad_flag(flag, "expected " +
                       (hi == 2 ? std::string("one or two numbers (A or A,B)")
                                : std::string("one or more numbers")) +
                       ", got '" + text + "'");
  }
  return out;
}

// A number checked by `check` (check_heads, check_softcap, ...), from a
// flag's text or a document's value.
template <class Check>
double checked(std::string_view flag, const std::string& text, Check check) {
  const double v = flag_number(flag, text);
  if (auto e = check(v)) bad_flag(flag, *e);
  return v;
}
template <class Check>
double checked(const JsonAt& at, Check check) {
  const double v = at.number();
  if (auto e = check(v)) at.fail(*e);
  return v;
}

// A switch's text: "" (given alone), true/1 or false/0.
bool switch_on(std::string_view flag, const std::string& text) {
  if (text == "false" || text == "0") return false;
  if (!(text == "true" || text == "1" || text.empty())) {
    bad_flag(flag, "expected true or false, got '" + text + "'");
  }
  return true;
}

std::optional<std::string> check_rope_dims(double d) {
  if (!(d >= 2 && d == std::floor(d) && d <= 1e9) || std::fmod(d, 2) != 0) {
    return "must be an even integer >= 2 (the rotated features of each head), got " +
           format_shortest(d);
  }
  return std::nullopt;
}

std::optional<std::string> check_qk_norm(double e) {
  if (!(e > 0 && e < 1)) {
    return "must be the norm's epsilon, a number in (0, 1) such as 1e-6, got " + format_shortest(e);
  }
  return std::nullopt;
}

Scale scale_from_json(const JsonAt& at) {
  Scale s;
  if (at.v.is_number()) {
    s = Scale{ScaleKind::kValue, at.number()};
  } else if (at.v.is_string()) {
    auto parsed = parse_scale(at.v.as_string());
    if (!parsed) at.fail(not_one_of(at.v.as_string(), scale_names()) + " (or a number)");
    s = *parsed;
  } else {
    at.fail("expected a scale name or a number, got " + json::describe(at.v));
  }
  if (auto e = check_scale(s)) at.fail(*e);
  return s;
}

std::pair<int64_t, int64_t> window_from_json(const JsonAt& at) {
  if (at.v.is_number()) {
    const auto w =
        static_cast<int64_t>(checked(at, [](double x) { return check_window_side(x, false); }));
    return {w, w};
  }
  if (!at.v.is_array()) {
    at.fail("expected an integer w >= 0 or [left, right], got " + json::describe(at.v));
  }
  if (at.v.size() != 2) {
    at.fail("expected [left, right] (two integers, -1 for unbounded), got " +
            std::to_string(at.v.size()) + (at.v.size() == 1 ? " number" : " numbers"));
  }
  int64_t side[2];
  for (size_t i = 0; i < 2; ++i) {
    // element() returns a copy: it must outlive the JsonAt that refers to it.
    const json::Value element = at.v.element(i);
    const JsonAt e = at.at(element, at.path + "[" + std::to_string(i) + "]");
    side[i] = static_cast<int64_t>(checked(e, [](double x) { return check_window_side(x, true); }));
  }
  return {side[0], side[1]};
}

// rope: true/false, or an object of the rope.* rows' keys.
void rope_from_json(RunSettings& s, const JsonAt& at) {
  if (at.v.is_bool()) {
    s.rope = at.v.as_bool();
    return;
  }
  if (!at.v.is_object()) {
    at.fail(
        "expected true or an object with theta, dims, layout, q_offset, k_offset, scaling, got " +
        json::describe(at.v));
  }
  s.rope = true;
  for (const json::Member& m : at.v.members()) {
    const std::string key = at.path + "." + m.key;
    const Setting* row = setting_of_key(key);
    if (row == nullptr) at.fail(unknown_key(m.key, rope_keys()));
    row->from_json(s, at.at(m.value, key));
  }
}

// Copies `over`'s F into `into` when `over` sets it: a setting whose later
// source simply wins.
template <auto F>
void assign(RunSettings& into, const RunSettings& over) {
  if (over.*F) into.*F = over.*F;
}

// q_offset and rope.q_offset (k likewise) are one position: what `over`
// gives, under either name, replaces both in `into`.
template <auto Offset, auto RopeOffset>
void merge_offsets(RunSettings& into, const RunSettings& over) {
  if (!(over.*RopeOffset || over.*Offset)) return;
  into.*RopeOffset =
      over.*RopeOffset ? over.*RopeOffset : (into.*RopeOffset ? over.*Offset : into.*RopeOffset);
  into.*Offset = over.*Offset ? over.*Offset : (into.*Offset ? over.*RopeOffset : into.*Offset);
}

std::vector<Setting> make_table() {
  using S = RunSettings;
  std::vector<Setting> t;
  // One row; the form, choices and bench are set after it where they differ.
  auto row = [&t](std::string_view key, std::string_view flag, std::string_view placeholder,
                  std::string_view help, void (*from_text)(S&, const std::string&),
                  void (*from_json)(S&, const JsonAt&), void (*merge)(S&, const S&)) -> Setting& {
    Setting s;
    s.key = key;
    s.flag = flag;
    s.placeholder = placeholder;
    s.help = help;
    s.from_text = from_text;
    s.from_json = from_json;
    s.merge = merge;
    return t.emplace_back(s);
  };

  row(
      "mode", "--mode", "NAME",
      "where Q, K, V come from (default: qkv with Q, cross with Y, else self)",
      [](S& s, const std::string& x) {
        s.mode = flag_choice("--mode", x, parse_mode, mode_names());
      },
      [](S& s, const JsonAt& a) { s.mode = a.enumeration(parse_mode, mode_names()); },
      assign<&S::mode>)
      .choices = mode_names;
  row(
      "variant", "--variant", "NAME", "scoring function (default scaled_dot)",
      [](S& s, const std::string& x) {
        s.variant = flag_choice("--variant", x, parse_variant, variant_names());
      },
      [](S& s, const JsonAt& a) { s.variant = a.enumeration(parse_variant, variant_names()); },
      assign<&S::variant>)
      .choices = variant_names;
  row(
      "heads", "--heads", "N",
      "number of heads: Q, K, V are split into N column blocks (default 1)",
      [](S& s, const std::string& x) {
        s.heads = static_cast<int64_t>(checked("--heads", x, check_heads));
      },
      [](S& s, const JsonAt& a) { s.heads = static_cast<int64_t>(checked(a, check_heads)); },
      assign<&S::heads>);
  row(
      "scale", "--scale", "NAME",
      "score scaling, a name or a number > 0 that multiplies the scores (default sqrt_dk for "
      "scaled_dot, none for the others)",
      [](S& s, const std::string& x) {
        auto sc = parse_scale(x);
        if (!sc) bad_flag("--scale", not_one_of(x, scale_names()) + " (or a number)");
        if (auto e = check_scale(*sc)) bad_flag("--scale", *e);
        s.scale = sc;
      },
      [](S& s, const JsonAt& a) { s.scale = scale_from_json(a); }, assign<&S::scale>)
      .choices = scale_names;
  row(
      "temperature", "--temperature", "T", "divide the scaled scores by T > 0 (default 1)",
      [](S& s, const std::string& x) {
        s.temperature = checked("--temperature", x, check_temperature);
      },
      [](S& s, const JsonAt& a) { s.temperature = checked(a, check_temperature); },
      assign<&S::temperature>);
  row(
      "scale_at", "--scale-at", "NAME",
      "apply the scale factor to the scores or to the output (default scores)",
      [](S& s, const std::string& x) {
        s.scale_at = flag_choice("--scale-at", x, parse_scale_at, scale_at_names());
      },
      [](S& s, const JsonAt& a) { s.scale_at = a.enumeration(parse_scale_at, scale_at_names()); },
      assign<&S::scale_at>)
      .choices = scale_at_names;
  {
    Setting& causal = row(
        "causal", "--causal", "[ALIGN]",
        "a query attends to the keys at or before its position; --causal bottom-right aligns the "
        "last query with the last key (flash-attn, a KV cache) (default: off)",
        [](S& s, const std::string& x) {
          if (x == "true" || x == "1" || x.empty() || x == "top-left" || x == "top_left") {
            s.causal = true;
            s.causal_bottom_right = false;
          } else if (x == "bottom-right" || x == "bottom_right") {
            s.causal = true;
            s.causal_bottom_right = true;
          } else if (x == "false" || x == "0") {
            s.causal = false;
          } else {
            bad_flag("--causal", "expected true, false, top-left or bottom-right, got '" + x + "'");
          }
        },
        // true is "top_left" (PyTorch's is_causal); "bottom_right" aligns
        // the last query with the last key (flash-attn, a KV cache).
        [](S& s, const JsonAt& a) {
          if (a.v.is_bool()) {
            s.causal = a.v.as_bool();
          } else if (a.v.is_string() &&
                     (a.v.as_string() == "top_left" || a.v.as_string() == "bottom_right")) {
            s.causal = true;
            s.causal_bottom_right = a.v.as_string() == "bottom_right";
          } else {
            a.fail("expected true, false, \"top_left\" or \"bottom_right\", got " +
                   json::describe(a.v));
          }
        },
        [](S& into, const S& over) {
          assign<&S::causal>(into, over);
          assign<&S::causal_bottom_right>(into, over);
        });
    causal.form = Form::kSwitchOrWord;
    static const std::vector<std::string> aligns = {"true", "false", "top-left", "bottom-right"};
    causal.choices = []() -> const std::vector<std::string>& { return aligns; };
  }
  row(
      "q_offset", "--q-offset", "N",
      "position of query 0, for RoPE, causal, window and ALiBi (default 0; a decode step's is the "
      "cache length)",
      [](S& s, const std::string& x) {
        s.q_offset = static_cast<int64_t>(checked("--q-offset", x, check_count));
      },
      [](S& s, const JsonAt& a) { s.q_offset = a.count(); },
      merge_offsets<&S::q_offset, &S::rope_q_offset>);
  row(
      "k_offset", "--k-offset", "N", "position of key 0 (default 0)",
      [](S& s, const std::string& x) {
        s.k_offset = static_cast<int64_t>(checked("--k-offset", x, check_count));
      },
      [](S& s, const JsonAt& a) { s.k_offset = a.count(); },
      merge_offsets<&S::k_offset, &S::rope_k_offset>);
  row(
      "mask_convention", "--mask-convention", "NAME",
      "block: true = masked; keep: true = takes part, as PyTorch SDPA (default block)",
      [](S& s, const std::string& x) {
        s.mask_convention =
            flag_choice("--mask-convention", x, parse_mask_convention, mask_convention_names());
      },
      [](S& s, const JsonAt& a) {
        s.mask_convention = a.enumeration(parse_mask_convention, mask_convention_names());
      },
      assign<&S::mask_convention>)
      .choices = mask_convention_names;
  row(
      "mask_fill", "--mask-fill", "X", "value a masked score is replaced by (default -inf)",
      [](S& s, const std::string& x) { s.mask_fill = checked("--mask-fill", x, check_mask_fill); },
      [](S& s, const JsonAt& a) {
        const double f = a.extended_number();
        if (auto e = check_mask_fill(f)) a.fail(*e);
        s.mask_fill = f;
      },
      assign<&S::mask_fill>);
  row(
      "fully_masked", "--fully-masked", "NAME",
      "what a row with every key masked gets (default zero)",
      [](S& s, const std::string& x) {
        s.fully_masked = flag_choice("--fully-masked", x, parse_fully_masked, fully_masked_names());
      },
      [](S& s, const JsonAt& a) {
        s.fully_masked = a.enumeration(parse_fully_masked, fully_masked_names());
      },
      assign<&S::fully_masked>)
      .choices = fully_masked_names;
  row(
      "dropout", "--dropout", "P", "dropout probability on the weights, 0 <= P < 1 (default 0)",
      [](S& s, const std::string& x) { s.dropout = checked("--dropout", x, check_dropout); },
      [](S& s, const JsonAt& a) { s.dropout = checked(a, check_dropout); }, assign<&S::dropout>);
  row(
      "seed", "--seed", "S", "seed of the dropout generator (default 0)",
      [](S& s, const std::string& x) {
        const auto seed = parse_unsigned_text(x);
        if (!seed) {
          bad_flag("--seed", "expected an integer from 0 to 18446744073709551615, got '" +
                                 message_text(x) + "'");
        }
        s.seed = *seed;
      },
      [](S& s, const JsonAt& a) {
        const double n = a.number();
        if (!(n >= 0 && n == std::floor(n) && n <= 9007199254740992.0)) {
          a.fail("must be a non-negative integer (at most 2^53), got " + json::describe(a.v));
        }
        s.seed = static_cast<uint64_t>(n);
      },
      assign<&S::seed>);
  row(
      "params_layout", "--params-layout", "NAME",
      "math: W is [in][out]; torch: W is [out][in] as nn.Linear (default math)",
      [](S& s, const std::string& x) {
        s.params_layout =
            flag_choice("--params-layout", x, parse_params_layout, params_layout_names());
      },
      [](S& s, const JsonAt& a) {
        s.params_layout = a.enumeration(parse_params_layout, params_layout_names());
      },
      assign<&S::params_layout>)
      .choices = params_layout_names;
  row(
      "kv_heads", "--kv-heads", "N",
      "key/value heads (grouped-query attention; 1 = multi-query) (default: heads)",
      [](S& s, const std::string& x) {
        s.kv_heads = static_cast<int64_t>(checked("--kv-heads", x, check_heads));
      },
      [](S& s, const JsonAt& a) { s.kv_heads = static_cast<int64_t>(checked(a, check_heads)); },
      assign<&S::kv_heads>)
      .bench = true;
  {
    Setting& rope = row(
        "rope", "--rope", "", "rotary position embedding on Q and K (RoPE) (default: off)",
        [](S& s, const std::string& x) { s.rope = switch_on("--rope", x); }, rope_from_json,
        assign<&S::rope>);
    rope.form = Form::kSwitch;
    rope.bench = true;
  }
  row(
      "rope.theta", "--rope-theta", "X", "RoPE base (default 10000; implies --rope)",
      [](S& s, const std::string& x) {
        s.rope_theta = checked("--rope-theta", x, check_rope_theta);
      },
      [](S& s, const JsonAt& a) { s.rope_theta = checked(a, check_rope_theta); },
      assign<&S::rope_theta>)
      .bench = true;
  row(
      "rope.dims", "--rope-dims", "N",
      "rotated features of each head, even (default all; implies --rope)",
      [](S& s, const std::string& x) {
        const double d = flag_number("--rope-dims", x);
        if (check_rope_dims(d))
          bad_flag("--rope-dims", "expected an even integer >= 2, got '" + x + "'");
        s.rope_dims = static_cast<int64_t>(d);
      },
      [](S& s, const JsonAt& a) {
        s.rope_dims = static_cast<int64_t>(checked(a, check_rope_dims));
      },
      assign<&S::rope_dims>)
      .bench = true;
  {
    Setting& layout = row(
        "rope.layout", "--rope-layout", "NAME",
        "RoPE feature pairs: half (HF Llama) or interleaved (Meta Llama) (default half)",
        [](S& s, const std::string& x) {
          s.rope_layout = flag_choice("--rope-layout", x, parse_rope_layout, rope_layout_names());
        },
        [](S& s, const JsonAt& a) {
          s.rope_layout = a.enumeration(parse_rope_layout, rope_layout_names());
        },
        assign<&S::rope_layout>);
    layout.choices = rope_layout_names;
    layout.bench = true;
  }
  // The older names of q_offset and k_offset, merged with them.
  row(
      "rope.q_offset", "", "", "", nullptr,
      [](S& s, const JsonAt& a) { s.rope_q_offset = a.count(); }, nullptr);
  row(
      "rope.k_offset", "", "", "", nullptr,
      [](S& s, const JsonAt& a) { s.rope_k_offset = a.count(); }, nullptr);
  row(
      "", "--rope-offset", "Q[,K]",
      "RoPE positions of query 0 and key 0: Q or Q,K, implies --rope (default 0,0)",
      [](S& s, const std::string& x) {
        const std::vector<double> v = number_list("--rope-offset", x, 1, 2);
        for (double n : v) {
          if (auto e = check_count(n)) bad_flag("--rope-offset", *e);
        }
        s.rope_q_offset = static_cast<int64_t>(v[0]);
        s.rope_k_offset = static_cast<int64_t>(v.size() == 2 ? v[1] : 0);
      },
      nullptr, nullptr);
  // Hugging Face's rope_scaling object, max_position_embeddings inside it
  // where the kind needs the model's length.
  row(
      "rope.scaling", "", "", "", nullptr,
      [](S& s, const JsonAt& a) {
        s.rope_scaling = parse_rope_scaling(a.v, place_path(a.source, a.path), 0, 0);
      },
      assign<&S::rope_scaling>);
  {
    Setting& alibi = row(
        "alibi", "--alibi", "", "ALiBi linear biases with the paper's slopes (default: off)",
        [](S& s, const std::string& x) {
          s.alibi = switch_on("--alibi", x);
          s.alibi_slopes.reset();  // the flag means the paper's slopes
        },
        [](S& s, const JsonAt& a) {
          if (a.v.is_bool()) {
            s.alibi = a.v.as_bool();
            s.alibi_slopes.reset();
            return;
          }
          if (!a.v.is_array()) {
            a.fail(
                "expected true (the ALiBi paper's slopes) or an array of one slope per head, got " +
                json::describe(a.v));
          }
          s.alibi = true;
          s.alibi_slopes = a.numbers("true or an array of one slope per head");
        },
        // The flag's form replaces the file's: --alibi alone means the
        // paper's slopes even when the file lists its own.
        [](S& into, const S& over) {
          if (!over.alibi) return;
          into.alibi = over.alibi;
          into.alibi_slopes = over.alibi_slopes;
        });
    alibi.form = Form::kSwitch;
    alibi.bench = true;
  }
  row(
      "window", "--window", "W|L,R",
      "sliding window: W keys before and W after each query, or L before and R after, -1 "
      "unbounded; with --causal W keys back plus the query itself, one more than Hugging Face's "
      "sliding_window W (that is --sliding-window W) (default none)",
      [](S& s, const std::string& x) {
        const std::vector<double> v = number_list("--window", x, 1, 2);
        for (double n : v) {
          if (auto e = check_window_side(n, v.size() == 2)) bad_flag("--window", *e);
        }
        const auto left = static_cast<int64_t>(v[0]);
        s.window = std::make_pair(left, v.size() == 2 ? static_cast<int64_t>(v[1]) : left);
      },
      [](S& s, const JsonAt& a) { s.window = window_from_json(a); }, assign<&S::window>)
      .bench = true;
  row(
      "", "--sliding-window", "W",
      "Hugging Face's sliding_window: W keys up to and including the query, as Mistral and Gemma "
      "count them; the same as --window W-1,0 (default none)",
      [](S& s, const std::string& x) {
        const double w = flag_number("--sliding-window", x);
        if (!(w >= 1 && w <= 9007199254740992.0 && w == std::floor(w))) {
          bad_flag("--sliding-window",
                   "expected a whole number of keys >= 1 (the query counts as one)");
        }
        s.window = std::make_pair(static_cast<int64_t>(w) - 1, int64_t{0});
      },
      nullptr, nullptr)
      .same_as = "--window";
  row(
      "softcap", "--softcap", "C", "soft-cap the scores: c·tanh(S/c), c > 0 (default none)",
      [](S& s, const std::string& x) { s.softcap = checked("--softcap", x, check_softcap); },
      [](S& s, const JsonAt& a) { s.softcap = checked(a, check_softcap); }, assign<&S::softcap>)
      .bench = true;
  row(
      "qk_norm", "--qk-norm", "EPS",
      "RMSNorm of each head of Q and K before RoPE, with this epsilon, weighted by params q_norm "
      "and k_norm (ones when not given), as Qwen 3 and Gemma 3 (default none)",
      [](S& s, const std::string& x) { s.qk_norm = checked("--qk-norm", x, check_qk_norm); },
      [](S& s, const JsonAt& a) { s.qk_norm = checked(a, check_qk_norm); }, assign<&S::qk_norm>);
  row(
      "sinks", "--sinks", "X[,X...]",
      "attention sink logits: one number, or one per head (X,X,...) (default none)",
      [](S& s, const std::string& x) { s.sinks = number_list("--sinks", x, 1, 1 << 20); },
      [](S& s, const JsonAt& a) {
        s.sinks = a.numbers("a number or an array of one number per head");
      },
      assign<&S::sinks>)
      .bench = true;

  // The modern column, by key (or flag, for the rows without one).
  struct Modern {
    std::string_view row, refusal;
    bool (*given)(const S& s);
  };
  const Modern modern[] = {
      {"kv_heads", "kv_heads", [](const S& s) { return s.kv_heads.has_value(); }},
      {"rope", "rope", [](const S& s) { return s.rope.value_or(false); }},
      {"rope.theta", "rope", [](const S& s) { return s.rope_theta.has_value(); }},
      {"rope.dims", "rope", [](const S& s) { return s.rope_dims.has_value(); }},
      {"rope.layout", "rope", [](const S& s) { return s.rope_layout.has_value(); }},
      {"rope.q_offset", "rope", [](const S& s) { return s.rope_q_offset.has_value(); }},
      {"rope.k_offset", "rope", [](const S& s) { return s.rope_k_offset.has_value(); }},
      {"--rope-offset", "rope",
       [](const S& s) { return s.rope_q_offset.has_value() || s.rope_k_offset.has_value(); }},
      {"rope.scaling", "rope", [](const S& s) { return s.rope_scaling.has_value(); }},
      {"qk_norm", "qk_norm", [](const S& s) { return s.qk_norm.has_value(); }},
      {"alibi", "alibi", [](const S& s) { return s.alibi.value_or(false); }},
      {"window", "window", [](const S& s) { return s.window.has_value(); }},
      {"--sliding-window", "window", [](const S& s) { return s.window.has_value(); }},
      {"softcap", "softcap", [](const S& s) { return s.softcap.has_value(); }},
      {"sinks", "sinks", [](const S& s) { return s.sinks.has_value(); }},
  };
  for (const Modern& m : modern) {
    bool found = false;
    for (Setting& r : t) {
      if (r.key == m.row || (r.key.empty() && r.flag == m.row)) {
        r.modern = m.refusal;
        r.given = m.given;
        found = true;
      }
    }
    if (!found) throw_internal("settings: no row " + std::string(m.row) + " for the modern column");
  }
  return t;
}

}  // namespace

bool RunSettings::any_modern() const {
  for (const Setting& r : settings_table()) {
    if (r.given && r.given(*this)) return true;
  }
  return false;
}

const std::vector<Setting>& settings_table() {
  static const std::vector<Setting> table = make_table();
  return table;
}

const Setting* setting_of_flag(std::string_view flag) {
  for (const Setting& s : settings_table()) {
    if (!s.flag.empty() && s.flag == flag) return &s;
  }
  return nullptr;
}

const Setting* setting_of_key(std::string_view key) {
  for (const Setting& s : settings_table()) {
    if (!s.key.empty() && s.key == key) return &s;
  }
  return nullptr;
}

const std::vector<std::string>& rope_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const Setting& s : settings_table()) {
      if (s.key.substr(0, 5) == "rope.") k.emplace_back(s.key.substr(5));
    }
    return k;
  }();
  return keys;
}

void RunSettings::merge(const RunSettings& over) {
  for (const Setting& s : settings_table()) {
    if (s.merge) s.merge(*this, over);
  }
}

}  // namespace attn
