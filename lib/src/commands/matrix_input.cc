#include "commands/matrix_input.h"

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/json_tensor.h"
#include "attn/matrix_file.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "attn/safetensors.h"
#include "commands/flags.h"

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

}  // namespace

std::optional<BinaryArray> view_binary_matrix(const std::string& spec, int64_t max_input_bytes) {
  const TensorReference ref = split_tensor_reference(spec);
  const std::string ext = extension(ref.path);
  const std::string name = display_name(ref.path);
  if (ext == "npy") {
    return view_npy(map_file(ref.path, {}, max_input_bytes), name, 5);
  }
  if (ext == "npz") {
    const NpzArchive a = NpzArchive::open(ref.path, max_input_bytes);
    const std::string member = pick_member(a, ref);
    return view_npy(a.member(member, max_input_bytes), name + ":" + member, 5);
  }
  if (ext == "safetensors") {
    const SafetensorsFile f = SafetensorsFile::open(ref.path, max_input_bytes);
    return f.view(pick_tensor(f, ref));
  }
  return std::nullopt;
}

Tensor<double> read_binary_matrix(const BinaryArray& a, const std::string& name,
                                  int64_t max_input_bytes) {
  const uint64_t bytes =
      static_cast<uint64_t>(a.size()) * static_cast<uint64_t>(element_size(a.type));
  if (bytes > static_cast<uint64_t>(max_input_bytes)) {
    throw_input(name, std::to_string(bytes) + " bytes, more than --max-input-bytes " +
                          std::to_string(max_input_bytes) + "; raise --max-input-bytes");
  }
  return a.to_tensor(name, CellKind::kExtended);
}

MatrixInput read_text_matrix(const std::string& path, const std::string& key,
                             const std::string& name, int64_t max_input_bytes,
                             ProgressSink* progress, int max_rank) {
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
  const json::Value* member = v.find(l.key);
  if (!member) {
    std::string near = closest_name(l.key, keys);
    throw_usage("--key " + l.key + ": " + name + " has no member \"" + l.key + "\"" +
                (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }
  l.values = json_to_tensor(*member, name, l.key, CellKind::kExtended, max_rank);
  // An attn result names its queries and keys ("labels": {"queries", "keys"}).
  if (const json::Value* labels = v.find("labels"); labels && labels->is_object()) {
    auto list = [&](const char* which) {
      std::vector<std::string> out;
      const json::Value* a = labels->find(which);
      if (!a || !a->is_array()) return out;
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
    if (const json::Value* a = v.find("weights_axes"); a && a->is_array()) {
      for (size_t i = 0; i < a->size(); ++i) {
        const json::Value e = a->element(i);
        if (e.is_string()) l.axes.push_back(e.as_string());
      }
      if (static_cast<int64_t>(l.axes.size()) != l.values.rank()) l.axes.clear();
    }
    if (const json::Value* m = v.find("masked")) {
      set_masked(l, json_to_tensor(*m, name, "masked", CellKind::kExtended, 4), name + ": masked");
    }
  }
  return l;
}

std::optional<MatrixInput> read_npz_result(const std::string& spec, const std::string& key,
                                           int64_t max_input_bytes) {
  const TensorReference ref = split_tensor_reference(spec);
  if (extension(ref.path) != "npz") return std::nullopt;
  const NpzArchive a = NpzArchive::open(ref.path, max_input_bytes);
  auto has = [&](const std::string& member) {
    for (const NpzMember& m : a.members()) {
      if (m.name == member) return true;
    }
    return false;
  };
  if (!has("settings") || !has("output")) return std::nullopt;  // not attn's result
  const std::string name = display_name(ref.path);
  if (!ref.tensor.empty() && !key.empty() && ref.tensor != key) {
    throw_usage("--key " + key + " and " + spec + " name different arrays; give one of them");
  }
  MatrixInput l;
  l.key = !ref.tensor.empty() ? ref.tensor
          : !key.empty()      ? key
          : has("weights")    ? "weights"
                              : "output";
  const std::string place = name + ":" + message_text(l.key);
  l.values = parse_npy(a.member(l.key, max_input_bytes).view(), place, CellKind::kExtended).values;
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
    if (static_cast<int64_t>(l.axes.size()) != l.values.rank()) l.axes.clear();
    if (has("masked")) {
      set_masked(l,
                 parse_npy(a.member("masked", max_input_bytes).view(), name + ":masked",
                           CellKind::kExtended)
                     .values,
                 name + ":masked");
    }
  }
  return l;
}

}  // namespace attn
