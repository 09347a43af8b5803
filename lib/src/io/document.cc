#include "attn/document.h"

#include <cmath>
#include <type_traits>

#include "attn/error.h"
#include "attn/json_tensor.h"
#include "base/number_text.h"
#include "problem/settings.h"

namespace attn {

const std::vector<std::string>& document_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {
        "X", "Y", "Q", "K", "V", "params", "mask", "key_padding_mask", "valid_lens", "attn_bias"};
    for (const Setting& s : settings_table()) {
      if (!s.key.empty() && s.key.find('.') == std::string_view::npos) k.emplace_back(s.key);
    }
    for (const char* rest : {"labels", "title", "description", "source", "expected"}) {
      k.emplace_back(rest);
    }
    return k;
  }();
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
      } else if (k == "mask") {
        doc.mask = tensor(v, k, CellKind::kBool);
      } else if (k == "key_padding_mask") {
        doc.key_padding_mask = tensor(v, k, CellKind::kBool);
      } else if (k == "valid_lens") {
        doc.valid_lens = tensor(v, k, CellKind::kCount);
      } else if (k == "attn_bias") {
        doc.attn_bias = tensor(v, k, CellKind::kExtended);
      } else if (const Setting* setting = top_level_setting(k)) {
        setting->from_json(doc.settings, at(v, k));
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
  // "[[1, 2], [3, 4]]": numbers pasted into a string, not a file's name.
  static bool pasted_array(const std::string& s) {
    const size_t first = s.find_first_not_of(" \t\r\n");
    const size_t last = s.find_last_not_of(" \t\r\n");
    return first != std::string::npos && s[first] == '[' && s[last] == ']';
  }

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw_input(place_path(source_, path), what);
  }

  Input tensor(const json::Value& v, const std::string& path, CellKind kind) {
    if (v.is_string()) {
      // A file that holds the tensor, named where its numbers would be.
      const std::string& ref = v.as_string();
      const std::string quoted = "\"" + message_text(ref) + "\"";
      if (pasted_array(ref)) {
        fail(path, quoted +
                       " is a string, which names a file; a matrix is written as a JSON array, "
                       "without the quotes");
      }
      if (ref.find('\0') != std::string::npos) {
        fail(path, quoted + " holds a NUL byte, which no file name can hold");
      }
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

  JsonAt at(const json::Value& v, const std::string& path) const {
    return JsonAt{v, source_, path};
  }

  std::string string(const json::Value& v, const std::string& path) const {
    return at(v, path).string();
  }

  // A setting's row for a top-level key ("rope", not "rope.theta").
  static const Setting* top_level_setting(const std::string& key) {
    if (key.find('.') != std::string::npos) return nullptr;
    return setting_of_key(key);
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
        double t = at(m.value, p).number();
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
