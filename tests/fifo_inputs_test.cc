// FIFOs (named pipes) as inputs: a FIFO that nothing writes to would make
// attn wait forever, so every input read whole — the document, the matrix
// flags, FILE.safetensors:NAME, --tokens, --expect, --text-file, a
// figure's or a comparison's input — refuses one by name at once. Stdin
// and the pipes a shell gives (|, /dev/stdin, /dev/fd/N) are read.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::run_attn;

std::string fifo(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

std::string refusal(const std::string& path) {
  return "attn: error: " + path +
         ": a FIFO (named pipe), not a regular file: reading it would wait for a writer that may "
         "never come; give it as stdin instead (- < " +
         path + ")\n";
}

TEST(FifoInputs, AFifoWithNoWriterIsRefusedAtOnce) {
  const std::string dir = test::temp_dir() + "/fifo_inputs";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string plain = fifo(dir, "in"), json = fifo(dir, "in.json"), npy = fifo(dir, "x.npy"),
                    st = fifo(dir, "w.safetensors"), npz = fifo(dir, "a.npz");
  const std::string x = dir + "/x.csv";
  std::ofstream(x) << "1,2\n3,4\n";
  const std::string tokenizer = test::model("tiny-llama");
  struct Case {
    std::vector<std::string> args;
    std::string fifo;
  };
  const std::vector<Case> cases = {
      {{"run", plain}, plain},
      {{"run", json}, json},
      {{"run", npy}, npy},
      {{"run", st + ":w"}, st},
      {{"run", "--x", plain}, plain},
      {{"run", "--x", npy}, npy},
      {{"run", "--x", npz + ":a"}, npz},
      {{"run", "--x", x, "--tokens", plain}, plain},
      {{"run", "--x", x, "--expect", plain}, plain},
      {{"run", "--x", x, "--expect", st + ":w"}, st},
      {{"tokenize", "--tokenizer", tokenizer, "--text-file", plain}, plain},
      {{"heatmap", plain, "-o", dir + "/h.png"}, plain},
      {{"diff", npy, x}, npy},
  };
  for (const Case& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    // timeout ends a run that waits for a writer (exit 124).
    const auto r = run_attn(c.args, "", {}, {"timeout", "20"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << c.args[1];
    EXPECT_EQ(r.code, 3) << c.args[0] << " " << c.args[1] << ": " << r.err;
    EXPECT_EQ(r.err, refusal(c.fifo)) << c.args[0] << " " << c.args[1];
  }
}

// A pipe from the shell is stdin, or a descriptor of attn's: read as it comes.
TEST(FifoInputs, PipesFromTheShellAreRead) {
  const std::string doc = R"({"X": [[1, 2], [3, 4]]})";
  const auto file = run_attn({"run", test::write_temp("fifo_inputs_doc.json", doc), "-f", "json"});
  ASSERT_EQ(file.code, 0) << file.err;
  const std::string attn = test::quote(ATTN_BINARY);
  for (const char* input : {"-", "/dev/stdin", "/dev/fd/0"}) {
    const test::Shell r = test::sh("printf '%s' " + test::quote(doc) + " | " + attn + " run " +
                                   std::string(input) + " -f json");
    EXPECT_EQ(r.code, 0) << input << ": " << r.err;
    EXPECT_EQ(r.out, file.out) << input;
  }
  if (test::find_program("bash").empty()) return;
  const test::Shell sub = test::sh(
      "bash -c " + test::quote(attn + " run <(printf '%s' " + test::quote(doc) + ") -f json"));
  EXPECT_EQ(sub.code, 0) << sub.err;
  EXPECT_EQ(sub.out, file.out);
}

}  // namespace
}  // namespace attn
