// FILE.gguf:NAME through the real attn binary, wherever FILE.safetensors:NAME
// goes: run's matrix flags, heatmap, diff, and --emit-pytorch's loader. The
// tensors of tests/gguf/quant/types.gguf (written by ggml's own writer,
// tests/gguf/make_quant_cases.py) are compared with the same numbers given
// as JSON: for a block type, ggml's own floats (T.f32).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using test::run_attn;
using test::source_path;

const std::string kTypes = "tests/gguf/quant/types.gguf";

std::string types() { return source_path(kTypes); }

// A [2][256] tensor as a JSON file: `cells` written exactly (%.17g).
std::string json_matrix(const std::string& name, const std::vector<double>& cells) {
  std::string s = "[";
  for (size_t r = 0; r < 2; ++r) {
    s += r ? ",[" : "[";
    for (size_t c = 0; c < 256; ++c) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", cells[r * 256 + c]);
      s += (c ? "," : "") + std::string(buf);
    }
    s += "]";
  }
  return test::write_temp(name, s + "]");
}

// ggml's floats of the first 512 cells of a block type.
std::vector<double> ggml_cells(const std::string& type) {
  const std::string raw = test::read_text(source_path("tests/gguf/quant/" + type + ".f32"));
  std::vector<double> out(512);
  for (size_t i = 0; i < out.size(); ++i) {
    float f = 0;
    std::memcpy(&f, raw.data() + 4 * i, 4);
    out[i] = f;
  }
  return out;
}

TEST(GgufCli, RunTakesATensorOfEachTypeAsItsNumbers) {
  std::vector<double> plain(512);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = (static_cast<double>(i) - 256) / 8;
  struct Case {
    std::string tensor;
    std::vector<double> cells;
  };
  const std::vector<Case> cases = {
      {"f32", plain},
      {"f16", plain},
      {"bf16", plain},
      {"q8_0", ggml_cells("q8_0")},
      {"q4_k", ggml_cells("q4_k")},
      {"iq4_nl", ggml_cells("iq4_nl")},
      {"q6_k", ggml_cells("q6_k")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tensor);
    const auto got = run_attn({"run", "--x", types() + ":" + c.tensor, "-f", "json", "--weights"});
    const auto want = run_attn(
        {"run", "--x", json_matrix("x_" + c.tensor + ".json", c.cells), "-f", "json", "--weights"});
    ASSERT_EQ(got.code, 0) << got.err;
    ASSERT_EQ(want.code, 0) << want.err;
    EXPECT_EQ(test::without_settings(got.out), test::without_settings(want.out));
  }
}

TEST(GgufCli, AFileOfSeveralTensorsNeedsAName) {
  const auto r = run_attn({"run", "--x", types()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: " + types() + " holds 15 tensors; choose one as " + types() +
                       ":NAME (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, ...)\n");
  const auto w = run_attn({"run", "--x", types() + ":q4_kk"});
  EXPECT_EQ(w.code, 3);
  EXPECT_EQ(w.err,
            "attn: error: " + types() +
                ": no tensor \"q4_kk\" (the file holds 15 tensors); did you mean \"q4_k\"?\n");
}

TEST(GgufCli, ADamagedFileIsAnInputError) {
  const std::string bad = test::write_temp("bad.gguf", std::string("GGUF\x01\x00\x00\x00", 8));
  const auto r = run_attn({"run", "--x", bad + ":w"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + bad +
                       ": GGUF version 1, which attn does not read (versions 2 and 3 only); "
                       "convert the model again with a current llama.cpp\n");
  const auto m = run_attn({"run", "--x", test::write_temp("empty.gguf", "") + ":w"});
  EXPECT_EQ(m.code, 3);
  EXPECT_NE(m.err.find("empty.gguf: not a GGUF file: it does not start with \"GGUF\"\n"),
            std::string::npos)
      << m.err;
}

TEST(GgufCli, HeatmapAndDiffTakeGgufTensors) {
  const std::string svg = test::temp_dir() + "/gguf_heatmap.svg";
  const auto h = run_attn({"heatmap", types() + ":q5_k", "-o", svg});
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(test::read_text(svg).find("<svg"), std::string::npos);
  const auto d = run_attn({"diff", types() + ":f32", types() + ":bf16"});
  EXPECT_EQ(d.code, 0) << d.err << d.out;
  const auto e = run_attn({"diff", types() + ":f32", types() + ":q8_0"});
  EXPECT_NE(e.code, 3) << e.err;
}

TEST(GgufCli, MaxInputBytesBoundsTheTensorTaken) {
  const auto r = run_attn({"run", "--x", types() + ":q8_0", "--max-input-bytes", "100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + types() +
                       ":q8_0: 544 bytes, more than --max-input-bytes 100; raise "
                       "--max-input-bytes\n");
}

// A layer of a GGUF model read whole (--layer N) is bounded as a
// safetensors checkpoint's is.
TEST(GgufCli, MaxInputBytesBoundsAModelsTensorsReadWhole) {
  const std::string gguf = test::source_path("data/models/tiny-llama/model.gguf");
  const auto r = run_attn(
      {"run", "--checkpoint", gguf, "--ids", "1,2", "--layer", "1", "--max-input-bytes", "1000"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + gguf +
                       ":blk.1.attn_q.weight: 4096 bytes, more than --max-input-bytes 1000; raise "
                       "--max-input-bytes\n");
}

// A GGUF file is known by its magic as well as its name: Ollama's blobs
// (blobs/sha256-HEX) have no extension.
TEST(GgufCli, AFileWithoutTheExtensionIsKnownByItsMagic) {
  std::ifstream in(test::source_path("data/models/tiny-llama/model.gguf"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string blob = test::write_temp("sha256-0123abcd", bytes);
  const auto by_blob = run_attn({"run", "--checkpoint", blob, "--ids", "1,17,29", "--layer", "1"});
  const auto by_name =
      run_attn({"run", "--checkpoint", test::source_path("data/models/tiny-llama/model.gguf"),
                "--ids", "1,17,29", "--layer", "1"});
  EXPECT_EQ(by_blob.code, 0) << by_blob.err;
  EXPECT_EQ(by_blob.out.substr(by_blob.out.find('\n')), by_name.out.substr(by_name.out.find('\n')));
}

// --- --emit-pytorch ---------------------------------------------------------

std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A GGUF file of tensors large enough that the program loads them: "x" in
// F32, "h" in F16, "q" in Q8_0 ([64][64] each) and "k" in Q4_K ([16][256],
// whose numbers the program holds), with a string array before them to
// skip and an alignment of 64.
std::string big_gguf() {
  std::string kv = le(21, 8) + "tokenizer.ggml.tokens" + le(9, 4) + le(8, 4) + le(2, 8) + le(1, 8) +
                   "a" + le(2, 8) + "bc" + le(17, 8) + "general.alignment" + le(4, 4) + le(64, 4);
  std::string infos, data;
  auto add = [&](const std::string& name, uint32_t type, const std::string& bytes,
                 uint64_t ne0 = 64, uint64_t ne1 = 64) {
    while (data.size() % 64) data += '\0';
    infos += le(name.size(), 8) + name + le(2, 4) + le(ne0, 8) + le(ne1, 8) + le(type, 4) +
             le(data.size(), 8);
    data += bytes;
  };
  std::string f32, f16, q8, q4k;
  for (int i = 0; i < 4096; ++i) {
    const float v = std::sin(static_cast<float>(i) * 0.37f) * 0.5f;
    uint32_t b = 0;
    std::memcpy(&b, &v, 4);
    f32 += le(b, 4);
    f16 += le(0x3000 + (i * 37) % 0x0C00, 2);  // halfs between 0.125 and 1
  }
  for (int blk = 0; blk < 4096 / 32; ++blk) {
    q8 += le(0x2000 + blk, 2);  // a small float16 scale
    for (int j = 0; j < 32; ++j) q8 += static_cast<char>((blk * 7 + j * 13) % 256);
  }
  const std::string q4k_blocks = test::read_text(source_path("tests/gguf/quant/q4_k.blocks"));
  // Its first 12 blocks are quantized rows of N(0, 1) (then come zeros).
  q4k = q4k_blocks.substr(0, 12 * 144) + q4k_blocks.substr(0, 4 * 144);
  add("x", 0, f32);
  add("h", 1, f16);
  add("q", 8, q8);
  add("k", 12, q4k, 256, 16);
  std::string out = "GGUF" + le(3, 4) + le(4, 8) + le(2, 8) + kv + infos;
  while (out.size() % 64) out += '\0';
  return out + data;
}

bool torch_available() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

TEST(GgufCli, EmitPytorchLoadsGgufTensorsAsAttnReadsThem) {
  const std::string dir = test::temp_dir() + "/gguf_emit";
  std::system(("mkdir -p " + test::quote(dir)).c_str());
  const std::string model = dir + "/m.gguf";
  std::ofstream(model, std::ios::binary) << big_gguf();
  struct Case {
    std::vector<std::string> flags;
    bool loads;  // the program reads the tensors from the file
  };
  const std::vector<Case> cases = {
      {{"--q", model + ":x", "--k", model + ":h", "--v", model + ":q"}, true},
      {{"--x", model + ":k"}, false},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    std::vector<std::string> emit = args;
    emit.push_back("--emit-pytorch");
    const auto program = run_attn(emit);
    ASSERT_EQ(program.code, 0) << program.err;
    EXPECT_EQ(program.out.find("def gguf(path, name):") != std::string::npos, c.loads);
    if (!torch_available()) continue;
    const std::string py = dir + "/p.py";
    std::ofstream(py) << program.out;
    const test::Run torch = test::run_redirected("/usr/bin/python3 " + test::quote(py),
                                                 dir + "/out.json", dir + "/err.txt");
    ASSERT_EQ(torch.code, 0) << torch.err;
    args.insert(args.end(), {"-f", "json", "--weights"});
    const auto attn = run_attn(args);
    ASSERT_EQ(attn.code, 0) << attn.err;
    const auto want = nlohmann::json::parse(attn.out);
    const auto got = nlohmann::json::parse(torch.out);
    for (const char* part : {"output", "weights"}) {
      const auto a = want[part].flatten(), b = got[part].flatten();
      ASSERT_EQ(a.size(), b.size()) << part;
      double worst = 0;
      for (auto it = a.begin(); it != a.end(); ++it) {
        worst = std::max(worst, std::abs(it.value().get<double>() - b[it.key()].get<double>()));
      }
      EXPECT_LT(worst, 1e-12) << part;
    }
  }
}

// attn tokenize with a GGUF file: its own tokenizer, llama_tokenize's ids
// (tests/tokenizer/gguf/bpe-qwen2.expected.json), control tokens in the
// text read as tokens only with --parse-special.
TEST(GgufTokenize, TheFilesOwnTokenizerGivesLlamaCppsIds) {
  const std::string vocab = source_path("tests/tokenizer/gguf/bpe-qwen2.gguf");
  const std::string text = "<|im_start|>user\nHi there<|im_end|>";
  auto ids = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"tokenize", "--tokenizer", vocab, "-f", "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(text);
    const auto r = run_attn(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["ids"].get<std::vector<int64_t>>();
  };
  EXPECT_EQ(ids({"--parse-special"}), (std::vector<int64_t>{563, 501, 198, 39, 72, 263, 268, 564}));
  EXPECT_EQ(ids({}), (std::vector<int64_t>{321, 483, 62, 498, 327, 501, 198, 39, 72, 263, 268, 321,
                                           483, 62, 336, 327}));
  const auto bad =
      run_attn({"tokenize", "--tokenizer", source_path("tests/tokenizer/gguf/x.gguf"), "hi"});
  EXPECT_EQ(bad.code, 4);
}

}  // namespace
}  // namespace attn
