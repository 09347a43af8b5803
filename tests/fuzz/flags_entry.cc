// The flags fuzz entry point: arbitrary words as the arguments of the whole
// program (attn::cli::run_program, what `attn WORD WORD ...` runs), parsed
// by CLI11, checked and run. Exit 70 (an internal error: an exception
// other than attn::Error, a bad_alloc) is a finding and throws
// std::logic_error with the line the program printed.
//
// The words run in a scratch directory that holds a few small inputs; a
// word with a '/' is skipped so nothing outside it is read or written, and
// `bench` (a timing loop) is skipped. stdin is /dev/null and stdout is
// discarded.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.h"
#include "fuzz_entry.h"

namespace attn::fuzz {

namespace {

constexpr size_t kMaxWords = 32;

void write_file(const std::string& name, const std::string& text) {
  std::ofstream(name, std::ios::binary | std::ios::trunc) << text;
}

// Inputs a word may name: a document, a matrix and a mask in each format.
void write_inputs() {
  write_file("in.json", R"({"title": "t", "mode": "self", "X": [[1, 0], [0, 1], [1, 1]],)"
                        R"( "labels": ["a", "b", "c"]})");
  write_file("x.csv", "1,2\n3,4\n5,6\n");
  write_file("mask.json", "[[0, 1, 1], [0, 0, 1], [0, 0, 0]]");
  write_file("w.json", R"({"X": [[1, 2]], "weights": [[1]], "labels": ["x"]})");
  // A model's stack [layers 2][batch 1][heads 2][3][3], causal, for the
  // model view, --summary, --layers and --heads.
  write_file("stack.json",
             "[[[[[1,0,0],[0.5,0.5,0],[0.2,0.3,0.5]],[[1,0,0],[0.9,0.1,0],[0.1,0.1,0.8]]]],"
             "[[[[1,0,0],[0.4,0.6,0],[0.3,0.3,0.4]],[[1,0,0],[0.7,0.3,0],[0.6,0.2,0.2]]]]]");
  write_file("tokens.txt",
             "\xC4\xA0"
             "the\n\xE2\x96\x81"
             "cat\n<0x0A>\n");
}

std::string& scratch_path() {
  static std::string dir;
  return dir;
}

// The scratch directory, made on first use and removed when the process ends.
const std::string& scratch_dir() {
  std::string& dir = scratch_path();
  if (dir.empty()) {
    std::string tmpl = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : "/tmp") +
                       "/attn-fuzz-flags-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("fuzz_flags: mkdtemp failed");
    dir = tmpl;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_path(), ec);
    });
  }
  return dir;
}

// fds 0, 1 and 2 pointed elsewhere for one run, then put back.
class Redirect {
 public:
  Redirect(int fd, const char* path, int flags) : fd_(fd), saved_(::dup(fd)) {
    const int to = ::open(path, flags, 0644);
    if (to >= 0) {
      ::dup2(to, fd);
      ::close(to);
    }
  }
  ~Redirect() {
    if (saved_ >= 0) {
      ::dup2(saved_, fd_);
      ::close(saved_);
    }
  }
  Redirect(const Redirect&) = delete;
  Redirect& operator=(const Redirect&) = delete;

 private:
  int fd_;
  int saved_;
};

std::string read_file(const std::string& name) {
  std::ifstream in(name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

void flag_words(std::string_view data) {
  std::vector<std::string> words{"attn"};
  size_t start = 0;
  while (start <= data.size()) {
    if (words.size() > kMaxWords) return;
    size_t end = data.find('\n', start);
    if (end == std::string_view::npos) end = data.size();
    std::string w(data.substr(start, end - start));
    if (w.find('\0') != std::string::npos || w.find('/') != std::string::npos || w == "bench") {
      return;
    }
    words.push_back(std::move(w));
    start = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  std::string cwd(4096, '\0');
  if (!::getcwd(cwd.data(), cwd.size())) throw std::runtime_error("fuzz_flags: getcwd failed");
  cwd.resize(cwd.find('\0'));
  if (::chdir(scratch_dir().c_str()) != 0) throw std::runtime_error("fuzz_flags: chdir failed");
  write_inputs();
  int code = 0;
  {
    Redirect in(0, "/dev/null", O_RDONLY);
    Redirect out(1, "/dev/null", O_WRONLY);
    Redirect err(2, "stderr.txt", O_WRONLY | O_CREAT | O_TRUNC);
    code = cli::run_program(static_cast<int>(words.size()), argv.data());
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
  }
  const std::string err = read_file("stderr.txt");
  if (::chdir(cwd.c_str()) != 0) throw std::runtime_error("fuzz_flags: chdir back failed");
  if (code == 70) throw std::logic_error("fuzz_flags: exit 70: " + err);
}

}  // namespace attn::fuzz
