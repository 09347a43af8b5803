#include "commands/matrix_input.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/json_tensor.h"
#include "attn/matrix_file.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "base/names.h"
#include "commands/flags.h"
#include "io/cells.h"
#include "io/formats.h"

namespace attn {

namespace {

// A result's mask flags (1 = masked) for its weights, which they must
// match in shape; `place` names them in messages.
void set_masked(MatrixInput& l, const Tensor<double>& mask, const std::string& place) {
  if (mask.shape() != l.values.shape()) {
    throw_input(place, "has shape " + shape_string(mask.shape()) + ", not the weights' " +
                           shape_string(l.values.shape()));
  }
  l.masked.resize(static_cast<size_t>(mask.size()));
  for (int64_t i = 0; i < mask.size(); ++i) l.masked[static_cast<size_t>(i)] = mask.data()[i] != 0;
}

// The axes a result's weights may have, as attn writes them (output.cc's
// weights_axes): [queries, keys] under [batch] and/or [heads].
bool known_axes(const std::vector<std::string>& axes) {
  const size_t n = axes.size();
  if (n < 2 || n > 5 || axes[n - 2] != "queries" || axes[n - 1] != "keys") return false;
  if (n == 3) return axes[0] == "batch" || axes[0] == "heads";
  if (n == 4) return axes[0] == "batch" && axes[1] == "heads";
  // A model's stack (attn run --layer all).
  if (n == 5) return axes[0] == "layers" && axes[1] == "batch" && axes[2] == "heads";
  return true;
}

// What an attn result says of its numbers must fit them, as the same
// labels and axes given by flags must: a result edited by hand (or by an
// attacker) is refused, not drawn with labels on the wrong rows.
void check_result(const MatrixInput& l, const std::string& name, const std::string& labels_place,
                  const std::string& axes_place) {
  const Tensor<double>& v = l.values;
  const int64_t rank = v.rank();
  auto count = [](size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (!l.row_labels.empty()) {
    const int64_t rows = rank >= 2 ? v.dim(rank - 2) : v.size();
    if (static_cast<int64_t>(l.row_labels.size()) != rows) {
      throw_input(name + ": " + labels_place + "queries",
                  count(l.row_labels.size(), "label") + " for " + std::to_string(rows) +
                      " queries (rows of " + l.key + " " + shape_string(v.shape()) + ")");
    }
  }
  if (!l.col_labels.empty() && rank >= 1) {
    const int64_t cols = v.dim(rank - 1);
    if (static_cast<int64_t>(l.col_labels.size()) != cols) {
      throw_input(name + ": " + labels_place + "keys",
                  count(l.col_labels.size(), "label") + " for " + std::to_string(cols) +
                      " keys (columns of " + l.key + " " + shape_string(v.shape()) + ")");
    }
  }
  if (!l.axes.empty() && (static_cast<int64_t>(l.axes.size()) != rank || !known_axes(l.axes))) {
    std::string list;
    for (const std::string& a : l.axes) list += (list.empty() ? "" : ", ") + message_text(a);
    throw_input(name + ": " + axes_place,
                "[" + list + "] are not the axes of weights " + shape_string(v.shape()) +
                    "; an attn result names them [batch, heads,] queries, keys");
  }
}

[[noreturn]] void unknown_part(const std::string& name, const std::string& part,
                               const std::vector<std::string>& known, const char* what) {
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  throw_input(name, std::string("unknown ") + what + " \"" + message_text(part) +
                        "\" in an attn result (it holds " + list + ")");
}

}  // namespace

std::optional<BinaryArray> view_binary_matrix(const std::string& spec, int64_t max_input_bytes) {
  const TensorReference ref = split_tensor_reference(spec);
  const TensorFormat* f = format_by_extension(ref.path);
  if (!f || !f->view) return std::nullopt;
  // Rank 5: a model's stack of attention weights, [layers][batch][heads][q][k].
  return f->view(ref, max_input_bytes, 5);
}

Tensor<double> read_binary_matrix(const BinaryArray& a, const std::string& name,
                                  int64_t max_input_bytes, int64_t max_elements) {
  detail::check_input_bytes(name, cells_bytes(a.type, static_cast<uint64_t>(a.size())),
                            max_input_bytes);
  return a.to_tensor(name, CellKind::kExtended, max_elements);
}

MatrixInput read_text_matrix(const std::string& path, const std::string& key,
                             const std::string& name, int64_t max_input_bytes,
                             ProgressSink* progress, int max_rank) {
  refuse_pickle(path);
  const std::string text = read_file(
      path, progress_task(progress, "reading " + name, ProgressUnit::kBytes), max_input_bytes);
  MatrixInput l;
  if (matrix_format(path, text) != MatrixFormat::kJson) {
    if (!key.empty()) throw_usage("--key " + key + ": " + name + " is not a JSON document");
    MatrixData m = parse_matrix(text, path, CellKind::kExtended);
    l.values = std::move(m.values);
    l.row_labels = std::move(m.row_labels);
    l.col_labels = std::move(m.column_labels);
    return l;
  }
  const json::Value v = json::parse(text, name);
  if (!v.is_object()) {
    if (!key.empty()) throw_usage("--key " + key + ": " + name + " holds an array, not a document");
    l.values = json_to_tensor(v, name, "", CellKind::kExtended, max_rank);
    return l;
  }
  std::vector<std::string> keys;
  for (const json::Member& m : v.members()) {
    if (m.value.is_array()) keys.push_back(m.key);
  }
  l.key = key;
  if (l.key.empty()) {
    l.key = v.find("weights") ? "weights" : v.find("output") ? "output" : "";
    if (l.key.empty()) {
      std::string list;
      for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
      throw_input(name, "no \"weights\" or \"output\" to draw; choose a member with --key" +
                            (list.empty() ? std::string() : " (arrays here: " + list + ")"));
    }
  }
  // An attn result (it has "settings") holds only what attn writes.
  const bool result = v.find("settings") != nullptr;
  if (result) {
    static const std::vector<std::string> kKeys = {"labels",       "labels_readable", "title",
                                                   "settings",     "output",          "weights",
                                                   "weights_axes", "masked",          "similarity"};
    for (const json::Member& m : v.members()) {
      if (std::find(kKeys.begin(), kKeys.end(), m.key) == kKeys.end()) {
        unknown_part(name, m.key, kKeys, "key");
      }
    }
    for (const char* text : {"title", "settings"}) {
      const json::Value* t = v.find(text);
      if (t && !t->is_string()) {
        throw_input(name + ": " + text, "expected a string, got " + json::describe(*t));
      }
    }
  }
  const json::Value* member = v.find(l.key);
  if (!member) {
    std::string near = closest_name(l.key, keys);
    throw_usage("--key " + l.key + ": " + name + " has no member \"" + l.key + "\"" +
                (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }
  l.values = json_to_tensor(*member, name, l.key, CellKind::kExtended, max_rank);
  // An attn result names its queries and keys ("labels": {"queries", "keys"}).
  const json::Value* labels = v.find("labels");
  if (result && labels && !labels->is_object()) {
    throw_input(name + ": labels",
                "expected {\"queries\": [...], \"keys\": [...]}, got " + json::describe(*labels));
  }
  if (labels && labels->is_object()) {
    auto list = [&](const char* which) {
      std::vector<std::string> out;
      const json::Value* a = labels->find(which);
      if (!a) return out;
      if (!a->is_array()) {
        throw_input(name + ": labels." + which,
                    "expected a list of strings, got " + json::describe(*a));
      }
      for (size_t i = 0; i < a->size(); ++i) {
        const json::Value e = a->element(i);
        if (!e.is_string()) {
          throw_input(name + ": labels." + which + "[" + std::to_string(i) + "]",
                      "expected a string, got " + json::describe(e));
        }
        out.push_back(e.as_string());
      }
      return out;
    };
    l.row_labels = list("queries");
    if (l.key == "weights" || l.key == "scores") l.col_labels = list("keys");
  }
  auto string_member = [&](const char* member) {
    const json::Value* t = v.find(member);
    return t && t->is_string() ? t->as_string() : std::string();
  };
  l.title = string_member("title");
  l.settings = string_member("settings");
  if (l.key == "weights") {
    if (const json::Value* a = v.find("weights_axes")) {
      if (!a->is_array()) {
        throw_input(name + ": weights_axes",
                    "expected a list of strings, got " + json::describe(*a));
      }
      for (size_t i = 0; i < a->size(); ++i) {
        const json::Value e = a->element(i);
        if (!e.is_string()) {
          throw_input(name + ": weights_axes[" + std::to_string(i) + "]",
                      "expected a string, got " + json::describe(e));
        }
        l.axes.push_back(e.as_string());
      }
    }
    if (const json::Value* m = v.find("masked")) {
      set_masked(l, json_to_tensor(*m, name, "masked", CellKind::kBool, 4), name + ": masked");
    }
  }
  if (result) check_result(l, name, "labels.", "weights_axes");
  return l;
}

std::optional<NpzStack> read_npz_stack(const std::string& spec, int64_t max_input_bytes) {
  const TensorReference ref = split_tensor_reference(spec);
  if (!has_format(ref.path, MatrixFormat::kNpz)) return std::nullopt;
  if (!ref.tensor.empty() && ref.tensor != "weights") return std::nullopt;
  const NpzArchive a = NpzArchive::open(ref.path, max_input_bytes);
  bool weights = false, tokens = false;
  for (const NpzMember& m : a.members()) {
    weights |= m.name == "weights";
    tokens |= m.name == "tokens";
  }
  if (!weights || !tokens) return std::nullopt;
  NpzStack s;
  s.weights = ref.path + ":weights";
  s.tokens = parse_npy_strings(a.member("tokens", max_input_bytes).view(),
                               display_name(ref.path) + ":tokens");
  return s;
}

std::optional<MatrixInput> read_npz_result(const std::string& spec, const std::string& key,
                                           int64_t max_input_bytes, int64_t max_elements) {
  const TensorReference ref = split_tensor_reference(spec);
  if (!has_format(ref.path, MatrixFormat::kNpz)) return std::nullopt;
  const NpzArchive a = NpzArchive::open(ref.path, max_input_bytes);
  auto has = [&](const std::string& member) {
    for (const NpzMember& m : a.members()) {
      if (m.name == member) return true;
    }
    return false;
  };
  if (!has("settings") || !has("output")) return std::nullopt;  // not attn's result
  const std::string name = display_name(ref.path);
  static const std::vector<std::string> kMembers = {
      "labels_queries", "labels_keys",  "title",  "settings",         "output",
      "weights",        "weights_axes", "masked", "similarity_input", "similarity_output"};
  for (const NpzMember& m : a.members()) {
    if (std::find(kMembers.begin(), kMembers.end(), m.name) == kMembers.end()) {
      unknown_part(name, m.name, kMembers, "member");
    }
  }
  if (!ref.tensor.empty() && !key.empty() && ref.tensor != key) {
    throw_usage("--key " + key + " and " + spec + " name different arrays; give one of them");
  }
  MatrixInput l;
  l.key = !ref.tensor.empty() ? ref.tensor
          : !key.empty()      ? key
          : has("weights")    ? "weights"
                              : "output";
  const std::string place = name + ":" + message_text(l.key);
  l.values =
      parse_npy(a.member(l.key, max_input_bytes).view(), place, CellKind::kExtended, max_elements)
          .values;
  auto strings = [&](const char* member) {
    return has(member)
               ? parse_npy_strings(a.member(member, max_input_bytes).view(), name + ":" + member)
               : std::vector<std::string>{};
  };
  auto one_string = [&](const char* member) {
    const std::vector<std::string> s = strings(member);
    return s.empty() ? std::string() : s.front();
  };
  // As read_text_matrix reads a JSON result: labels name the rows (and the
  // columns of weights and scores), the rest redraws the run's figure.
  l.row_labels = strings("labels_queries");
  if (l.key == "weights" || l.key == "scores") l.col_labels = strings("labels_keys");
  l.title = one_string("title");
  l.settings = one_string("settings");
  if (l.key == "weights") {
    l.axes = strings("weights_axes");
    if (has("masked")) {
      set_masked(l,
                 parse_npy(a.member("masked", max_input_bytes).view(), name + ":masked",
                           CellKind::kBool, max_elements)
                     .values,
                 name + ":masked");
    }
  }
  check_result(l, name, "labels_", "weights_axes");
  return l;
}

}  // namespace attn
