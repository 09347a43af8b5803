// --emit-pytorch: every program attn prints for the data/ examples and the
// golden cases runs under PyTorch and prints attn's numbers to 1e-9. All
// programs run in one Python process (importing torch takes a second).
#include "attn/emit_pytorch.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attn/attention.h"
#include "attn/escape.h"
#include "commands/examples.h"
#include "commands/run.h"
#include "test_util.h"

namespace attn {
namespace {

std::vector<std::string> json_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.substr(n.size() - 5) == ".json") out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool torch_available() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

double as_double(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return NAN;
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}

void flatten(const nlohmann::json& j, std::vector<double>& out) {
  if (j.is_array()) {
    for (const auto& e : j) flatten(e, out);
  } else {
    out.push_back(as_double(j));
  }
}

void expect_close(const Tensor<double>& got, const nlohmann::json& want, const std::string& what) {
  std::vector<double> w;
  flatten(want, w);
  ASSERT_EQ(static_cast<size_t>(got.size()), w.size()) << what;
  for (size_t i = 0; i < w.size(); ++i) {
    const double g = got[static_cast<int64_t>(i)];
    if (std::isnan(w[i]) || std::isnan(g)) {
      EXPECT_TRUE(std::isnan(w[i]) && std::isnan(g)) << what << " at " << i;
      continue;
    }
    EXPECT_LE(std::fabs(g - w[i]), 1e-9 * std::max(1.0, std::fabs(w[i]))) << what << " at " << i;
  }
}

TEST(EmitPytorch, ProgramsReproduceAttnUnderPyTorch) {
  if (!torch_available()) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch); "
                    "the --emit-pytorch cross-check did not run";
  }
  std::vector<std::string> files = json_files(test::source_path("data/examples"));
  for (const char* dir :
       {"data/masks", "data/variants", "tests/golden/cases", "tests/golden/modern"}) {
    for (const std::string& f : json_files(test::source_path(dir))) files.push_back(f);
  }
  ASSERT_GT(files.size(), 100u);
  const std::string dir = test::temp_dir() + "/emit";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  std::vector<Result> results;
  std::ofstream list(dir + "/list.txt");
  // The cross-attention tutorial's example (generated, not a file): its program uses
  // nn.MultiheadAttention with the weights copied in.
  files.push_back("example cross_shapes");
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string text =
        files[i] == "example cross_shapes" ? cross_shapes_example() : test::read_text(files[i]);
    const Problem p = build_problem(read_document(text, files[i]));
    ComputeRequest req;
    req.weights = true;
    results.push_back(compute(p, req));
    const std::string prog = dir + "/p" + std::to_string(i) + ".py";
    const std::string program = emit_pytorch(p, "attn run " + files[i] + " --emit-pytorch", false);
    if (files[i] == "example cross_shapes") {
      EXPECT_NE(program.find("torch.nn.MultiheadAttention(512, 8"), std::string::npos);
    }
    std::ofstream(prog) << program;
    list << prog << "\n";
  }
  list.close();
  const std::string driver = test::write_temp(
      "emit_driver.py",
      "import contextlib, io, runpy, sys, traceback\n"
      "for prog in open(sys.argv[1]).read().split():\n"
      "    buf = io.StringIO()\n"
      "    try:\n"
      "        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):\n"
      "            runpy.run_path(prog, run_name='__main__')\n"
      "    except Exception:\n"
      "        buf = io.StringIO(traceback.format_exc().replace('\\n', ' | '))\n"
      "    open(prog + '.out', 'w').write(buf.getvalue())\n");
  ASSERT_EQ(std::system(("/usr/bin/python3 " + driver + " " + dir + "/list.txt").c_str()), 0);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string out = test::read_text(dir + "/p" + std::to_string(i) + ".py.out");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(out);
    } catch (const std::exception&) {
      ADD_FAILURE() << files[i] << ": the program did not print JSON: " << out;
      continue;
    }
    expect_close(results[i].output, j["output"], files[i] + " output");
    expect_close(*results[i].weights, j["weights"], files[i] + " weights");
  }
}

TEST(EmitPytorch, CliPrintsAProgram) {
  auto r = test::run_attn({"run", "--example", "sweet", "--emit-pytorch"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("import torch"), std::string::npos);
  EXPECT_NE(r.out.find("\nCOMMAND = 'attn run --example sweet --emit-pytorch'\n"),
            std::string::npos)
      << r.out;
}

// The program replaces the computation: flags that need the result are
// refused, not dropped without a word.
TEST(EmitPytorch, RefusesFlagsThatNeedTheResult) {
  const std::string sweet = test::source_path("data/examples/sweet.json");
  const std::string why =
      " does not go with --emit-pytorch, which prints a program instead of "
      "computing";
  const std::string expect_hint =
      "; run the program and give its output to --expect in a second run";
  auto c = test::run_attn({"run", sweet, "--emit-pytorch", "--check"});
  EXPECT_EQ(c.code, 2);
  EXPECT_EQ(c.err, "attn: error: --check" + why + expect_hint + "\n");
  EXPECT_EQ(c.out, "");
  auto e = test::run_attn({"run", sweet, "--emit-pytorch", "--expect", sweet});
  EXPECT_EQ(e.code, 2);
  EXPECT_EQ(e.err, "attn: error: --expect" + why + expect_hint + "\n");
  auto t = test::run_attn({"run", sweet, "--emit-pytorch", "--trace"});
  EXPECT_EQ(t.code, 2);
  EXPECT_EQ(t.err, "attn: error: --trace" + why + "\n");
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--similarity"},
                                                {"--weights-out", test::temp_dir() + "/w.json"},
                                                {"--heatmap", test::temp_dir() + "/h.png"},
                                                {"--show"}}) {
    std::vector<std::string> args = {"run", sweet, "--emit-pytorch"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = test::run_attn(args);
    EXPECT_EQ(r.code, 2) << extra[0];
    EXPECT_EQ(r.err, "attn: error: " + extra[0] + why + "\n");
  }
  // A batch refuses once, before running any input.
  auto b = test::run_attn({"run", sweet, sweet, "--out-dir", test::temp_dir() + "/emit_batch",
                           "--emit-pytorch", "--trace"});
  EXPECT_EQ(b.code, 2);
  EXPECT_EQ(b.err, "attn: error: --trace" + why + "\n");
}

// ---- tensors loaded from the files the run read --------------------------

// The inputs of the cases below: matrices in every format attn reads, a
// document that names its tensors' files, a checkpoint with a layer of
// 64-wide projections (the tiny models' are under the size that loads).
const char* kFixtures = R"PY(
import json, os, struct, sys
import numpy as np

d = sys.argv[1]
rng = np.random.default_rng(7)


def path(*p):
    return os.path.join(d, *p)


def w(*shape):
    return rng.standard_normal(shape) * 0.2


def bf16(a):  # round to nearest even, as torch's .bfloat16() does
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype('<u2')


def f32(a):
    a = np.asarray(a, dtype='<f4')
    return ('F32', a.shape, a.tobytes())


def b16(a):
    return ('BF16', np.shape(a), bf16(a).tobytes())


def safetensors(file, tensors):
    header, data = {}, b''
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {'dtype': dtype, 'shape': list(shape),
                        'data_offsets': [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    with open(file, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + data)


for sub in ('sub', 'big-llama'):
    os.makedirs(path(sub), exist_ok=True)
np.save(path('x.npy'), rng.standard_normal((200, 200)))
xf = np.asfortranarray(rng.standard_normal((200, 64)).astype(np.float32))
np.save(path('xf.npy'), xf)
np.save(path('sub', 'xf.npy'), xf)
np.savez_compressed(path('qkv.npz'), q=rng.standard_normal((1, 2, 64, 32)),
                    k=rng.standard_normal((1, 2, 64, 32)), v=rng.standard_normal((1, 2, 64, 32)))
safetensors(path('x16.safetensors'), {'x_bf16': b16(rng.standard_normal((100, 64))),
                                      'other': f32(w(2))})
with open(path('xj.json'), 'w') as f:
    json.dump(rng.standard_normal((80, 60)).tolist(), f)
with open(path('labelled.csv'), 'w') as f:
    f.write('token,' + ','.join('f%d' % j for j in range(48)) + '\n')
    for i, row in enumerate(rng.standard_normal((100, 48))):
        f.write('"tok, #%d",' % i + ','.join(repr(float(v)) for v in row) + '\n')
with open(path('spaces.txt'), 'w') as f:
    f.write('# written by hand\n')
    for row in rng.standard_normal((90, 50)):
        f.write('  '.join(repr(float(v)) for v in row) + '  # a row\n\n')
masked = rng.random((200, 200)) < 0.3
np.fill_diagonal(masked, False)
with open(path('mask_words.csv'), 'w') as f:
    for row in masked:
        f.write(','.join('true' if m else 'false' for m in row) + '\n')

safetensors(path('sub', 'w.safetensors'), {'wq': f32(w(64, 64)), 'wk': b16(w(64, 64)),
                                           'wo': f32(w(64, 64)), 'bq': f32(w(64))})
np.save(path('sub', 'x64.npy'), rng.standard_normal((200, 64)))
np.save(path('sub', 'wv_heads.npy'), w(2, 64, 32))
np.save(path('sub', 'wq_torch_heads.npy'), w(2, 32, 64).astype(np.float32))
keep = (rng.random((200, 200)) > 0.3).astype(int)
np.fill_diagonal(keep, 1)
np.savetxt(path('sub', 'mask.csv'), keep, fmt='%d', delimiter=',')
bias = rng.standard_normal((200, 200)) * 0.1
bias[0, 5] = -np.inf
np.save(path('sub', 'bias.npy'), bias)
with open(path('sub', 'doc.json'), 'w') as f:
    json.dump({'title': 'tensors in files', 'X': 'x64.npy', 'heads': 2,
               'params': {'W_q': 'w.safetensors:wq', 'W_k': 'w.safetensors:wk',
                          'W_v': 'wv_heads.npy', 'W_o': 'w.safetensors:wo',
                          'b_q': 'w.safetensors:bq'},
               'mask': 'mask.csv', 'mask_convention': 'keep', 'attn_bias': 'bias.npy'}, f)
with open(path('sub', 'doc_torch.json'), 'w') as f:
    json.dump({'X': 'xf.npy', 'heads': 2, 'params_layout': 'torch', 'scale': 0.125,
               'causal': True,
               'params': {'W_q': 'wq_torch_heads.npy', 'W_k': 'w.safetensors:wk',
                          'W_v': 'w.safetensors:wq'}}, f)

with open(path('big-llama', 'config.json'), 'w') as f:
    json.dump({'model_type': 'llama', 'num_hidden_layers': 1, 'hidden_size': 64,
               'num_attention_heads': 4, 'num_key_value_heads': 2, 'rope_theta': 10000.0}, f)
p = 'model.layers.0.self_attn.'
safetensors(path('big-llama', 'model.safetensors'),
            {p + 'q_proj.weight': f32(w(64, 64)), p + 'k_proj.weight': f32(w(32, 64)),
             p + 'v_proj.weight': f32(w(32, 64)), p + 'o_proj.weight': f32(w(64, 64))})
np.save(path('big-llama', 'x.npy'), rng.standard_normal((10, 64)))
)PY";

// Runs each program (in the directory its run ran in) in one Python
// process; PROG.out holds what it printed, or its traceback.
const char* kDriver = R"PY(
import contextlib, io, os, runpy, sys, traceback
for line in open(sys.argv[1]).read().splitlines():
    cwd, prog = line.split('\t')
    os.chdir(cwd)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            runpy.run_path(prog, run_name='__main__')
    except BaseException:
        buf = io.StringIO(traceback.format_exc().replace('\n', ' | '))
    open(prog + '.out', 'w').write(buf.getvalue())
)PY";

// Every cell of a and b ("output" and "weights") within 1e-12.
void expect_same_numbers(const nlohmann::json& a, const nlohmann::json& b,
                         const std::string& what) {
  for (const char* key : {"output", "weights"}) {
    std::vector<double> x, y;
    flatten(a[key], x);
    flatten(b[key], y);
    ASSERT_EQ(x.size(), y.size()) << what << " " << key;
    ASSERT_FALSE(x.empty()) << what << " " << key;
    size_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i]) || std::isnan(y[i])) {
        bad += !(std::isnan(x[i]) && std::isnan(y[i]));
      } else if (!(std::fabs(x[i] - y[i]) <= 1e-12 * std::max(1.0, std::fabs(y[i])))) {
        if (++bad == 1) {
          ADD_FAILURE() << what << " " << key << " at " << i << ": " << x[i] << " vs " << y[i];
        }
      }
    }
    EXPECT_EQ(bad, 0u) << what << " " << key;
  }
}

struct Capture : Console {
  std::string text;
  void out(std::string_view t) override { text += t; }
  void warn(std::string_view) override {}
  void info(std::string_view) override {}
};

// Programs to run under PyTorch, each beside attn's own result of the run.
class Programs {
 public:
  explicit Programs(std::string dir) : dir_(std::move(dir)) {}

  // attn ARGS in dir (--emit-pytorch, and -f json --weights for the numbers).
  std::string add_cli(const std::vector<std::string>& args) {
    auto attn = [&](const std::vector<std::string>& extra, const std::string& name) {
      std::string cmd = "cd " + test::quote(dir_) + " && " + test::quote(ATTN_BINARY);
      for (const std::string& a : args) cmd += " " + test::quote(a);
      for (const std::string& a : extra) cmd += " " + test::quote(a);
      return test::run_redirected(cmd, name + ".stdout", name + ".stderr");
    };
    const std::string base = test::temp_dir() + "/load" + std::to_string(what_.size());
    const test::Run program = attn({"--emit-pytorch"}, base + "p");
    const test::Run numbers = attn({"-f", "json", "--weights"}, base + "n");
    std::string what = "attn";
    for (const std::string& a : args) what += " " + a;
    EXPECT_EQ(program.code, 0) << what << ": " << program.err;
    EXPECT_EQ(numbers.code, 0) << what << ": " << numbers.err;
    add(what, program.out, numbers.out);
    return program.out;
  }

  // The program of run_command(r) with every tensor read from a file
  // loaded from it, against attn ARGS.
  std::string add_request(RunRequest r, const std::vector<std::string>& args) {
    r.emit_pytorch = true;
    r.emit_load_from = 0;
    Capture c;
    EXPECT_EQ(run_command(r, c), 0);
    const test::Run numbers = test::run_attn(args);
    std::string what = "attn";
    for (const std::string& a : args) what += " " + a;
    EXPECT_EQ(numbers.code, 0) << what << ": " << numbers.err;
    add(what + " (every tensor from its file)", c.text, numbers.out);
    return c.text;
  }

  void run_and_compare() {
    const std::string list = test::temp_dir() + "/load_list.txt";
    {
      std::ofstream f(list);
      for (size_t i = 0; i < what_.size(); ++i) f << dir_ << "\t" << prog(i) << "\n";
    }
    const std::string driver = test::write_temp("load_driver.py", kDriver);
    ASSERT_EQ(std::system(("/usr/bin/python3 " + driver + " " + list).c_str()), 0);
    for (size_t i = 0; i < what_.size(); ++i) {
      const std::string out = test::read_text(prog(i) + ".out");
      nlohmann::json torch, attn;
      try {
        torch = nlohmann::json::parse(out);
        attn = nlohmann::json::parse(numbers_[i]);
      } catch (const std::exception&) {
        ADD_FAILURE() << what_[i] << ": " << out;
        continue;
      }
      expect_same_numbers(torch, attn, what_[i]);
    }
  }

 private:
  std::string prog(size_t i) const {
    return test::temp_dir() + "/load" + std::to_string(i) + ".py";
  }

  void add(const std::string& what, const std::string& program, const std::string& numbers) {
    std::ofstream(prog(what_.size())) << program;
    what_.push_back(what);
    numbers_.push_back(numbers);
  }

  std::string dir_;
  std::vector<std::string> what_, numbers_;
};

std::string fixtures() {
  const std::string dir = test::temp_dir() + "/loads";
  const std::string script = test::write_temp("load_fixtures.py", kFixtures);
  EXPECT_EQ(std::system(("/usr/bin/python3 " + script + " " + test::quote(dir)).c_str()), 0);
  return dir;
}

TEST(EmitPytorch, LoadsLargeTensorsFromTheFilesTheRunRead) {
  if (!torch_available()) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch); "
                    "the --emit-pytorch cross-check did not run";
  }
  const std::string dir = fixtures();
  // A file name is data: quotes, a backslash, a newline, non-ASCII text and
  // a byte that is not UTF-8 at all.
  const std::string hostile = "a'\"\"\"\nb\\ c\xC3\xA9 \xF0\x9F\x98\x80";
  const std::string bytes = "raw\xFF";
  for (const std::string& name : {hostile, bytes}) {
    std::filesystem::create_directory(dir + "/" + name);
    std::filesystem::copy_file(dir + "/x.npy", dir + "/" + name + "/x.npy");
  }
  Programs runs(dir);
  const std::string npy = runs.add_cli({"run", "x.npy"});
  // 200 x 200 numbers written out take 800 KB.
  EXPECT_LT(npy.size(), 20000u);
  EXPECT_NE(npy.find("\nX = npy('x.npy')[None]\n"), std::string::npos) << npy;
  EXPECT_NE(npy.find("\nimport numpy as np\n"), std::string::npos);
  const std::string fortran = runs.add_cli({"run", "--x", "xf.npy", "--heads", "2"});
  EXPECT_NE(fortran.find("X = npy('xf.npy')[None]"), std::string::npos);
  const std::string four_d =
      runs.add_cli({"run", "--q", "qkv.npz:q", "--k", "qkv.npz:k", "--v", "qkv.npz:v"});
  EXPECT_NE(four_d.find("Q_in = npz('qkv.npz', 'q')\n"), std::string::npos) << four_d;
  const std::string csv = runs.add_cli({"run", "--x", "labelled.csv", "--causal"});
  EXPECT_NE(csv.find("X = csv_matrix('labelled.csv', ',', True, True)[None]"), std::string::npos)
      << csv;
  runs.add_cli({"run", "--x", "spaces.txt"});
  runs.add_cli({"run", "--x", "xj.json"});
  runs.add_cli({"run", "x.npy", "--mask", "mask_words.csv"});
  const std::string bf16 = runs.add_cli({"run", "--x", "x16.safetensors:x_bf16"});
  EXPECT_NE(bf16.find("X = safetensors('x16.safetensors', 'x_bf16')[None]"), std::string::npos);
  // A document's files, by the document's path as given and the name in it.
  const std::string doc = runs.add_cli({"run", "sub/doc.json"});
  for (const char* load :
       {"X = npy('sub/x64.npy')[None]\n", "W_q = safetensors('sub/w.safetensors', 'wq')\n",
        "W_v = npy('sub/wv_heads.npy').permute(1, 0, 2).reshape(64, 64)\n",
        "mask = (1 - csv_matrix('sub/mask.csv', ',', False, False)).reshape(1, 1, 200, 200)",
        "attn_bias = npy('sub/bias.npy').reshape(1, 1, 200, 200)\n"}) {
    EXPECT_NE(doc.find(load), std::string::npos) << load << "\n" << doc;
  }
  const std::string torch_layout = runs.add_cli({"run", "sub/doc_torch.json"});
  EXPECT_NE(torch_layout.find("W_q = npy('sub/wq_torch_heads.npy').reshape(64, 64)\n"),
            std::string::npos)
      << torch_layout;
  const std::string layer =
      runs.add_cli({"run", "--checkpoint", "big-llama", "--layer", "0", "--x", "big-llama/x.npy"});
  EXPECT_NE(layer.find("W_q = safetensors('big-llama/model.safetensors', "
                       "'model.layers.0.self_attn.q_proj.weight')\n"),
            std::string::npos)
      << layer;
  runs.add_cli({"run", dir + "/x.npy"});
  const std::string odd = runs.add_cli({"run", hostile + "/x.npy"});
  EXPECT_NE(odd.find("X = npy(" + python_string_literal(hostile + "/x.npy") + ")"),
            std::string::npos);
  const std::string raw = runs.add_cli({"run", bytes + "/x.npy"});
  EXPECT_NE(raw.find("X = npy(b'raw\\xff/x.npy')"), std::string::npos) << raw;
  EXPECT_TRUE(is_valid_utf8(raw));
  runs.run_and_compare();
}

// Every transform of a checkpoint's tensors, with the size from which
// tensors load lowered to nothing: the tiny models' weights load from
// their safetensors files and are cut, shifted and laid out as attn did.
TEST(EmitPytorch, CheckpointLayersLoadTheirWeights) {
  if (!torch_available()) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch); "
                    "the --emit-pytorch cross-check did not run";
  }
  Programs runs(test::temp_dir());
  struct Case {
    const char* model;
    int64_t layer;
    bool from_x;  // --x x_layerN.npy, else --ids
    const char* expect;
  };
  const Case cases[] = {
      {"tiny-llama", 1, true, "W_q = safetensors("},
      {"tiny-gpt2", 1, true, "'h.1.attn.c_attn.weight')[..., 32:64]\n"},
      {"tiny-gemma3", 0, false, "'model.layers.0.self_attn.q_norm.weight') + 1)\n"},
      {"tiny-qwen3", 1, false, "'model.layers.1.self_attn.k_norm.weight')\n"},
      {"tiny-llama-bf16", 1, false, "-of-00002.safetensors', 'model.layers.1.self_attn.q_proj"},
      {"tiny-bert", 0, false, "b_v = safetensors("},
  };
  for (const Case& c : cases) {
    RunRequest r;
    r.checkpoint.path = test::model(c.model);
    r.checkpoint.layer = c.layer;
    std::vector<std::string> args = {
        "run", "--checkpoint", r.checkpoint.path, "--layer", std::to_string(c.layer),
        "-f",  "json",         "--weights"};
    if (c.from_x) {
      r.matrices.x =
          test::model(std::string(c.model) + "/x_layer" + std::to_string(c.layer) + ".npy");
      args.insert(args.end(), {"--x", r.matrices.x});
    } else {
      r.checkpoint.ids = {2, 17, 29, 8, 33};
      r.emit_model = false;  // the layer's own program
      args.insert(args.end(), {"--ids", "2,17,29,8,33"});
    }
    const std::string program = runs.add_request(r, args);
    EXPECT_NE(program.find(c.expect), std::string::npos) << c.model << "\n" << program;
  }
  runs.run_and_compare();
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Every family of the architecture table: one layer's program reproduces
// attn's numbers, whether its weights load from the file, are cut out of a
// fused matrix, or its heads come from the layer's own projections.
TEST(EmitPytorch, EveryFamilysLayerReproducesUnderPyTorch) {
  if (!torch_available()) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch); "
                    "the --emit-pytorch cross-check did not run";
  }
  Programs runs(test::temp_dir());
  int families = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::model(""))) {
    const std::string name = e.path().filename().string();
    if (name.rfind("tiny-", 0) != 0 || !std::filesystem::exists(e.path() / "hidden.npy")) continue;
    RunRequest r;
    r.checkpoint.path = e.path().string();
    r.checkpoint.layer = 1;
    r.checkpoint.ids = {2, 17, 29, 8, 33};
    r.emit_model = false;  // the layer's own program, its input written out
    runs.add_request(r, {"run", "--checkpoint", r.checkpoint.path, "--layer", "1", "-f", "json",
                         "--weights", "--ids", "2,17,29,8,33"});
    ++families;
  }
  EXPECT_GE(families, 30);
  runs.run_and_compare();
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// A stand-in for transformers that checks how the program calls it
// (eager attention, the run's dtype, the run's ids, output_attentions) and
// answers with the attentions transformers itself computed for the tiny
// model (data/models/NAME/attentions.npy, of ids.json).
constexpr const char* kFakeTransformers = R"(import json
import os

import numpy as np
import torch


class _Out:
    def __init__(self, attentions):
        self.attentions = attentions


class _Model:
    def __init__(self, path, dtype):
        self.path, self.dtype = path, dtype

    def eval(self):
        return self

    def __call__(self, input_ids=None, output_attentions=False):
        assert output_attentions is True
        with open(os.path.join(self.path, "ids.json")) as f:
            ids = json.load(f)
        assert input_ids.tolist() == [ids], (input_ids.tolist(), ids)
        a = np.load(os.path.join(self.path, "attentions.npy"))
        return _Out(tuple(torch.from_numpy(a[n]).to(self.dtype) for n in range(a.shape[0])))


class AutoModel:
    @staticmethod
    def from_pretrained(path, **kw):
        assert kw.get("attn_implementation") == "eager", kw
        assert kw.get("dtype") in (torch.float64, torch.float32), kw
        return _Model(path, kw["dtype"])
)";

TEST(EmitPytorch, AModelsLayerAgreesWithTransformers) {
  if (!torch_available()) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch); "
                    "the --emit-pytorch cross-check did not run";
  }
  const std::string dir = test::temp_dir() + "/fake_transformers";
  std::filesystem::create_directories(dir + "/transformers");
  test::write_temp("fake_transformers/transformers/__init__.py", kFakeTransformers);
  const std::string ids = "1,17,29,8,33,12,24";  // data/models/tiny-llama/ids.json
  auto emit = [&](const std::string& layer, const std::string& dtype) {
    const std::string program = dir + "/layer" + layer + "_" + dtype + ".py";
    const test::Run r =
        test::run_attn({"run", "--checkpoint", test::model("tiny-llama"), "--ids", ids, "--layer",
                        layer, "--dtype", dtype, "--emit-pytorch", "-o", program});
    EXPECT_EQ(r.code, 0) << r.err;
    return program;
  };
  auto python = [&](const std::string& program) {
    return std::system(("PYTHONPATH=" + test::quote(dir) + " /usr/bin/python3 " +
                        test::quote(program) + " > " + test::quote(program + ".out"))
                           .c_str());
  };
  for (const char* dtype : {"f64", "f32"}) {
    const std::string program = emit("1", dtype);
    EXPECT_EQ(python(program), 0) << dtype << ": " << test::read_text(program);
    EXPECT_EQ(test::read_text(program + ".out").rfind("{\"layer\": 1, \"max_abs_difference\": ", 0),
              0u);
  }
  // Layer 0's weights where layer 1's are expected: the program says so.
  emit("0", "f64");
  std::filesystem::copy_file(dir + "/layer0_f64.npy", dir + "/layer1_f64.npy",
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_NE(python(dir + "/layer1_f64.py"), 0);
}

}  // namespace
}  // namespace attn
