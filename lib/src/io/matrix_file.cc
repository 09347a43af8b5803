#include "attn/matrix_file.h"

#include <cctype>

#include "attn/error.h"
#include "attn/file_io.h"
#include "base/path.h"
#include "io/formats.h"

namespace attn {

MatrixFormat matrix_format(const std::string& path, std::string_view text) {
  return format_of(path, text).id;
}

MatrixData parse_matrix(std::string_view text, const std::string& path, CellKind kind,
                        int64_t max_elements) {
  refuse_pickle(path);
  const TensorFormat& f = format_of(path, text);
  // Binary archives are read through read_matrix, which maps them.
  if (!f.parse) throw_internal("parse_matrix called on " + display_name(path));
  return f.parse(text, path, kind, max_elements);
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

}  // namespace

TensorReference split_tensor_reference(const std::string& spec) {
  if (spec == "-" || path::exists(spec)) return {spec, ""};
  for (size_t colon = spec.find(':'); colon != std::string::npos;
       colon = spec.find(':', colon + 1)) {
    const std::string_view before(spec.data(), colon);
    for (const TensorFormat& f : tensor_formats()) {
      if (f.multi_tensor && ends_with_ci(before, std::string(".") + f.extension)) {
        return {spec.substr(0, colon), spec.substr(colon + 1)};
      }
    }
  }
  return {spec, ""};
}

void refuse_unnamed(const TensorReference& ref, const std::vector<std::string>& names,
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

const SafetensorsEntry& pick_tensor(const SafetensorsFile& f, const TensorReference& ref) {
  if (!ref.tensor.empty()) return f.get(ref.tensor);
  if (f.tensors().size() == 1) return f.tensors()[0];
  std::vector<std::string> names;
  for (const SafetensorsEntry& e : f.tensors()) names.push_back(e.name);
  refuse_unnamed(ref, names, "tensors");
}

std::string pick_member(const NpzArchive& a, const TensorReference& ref) {
  if (!ref.tensor.empty()) return ref.tensor;
  if (a.members().size() == 1) return a.members()[0].name;
  std::vector<std::string> names;
  for (const NpzMember& m : a.members()) names.push_back(m.name);
  refuse_unnamed(ref, names, "arrays");
}

bool is_multi_tensor_file(const std::string& spec) {
  const TensorFormat* f = format_by_extension(split_tensor_reference(spec).path);
  return f && f->multi_tensor;
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
  refuse_pickle(ref.path);
  const TensorFormat* f = format_by_extension(ref.path);
  if (!ref.tensor.empty() && !(f && f->multi_tensor)) {
    std::vector<std::string> multi;
    for (const TensorFormat& m : tensor_formats()) {
      if (m.multi_tensor) multi.emplace_back(m.extension);
    }
    throw_input(display_name(ref.path), "names the tensor \"" + message_text(ref.tensor) +
                                            "\", but a ." + extension(ref.path) +
                                            " file holds one; only " +
                                            extension_list(multi, "and") + " hold named tensors");
  }
  // Binary files are mapped: the header is checked before a page of data
  // is read. A whole file's reference is its path.
  if (f && f->read_mapped && ref.path != "-") {
    return f->read_mapped(ref, kind, progress, max_bytes, max_elements);
  }
  const std::string text = ref.file ? read_file(*ref.file, progress, max_bytes)
                                    : read_file(ref.path, progress, max_bytes);
  return parse_matrix(text, ref.path, kind, max_elements);
}

std::string format_matrix_file(const Tensor<double>& t, DType dtype, const std::string& path) {
  // JSON for the extensions of no format attn writes a tensor in.
  const TensorFormat* f = format_by_extension(path);
  return (f && f->write ? *f : tensor_format(MatrixFormat::kJson)).write(t, dtype);
}

}  // namespace attn
