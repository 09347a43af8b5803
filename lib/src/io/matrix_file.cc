#include "attn/matrix_file.h"

#include <cstring>

#include "attn/csv.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/npy.h"
#include "attn/output.h"

namespace attn {

MatrixFormat matrix_format(const std::string& path, std::string_view text) {
  const std::string ext = extension(path);
  if (ext == "json") return MatrixFormat::kJson;
  if (ext == "csv" || ext == "tsv" || ext == "txt" || ext == "dat") return MatrixFormat::kCsv;
  if (ext == "npy") return MatrixFormat::kNpy;
  if (text.size() >= 6 && std::memcmp(text.data(), "\x93NUMPY", 6) == 0) return MatrixFormat::kNpy;
  size_t i = 0;
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
    ++i;
  if (i < text.size() && (text[i] == '[' || text[i] == '{')) return MatrixFormat::kJson;
  return MatrixFormat::kCsv;
}

MatrixData parse_matrix(std::string_view text, const std::string& path, CellKind kind) {
  const std::string name = display_name(path);
  MatrixData out;
  switch (matrix_format(path, text)) {
    case MatrixFormat::kJson: {
      json::Value v = json::parse(text, name);
      if (!v.is_array()) {
        throw_input(name, "expected a JSON array (a matrix), got " + json::type_name(v.type()));
      }
      out.values = json_to_tensor(v, name, "", kind);
      return out;
    }
    case MatrixFormat::kCsv: {
      CsvMatrix m = parse_csv(text, name, kind);
      out.values = std::move(m.values);
      out.row_labels = std::move(m.row_labels);
      out.column_labels = std::move(m.column_labels);
      return out;
    }
    case MatrixFormat::kNpy:
      out.values = parse_npy(text, name, kind).values;
      return out;
  }
  return out;
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
