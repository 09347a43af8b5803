#include "attn/matrix_file.h"

#include <cstring>

#include "attn/csv.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "attn/output.h"
#include "attn/safetensors.h"
#include "io/cells.h"

#include <sys/stat.h>

namespace attn {

MatrixFormat matrix_format(const std::string& path, std::string_view text) {
  const std::string ext = extension(path);
  if (ext == "json") return MatrixFormat::kJson;
  if (ext == "csv" || ext == "tsv" || ext == "txt" || ext == "dat") return MatrixFormat::kCsv;
  if (ext == "npy") return MatrixFormat::kNpy;
  if (ext == "safetensors") return MatrixFormat::kSafetensors;
  if (ext == "npz") return MatrixFormat::kNpz;
  if (text.size() >= 6 && std::memcmp(text.data(), "\x93NUMPY", 6) == 0) return MatrixFormat::kNpy;
  size_t i = 0;
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
    ++i;
  if (i < text.size() && (text[i] == '[' || text[i] == '{')) return MatrixFormat::kJson;
  return MatrixFormat::kCsv;
}

namespace {

// "f32" for "<f4", "f16" for "<f2"; "" for float64 and the rest.
std::string npy_stored(const std::string& descr) {
  if (descr.size() >= 3 && descr[1] == 'f' && descr[2] == '4') return "f32";
  if (descr.size() >= 3 && descr[1] == 'f' && descr[2] == '2') return "f16";
  return "";
}

// "f32", "f16", "bf16" (float8 counts as bf16: coarser still).
std::string safetensors_stored(ElementType t) {
  switch (t) {
    case ElementType::kF32:
      return "f32";
    case ElementType::kF16:
      return "f16";
    case ElementType::kBF16:
    case ElementType::kF8E4M3:
    case ElementType::kF8E5M2:
      return "bf16";
    default:
      return "";
  }
}

// The origin of a tensor read from `path`, when it is a regular file that
// can be opened again (not stdin, a pipe or a device).
std::optional<TensorOrigin> origin_of(const std::string& path, TensorOrigin::Format format,
                                      const std::string& tensor = "") {
  struct stat st {};
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  TensorOrigin o;
  o.format = format;
  o.path = path;
  o.tensor = tensor;
  return o;
}

}  // namespace

MatrixData parse_matrix(std::string_view text, const std::string& path, CellKind kind,
                        int64_t max_elements) {
  refuse_pickle(path);
  const std::string name = display_name(path);
  MatrixData out;
  switch (matrix_format(path, text)) {
    case MatrixFormat::kJson: {
      json::Value v = json::parse(text, name);
      if (!v.is_array()) {
        throw_input(name, "expected a JSON array (a matrix), got " + json::type_name(v.type()));
      }
      out.values = json_to_tensor(v, name, "", kind);
      out.origin = origin_of(path, TensorOrigin::Format::kJson);
      return out;
    }
    case MatrixFormat::kCsv: {
      CsvMatrix m = parse_csv(text, name, kind);
      out.values = std::move(m.values);
      out.row_labels = std::move(m.row_labels);
      out.column_labels = std::move(m.column_labels);
      out.origin = origin_of(path, TensorOrigin::Format::kCsv);
      if (out.origin) {
        out.origin->delimiter = m.delimiter;
        out.origin->header = !out.column_labels.empty();
        out.origin->label_column = !out.row_labels.empty();
      }
      return out;
    }
    case MatrixFormat::kNpy: {
      NpyArray a = parse_npy(text, name, kind, max_elements);
      out.values = std::move(a.values);
      out.stored = npy_stored(a.dtype);
      out.origin = origin_of(path, TensorOrigin::Format::kNpy);
      return out;
    }
    case MatrixFormat::kSafetensors:
    case MatrixFormat::kNpz:
      // Binary archives are read through read_matrix, which maps them.
      throw_internal("parse_matrix called on " + name);
  }
  return out;
}

namespace {

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    const char c = s[s.size() - suffix.size() + i];
    if (std::tolower(static_cast<unsigned char>(c)) != suffix[i]) return false;
  }
  return true;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TensorReference split_tensor_reference(const std::string& spec) {
  if (spec == "-" || exists(spec)) return {spec, ""};
  for (size_t colon = spec.find(':'); colon != std::string::npos;
       colon = spec.find(':', colon + 1)) {
    const std::string_view before(spec.data(), colon);
    if (ends_with_ci(before, ".safetensors") || ends_with_ci(before, ".npz")) {
      return {spec.substr(0, colon), spec.substr(colon + 1)};
    }
  }
  return {spec, ""};
}

namespace {

// A file of several tensors named without :NAME: a usage error listing the
// first names to choose from.
[[noreturn]] void choose_one(const TensorReference& ref, const std::vector<std::string>& names,
                             const char* what) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 8; ++i) {
    list += (i ? ", " : "") + message_text(names[i]);
  }
  if (names.size() > 8) list += ", ...";
  throw_usage(display_name(ref.path) + " holds " + std::to_string(names.size()) + " " + what +
              "; choose one as " + ref.path + ":NAME" +
              (list.empty() ? std::string() : " (" + list + ")"));
}

}  // namespace

const SafetensorsEntry& pick_tensor(const SafetensorsFile& f, const TensorReference& ref) {
  if (!ref.tensor.empty()) return f.get(ref.tensor);
  if (f.tensors().size() == 1) return f.tensors()[0];
  std::vector<std::string> names;
  for (const SafetensorsEntry& e : f.tensors()) names.push_back(e.name);
  choose_one(ref, names, "tensors");
}

std::string pick_member(const NpzArchive& a, const TensorReference& ref) {
  if (!ref.tensor.empty()) return ref.tensor;
  if (a.members().size() == 1) return a.members()[0].name;
  std::vector<std::string> names;
  for (const NpzMember& m : a.members()) names.push_back(m.name);
  choose_one(ref, names, "arrays");
}

bool is_multi_tensor_file(const std::string& spec) {
  const std::string ext = extension(split_tensor_reference(spec).path);
  return ext == "safetensors" || ext == "npz";
}

void refuse_pickle(const std::string& path) {
  const std::string ext = extension(path);
  if (ext != "pt" && ext != "pth" && ext != "ckpt" && ext != "pkl" && ext != "bin") return;
  // torch.save writes a pickle, and unpickling runs whatever code the file
  // names: attn never does. One line converts it to a format attn reads.
  // The commands name the file FILE.pt: a path's quotes or $ would not
  // survive being pasted into them.
  throw_input(display_name(path),
              "a PyTorch pickle (torch.save), which attn does not open: loading one runs code. "
              "Convert a tensor with python3 -c \"import torch, numpy; numpy.save('t.npy', "
              "torch.load('FILE.pt').numpy())\", or a state_dict with python3 -c \"import torch; "
              "from safetensors.torch import save_file; save_file(torch.load('FILE.pt'), "
              "'model.safetensors')\"");
}

MatrixData read_matrix(const std::string& spec, CellKind kind, const ProgressFn& progress,
                       int64_t max_bytes, int64_t max_elements) {
  return read_matrix(split_tensor_reference(spec), kind, progress, max_bytes, max_elements);
}

MatrixData read_matrix(const TensorReference& ref, CellKind kind, const ProgressFn& progress,
                       int64_t max_bytes, int64_t max_elements) {
  const std::string& spec = ref.path;  // a whole file's reference is its path
  const std::string ext = extension(ref.path);
  refuse_pickle(ref.path);
  MatrixData out;
  if (ext == "safetensors") {
    const SafetensorsFile f = SafetensorsFile::open(ref.path, max_bytes);
    const SafetensorsEntry& e = pick_tensor(f, ref);
    out.values = f.read(e, kind, max_bytes, max_elements);
    out.stored = safetensors_stored(e.type);
    out.origin = origin_of(ref.path, TensorOrigin::Format::kSafetensors, e.name);
    return out;
  }
  if (ext == "npz") {
    const NpzArchive a = NpzArchive::open(ref.path, max_bytes);
    const std::string member = pick_member(a, ref);
    NpyArray n = parse_npy(a.member(member, max_bytes).view(),
                           display_name(ref.path) + ":" + message_text(member), kind, max_elements);
    out.values = std::move(n.values);
    out.stored = npy_stored(n.dtype);
    out.origin = origin_of(ref.path, TensorOrigin::Format::kNpz, member);
    return out;
  }
  if (!ref.tensor.empty()) {
    throw_input(display_name(ref.path), "names the tensor \"" + message_text(ref.tensor) +
                                            "\", but a ." + ext +
                                            " file holds one; only .safetensors and .npz hold "
                                            "named tensors");
  }
  if (ext == "npy" && spec != "-") {
    // Mapped: the header is checked before a page of data is read.
    const FileBytes bytes = map_file(spec, progress, max_bytes);
    detail::check_input_bytes(display_name(spec), bytes.view().size(), max_bytes);
    NpyArray n = parse_npy(bytes.view(), display_name(spec), kind, max_elements);
    out.values = std::move(n.values);
    out.stored = npy_stored(n.dtype);
    out.origin = origin_of(spec, TensorOrigin::Format::kNpy);
    bytes.check_intact(display_name(spec));
    return out;
  }
  return parse_matrix(read_file(spec, progress, max_bytes), spec, kind, max_elements);
}

std::string format_matrix_file(const Tensor<double>& t, DType dtype, const std::string& path) {
  const std::string ext = extension(path);
  if (ext == "csv" || ext == "tsv" || ext == "txt") return format_csv_tensor(t, dtype, "weights");
  if (ext == "npy") return format_npy(t, dtype);
  std::string out;
  append_json_tensor(out, t, dtype, 0);
  out += '\n';
  return out;
}

}  // namespace attn
