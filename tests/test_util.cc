#include "test_util.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attn/error.h"
#include "attn/npy.h"
#include "attn/safetensors.h"

namespace attn::test {

Problem problem(const std::string& json) { return build_problem(read_document(json, "t.json")); }

Result compute_json(const std::string& json, bool weights) {
  ComputeRequest req;
  req.weights = weights;
  return compute(problem(json), req);
}

std::string problem_error(const std::string& json) {
  return error_of([&] { problem(json); });
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Run run_redirected(const std::string& command, const std::string& out, const std::string& err) {
  const int status = std::system((command + " >" + quote(out) + " 2>" + quote(err)).c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

std::string temp_dir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/attn_test_XXXXXX";
    const char* d = mkdtemp(tmpl);
    std::string s = d ? d : "/tmp";
    static std::string cleanup = "rm -rf " + quote(s);
    std::atexit([] { (void)!std::system(cleanup.c_str()); });
    return s;
  }();
  return dir;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream f(path, std::ios::binary);
  f << text;
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string source_path(const std::string& rel) { return std::string(ATTN_SOURCE_DIR) + "/" + rel; }

Run run_attn(const std::vector<std::string>& args, const std::string& stdin_text,
             const std::vector<std::string>& env, const std::vector<std::string>& wrapper) {
  static int counter = 0;
  const std::string base =
      temp_dir() + "/run" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string in = base + ".in", out = base + ".out", err = base + ".err";
  {
    std::ofstream f(in, std::ios::binary);
    f << stdin_text;
  }
  std::string cmd = "env";
  for (const std::string& e : env) cmd += " " + quote(e);
  for (const std::string& w : wrapper) cmd += " " + quote(w);
  cmd += " " + quote(ATTN_BINARY);
  for (const std::string& a : args) cmd += " " + quote(a);
  cmd += " <" + quote(in);
  return run_redirected(cmd, out, err);
}

std::string write_safetensors(const std::string& name, int64_t n) {
  const std::string header = R"({"w":{"dtype":"F64","shape":[)" + std::to_string(n) +
                             R"(],"data_offsets":[0,)" + std::to_string(8 * n) + "]}}";
  std::string bytes(8, '\0');
  const uint64_t len = header.size();
  std::memcpy(&bytes[0], &len, 8);
  bytes += header;
  bytes.append(static_cast<size_t>(8 * n), '\x01');
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

void expect_near_all(const Tensor<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[static_cast<int64_t>(i)], want[i], tol) << "at flat index " << i;
  }
}

// Well-formedness: tags nest and close, attributes are quoted, and the only
// entities are the five of XML.
bool well_formed_xml(const std::string& x, std::string* why) {
  std::vector<std::string> open;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '&') {
      const size_t semi = x.find(';', i);
      const std::string e = x.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
      if (e != "&amp;" && e != "&lt;" && e != "&gt;" && e != "&quot;" && e != "&apos;") {
        *why = "bad entity at " + std::to_string(i);
        return false;
      }
    }
    if (x[i] != '<') continue;
    const size_t end = x.find('>', i);
    if (end == std::string::npos) return *why = "unclosed tag", false;
    const std::string tag = x.substr(i + 1, end - i - 1);
    i = end;
    if (tag[0] == '?') continue;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return *why = "mismatched </" + tag, false;
      open.pop_back();
      continue;
    }
    size_t quotes = 0;
    for (char c : tag) quotes += c == '"';
    if (quotes % 2) return *why = "unbalanced quotes in <" + tag, false;
    if (tag.back() != '/') open.push_back(tag.substr(0, tag.find(' ')));
  }
  if (!open.empty()) return *why = "unclosed <" + open.back(), false;
  return true;
}

std::vector<CodeBlock> code_blocks(const std::string& markdown) {
  std::vector<CodeBlock> blocks;
  std::istringstream in(markdown);
  std::string line, previous;
  CodeBlock* open = nullptr;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("```", 0) == 0) {
      if (open) {
        open = nullptr;
      } else {
        blocks.push_back({line.substr(3), "", n, previous.find("<!-- not run") == 0});
        open = &blocks.back();
      }
    } else if (open) {
      open->text += line + "\n";
    }
    if (!open && !line.empty()) previous = line;
  }
  return blocks;
}

std::string without_settings(const std::string& json) {
  const size_t at = json.find("\n  \"settings\": ");
  if (at == std::string::npos) return json;
  return json.substr(0, at) + json.substr(json.find('\n', at + 1));
}

StepId step_id(const std::string& name) {
  const std::optional<StepId> id = parse_step_id(name);
  if (!id) throw std::invalid_argument("no trace step is named " + name);
  return *id;
}

double max_diff(const Tensor<double>& a, const Tensor<double>& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double m = 0;
  for (int64_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  return m;
}

std::string model(const std::string& rel) { return source_path("data/models/" + rel); }

std::string safetensors_bytes(const std::vector<Piece>& pieces, const std::string& meta) {
  std::string header = "{" + meta, data;
  for (const Piece& p : pieces) {
    if (header.size() > 1) header += ",";
    header += "\"" + p.name + "\":{\"dtype\":\"" + p.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < p.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(p.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + p.bytes.size()) + "]}";
    data += p.bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string changed_checkpoint(const std::string& from, const std::string& name,
                               const std::function<void(std::vector<Piece>&)>& change,
                               const std::string& config) {
  const SafetensorsFile f = SafetensorsFile::open(from + "/model.safetensors");
  std::vector<Piece> pieces;
  for (const SafetensorsEntry& e : f.tensors()) {
    const BinaryArray v = f.view(e);
    pieces.push_back(
        {e.name, e.dtype, e.shape,
         std::string(reinterpret_cast<const char*>(v.data), static_cast<size_t>(e.end - e.begin))});
  }
  change(pieces);
  const std::string dir = temp_dir() + "/" + name;
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/model.safetensors", std::ios::binary | std::ios::trunc)
      << safetensors_bytes(pieces);
  std::ofstream(dir + "/config.json", std::ios::trunc)
      << (config.empty() ? read_text(from + "/config.json") : config);
  return dir;
}

Tensor<double> load_npy(const std::string& path, int max_rank) {
  return view_npy(FileBytes::from_string(read_text(path)), path, max_rank)
      .to_tensor(path, CellKind::kExtended);
}

}  // namespace attn::test
