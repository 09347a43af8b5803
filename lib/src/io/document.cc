#include "attn/document.h"

#include <cmath>
#include <type_traits>

#include "attn/error.h"
#include "attn/json_tensor.h"
#include "attn/number_text.h"

namespace attn {

const std::vector<std::string>& document_keys() {
  static const std::vector<std::string> keys = {"X",
                                                "Y",
                                                "Q",
                                                "K",
                                                "V",
                                                "params",
                                                "params_layout",
                                                "mode",
                                                "variant",
                                                "heads",
                                                "scale",
                                                "temperature",
                                                "scale_at",
                                                "mask",
                                                "key_padding_mask",
                                                "valid_lens",
                                                "causal",
                                                "q_offset",
                                                "k_offset",
                                                "mask_convention",
                                                "attn_bias",
                                                "mask_fill",
                                                "fully_masked",
                                                "dropout",
                                                "seed",
                                                "kv_heads",
                                                "rope",
                                                "alibi",
                                                "window",
                                                "softcap",
                                                "qk_norm",
                                                "sinks",
                                                "labels",
                                                "title",
                                                "description",
                                                "source",
                                                "expected"};
  return keys;
}

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> keys = {"W_q",  "W_k",   "W_v",       "b_q",    "b_k",
                                                "b_v",  "W_o",   "b_o",       "w_v",    "w",
                                                "w_in", "w_mem", "dot_scale", "q_norm", "k_norm"};
  return keys;
}

std::optional<std::string> check_scale(const Scale& s) {
  if (s.kind == ScaleKind::kValue && !(s.value > 0 && std::isfinite(s.value))) {
    return "must be a name or a finite number > 0, got " + format_shortest(s.value);
  }
  return std::nullopt;
}

std::optional<std::string> check_temperature(double t) {
  if (!(t > 0 && std::isfinite(t))) {
    return "must be a finite number > 0, got " + format_shortest(t);
  }
  return std::nullopt;
}

std::optional<std::string> check_mask_fill(double f) {
  if (std::isnan(f) || f == INFINITY) {
    return "must be a number or \"-inf\", got " + format_shortest(f);
  }
  return std::nullopt;
}

std::optional<std::string> check_dropout(double p) {
  if (!(p >= 0 && p < 1)) return "must be in [0, 1), got " + format_shortest(p);
  return std::nullopt;
}

std::optional<std::string> check_softcap(double c) {
  if (!(c > 0 && std::isfinite(c))) {
    return "must be a finite number > 0 (the cap c in c·tanh(S/c)), got " + format_shortest(c);
  }
  return std::nullopt;
}

std::optional<std::string> check_rope_theta(double t) {
  if (!(t > 0 && std::isfinite(t))) {
    return "must be a finite number > 0 (10000 in most models), got " + format_shortest(t);
  }
  return std::nullopt;
}

std::optional<std::string> check_window_side(double w, bool pair) {
  const double lo = pair ? -1 : 0;
  if (!(w >= lo && w == std::floor(w) && w <= 9007199254740992.0)) {
    return pair ? "must be an integer >= 0, or -1 for unbounded, got " + format_shortest(w)
                : "must be an integer >= 0 (or give [left, right]), got " + format_shortest(w);
  }
  return std::nullopt;
}

std::optional<std::string> check_count(double n) {
  if (!(n >= 0 && n == std::floor(n) && n <= 9007199254740992.0)) {
    return "must be a non-negative integer, got " + format_shortest(n);
  }
  return std::nullopt;
}

std::optional<std::string> check_heads(double h) {
  if (!(h >= 1 && h == std::floor(h) && h <= 1e6)) {
    return "must be a positive integer up to 1000000, got " + format_shortest(h);
  }
  return std::nullopt;
}

namespace {

// The message for an unknown key: always names the closest accepted key.
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

class Reader {
 public:
  Reader(const std::string& source, const TensorFileReader& files)
      : source_(source), files_(files) {}

  InputDocument read(const json::Value& root) {
    InputDocument doc;
    doc.source = source_;
    doc.settings_place = source_;
    if (root.is_array()) {
      // A bare matrix is X, as a CSV or .npy file is.
      doc.X = tensor(root, "X", CellKind::kFinite);
      return doc;
    }
    if (!root.is_object()) {
      throw_input(source_,
                  "expected a JSON object with keys such as X, Q, K, V, or a matrix, got " +
                      json::type_name(root.type()));
    }
    for (const json::Member& m : root.members()) {
      const std::string& k = m.key;
      const json::Value& v = m.value;
      if (k == "X") {
        doc.X = tensor(v, k, CellKind::kFinite);
      } else if (k == "Y") {
        doc.Y = tensor(v, k, CellKind::kFinite);
      } else if (k == "Q") {
        doc.Q = tensor(v, k, CellKind::kFinite);
      } else if (k == "K") {
        doc.K = tensor(v, k, CellKind::kFinite);
      } else if (k == "V") {
        doc.V = tensor(v, k, CellKind::kFinite);
      } else if (k == "params") {
        read_params(v, doc);
      } else if (k == "params_layout") {
        doc.settings.params_layout = enumeration(v, k, parse_params_layout, params_layout_names());
      } else if (k == "mode") {
        doc.settings.mode = enumeration(v, k, parse_mode, mode_names());
      } else if (k == "variant") {
        doc.settings.variant = enumeration(v, k, parse_variant, variant_names());
      } else if (k == "heads") {
        double h = number(v, k);
        if (auto e = check_heads(h)) fail(k, *e);
        doc.settings.heads = static_cast<int64_t>(h);
      } else if (k == "scale") {
        doc.settings.scale = scale(v, k);
      } else if (k == "temperature") {
        double t = number(v, k);
        if (auto e = check_temperature(t)) fail(k, *e);
        doc.settings.temperature = t;
      } else if (k == "scale_at") {
        doc.settings.scale_at = enumeration(v, k, parse_scale_at, scale_at_names());
      } else if (k == "mask") {
        doc.mask = tensor(v, k, CellKind::kBool);
      } else if (k == "key_padding_mask") {
        doc.key_padding_mask = tensor(v, k, CellKind::kBool);
      } else if (k == "valid_lens") {
        doc.valid_lens = tensor(v, k, CellKind::kCount);
      } else if (k == "causal") {
        // true is "top_left" (PyTorch's is_causal); "bottom_right" aligns
        // the last query with the last key (flash-attn, a KV cache).
        if (v.is_bool()) {
          doc.settings.causal = v.as_bool();
        } else if (v.is_string() &&
                   (v.as_string() == "top_left" || v.as_string() == "bottom_right")) {
          doc.settings.causal = true;
          doc.settings.causal_bottom_right = v.as_string() == "bottom_right";
        } else {
          fail(k,
               "expected true, false, \"top_left\" or \"bottom_right\", got " + json::describe(v));
        }
      } else if (k == "q_offset" || k == "k_offset") {
        (k == "q_offset" ? doc.settings.q_offset : doc.settings.k_offset) = count(v, k);
      } else if (k == "mask_convention") {
        doc.settings.mask_convention =
            enumeration(v, k, parse_mask_convention, mask_convention_names());
      } else if (k == "attn_bias") {
        doc.attn_bias = tensor(v, k, CellKind::kExtended);
      } else if (k == "mask_fill") {
        double f = extended_number(v, k);
        if (auto e = check_mask_fill(f)) fail(k, *e);
        doc.settings.mask_fill = f;
      } else if (k == "fully_masked") {
        doc.settings.fully_masked = enumeration(v, k, parse_fully_masked, fully_masked_names());
      } else if (k == "dropout") {
        double p = number(v, k);
        if (auto e = check_dropout(p)) fail(k, *e);
        doc.settings.dropout = p;
      } else if (k == "seed") {
        double s = number(v, k);
        if (!(s >= 0 && s == std::floor(s) && s <= 9007199254740992.0)) {
          fail(k, "must be a non-negative integer (at most 2^53), got " + json::describe(v));
        }
        doc.settings.seed = static_cast<uint64_t>(s);
      } else if (k == "kv_heads") {
        double h = number(v, k);
        if (auto e = check_heads(h)) fail(k, *e);
        doc.settings.kv_heads = static_cast<int64_t>(h);
      } else if (k == "rope") {
        read_rope(v, doc.settings);
      } else if (k == "alibi") {
        read_alibi(v, doc.settings);
      } else if (k == "window") {
        doc.settings.window = window(v, k);
      } else if (k == "softcap") {
        double c = number(v, k);
        if (auto e = check_softcap(c)) fail(k, *e);
        doc.settings.softcap = c;
      } else if (k == "qk_norm") {
        const double e = number(v, k);
        if (!(e > 0 && e < 1)) {
          fail(k, "must be the norm's epsilon, a number in (0, 1) such as 1e-6, got " +
                      format_shortest(e));
        }
        doc.settings.qk_norm = e;
      } else if (k == "sinks") {
        doc.settings.sinks = numbers(v, k, "a number or an array of one number per head");
      } else if (k == "labels") {
        doc.labels = labels(v, k);
      } else if (k == "title") {
        doc.title = string(v, k);
      } else if (k == "description") {
        doc.description = string(v, k);
      } else if (k == "source") {
        doc.source_text = string(v, k);
      } else if (k == "expected") {
        doc.expected = expected(v, k);
      } else {
        throw_input(source_, unknown_key(k, document_keys()));
      }
    }
    return doc;
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw_input(place_path(source_, path), what);
  }

  Input tensor(const json::Value& v, const std::string& path, CellKind kind) {
    if (v.is_string()) {
      // A file that holds the tensor, named where its numbers would be.
      const std::string& ref = v.as_string();
      if (!files_) {
        fail(path, "names the file \"" + message_text(ref) +
                       "\", but a document read from stdin or given as text has no directory "
                       "to find it in; write the numbers, or give the file with its flag");
      }
      const std::string place = place_path(source_, path);
      files_read_.push_back(ref);
      Input in = files_(ref, place, kind);
      in.place = place + " (" + message_text(ref) + ")";
      return in;
    }
    return Input{json_to_tensor(v, source_, path, kind), place_path(source_, path)};
  }

  double number(const json::Value& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "expected a number, got " + json::describe(v));
    if (!std::isfinite(v.as_number())) fail(path, "number out of the double range");
    return v.as_number();
  }

  double extended_number(const json::Value& v, const std::string& path) const {
    if (v.is_number()) return number(v, path);
    double x = 0;
    if (v.is_string() && parse_number_word(v.as_string(), &x) && !std::isfinite(x)) return x;
    fail(path, "expected a number or \"-inf\", got " + json::describe(v));
  }

  // A number or a non-empty array of finite numbers, as a list.
  std::vector<double> numbers(const json::Value& v, const std::string& path,
                              const std::string& forms) const {
    if (v.is_number()) return {number(v, path)};
    if (!v.is_array() || v.size() == 0)
      fail(path, "expected " + forms + ", got " + json::describe(v));
    std::vector<double> out;
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(number(v.element(i), path + "[" + std::to_string(i) + "]"));
    }
    return out;
  }

  int64_t count(const json::Value& v, const std::string& path) const {
    const double n = number(v, path);
    if (auto e = check_count(n)) fail(path, *e);
    return static_cast<int64_t>(n);
  }

  void read_rope(const json::Value& v, RunSettings& s) const {
    const std::string path = "rope";
    if (v.is_bool()) {
      s.rope = v.as_bool();
      return;
    }
    if (!v.is_object()) {
      fail(path,
           "expected true or an object with theta, dims, layout, q_offset, k_offset, scaling, "
           "got " +
               json::describe(v));
    }
    s.rope = true;
    static const std::vector<std::string> accepted = {"theta",    "dims",     "layout",
                                                      "q_offset", "k_offset", "scaling"};
    for (const json::Member& m : v.members()) {
      const std::string p = path + "." + m.key;
      if (m.key == "theta") {
        const double t = number(m.value, p);
        if (auto e = check_rope_theta(t)) fail(p, *e);
        s.rope_theta = t;
      } else if (m.key == "dims") {
        const double d = number(m.value, p);
        if (!(d >= 2 && d == std::floor(d) && d <= 1e9) || std::fmod(d, 2) != 0) {
          fail(p, "must be an even integer >= 2 (the rotated features of each head), got " +
                      format_shortest(d));
        }
        s.rope_dims = static_cast<int64_t>(d);
      } else if (m.key == "layout") {
        s.rope_layout = enumeration(m.value, p, parse_rope_layout, rope_layout_names());
      } else if (m.key == "q_offset") {
        s.rope_q_offset = count(m.value, p);
      } else if (m.key == "k_offset") {
        s.rope_k_offset = count(m.value, p);
      } else if (m.key == "scaling") {
        // Hugging Face's rope_scaling object, max_position_embeddings inside
        // it where the kind needs the model's length.
        s.rope_scaling = parse_rope_scaling(m.value, place_path(source_, p), 0, 0);
      } else {
        fail(path, unknown_key(m.key, accepted));
      }
    }
  }

  void read_alibi(const json::Value& v, RunSettings& s) const {
    if (v.is_bool()) {
      s.alibi = v.as_bool();
      s.alibi_slopes.reset();
      return;
    }
    if (!v.is_array()) {
      fail("alibi",
           "expected true (the ALiBi paper's slopes) or an array of one slope per head, got " +
               json::describe(v));
    }
    s.alibi = true;
    s.alibi_slopes = numbers(v, "alibi", "true or an array of one slope per head");
  }

  std::pair<int64_t, int64_t> window(const json::Value& v, const std::string& path) const {
    if (v.is_number()) {
      const double w = number(v, path);
      if (auto e = check_window_side(w, false)) fail(path, *e);
      return {static_cast<int64_t>(w), static_cast<int64_t>(w)};
    }
    if (!v.is_array()) {
      fail(path, "expected an integer w >= 0 or [left, right], got " + json::describe(v));
    }
    if (v.size() != 2) {
      fail(path, "expected [left, right] (two integers, -1 for unbounded), got " +
                     std::to_string(v.size()) + (v.size() == 1 ? " number" : " numbers"));
    }
    int64_t side[2];
    for (size_t i = 0; i < 2; ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      const double w = number(v.element(i), p);
      if (auto e = check_window_side(w, true)) fail(p, *e);
      side[i] = static_cast<int64_t>(w);
    }
    return {side[0], side[1]};
  }

  std::string string(const json::Value& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a string, got " + json::describe(v));
    return v.as_string();
  }

  template <class P>
  auto enumeration(const json::Value& v, const std::string& path, P parse,
                   const std::vector<std::string>& names) const ->
      typename std::invoke_result_t<P, std::string_view>::value_type {
    if (!v.is_string()) fail(path, "expected a string, got " + json::describe(v));
    auto e = parse(v.as_string());
    if (!e) fail(path, not_one_of(v.as_string(), names));
    return *e;
  }

  Scale scale(const json::Value& v, const std::string& path) const {
    Scale s;
    if (v.is_number()) {
      s = Scale{ScaleKind::kValue, number(v, path)};
    } else if (v.is_string()) {
      auto parsed = parse_scale(v.as_string());
      if (!parsed) {
        fail(path, not_one_of(v.as_string(), scale_names()) + " (or a number)");
      }
      s = *parsed;
    } else {
      fail(path, "expected a scale name or a number, got " + json::describe(v));
    }
    if (auto e = check_scale(s)) fail(path, *e);
    return s;
  }

  void read_params(const json::Value& v, InputDocument& doc) {
    if (!v.is_object()) fail("params", "expected an object of arrays, got " + json::describe(v));
    for (const json::Member& m : v.members()) {
      bool known = false;
      for (const std::string& k : param_keys()) known |= k == m.key;
      if (!known) throw_input(place_path(source_, "params"), unknown_key(m.key, param_keys()));
      const std::string path = "params." + m.key;
      doc.params.push_back(NamedInput{m.key, tensor(m.value, path, CellKind::kFinite)});
    }
  }

  std::vector<std::string> string_list(const json::Value& v, const std::string& path) const {
    if (!v.is_array()) fail(path, "expected a list of strings, got " + json::describe(v));
    if (v.size() == 0) fail(path, "an empty list; give one label per row, or leave the key out");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
      json::Value e = v.element(i);
      if (!e.is_string()) {
        fail(path + "[" + std::to_string(i) + "]", "expected a string, got " + json::describe(e));
      }
      out.push_back(e.as_string());
    }
    return out;
  }

  LabelSet labels(const json::Value& v, const std::string& path) const {
    LabelSet l;
    l.place = place_path(source_, path);
    if (v.is_array()) {
      l.queries = string_list(v, path);
      l.keys = l.queries;
      l.shared = true;
      return l;
    }
    if (!v.is_object()) {
      fail(path, "expected a list of strings or {\"queries\": [...], \"keys\": [...]}, got " +
                     json::describe(v));
    }
    static const std::vector<std::string> accepted = {"queries", "keys"};
    for (const json::Member& m : v.members()) {
      if (m.key == "queries") {
        l.queries = string_list(m.value, path + ".queries");
      } else if (m.key == "keys") {
        l.keys = string_list(m.value, path + ".keys");
      } else {
        throw_input(place_path(source_, path), unknown_key(m.key, accepted));
      }
    }
    return l;
  }

  Expected expected(const json::Value& v, const std::string& path) {
    if (!v.is_object()) {
      fail(path, "expected an object with output, weights, tolerance, got " + json::describe(v));
    }
    Expected e;
    e.place = place_path(source_, path);
    static const std::vector<std::string> accepted = {"output", "weights", "tolerance"};
    for (const json::Member& m : v.members()) {
      const std::string p = path + "." + m.key;
      if (m.key == "output") {
        e.output = tensor(m.value, p, CellKind::kExtended);
      } else if (m.key == "weights") {
        e.weights = tensor(m.value, p, CellKind::kExtended);
      } else if (m.key == "tolerance") {
        double t = number(m.value, p);
        if (!(t >= 0)) fail(p, "tolerance must be >= 0, got " + json::describe(m.value));
        e.tolerance = t;
      } else {
        throw_input(place_path(source_, path), unknown_key(m.key, accepted));
      }
    }
    return e;
  }

  const std::string& source_;
  const TensorFileReader& files_;

 public:
  std::vector<std::string> files_read_;
};

}  // namespace

InputDocument document_from_json(const json::Value& root, const std::string& source,
                                 const TensorFileReader& files) {
  Reader r(source, files);
  InputDocument doc = r.read(root);
  doc.files = std::move(r.files_read_);
  return doc;
}

InputDocument read_document(std::string_view text, const std::string& source,
                            const TensorFileReader& files) {
  json::Value root = json::parse(text, source);
  return document_from_json(root, source, files);
}

}  // namespace attn
