// The emitted program is built from the resolved Problem: inputs with their
// batch axis, weights in math layout (the torch layout is shown through
// F.linear), masks already combined from the document's forms. That keeps
// the program short; the golden tests check attn's reading of documents
// against PyTorch separately. A large tensor read from a file is loaded
// from it instead (p.origins), and brought to the Problem's form by the
// same steps in PyTorch: a batch axis, per-head weights joined, a mask
// broadcast to rank 4.
#include "attn/emit_pytorch.h"

#include <cmath>
#include <map>

#include "attn/escape.h"
#include "base/number_text.h"
#include "problem/variant_unit.h"

namespace attn {

namespace {

void append_py_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "math.nan";
  } else if (std::isinf(v)) {
    out += v > 0 ? "math.inf" : "-math.inf";
  } else {
    append_shortest(out, v);
  }
}

void append_py_level(std::string& out, const double* d, const Shape& s, size_t axis, int indent) {
  if (axis + 1 == s.size()) {
    out += '[';
    for (int64_t i = 0; i < s[axis]; ++i) {
      if (i) out += ", ";
      append_py_number(out, d[i]);
    }
    out += ']';
    return;
  }
  int64_t stride = 1;
  for (size_t a = axis + 1; a < s.size(); ++a) stride *= s[a];
  out += '[';
  for (int64_t i = 0; i < s[axis]; ++i) {
    if (i) out += ",\n" + std::string(static_cast<size_t>(indent + 1), ' ');
    append_py_level(out, d + i * stride, s, axis + 1, indent + 1);
  }
  out += ']';
}

std::string py_list(const double* d, const Shape& s, int indent) {
  std::string out;
  if (s.empty()) {
    append_py_number(out, d[0]);
    return out;
  }
  append_py_level(out, d, s, 0, indent);
  return out;
}

std::string py_tensor(const std::string& name, const double* d, const Shape& s) {
  const std::string head = name + " = t(";
  return head + py_list(d, s, static_cast<int>(head.size())) + ")\n";
}

std::string py_matrix(const std::string& name, const MatrixR& m) {
  return py_tensor(name, m.data(), {m.rows(), m.cols()});
}

std::string py_vector(const std::string& name, const Eigen::VectorXd& v) {
  return py_tensor(name, v.data(), {v.size()});
}

std::string num(double v) {
  std::string s;
  append_py_number(s, v);
  return s;
}

// A tensor the program loads from the file the run read it from: the
// expression that gives it as the document held it, and that shape.
struct Load {
  std::string expr;
  Shape shape;
  MatrixFormat format;
};
using Loads = std::map<std::string, Load>;  // by the tensor's name in the document

std::string py_ints(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out;
}

// The expression that reads the tensor and repeats what attn did to it.
std::string load_expr(const TensorOrigin& o) {
  const std::string path = python_path_literal(o.path);
  std::string e;
  switch (o.format) {
    case MatrixFormat::kNpy:
      e = "npy(" + path + ")";
      break;
    case MatrixFormat::kNpz:
      e = "npz(" + path + ", " + python_string_literal(o.tensor) + ")";
      break;
    case MatrixFormat::kSafetensors:
      e = "safetensors(" + path + ", " + python_string_literal(o.tensor) + ")";
      break;
    case MatrixFormat::kCsv:
      e = "csv_matrix(" + path + ", " + python_string_literal(std::string(1, o.delimiter)) + ", " +
          (o.header ? "True" : "False") + ", " + (o.label_column ? "True" : "False") + ")";
      break;
    case MatrixFormat::kJson:
      e = "json_tensor(" + path + ")";
      break;
    case MatrixFormat::kGguf:
      e = "gguf(" + path + ", " + python_string_literal(o.tensor) + ")";
      break;
  }
  if (o.columns >= 0) {
    e += "[..., " + std::to_string(o.first_column) + ":" +
         std::to_string(o.first_column + o.columns) + "]";
  }
  if (o.add != 0) e = "(" + e + " + " + num(o.add) + ")";
  return e;
}

// The tensors p read from files that the program loads: those of at least
// load_from values. Valid lengths are always written out (one per query).
Loads loads_of(const Problem& p, int64_t load_from) {
  Loads loads;
  for (const auto& [name, o] : p.origins) {
    if (name == "valid_lens" || shape_size(o.shape) < load_from) continue;
    loads[name] = Load{load_expr(o), o.shape, o.format};
  }
  return loads;
}

const Load* loaded(const Loads& l, const std::string& name) {
  const auto it = l.find(name);
  return it == l.end() ? nullptr : &it->second;
}

// `var = ...` of an input with its batch axis: loaded, with the axis of 1
// attn adds to an unbatched input, or written out.
std::string input_line(const Loads& l, const std::string& var, const std::string& name,
                       const Tensor<double>& t) {
  if (const Load* ld = loaded(l, name)) {
    return var + " = " + ld->expr + (ld->shape.size() == 2 ? "[None]" : "") + "\n";
  }
  return py_tensor(var, t.data(), t.shape());
}

// `var = ...` of a weight matrix, in math layout [in][out] or, with
// `torch`, transposed ([out][in]): loaded from its file (per-head weights
// joined so head h owns block h, as attn joins them) or written out from
// `math`.
std::string matrix_line(const Problem& p, const Loads& l, const std::string& var,
                        const std::string& name, const MatrixR& math, bool torch) {
  const Load* ld = loaded(l, name);
  if (!ld) return torch ? py_matrix(var, math.transpose()) : py_matrix(var, math);
  const bool given_torch = p.params_layout == ParamsLayout::kTorch;
  std::string e = ld->expr;
  if (ld->shape.size() == 3) {
    const int64_t h = ld->shape[0], a = ld->shape[1], b = ld->shape[2];
    e += given_torch ? ".reshape(" + std::to_string(h * a) + ", " + std::to_string(b) + ")"
                     : ".permute(1, 0, 2).reshape(" + std::to_string(a) + ", " +
                           std::to_string(h * b) + ")";
  }
  if (given_torch != torch) e += ".T";
  return var + " = " + e + "\n";
}

// `var = ...` of a vector: loaded (a per-head [heads][d] one flattened) or
// written out.
std::string vector_line(const Loads& l, const std::string& var, const std::string& name,
                        const Eigen::VectorXd& v) {
  if (const Load* ld = loaded(l, name)) {
    return var + " = " + ld->expr + (ld->shape.size() == 2 ? ".reshape(-1)" : "") + "\n";
  }
  return py_vector(var, v);
}

// A loaded mask or bias in the problem's shape: broadcast axes of 1 put
// in, 1 - it for a mask given with 1 = keep.
std::string scores_expr(const Load& ld, const Shape& shape, bool flip) {
  return (flip ? "(1 - " + ld.expr + ")" : ld.expr) + ".reshape(" + py_ints(shape) + ")";
}

// The readers the loads need, in plain NumPy.
std::string loaders(const Loads& loads, int64_t load_from) {
  if (loads.empty()) return "";
  bool used[6] = {};
  for (const auto& [name, l] : loads) used[static_cast<int>(l.format)] = true;
  std::string s = "# Tensors of " + std::to_string(load_from) +
                  " values or more are loaded from the files the run read, by\n"
                  "# the same paths (relative ones from the directory attn ran in).\n";
  if (used[static_cast<int>(MatrixFormat::kNpy)]) {
    s += "def npy(path):  # any dtype, byte order or Fortran order\n"
         "    return torch.from_numpy(np.ascontiguousarray(np.load(path), "
         "dtype=np.float64)).to(DTYPE)\n\n\n";
  }
  if (used[static_cast<int>(MatrixFormat::kNpz)]) {
    s += "def npz(path, name):  # one array of np.savez's archive\n"
         "    with np.load(path) as archive:\n"
         "        return torch.from_numpy(np.ascontiguousarray(archive[name], "
         "dtype=np.float64)).to(DTYPE)\n\n\n";
  }
  if (used[static_cast<int>(MatrixFormat::kSafetensors)]) {
    s += "def safetensors(path, name):\n"
         "    \"\"\"One tensor of a .safetensors file, with json and NumPy alone: an 8-byte\n"
         "    little-endian header length, the JSON header, then the tensors' bytes.\"\"\"\n"
         "    with open(path, 'rb') as f:\n"
         "        n = int.from_bytes(f.read(8), 'little')\n"
         "        entry = json.loads(f.read(n))[name]\n"
         "        begin, end = entry['data_offsets']\n"
         "        f.seek(8 + n + begin)\n"
         "        raw = np.frombuffer(f.read(end - begin), dtype=np.uint8)\n"
         "    dtype = entry['dtype']\n"
         "    if dtype == 'BF16':  # the upper half of a float32\n"
         "        cells = (raw.view('<u2').astype(np.uint32) << 16).view(np.float32)\n"
         "    elif dtype == 'F8_E5M2':  # the upper half of a float16\n"
         "        cells = (raw.astype(np.uint16) << 8).view(np.float16)\n"
         "    elif dtype == 'F8_E4M3':  # e4m3fn: no infinities; 0x7f and 0xff are NaN\n"
         "        e, m = (raw >> 3) & 15, (raw & 7) / 8.0\n"
         "        cells = np.where(e == 0, m * 2.0**-6, (1 + m) * np.exp2(e - 7.0))\n"
         "        cells = np.where(raw & 0x80, -cells, cells)\n"
         "        cells[(raw & 0x7F) == 0x7F] = np.nan\n"
         "    else:\n"
         "        cells = raw.view({'F64': '<f8', 'F32': '<f4', 'F16': '<f2', 'I64': '<i8',\n"
         "                          'I32': '<i4', 'I16': '<i2', 'I8': 'i1', 'U64': '<u8',\n"
         "                          'U32': '<u4', 'U16': '<u2', 'U8': 'u1', 'BOOL': '?'}[dtype])\n"
         "    return "
         "torch.from_numpy(cells.astype(np.float64).reshape(entry['shape'])).to(DTYPE)\n\n\n";
  }
  if (used[static_cast<int>(MatrixFormat::kGguf)]) {
    s += "def gguf(path, name):\n"
         "    \"\"\"One tensor of a GGUF file, with struct and NumPy alone: the metadata is\n"
         "    skipped (all but general.alignment), the tensor's info found, and its cells read\n"
         "    from the data section; Q8_0 is dequantized as ggml does (a float16 scale\n"
         "    times 32 signed bytes, in float32).\"\"\"\n"
         "    raw = np.memmap(path, dtype=np.uint8, mode='r')\n"
         "    pos = 4\n"
         "\n"
         "    def take(fmt):\n"
         "        nonlocal pos\n"
         "        (v,) = struct.unpack_from('<' + fmt, raw, pos)\n"
         "        pos += struct.calcsize('<' + fmt)\n"
         "        return v\n"
         "\n"
         "    def string():\n"
         "        nonlocal pos\n"
         "        n = take('Q')\n"
         "        pos += n\n"
         "        return bytes(raw[pos - n:pos])\n"
         "\n"
         "    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}\n"
         "\n"
         "    def skip(t):  # a value of type t: 8 a string, 9 an array\n"
         "        nonlocal pos\n"
         "        if t == 8:\n"
         "            string()\n"
         "        elif t == 9:\n"
         "            et, n = take('I'), take('Q')\n"
         "            if et in sizes:\n"
         "                pos += n * sizes[et]\n"
         "            else:\n"
         "                for _ in range(n):\n"
         "                    skip(et)\n"
         "        else:\n"
         "            pos += sizes[t]\n"
         "\n"
         "    take('I')  # the version: 2 and 3 are laid out alike\n"
         "    n_tensors, n_kv = take('Q'), take('Q')\n"
         "    alignment = 32\n"
         "    for _ in range(n_kv):\n"
         "        key, t = string(), take('I')\n"
         "        if key == b'general.alignment' and t == 4:\n"
         "            alignment = take('I')\n"
         "        else:\n"
         "            skip(t)\n"
         "    infos = {}\n"
         "    for _ in range(n_tensors):\n"
         "        tensor = string()\n"
         "        ne = [take('Q') for _ in range(take('I'))]\n"
         "        infos[tensor] = (ne, take('I'), take('Q'))\n"
         "    ne, t, offset = infos[name.encode()]\n"
         "    at = (pos + alignment - 1) // alignment * alignment + offset\n"
         "    count = math.prod(ne)\n"
         "    if t == 8:  # Q8_0: blocks of a float16 scale and 32 signed bytes\n"
         "        blocks = np.frombuffer(raw, np.uint8, count // 32 * 34, at).reshape(-1, 34)\n"
         "        d = blocks[:, :2].copy().view('<f2').astype(np.float32)\n"
         "        cells = (blocks[:, 2:].copy().view(np.int8).astype(np.float32) * d).reshape(-1)\n"
         "    elif t == 30:  # BF16: the upper half of a float32\n"
         "        halfs = np.frombuffer(raw, '<u2', count, at).astype(np.uint32)\n"
         "        cells = (halfs << 16).view(np.float32)\n"
         "    else:\n"
         "        cells = np.frombuffer(raw, {0: '<f4', 1: '<f2', 28: '<f8', 24: 'i1', 25: '<i2',\n"
         "                                    26: '<i4', 27: '<i8'}[t], count, at)\n"
         "    return torch.from_numpy(cells.astype(np.float64).reshape(ne[::-1])).to(DTYPE)\n\n\n";
  }
  if (used[static_cast<int>(MatrixFormat::kCsv)]) {
    s += "def csv_matrix(path, delimiter, header, labels):\n"
         "    \"\"\"A CSV matrix as attn reads it: '#' starts a comment, blank lines are\n"
         "    skipped, the header row and the label column (where attn found them) are\n"
         "    left out, true/false are 1/0.\"\"\"\n"
         "    rows = []\n"
         "    with open(path, encoding='utf-8-sig', newline='') as f:\n"
         "        for line in f.read().split('\\n'):\n"
         "            line = line[:-1] if line.endswith('\\r') else line\n"
         "            quoted = False\n"
         "            for i, c in enumerate(line if '#' in line else ''):\n"
         "                quoted = quoted != (c == '\"')\n"
         "                if c == '#' and not quoted:\n"
         "                    line = line[:i]\n"
         "                    break\n"
         "            if not line.strip(' \\t'):\n"
         "                continue\n"
         "            if delimiter == ' ':\n"
         "                cells = re.findall(r'\"(?:[^\"]|\"\")*\"|[^ \\t]+', line)\n"
         "            else:\n"
         "                cells = next(csv.reader([line], delimiter=delimiter, "
         "skipinitialspace=True))\n"
         "            rows.append(cells[1:] if labels else cells)\n"
         "    words = {'true': 1.0, 'false': 0.0}\n"
         "    return t([[float(words.get(c.strip(), c)) for c in row]\n"
         "              for row in rows[1 if header else 0:]])\n\n\n";
  }
  if (used[static_cast<int>(MatrixFormat::kJson)]) {
    s += "def json_tensor(path):  # a nested array; \"inf\", \"-inf\", \"nan\", true, false\n"
         "    def cells(x):\n"
         "        return [cells(e) for e in x] if isinstance(x, list) else float(x)\n\n"
         "    with open(path, encoding='utf-8-sig') as f:\n"
         "        return t(cells(json.load(f)))\n\n\n";
  }
  return s;
}

// The variants' PyTorch lines (variants/) write their params
// through these: loaded from the run's files, or written out.
class PyLines : public detail::PyParams {
 public:
  PyLines(const Problem& p, const Loads& l) : p_(p), l_(l) {}
  std::string matrix(const std::string& var, const std::string& name,
                     const MatrixR& m) const override {
    return matrix_line(p_, l_, var, name, m, false);
  }
  std::string vector(const std::string& var, const std::string& name,
                     const Eigen::VectorXd& v) const override {
    return vector_line(l_, var, name, v);
  }

 private:
  const Problem& p_;
  const Loads& l_;
};

// BiDAF's program (biattention) is its own: two attentions and a 4d output.
bool bidaf(const Problem& p) { return detail::bidaf_pipeline(p.variant); }

bool mha_shaped(const Problem& p) {
  const Params& w = p.params;
  if (!detail::variant_unit(p.variant).torch_mha || p.scale.kind != ScaleKind::kSqrtDk)
    return false;
  if (p.temperature != 1.0 || p.scale_at != ScaleAt::kScores || p.dropout > 0) return false;
  if (p.four_d || !std::isinf(p.mask_fill)) return false;
  // nn.MultiheadAttention has none of current models' settings.
  if (p.grouped() || p.rope || !p.alibi.empty() || p.softcap > 0 || !p.sinks.empty() ||
      p.masks.window || p.qk_norm > 0) {
    return false;
  }
  if (p.fully_masked != FullyMasked::kZero && p.fully_masked != FullyMasked::kNan) return false;
  if (!w.W_q || !w.W_k || !w.W_v) return false;
  const int64_t E = w.W_q->cols();
  if (p.query_in.dim(2) != E || w.W_k->cols() != E || w.W_v->cols() != E) return false;
  if (w.W_o && (w.W_o->rows() != E || w.W_o->cols() != E)) return false;
  return true;
}

// The docstring holds fixed text only. The command line and the input's
// title come from outside attn (file names, the document), so they are
// Python string literals: a title holding """ or a newline stays data.
std::string header(const Problem& p, const std::string& command, const Loads& loads, DType dtype) {
  const std::string bits = dtype == DType::kF32 ? "32" : "64";
  bool csv = false, gguf = false;
  for (const auto& [name, l] : loads) {
    csv |= l.format == MatrixFormat::kCsv;
    gguf |= l.format == MatrixFormat::kGguf;
  }
  std::string s =
      "#!/usr/bin/env python3\n"
      "\"\"\"Recomputes an attn run (COMMAND) with PyTorch in float" +
      bits +
      ".\n\n"
      "Generated by attn --emit-pytorch. Prints {\"output\": ..., \"weights\": ...} like\n"
      "`attn run --format json --weights`, so the numbers can be compared. The\n"
      "input's title (TITLE) goes to stderr, so stdout holds only the JSON.\n"
      "\"\"\"\n" +
      std::string(csv ? "import csv\n" : "") + "import json\nimport math\n" +
      (csv ? "import re\n" : "") + (gguf ? "import struct\n" : "") + "import sys\n\n" +
      (loads.empty() ? "" : "import numpy as np\n") +
      "import torch\nimport torch.nn.functional as F\n\n"
      "COMMAND = " +
      python_string_literal(command) +
      "\n"
      "TITLE = " +
      python_string_literal(p.title) +
      "\n"
      "if TITLE:\n    print(TITLE, file=sys.stderr)\n\n"
      "DTYPE = torch.float" +
      bits +
      "  # the run's --dtype\n"
      "torch.set_default_dtype(DTYPE)\n\n\n"
      "def t(x):\n    return torch.tensor(x, dtype=DTYPE)\n\n\n";
  return s;
}

std::string inputs(const Problem& p, const Loads& l) {
  std::string s = "# Inputs, with a leading batch axis";
  s += p.batched ? ".\n" : " of 1 (attn adds it to unbatched input).\n";
  s += input_line(l, p.query_name == "X" ? "X" : "Q_in", p.query_name, p.query_in);
  if (p.mode == Mode::kCross || bidaf(p)) {
    if (p.mode == Mode::kCross) s += input_line(l, "Y", "Y", p.key_in);
    if (p.mode == Mode::kSelf) s += "Y = X\n";
  } else if (p.mode == Mode::kQkv) {
    s += input_line(l, "K_in", "K", p.key_in);
    if (p.value_name == "V") {
      s += input_line(l, "V_in", "V", p.value_in);
    } else {
      s += "V_in = K_in  # no V given: V = K\n";
    }
  }
  s += "\n";
  return s;
}

// The boolean mask [B][H][Lq][Lk] (True = may not attend) from every mask
// kind, and the additive bias.
std::string masks(const Problem& p, const Loads& l) {
  const Masks& m = p.masks;
  std::string s;
  s += "B, H, Lq, Lk = " + std::to_string(p.batch) + ", " + std::to_string(p.heads) + ", " +
       std::to_string(p.len_q) + ", " + std::to_string(p.len_k) + "\n";
  if (!m.any()) return s + "\n";
  s += "masked = torch.zeros(B, H, Lq, Lk, dtype=torch.bool)  # True: may not attend\n";
  if (!m.mask.empty()) {
    if (const Load* ld = loaded(l, "mask")) {
      s +=
          "mask = " + scores_expr(*ld, m.mask.shape(), m.flipped) + ".bool()  # [B|1][H|1][q][k]\n";
    } else {
      std::vector<double> d(m.mask.values().begin(), m.mask.values().end());
      s += "mask = t(" + py_list(d.data(), m.mask.shape(), 9) + ").bool()  # [B|1][H|1][q][k]\n";
    }
    s += "masked |= mask\n";
  }
  if (!m.key_padding.empty()) {
    if (const Load* ld = loaded(l, "key_padding_mask")) {
      s += "key_padding_mask = " + scores_expr(*ld, m.key_padding.shape(), m.flipped) + ".bool()\n";
    } else {
      std::vector<double> d(m.key_padding.values().begin(), m.key_padding.values().end());
      s += "key_padding_mask = t(" + py_list(d.data(), m.key_padding.shape(), 21) + ").bool()\n";
    }
    s += "masked |= key_padding_mask[:, None, None, :]\n";
  }
  if (!m.valid_lens.empty()) {
    std::vector<double> d(m.valid_lens.begin(), m.valid_lens.end());
    s += "valid_lens = t(" + py_list(d.data(), {p.batch, p.len_q}, 15) + ")  # d2l, per query\n";
    s += "masked |= (torch.arange(Lk)[None, None, :] >= valid_lens[:, :, None])[:, None]\n";
  }
  const std::string d = std::to_string(m.diagonal);
  if (m.causal && m.diagonal == 0) {
    s += "masked |= torch.ones(Lq, Lk, dtype=torch.bool).triu(1)  # causal, top-left aligned\n";
  } else if (m.causal) {
    s += "# causal on positions: query i at " + std::to_string(p.q_offset) + " + i, key j at " +
         std::to_string(p.k_offset) + " + j" +
         (p.causal_bottom_right ? " (bottom-right: the last query sees the last key)" : "") + "\n";
    s += "masked |= torch.ones(Lq, Lk, dtype=torch.bool).triu(1 + " + d + ")\n";
  }
  if (m.window) {
    if (p.q_offset == 0 && p.k_offset == 0) {
      s += "i, j = torch.arange(Lq)[:, None], torch.arange(Lk)[None, :]\n";
    } else {
      s += "i, j = torch.arange(Lq)[:, None] + " + std::to_string(p.q_offset) +
           ", torch.arange(Lk)[None, :] + " + std::to_string(p.k_offset) + "  # positions\n";
    }
    if (m.window_left >= 0) {
      s += "masked |= j < i - " + std::to_string(m.window_left) + "  # window, left side\n";
    }
    if (m.window_right >= 0) {
      s += "masked |= j > i + " + std::to_string(m.window_right) + "  # window, right side\n";
    }
  }
  if (!m.bias.empty()) {
    if (const Load* ld = loaded(l, "attn_bias")) {
      s += "attn_bias = " + scores_expr(*ld, m.bias.shape(), false) + "\n";
    } else {
      s += py_tensor("attn_bias", m.bias.data(), m.bias.shape());
    }
  }
  s += "\n";
  return s;
}

std::string projection(const Problem& p, const Loads& l, const std::string& out,
                       const std::string& in, const std::optional<MatrixR>& W,
                       const std::optional<Eigen::VectorXd>& b, const char* w_name,
                       const char* b_name) {
  if (!W) return out + " = " + in + "\n";
  std::string s;
  if (p.params_layout == ParamsLayout::kTorch) {
    s += matrix_line(p, l, w_name, w_name, *W, true);
    if (b) s += vector_line(l, b_name, b_name, *b);
    s += out + " = F.linear(" + in + ", " + w_name + (b ? std::string(", ") + b_name : "") + ")\n";
  } else {
    s += matrix_line(p, l, w_name, w_name, *W, false);
    if (b) s += vector_line(l, b_name, b_name, *b);
    s += out + " = " + in + " @ " + w_name + (b ? std::string(" + ") + b_name : "") + "\n";
  }
  return s;
}

std::string fully_masked_fix(const Problem& p, const std::string& w, const std::string& dead) {
  switch (p.fully_masked) {
    case FullyMasked::kZero:
      return w + " = torch.where(" + dead + ", torch.zeros_like(" + w + "), " + w +
             ")  # fully_masked: zero\n";
    case FullyMasked::kUniform:
      return w + " = torch.where(" + dead + ", torch.full_like(" + w + ", 1 / Lk), " + w +
             ")  # fully_masked: uniform\n";
    case FullyMasked::kNan:
      return w + " = torch.where(" + dead + ", torch.full_like(" + w + ", math.nan), " + w +
             ")  # fully_masked: nan\n";
    case FullyMasked::kError:
      return "assert not " + dead + ".any(), 'a row has every key masked (fully_masked: error)'\n";
  }
  return "";
}

std::string dropout_code(const Problem& p) {
  return "\n\ndef splitmix64(z):  # attn's dropout generator (see attn's docs)\n"
         "    m = (1 << 64) - 1\n"
         "    z = (z + 0x9E3779B97F4A7C15) & m\n"
         "    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m\n"
         "    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m\n"
         "    return z ^ (z >> 31)\n\n\n"
         "def keep_mask(seed, p, shape):\n"
         "    n = math.prod(shape)\n"
         "    keep = [(splitmix64(seed ^ splitmix64(c)) >> 11) * 2.0**-53 >= p for c in range(n)]\n"
         "    return torch.tensor(keep).reshape(shape)\n\n\n" +
         std::string("seed, p = ") + std::to_string(p.seed) + ", " + num(p.dropout) + "\n";
}

std::string factor_expr(const Problem& p, const std::string& d_k) {
  switch (p.scale.kind) {
    case ScaleKind::kSqrtDk:
      return "1 / math.sqrt(" + d_k + ")";
    case ScaleKind::kDk:
      return "1 / " + d_k;
    case ScaleKind::kLongSeq:
      return "1 / math.sqrt(" + d_k + " * Lk)";
    case ScaleKind::kValue:
      return num(p.scale.value);
    case ScaleKind::kNorm:
      return "1 / s.flatten(-2).norm(dim=-1).clamp_min(1e-12)[..., None, None]  # 1/‖S‖_F";
    case ScaleKind::kNone:
    case ScaleKind::kCosine:
      return "1.0";
  }
  return "1.0";
}

std::string output_code(const Problem& p, bool average_heads) {
  std::string s =
      "\n\ndef plain(x):  # nested lists; non-finite numbers as strings, as attn writes them\n"
      "    if isinstance(x, list):\n"
      "        return [plain(e) for e in x]\n"
      "    return x if math.isfinite(x) else ('nan' if math.isnan(x) else "
      "('inf' if x > 0 else '-inf'))\n\n\n";
  // weights: [B][H][Lq][Lk] -> the documented shape
  if (average_heads && p.heads > 1) {
    s += "weights = weights.mean(dim=1)\n";
  } else if (!p.four_d && p.heads == 1) {
    s += "weights = weights[:, 0]\n";
  }
  if (!p.batched) s += "output, weights = output[0], weights[0]\n";
  s += "print(json.dumps({\"output\": plain(output.tolist()), \"weights\": "
       "plain(weights.tolist())}))\n";
  return s;
}

std::string mha_program(const Problem& p, const Loads& l) {
  const Params& w = p.params;
  const int64_t E = w.W_q->cols();
  const bool same_dims = p.key_in.dim(2) == E && p.value_in.dim(2) == E;
  std::string s =
      "# nn.MultiheadAttention with attn's weights copied in (math layout W is [in][out],\n"
      "# nn.Linear stores W.T).\n";
  s += matrix_line(p, l, "W_q", "W_q", *w.W_q, false) +
       matrix_line(p, l, "W_k", "W_k", *w.W_k, false) +
       matrix_line(p, l, "W_v", "W_v", *w.W_v, false);
  auto bias = [&](const char* n, const std::optional<Eigen::VectorXd>& b, int64_t len) {
    if (b) return vector_line(l, n, n, *b);
    return std::string(n) + " = torch.zeros(" + std::to_string(len) + ")\n";
  };
  s += bias("b_q", w.b_q, E) + bias("b_k", w.b_k, E) + bias("b_v", w.b_v, E);
  if (w.W_o) {
    s += matrix_line(p, l, "W_o", "W_o", *w.W_o, false);
  } else {
    s += "W_o = torch.eye(" + std::to_string(E) + ")  # no W_o: identity\n";
  }
  s += bias("b_o", w.b_o, E);
  const std::string key = p.mode == Mode::kQkv ? "K_in" : (p.mode == Mode::kCross ? "Y" : "X");
  const std::string val = p.mode == Mode::kQkv ? "V_in" : key;
  const std::string query = p.mode == Mode::kQkv ? "Q_in" : "X";
  s += "\nmha = torch.nn.MultiheadAttention(" + std::to_string(E) + ", " + std::to_string(p.heads) +
       ", kdim=" + std::to_string(p.key_in.dim(2)) + ", vdim=" + std::to_string(p.value_in.dim(2)) +
       ", batch_first=True)\n";
  s += "with torch.no_grad():\n";
  if (same_dims) {
    s += "    mha.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))\n";
  } else {
    s += "    mha.q_proj_weight.copy_(W_q.T)\n    mha.k_proj_weight.copy_(W_k.T)\n"
         "    mha.v_proj_weight.copy_(W_v.T)\n";
  }
  s += "    mha.in_proj_bias.copy_(torch.cat([b_q, b_k, b_v]))\n";
  s += "    mha.out_proj.weight.copy_(W_o.T)\n    mha.out_proj.bias.copy_(b_o)\n\n";
  // One float or bool attn_mask of shape [B*H][Lq][Lk] carries every mask.
  if (!p.masks.bias.empty()) {
    s += "attn_mask = attn_bias.expand(B, H, Lq, Lk).masked_fill(masked, -math.inf)"
         ".reshape(B * H, Lq, Lk)\n";
  } else if (p.masks.any()) {
    s += "attn_mask = masked.reshape(B * H, Lq, Lk)\n";
  } else {
    s += "attn_mask = None\n";
  }
  s += "output, weights = mha(" + query + ", " + key + ", " + val +
       ", attn_mask=attn_mask, need_weights=True, average_attn_weights=False)\n";
  s += "output, weights = output.detach(), weights.detach()\n";
  if (p.fully_masked == FullyMasked::kZero) {
    s += "# PyTorch gives NaN for a row with every key masked; attn (fully_masked: zero)\n"
         "# gives zero weights and a zero attention output, so the row becomes b_o.\n";
    s += "dead = torch.isnan(weights).all(dim=-1)  # [B][H][Lq]\n";
    s += "weights = torch.where(dead[..., None], torch.zeros_like(weights), weights)\n";
    s += "if dead.any():\n";
    s += "    v = (" + val + " @ W_v + b_v).view(B, Lk, H, -1).transpose(1, 2)\n";
    s += "    heads = (weights @ v).transpose(1, 2).reshape(B, Lq, -1)\n";
    s += "    output = heads @ W_o + b_o\n";
  }
  return s;
}

// RoPE on q and k ([B][H][L][d]), as the models' reference code writes it.
std::string rope_code(const Problem& p) {
  if (!p.rope) return "";
  const Rope& r = *p.rope;
  std::string s = "\n# RoPE: theta " + num(r.theta) + ", the first " + std::to_string(r.dims) +
                  " features of each head rotate.\n";
  s += "theta, dims = " + num(r.theta) + ", " + std::to_string(r.dims) + "\n";
  if (r.scaling) {
    // The scaled frequencies as attn computed them (transformers'
    // rope_init_fn of the same name gives them in float32).
    s += "# " + std::string(rope_scaling_name(r.scaling->kind)) +
         " scaling: the frequencies of the rotated pairs for this sequence\n";
    s += "inv_freq = torch.tensor([";
    for (size_t i = 0; i < r.inv_freq.size(); ++i) s += (i ? ", " : "") + num(r.inv_freq[i]);
    s += "], dtype=torch.float64)\n";
  } else {
    s += "inv_freq = 1.0 / (theta ** (torch.arange(0, dims, 2, dtype=torch.float64) / dims))\n";
  }
  const std::string af = r.attention != 1 ? " * " + num(r.attention) : "";
  if (r.layout == RopeLayout::kHalf) {
    s += "\n\ndef rotate_half(x):  # Hugging Face Llama\n"
         "    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]\n"
         "    return torch.cat((-x2, x1), dim=-1)\n\n\n"
         "def rope(x, start):  # layout half (GPT-NeoX, HF Llama); the rest passes through\n"
         "    freqs = torch.outer(torch.arange(x.shape[-2], dtype=torch.float64) + start, "
         "inv_freq)\n"
         "    emb = torch.cat((freqs, freqs), dim=-1)\n"
         "    cos, sin = (emb.cos()" +
         af + ").to(x.dtype), (emb.sin()" + af +
         ").to(x.dtype)\n"
         "    rot, rest = x[..., :dims], x[..., dims:]\n"
         "    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)\n\n\n";
  } else {
    s += "\n\ndef rope(x, start):  # layout interleaved (RoFormer, Meta Llama's freqs_cis)\n"
         "    freqs = torch.outer(torch.arange(x.shape[-2], dtype=torch.float64) + start, "
         "inv_freq)\n"
         "    freqs_cis = torch.polar(torch.ones_like(freqs)" +
         af +
         ", freqs)\n"
         "    rot, rest = x[..., :dims], x[..., dims:]\n"
         "    pairs = torch.view_as_complex(rot.reshape(*rot.shape[:-1], -1, 2).contiguous())\n"
         "    turned = torch.view_as_real(pairs * freqs_cis).flatten(-2).to(x.dtype)\n"
         "    return torch.cat((turned, rest), dim=-1)\n\n\n";
  }
  s += "q, k = rope(q, " + std::to_string(r.q_offset) + "), rope(k, " + std::to_string(r.k_offset) +
       ")\n";
  return s;
}

std::string generic_program(const Problem& p, const Loads& l) {
  const Params& w = p.params;
  std::string s;
  const detail::VariantUnit& unit = detail::variant_unit(p.variant);
  if (p.four_d) {
    s += "q, k, v = Q_in, K_in, V_in  # [B][H][L][d], given per head\n";
  } else {
    s += "# Projections (math layout: Q = X·W_q + b_q).\n";
    const std::string qsrc = p.mode == Mode::kQkv ? "Q_in" : "X";
    const std::string ksrc = p.mode == Mode::kQkv ? "K_in" : (p.mode == Mode::kCross ? "Y" : "X");
    const std::string vsrc = p.mode == Mode::kQkv ? "V_in" : ksrc;
    if (!unit.projects_qk) {
      s += "Q, K, V = " + qsrc + ", " + ksrc + ", " + vsrc + "\n";
    } else {
      if (!w.W_q && !w.W_k && !w.W_v) {
        s += "Q, K, V = " + qsrc + ", " + ksrc + ", " + vsrc + "  # no projections\n";
      } else {
        s += projection(p, l, "Q", qsrc, w.W_q, w.b_q, "W_q", "b_q");
        s += projection(p, l, "K", ksrc, w.W_k, w.b_k, "W_k", "b_k");
        s += projection(p, l, "V", vsrc, w.W_v, w.b_v, "W_v", "b_v");
      }
    }
    if (p.grouped()) {
      s += "\n\ndef split(x, n):  # [B][L][n*d] -> [B][n][L][d]: head h owns column block h\n"
           "    return x.view(x.shape[0], x.shape[1], n, -1).transpose(1, 2)\n\n\n";
      s += "KV = " + std::to_string(p.kv_heads) + "  # key/value heads\n";
      s += "q, k, v = split(Q, H), split(K, KV), split(V, KV)\n";
    } else {
      s += "\n\ndef split(x):  # [B][L][H*d] -> [B][H][L][d]: head h owns column block h\n"
           "    return x.view(x.shape[0], x.shape[1], H, -1).transpose(1, 2)\n\n\n";
      s += "q, k, v = split(Q), split(K), split(V)\n";
    }
  }
  if (p.qk_norm > 0) {
    const int64_t d = p.head_dim_q();
    s += "\n# Q/K norm: an RMSNorm of each head's rows (Qwen 3, Gemma 3), before RoPE.\n";
    s += w.q_norm ? vector_line(l, "q_norm", "q_norm", *w.q_norm)
                  : "q_norm = torch.ones(" + std::to_string(d) + ", dtype=DTYPE)\n";
    s += w.k_norm ? vector_line(l, "k_norm", "k_norm", *w.k_norm)
                  : "k_norm = torch.ones(" + std::to_string(d) + ", dtype=DTYPE)\n";
    s += "\n\ndef rms_norm(x, weight, eps=" + num(p.qk_norm) +
         "):\n"
         "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight\n\n\n";
    s += "q, k = rms_norm(q, q_norm), rms_norm(k, k_norm)\n";
  }
  s += rope_code(p);
  if (p.grouped()) {
    s += "# Grouped-query attention: query head h reads K/V head h // (H // KV), as\n"
         "# Llama's repeat_kv.\n";
    s += "k = torch.repeat_interleave(k, H // " + std::to_string(p.kv_heads) + ", dim=1)\n";
    s += "v = torch.repeat_interleave(v, H // " + std::to_string(p.kv_heads) + ", dim=1)\n";
  }
  if (p.scale.kind == ScaleKind::kCosine) {
    s += "q, k = F.normalize(q, dim=-1, eps=1e-12), F.normalize(k, dim=-1, eps=1e-12)  # cosine\n";
  }
  s += "d_k = q.shape[-1]\n\n# Scores.\n";
  s += unit.pytorch_scores(p, PyLines(p, l));
  const std::string factor = factor_expr(p, "d_k");
  const bool at_output = p.scale_at == ScaleAt::kOutput;
  s += "factor = " + factor + "\n";
  const std::string temp = p.temperature == 1.0 ? "" : " / " + num(p.temperature);
  if (!at_output) s += "s = s * factor" + temp + "\n";
  if (p.softcap > 0) {
    s += "c = " + num(p.softcap) + "\ns = torch.tanh(s / c) * c  # softcap (Gemma 2)\n";
  }
  if (!p.masks.bias.empty()) s += "s = s + attn_bias\n";
  if (!p.alibi.empty()) {
    s += py_tensor("slopes", p.alibi.data(), {static_cast<int64_t>(p.alibi.size())});
    if (p.q_offset == 0 && p.k_offset == 0) {
      s += "distance = (torch.arange(Lq)[:, None] - torch.arange(Lk)[None, :]).abs()\n";
    } else {
      s += "distance = ((torch.arange(Lq)[:, None] + " + std::to_string(p.q_offset) +
           ") - (torch.arange(Lk)[None, :] + " + std::to_string(p.k_offset) +
           ")).abs()  # of the positions\n";
    }
    s += "s = s - slopes[None, :, None, None] * distance  # ALiBi\n";
  }
  if (p.masks.any()) s += "s = s.masked_fill(masked, " + num(p.mask_fill) + ")\n";
  if (!p.sinks.empty()) {
    s += py_tensor("sinks", p.sinks.data(), {static_cast<int64_t>(p.sinks.size())});
    s += "# Attention sinks as gpt-oss: a column of sink logits joins the softmax, then\n"
         "# is dropped, so each row of weights sums to less than 1 (a row with every\n"
         "# key masked goes wholly to the sink).\n";
    s += "column = sinks[None, :, None, None].expand(s.shape[0], H, Lq, 1)\n";
    s += "weights = torch.softmax(torch.cat([s, column], dim=-1), dim=-1)[..., :-1]\n";
  } else {
    s += "weights = torch.softmax(s, dim=-1)\n";
  }
  if (p.masks.any() && p.sinks.empty()) {
    s += "dead = (s == -math.inf).all(dim=-1, keepdim=True)  # rows with every key masked\n";
    s += fully_masked_fix(p, "weights", "dead");
  }
  if (p.dropout > 0) {
    s += dropout_code(p);
    s += "dropped = weights * keep_mask(seed, p, weights.shape) / (1 - p)  # inverted dropout\n";
    s += "heads = dropped @ v\n";
  } else {
    s += "heads = weights @ v\n";
  }
  if (at_output) s += "heads = heads * factor" + temp + "  # scale_at output\n";
  if (p.four_d) {
    s += "output = heads\n";
  } else {
    s += "output = heads.transpose(1, 2).reshape(B, Lq, -1)  # concatenate heads\n";
    if (w.W_o) {
      s += projection(p, l, "output", "output", w.W_o, w.b_o, "W_o", "b_o");
    } else if (w.b_o) {
      s += vector_line(l, "b_o", "b_o", *w.b_o) + "output = output + b_o\n";
    }
  }
  return s;
}

std::string biattention_program(const Problem& p, const Loads& l) {
  std::string s = detail::variant_unit(p.variant).pytorch_scores(p, PyLines(p, l));
  if (p.masks.any()) s += "s = s.masked_fill(masked[:, 0], " + num(p.mask_fill) + ")\n";
  s += "weights = torch.softmax(s, dim=-1)  # W1 [B][Lx][Ly]\n";
  if (p.dropout > 0) {
    s += dropout_code(p);
    s += "o1 = (weights * keep_mask(seed, p, weights.shape) / (1 - p)) @ Y\n";
  } else {
    s += "o1 = weights @ Y\n";
  }
  s += "w2 = torch.softmax(s.max(dim=-1).values, dim=-1)  # [B][Lx]\n";
  s += "o2 = (w2[:, None, :] @ X)  # [B][1][d]\n";
  s += "output = torch.cat([X, o1, X * o1, o2 * o1], dim=-1)\n";
  s += "weights = weights[:, None]  # a head axis of 1\n";
  return s;
}

}  // namespace

std::string emit_pytorch(const Problem& p, const std::string& command, bool average_heads,
                         int64_t load_from, DType dtype) {
  const Loads l = loads_of(p, load_from);
  std::string s = header(p, command, l, dtype);
  s += loaders(l, load_from);
  s += inputs(p, l);
  s += masks(p, l);
  if (bidaf(p)) {
    s += biattention_program(p, l);
  } else if (mha_shaped(p)) {
    s += mha_program(p, l);
  } else {
    s += generic_program(p, l);
  }
  s += output_code(p, average_heads);
  return s;
}

}  // namespace attn
