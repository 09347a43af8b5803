#include "io/formats.h"

#include <sys/stat.h>

#include <cstring>

#include "attn/csv.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "attn/output.h"
#include "attn/safetensors.h"
#include "base/path.h"
#include "io/cells.h"
#include "io/element_types.h"
#include "io/gguf.h"

namespace attn {

namespace {

// The origin of a tensor read from `path`, when it is a regular file that
// can be opened again (not stdin, a pipe or a device).
std::optional<TensorOrigin> origin_of(const std::string& path, MatrixFormat format,
                                      const std::string& tensor = "") {
  if (path == "-" || !path::is_regular_file(path)) return std::nullopt;
  TensorOrigin o;
  o.format = format;
  o.path = path;
  o.tensor = tensor;
  return o;
}

// The same for a reference, whose open file (when it has one) is the file read.
std::optional<TensorOrigin> origin_of(const TensorReference& ref, MatrixFormat format,
                                      const std::string& tensor = "") {
  if (!ref.file) return origin_of(ref.path, format, tensor);
  struct stat st {};
  if (::fstat(ref.file->fd(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  TensorOrigin o;
  o.format = format;
  o.path = ref.path;
  o.tensor = tensor;
  return o;
}

// The bytes of the file a reference names: its open file when it has
// one, else its path.
FileBytes map_reference(const TensorReference& ref, const ProgressFn& progress, int64_t max_bytes) {
  return ref.file ? map_file(*ref.file, progress, max_bytes)
                  : map_file(ref.path, progress, max_bytes);
}

// "f32" for "<f4", "f16" for "<f2"; "" for float64 and the rest.
std::string npy_stored(const std::string& descr) {
  if (descr.size() >= 3 && descr[1] == 'f' && descr[2] == '4') return "f32";
  if (descr.size() >= 3 && descr[1] == 'f' && descr[2] == '2') return "f16";
  return "";
}

// --- JSON: a nested array -------------------------------------------------

// A JSON text starts, after a byte order mark and blanks, with [ or {.
bool sniff_json(std::string_view head) {
  size_t i = 0;
  if (head.size() >= 3 && std::memcmp(head.data(), "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < head.size() &&
         (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
    ++i;
  return i < head.size() && (head[i] == '[' || head[i] == '{');
}

MatrixData parse_json_matrix(std::string_view text, const std::string& path, CellKind kind,
                             int64_t /*max_elements: a JSON reader counts as it goes*/) {
  const std::string name = display_name(path);
  json::Value v = json::parse(text, name);
  if (!v.is_array()) {
    throw_input(name, "expected a JSON array (a matrix), got " + json::type_name(v.type()));
  }
  MatrixData out;
  out.values = json_to_tensor(v, name, "", kind);
  out.origin = origin_of(path, MatrixFormat::kJson);
  return out;
}

std::string write_json_matrix(const Tensor<double>& t, DType dtype) {
  std::string out;
  append_json_tensor(out, t, dtype, 0);
  out += '\n';
  return out;
}

// --- CSV, TSV and whitespace-separated text -------------------------------

MatrixData parse_csv_matrix(std::string_view text, const std::string& path, CellKind kind,
                            int64_t /*max_elements*/) {
  CsvMatrix m = parse_csv(text, display_name(path), kind);
  MatrixData out;
  out.values = std::move(m.values);
  out.row_labels = std::move(m.row_labels);
  out.column_labels = std::move(m.column_labels);
  out.origin = origin_of(path, MatrixFormat::kCsv);
  if (out.origin) {
    out.origin->delimiter = m.delimiter;
    out.origin->header = !out.column_labels.empty();
    out.origin->label_column = !out.row_labels.empty();
  }
  return out;
}

std::string write_csv_matrix(const Tensor<double>& t, DType dtype) {
  return format_csv_tensor(t, dtype, "weights");
}

// --- NumPy .npy -----------------------------------------------------------

bool sniff_npy(std::string_view head) {
  return head.size() >= 6 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0;
}

MatrixData npy_matrix(NpyArray a, std::optional<TensorOrigin> origin) {
  MatrixData out;
  out.values = std::move(a.values);
  out.stored = npy_stored(a.dtype);
  out.origin = std::move(origin);
  return out;
}

MatrixData parse_npy_matrix(std::string_view bytes, const std::string& path, CellKind kind,
                            int64_t max_elements) {
  return npy_matrix(parse_npy(bytes, display_name(path), kind, max_elements),
                    origin_of(path, MatrixFormat::kNpy));
}

// The whole file counts against max_bytes, not only its data.
FileBytes map_npy(const TensorReference& ref, const ProgressFn& progress, int64_t max_bytes) {
  FileBytes bytes = map_reference(ref, progress, max_bytes);
  detail::check_input_bytes(display_name(ref.path), bytes.view().size(), max_bytes);
  return bytes;
}

MatrixData read_npy_mapped(const TensorReference& ref, CellKind kind, const ProgressFn& progress,
                           int64_t max_bytes, int64_t max_elements) {
  const std::string name = display_name(ref.path);
  const FileBytes bytes = map_npy(ref, progress, max_bytes);
  MatrixData out = npy_matrix(parse_npy(bytes.view(), name, kind, max_elements),
                              origin_of(ref, MatrixFormat::kNpy));
  bytes.check_intact(name);
  return out;
}

BinaryArray view_npy_file(const TensorReference& ref, int64_t max_bytes, int max_rank) {
  return view_npy(map_npy(ref, {}, max_bytes), display_name(ref.path), max_rank);
}

// --- safetensors ----------------------------------------------------------

SafetensorsFile open_safetensors(const TensorReference& ref, int64_t max_bytes) {
  return SafetensorsFile::from_bytes(map_reference(ref, {}, max_bytes), display_name(ref.path));
}

MatrixData read_safetensors(const TensorReference& ref, CellKind kind,
                            const ProgressFn& /*progress: only the header and one tensor*/,
                            int64_t max_bytes, int64_t max_elements) {
  const SafetensorsFile f = open_safetensors(ref, max_bytes);
  const SafetensorsEntry& e = pick_tensor(f, ref);
  MatrixData out;
  out.values = f.read(e, kind, max_bytes, max_elements);
  out.stored = element_traits(e.type).stored;
  out.origin = origin_of(ref, MatrixFormat::kSafetensors, e.name);
  return out;
}

BinaryArray view_safetensors(const TensorReference& ref, int64_t max_bytes,
                             int /*max_rank: the reader allows any*/) {
  const SafetensorsFile f = open_safetensors(ref, max_bytes);
  return f.view(pick_tensor(f, ref));
}

// --- NumPy .npz -----------------------------------------------------------

NpzArchive open_npz(const TensorReference& ref, int64_t max_bytes) {
  return NpzArchive::from_bytes(map_reference(ref, {}, max_bytes), display_name(ref.path));
}

MatrixData read_npz(const TensorReference& ref, CellKind kind,
                    const ProgressFn& /*progress: only the directory and one member*/,
                    int64_t max_bytes, int64_t max_elements) {
  const NpzArchive a = open_npz(ref, max_bytes);
  const std::string member = pick_member(a, ref);
  return npy_matrix(
      parse_npy(a.member(member, max_bytes).view(),
                display_name(ref.path) + ":" + message_text(member), kind, max_elements),
      origin_of(ref, MatrixFormat::kNpz, member));
}

BinaryArray view_npz(const TensorReference& ref, int64_t max_bytes, int max_rank) {
  const NpzArchive a = open_npz(ref, max_bytes);
  const std::string member = pick_member(a, ref);
  return view_npy(a.member(member, max_bytes), display_name(ref.path) + ":" + member, max_rank);
}

// --- GGUF -----------------------------------------------------------------

const GgufTensor& pick_gguf_tensor(const GgufFile& f, const TensorReference& ref) {
  if (!ref.tensor.empty()) return f.tensor(ref.tensor);
  if (f.tensors().size() == 1) return f.tensors()[0];
  std::vector<std::string> names;
  for (const GgufTensor& t : f.tensors()) names.push_back(t.name);
  refuse_unnamed(ref, names, "tensors");
}

// The types the program of --emit-pytorch dequantizes itself (its gguf()
// helper in trace/emit_pytorch.cc): the scalar ones, and Q8_0 (a float16
// scale times signed bytes, in float32 as ggml). A tensor of another block
// type has no origin, so the program holds its numbers.
bool python_reads(ElementType t) {
  return element_traits(t).block_cells == 1 || t == ElementType::kQ8_0;
}

GgufFile open_gguf(const TensorReference& ref, int64_t max_bytes) {
  return GgufFile::parse(map_reference(ref, {}, max_bytes), display_name(ref.path));
}

MatrixData read_gguf(const TensorReference& ref, CellKind kind,
                     const ProgressFn& /*progress: only the header and one tensor*/,
                     int64_t max_bytes, int64_t max_elements) {
  const GgufFile f = open_gguf(ref, max_bytes);
  const GgufTensor& t = pick_gguf_tensor(f, ref);
  MatrixData out;
  out.values = f.read(t, kind, max_bytes, max_elements);
  out.stored = element_traits(t.type).stored;
  if (python_reads(t.type)) out.origin = origin_of(ref, MatrixFormat::kGguf, t.name);
  return out;
}

BinaryArray view_gguf(const TensorReference& ref, int64_t max_bytes,
                      int /*max_rank: GGUF's dimensions are 4 at most*/) {
  const GgufFile f = open_gguf(ref, max_bytes);
  return f.view(pick_gguf_tensor(f, ref));
}

// The text matrix takes what no row's sniff claims: CSV reads any text,
// and says what is wrong with text that is not a matrix.
constexpr MatrixFormat kFallback = MatrixFormat::kCsv;

}  // namespace

const std::vector<TensorFormat>& tensor_formats() {
  // One row a format, in the order of MatrixFormat; the fields as in
  // TensorFormat: id, name, title, its own extension, others read as it;
  // sniff, parse, read_mapped, view, multi_tensor; write, result.
  // clang-format off
  static const std::vector<TensorFormat> rows = {
      {MatrixFormat::kJson, "json", "JSON", "json", {},
       sniff_json, parse_json_matrix, nullptr,          nullptr,          false,
       write_json_matrix, ResultFile::kText},
      {MatrixFormat::kCsv, "csv", "CSV", "csv", {"tsv", "txt", "dat"},
       nullptr,    parse_csv_matrix,  nullptr,          nullptr,          false,
       write_csv_matrix,  ResultFile::kText},
      {MatrixFormat::kNpy, "npy", ".npy", "npy", {},
       sniff_npy,  parse_npy_matrix,  read_npy_mapped,  view_npy_file,    false,
       format_npy,        ResultFile::kOutputArray},
      {MatrixFormat::kSafetensors, "safetensors", "safetensors", "safetensors", {},
       nullptr,    nullptr,           read_safetensors, view_safetensors, true,
       nullptr,           ResultFile::kNone},
      {MatrixFormat::kNpz, "npz", ".npz", "npz", {},
       nullptr,    nullptr,           read_npz,         view_npz,         true,
       nullptr,           ResultFile::kArchive},
      {MatrixFormat::kGguf, "gguf", "GGUF", "gguf", {},
       nullptr,    nullptr,           read_gguf,        view_gguf,        true,
       nullptr,           ResultFile::kNone},
  };
  // clang-format on
  return rows;
}

const TensorFormat& tensor_format(MatrixFormat id) {
  return tensor_formats()[static_cast<size_t>(id)];
}

const TensorFormat* format_by_extension(const std::string& path) {
  const std::string ext = extension(path);
  if (ext.empty()) return nullptr;
  for (const TensorFormat& f : tensor_formats()) {
    if (ext == f.extension) return &f;
    for (const char* e : f.also) {
      if (ext == e) return &f;
    }
  }
  return nullptr;
}

bool has_format(const std::string& path, MatrixFormat id) {
  const TensorFormat* f = format_by_extension(path);
  return f && f->id == id;
}

const TensorFormat& sniff_format(std::string_view head) {
  for (const TensorFormat& f : tensor_formats()) {
    if (f.sniff && f.sniff(head)) return f;
  }
  return tensor_format(kFallback);
}

const TensorFormat& format_of(const std::string& path, std::string_view head) {
  const TensorFormat* f = format_by_extension(path);
  return f ? *f : sniff_format(head);
}

const TensorFormat* mapped_format(const std::string& spec) {
  if (spec == "-") return nullptr;
  const TensorFormat* f = format_by_extension(split_tensor_reference(spec).path);
  return f && f->read_mapped ? f : nullptr;
}

const TensorFormat* result_format(const std::string& path) {
  const std::string ext = extension(path);
  for (const TensorFormat& f : tensor_formats()) {
    if (ext == f.extension) return f.result == ResultFile::kNone ? nullptr : &f;
  }
  return nullptr;
}

std::vector<std::string> batch_extensions() {
  std::vector<std::string> out;
  for (const TensorFormat& f : tensor_formats()) {
    if (!f.multi_tensor) out.emplace_back(f.extension);
  }
  return out;
}

std::string extension_list(const std::vector<std::string>& extensions, const char* last) {
  std::string s;
  for (size_t i = 0; i < extensions.size(); ++i) {
    if (i > 0) s += i + 1 == extensions.size() ? std::string(" ") + last + " " : ", ";
    s += "." + extensions[i];
  }
  return s;
}

}  // namespace attn
