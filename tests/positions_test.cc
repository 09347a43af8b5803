// Positions: query i at q_offset + i, key j at k_offset + j, shared by
// RoPE, causal, the window and ALiBi; causal "bottom_right" (flash-attn's
// and a KV cache's alignment). Each is checked against the same attention
// written with explicit masks and biases, on the kernels and the
// reference path alike.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/problem.h"
#include "test_util.h"

namespace attn {
namespace {

using test::max_diff;
using test::problem;
using test::problem_error;
using test::run_attn;

// Q [heads 2][3][4] as 4-D, K and V [2][6][4]: three queries, six keys.
std::string qkv(int64_t queries = 3) {
  std::string q = "[[", k = "[[", v = "[[";
  for (int h = 0; h < 2; ++h) {
    q += h ? ", [" : "[";
    k += h ? ", [" : "[";
    v += h ? ", [" : "[";
    for (int i = 0; i < 6; ++i) {
      std::string row = "[";
      for (int c = 0; c < 4; ++c) {
        row += (c ? ", " : "") + std::to_string(std::sin(1.7 * i + 0.9 * c + 2.3 * h));
      }
      row += "]";
      if (i < queries) q += (i ? ", " : "") + row;
      k += (i ? ", " : "") + row;
      std::string vr = "[";
      for (int c = 0; c < 4; ++c) {
        vr += (c ? ", " : "") + std::to_string(std::cos(0.7 * i - 1.1 * c + h));
      }
      v += (i ? ", " : "") + vr + "]";
    }
    q += "]";
    k += "]";
    v += "]";
  }
  return R"("Q": )" + q + "]], " + R"("K": )" + k + "]], " + R"("V": )" + v + "]], \"heads\": 2";
}

// Both paths: the kernels (output only) and the reference with weights.
void expect_same(const std::string& a, const std::string& b, const std::string& what) {
  for (bool reference : {false, true}) {
    ComputeRequest r;
    r.reference = reference;
    r.weights = reference;
    const Result x = compute(problem(a), r), y = compute(problem(b), r);
    EXPECT_LT(max_diff(x.output, y.output), 1e-14) << what << (reference ? " (reference)" : "");
    if (reference) {
      EXPECT_LT(max_diff(*x.weights, *y.weights), 1e-14) << what;
    }
  }
}

// The block mask of a rule on positions, [q][k], for the document.
template <class F>
std::string mask_of(int64_t lq, int64_t lk, F masked) {
  std::string s = "[";
  for (int64_t i = 0; i < lq; ++i) {
    s += i ? ", [" : "[";
    for (int64_t j = 0; j < lk; ++j) s += std::string(j ? ", " : "") + (masked(i, j) ? "1" : "0");
    s += "]";
  }
  return s + "]";
}

TEST(Positions, BottomRightCausalIsTheLastQueryOnTheLastKey) {
  // Three queries over six keys: query i sits at 3 + i and sees keys 0..3+i.
  expect_same("{" + qkv() + R"(, "causal": "bottom_right"})",
              "{" + qkv() + R"(, "mask": )" +
                  mask_of(3, 6, [](int64_t i, int64_t j) { return j > i + 3; }) + "}",
              "bottom_right");
  expect_same("{" + qkv() + R"(, "causal": true, "q_offset": 3})",
              "{" + qkv() + R"(, "causal": "bottom_right"})", "q_offset 3");
  // A decode step: one query at the end sees every key.
  expect_same("{" + qkv(1) + R"(, "causal": "bottom_right"})", "{" + qkv(1) + "}", "decode");
  // Top-left stays the default: query 0 sees key 0 only.
  expect_same("{" + qkv() + R"(, "causal": "top_left"})",
              "{" + qkv() + R"(, "mask": )" +
                  mask_of(3, 6, [](int64_t i, int64_t j) { return j > i; }) + "}",
              "top_left");
}

TEST(Positions, WindowAndAlibiCompareThePositions) {
  // Query i at 10 + i, key j at 8 + j: the diagonal is j = i + 2.
  const std::string pos = R"(, "q_offset": 10, "k_offset": 8)";
  expect_same("{" + qkv() + pos + R"(, "window": [1, 0], "causal": true})",
              "{" + qkv() + R"(, "mask": )" +
                  mask_of(3, 6, [](int64_t i, int64_t j) { return j > i + 2 || j < i + 1; }) + "}",
              "window");
  // ALiBi's distance |(10 + i) - (8 + j)|, as an explicit bias.
  std::string bias = "[[";
  for (int h = 0; h < 2; ++h) {
    const double m = h == 0 ? 0.25 : 0.0625;
    bias += h ? ", [" : "[";
    for (int i = 0; i < 3; ++i) {
      bias += i ? ", [" : "[";
      for (int j = 0; j < 6; ++j) {
        bias += (j ? ", " : "") + std::to_string(-m * std::abs(i + 2 - j));
      }
      bias += "]";
    }
    bias += "]";
  }
  bias += "]]";
  expect_same("{" + qkv() + pos + R"(, "alibi": [0.25, 0.0625]})",
              "{" + qkv() + R"(, "attn_bias": )" + bias + "}", "alibi");
  // RoPE's older names are the same positions.
  expect_same("{" + qkv() + pos + R"(, "rope": true, "causal": true})",
              "{" + qkv() + R"(, "rope": {"q_offset": 10, "k_offset": 8}, "causal": true})",
              "rope alias");
}

TEST(Positions, RefusalsNameThePlace) {
  const std::string more = R"({"Q": [[1, 0], [0, 1], [1, 1]], "K": [[1, 0], [0, 1]],
                               "V": [[1, 0], [0, 1]], "causal": "bottom_right"})";
  EXPECT_EQ(problem_error(more),
            "t.json: causal: bottom_right with 3 queries and 2 keys would put queries 0 to 0 "
            "before every key, where they see none (flash-attn leaves them zero); give at most "
            "as many queries as keys, or causal true (top-left)");
  EXPECT_EQ(problem_error("{" + qkv() + R"(, "causal": "bottom_right", "q_offset": 1})"),
            "t.json: causal: bottom_right places the queries itself (q_offset = k_offset + "
            "len_k - len_q); give it or q_offset, not both");
  // A flag's position replaces the document's under either name.
  {
    InputDocument d = read_document("{" + qkv() + R"(, "q_offset": 2, "causal": true})", "t.json");
    RunSettings flags;
    flags.rope_q_offset = 5;
    d.settings.merge(flags);
    EXPECT_EQ(build_problem(d).q_offset, 5);
  }
  EXPECT_EQ(problem_error("{" + qkv() + R"(, "q_offset": 2, "rope": {"q_offset": 3}})"),
            "t.json: q_offset: 2 disagrees with rope.q_offset 3; they name one position (rope's "
            "is the older name)");
  EXPECT_NE(problem_error("{" + qkv() + R"(, "q_offset": -1})").find("q_offset"),
            std::string::npos);
  EXPECT_EQ(problem_error("{" + qkv() + R"(, "causal": "bottom-left"})"),
            "t.json: causal: expected true, false, \"top_left\" or \"bottom_right\", got "
            "\"bottom-left\"");
}

TEST(PositionsCli, DecodeStepFlagsAndTheSettingsLine) {
  const std::string doc = test::write_temp("decode.json", "{" + qkv(1) + "}");
  const auto r = run_attn({"run", doc, "--causal", "bottom-right", "-f", "json", "-w"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto plain = run_attn({"run", doc, "-f", "json", "-w"});
  // The numbers of a run's JSON, without its settings line.
  auto numbers = [](const std::string& out) { return out.substr(out.find("\"output\"")); };
  EXPECT_EQ(numbers(r.out), numbers(plain.out));
  // --causal still takes a file after it; bottom-right shows in the trace.
  const auto t = run_attn({"run", "--causal", doc, "--causal", "bottom-right", "--trace"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("causal (bottom-right), positions q 5+i, k 0+j"), std::string::npos)
      << t.out.substr(0, 600);
  const auto q = run_attn({"run", doc, "--causal", "--q-offset", "5", "-f", "json", "-w"});
  EXPECT_EQ(numbers(q.out), numbers(plain.out));
  const auto bad = run_attn({"run", doc, "--causal=sideways"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "attn: error: --causal: expected true, false, top-left or bottom-right, got "
            "'sideways'\n");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// --rtol/--atol: NumPy's allclose; a float32 reference (or run) gets
// torch.testing's float32 defaults, printed in the summary.
TEST(Tolerances, Float32ReferencesAndFlags) {
  const std::string doc = test::write_temp("tol.json", "{" + qkv() + R"(, "causal": true})");
  const std::string dir = test::temp_dir();
  // A float32 reference: the same attention computed and stored in float32.
  ASSERT_EQ(run_attn({"run", doc, "--dtype", "f32", "-o", dir + "/ref32.npy"}).code, 0);
  ASSERT_EQ(run_attn({"run", doc, "--dtype", "f32", "-f", "json", "-o", dir + "/ref32.json"}).code,
            0);
  const auto f32 = run_attn({"run", doc, "--expect", dir + "/ref32.npy"});
  EXPECT_EQ(f32.code, 0) << f32.out << f32.err;
  // The report follows the table on stdout.
  EXPECT_NE(f32.out.find("check passed: all 24 values match (rtol 1.3e-06, atol 1e-05)"),
            std::string::npos)
      << f32.out;
  // The same numbers in JSON carry no dtype: the float64 rule fails them...
  const auto json = run_attn({"run", doc, "--expect", dir + "/ref32.json", "-q"});
  EXPECT_EQ(json.code, 1);
  EXPECT_NE(json.out.find("values differ\n"), std::string::npos) << json.out;
  // ...and the flags pass them, naming the rule.
  const auto flags =
      run_attn({"run", doc, "--expect", dir + "/ref32.json", "--rtol", "1e-5", "--atol", "1e-6"});
  EXPECT_EQ(flags.code, 0) << flags.out << flags.err;
  EXPECT_NE(flags.out.find("values match (rtol 1e-05, atol 1e-06)"), std::string::npos)
      << flags.out;
  // A float32 run against its own JSON passes by default.
  const auto run32 = run_attn({"run", doc, "--dtype", "f32", "--expect", dir + "/ref32.json"});
  EXPECT_EQ(run32.code, 0) << run32.err;
  // Refusals.
  const auto alone = run_attn({"run", doc, "--rtol", "1e-3"});
  EXPECT_EQ(alone.code, 2);
  EXPECT_EQ(alone.err, "attn: error: --rtol is the tolerance of --check or --expect; give one\n");
  const auto nan = run_attn({"run", doc, "--check", "--atol", "nan"});
  EXPECT_EQ(nan.code, 2);
  EXPECT_EQ(nan.err, "attn: error: --atol: expected a finite number >= 0, got 'nan'\n");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// np.save of a transposed view writes a Fortran-ordered .npy: read as the
// array it is.
TEST(NpyFortranOrder, ReadAsTheArrayItHolds) {
  auto npy = [](bool fortran, const std::vector<double>& cells, const std::string& shape) {
    std::string header =
        "{'descr': '<f8', 'fortran_order': " + std::string(fortran ? "True" : "False") +
        ", 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string s = "\x93NUMPY\x01";
    s += '\0';
    s += static_cast<char>(header.size() & 0xff);
    s += static_cast<char>(header.size() >> 8);
    s += header;
    for (double c : cells) s.append(reinterpret_cast<const char*>(&c), 8);
    return s;
  };
  // [[0, 1, 2], [3, 4, 5]] column-major is 0 3 1 4 2 5.
  const std::string f = test::write_temp("f.npy", npy(true, {0, 3, 1, 4, 2, 5}, "(2, 3)"));
  const std::string c = test::write_temp("c.npy", npy(false, {0, 1, 2, 3, 4, 5}, "(2, 3)"));
  const auto a = run_attn({"run", "--x", f, "-f", "json", "-w"});
  const auto b = run_attn({"run", "--x", c, "-f", "json", "-w"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // Rank 3: shape (2, 2, 2), cell [i][j][k] = 4i + 2j + k, stored i fastest.
  std::vector<double> cells;
  for (int k = 0; k < 2; ++k) {
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) cells.push_back(4 * i + 2 * j + k);
    }
  }
  const std::string f3 = test::write_temp("f3.npy", npy(true, cells, "(2, 2, 2)"));
  const std::string c3 =
      test::write_temp("c3.npy", npy(false, {0, 1, 2, 3, 4, 5, 6, 7}, "(2, 2, 2)"));
  EXPECT_EQ(run_attn({"run", "--x", f3, "-f", "json"}).out,
            run_attn({"run", "--x", c3, "-f", "json"}).out);
  // A figure's reader maps the cells as they lie, and says what to do.
  const auto h = run_attn({"heatmap", f, "-o", test::temp_dir() + "/f.png"});
  EXPECT_EQ(h.code, 3);
  EXPECT_NE(h.err.find("np.ascontiguousarray"), std::string::npos) << h.err;
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// 4-D K and V with fewer heads than Q: kv_heads from the shapes, as
// PyTorch's enable_gqa=True, said in the settings line.
TEST(GroupedShapes, KvHeadsFromTheHeadAxes) {
  auto block = [](int heads, double seed) {
    std::string s = "[[";
    for (int h = 0; h < heads; ++h) {
      s += h ? ", [" : "[";
      for (int i = 0; i < 3; ++i) {
        s += std::string(i ? ", " : "") + "[" + std::to_string(std::sin(seed + h + 0.3 * i)) +
             ", " + std::to_string(std::cos(seed * h + i)) + "]";
      }
      s += "]";
    }
    return s + "]]";
  };
  const std::string q = block(4, 0.5), k = block(2, 1.5), v = block(2, 2.5);
  const std::string inferred = R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v + "}";
  const std::string given =
      R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v + R"(, "kv_heads": 2})";
  const Problem p = problem(inferred);
  EXPECT_EQ(p.kv_heads, 2);
  EXPECT_EQ(describe_run(p),
            "scaled_dot, qkv, scale sqrt_dk, 4 heads, kv_heads 2 (from K's and V's head axes, as "
            "enable_gqa)");
  expect_same(inferred, given, "inferred kv_heads");
  // Three heads do not divide four: the message says what would.
  EXPECT_EQ(problem_error(R"({"Q": )" + q + R"(, "K": )" + block(3, 1.5) + R"(, "V": )" +
                          block(3, 2.5) + "}"),
            "t.json: K: head count 3 (shape [1][3][3][2]) does not match Q (shape [1][4][3][2]); "
            "K and V may have fewer heads than Q when their count divides Q's (grouped-query "
            "attention, --kv-heads)");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

namespace fs = std::filesystem;

// A document may name the files of its tensors, relative to its directory,
// and no file outside it.
TEST(DocumentFiles, TensorsFromFilesBesideTheDocument) {
  const fs::path dir = fs::path(test::temp_dir()) / "docfiles";
  fs::create_directories(dir / "sub");
  test::write_temp("docfiles/x.csv", "1,2\n3,4\n5,6\n");
  test::write_temp("docfiles/sub/w.json", "[[1, 0], [0, 2]]");
  const std::string doc =
      test::write_temp("docfiles/d.json", R"({"X": "x.csv", "params": {"W_q": "sub/w.json"}})");
  const std::string inline_doc =
      test::write_temp("docfiles/inline.json",
                       R"({"X": [[1, 2], [3, 4], [5, 6]], "params": {"W_q": [[1, 0], [0, 2]]}})");
  const auto a = run_attn({"run", doc, "-f", "json", "-w"});
  const auto b = run_attn({"run", inline_doc, "-f", "json", "-w"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // Out of the directory: "..", an absolute path, a symbolic link.
  test::write_temp("docfiles/sub/up.json", R"({"X": "../x.csv"})");
  test::write_temp("docfiles/abs.json", R"({"X": "/etc/hostname"})");
  fs::remove(dir / "sub" / "link.csv");
  fs::create_symlink("/etc/hostname", dir / "sub" / "link.csv");
  test::write_temp("docfiles/sub/link.json", R"({"X": "link.csv"})");
  const std::string tail = "; a document names files in its own directory (or below it)\n";
  const std::pair<std::string, std::string> refused[] = {
      {"sub/up.json", "X: \"../x.csv\" climbs out of the document's directory through \"..\""},
      {"abs.json", "X: \"/etc/hostname\" is an absolute path"},
      {"sub/link.json",
       "X: \"link.csv\" leads out of the document's directory through a symbolic link"}};
  for (const auto& [file, why] : refused) {
    const std::string path = (dir / file).string();
    const auto r = run_attn({"run", path});
    EXPECT_EQ(r.code, 3) << file;
    EXPECT_EQ(r.err, "attn: error: " + path + ": " + why + tail);
  }
  // The part after a colon is a tensor's name, never more path; a FIFO (or
  // any file that is not a regular one) is refused before it is opened.
  test::write_temp("docfiles/w.safetensors", "not a safetensors file");
  fs::create_directories(dir / "w.safetensors:");
  const std::string colon =
      test::write_temp("docfiles/colon.json", R"({"X": "w.safetensors:/../x.csv"})");
  const auto c = run_attn({"run", colon});
  EXPECT_EQ(c.code, 3) << c.err;
  EXPECT_EQ(c.out, "");
  EXPECT_EQ(c.err.find("x.csv"), std::string::npos) << c.err;
  fs::remove(dir / "pipe.csv");
  ASSERT_EQ(::mkfifo((dir / "pipe.csv").c_str(), 0600), 0);
  const std::string fifo = test::write_temp("docfiles/fifo.json", R"({"X": "pipe.csv"})");
  const auto f = run_attn({"run", fifo});
  EXPECT_EQ(f.code, 3);
  EXPECT_EQ(f.err, "attn: error: " + fifo +
                       ": X: \"pipe.csv\" is a FIFO (named pipe), not a regular file\n");
  // A named file is an input: no output replaces it; stdin has no directory.
  const auto over = run_attn({"run", doc, "-o", (dir / "sub" / "w.json").string()});
  EXPECT_EQ(over.code, 2) << over.err;
  EXPECT_NE(over.err.find("refusing to overwrite the input file"), std::string::npos) << over.err;
  const auto piped = run_attn({"run", "-"}, R"({"X": "x.csv"})");
  EXPECT_EQ(piped.code, 3);
  EXPECT_NE(piped.err.find("has no directory to find it in"), std::string::npos) << piped.err;
}

}  // namespace
}  // namespace attn
