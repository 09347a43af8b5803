// Signals during a write: every signal whose default action ends the
// process (all but SIGKILL, which no program sees, and SIGPIPE, which attn
// ignores) removes the temporary file beside the output and ends attn by
// that signal; a file size limit (SIGXFSZ, ulimit -f) is a write error
// that cleans up and exits with 4.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "attn/npy.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::start_attn;

std::string fresh_dir(const std::string& name) {
  const std::string dir = test::temp_dir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool has_temporary(const std::string& dir) {
  for (const std::string& name : entries(dir)) {
    if (name.rfind(".attn-", 0) == 0) return true;
  }
  return false;
}

// A .npy input, which attn maps (and so installs its SIGBUS handler).
std::string npy_input(const std::string& dir) {
  const std::string path = dir + "/x.npy";
  Tensor<double> x(Shape{3, 2}, Values<double>{1, 0, 0, 1, 1, 1});
  std::ofstream(path, std::ios::binary) << format_npy(x, DType::kF64);
  return path;
}

// Sends `sig` while attn holds a complete temporary file beside `out` (the
// test hook waits before the rename), and checks that attn ended by the
// signal and left the directory as it was.
void expect_clean_end(int sig, const std::vector<std::string>& args, const std::string& dir,
                      const std::string& out) {
  const std::vector<std::string> before = entries(dir);
  const pid_t pid = start_attn(args, {"ATTN_DEBUG_PAUSE_BEFORE_RENAME=30"});
  ASSERT_GT(pid, 0);
  bool seen = false;
  for (int i = 0; i < 1500 && !seen; ++i) {
    seen = has_temporary(dir);
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(seen) << "no temporary file appeared; signal " << sig << " (" << strsignal(sig)
                    << ")";
  ::kill(pid, seen ? sig : SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig)
      << "attn ends by the signal, as without the handler; signal " << sig << " (" << strsignal(sig)
      << "), status " << status;
  EXPECT_EQ(entries(dir), before) << "signal " << sig << " (" << strsignal(sig) << ")";
  EXPECT_EQ(test::read_text(out), "old") << "signal " << sig;
}

// Every signal whose default action ends the process.
std::vector<int> terminating_signals() {
  std::vector<int> sigs = {SIGHUP,    SIGINT,  SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,  SIGALRM,
                           SIGVTALRM, SIGPROF, SIGXCPU, SIGIO,   SIGPWR,  SIGSTKFLT};
  // A sanitizer answers the faults itself (and reports them): ours only
  // where it does not.
  if (!ATTN_SANITIZED) {
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT}) sigs.push_back(sig);
  }
  for (int sig : {SIGRTMIN, SIGRTMIN + 1, (SIGRTMIN + SIGRTMAX) / 2, SIGRTMAX}) sigs.push_back(sig);
  return sigs;
}

TEST(Signals, EveryTerminatingSignalDuringAWriteLeavesNoTemporaryFile) {
  const std::string dir = fresh_dir("signals_all");
  const std::string in = npy_input(dir);
  const std::string out = dir + "/out.json";
  for (int sig : terminating_signals()) {
    std::ofstream(out) << "old";
    expect_clean_end(sig, {"run", "--x", in, "-f", "json", "-w", "-o", out}, dir, out);
  }
}

// --layer all -o FILE.npy writes its temporary file while the model runs,
// on a thread of its own.
TEST(Signals, ASignalDuringAStreamedStackLeavesNoTemporaryFile) {
  const std::string dir = fresh_dir("signals_stack");
  const std::string out = dir + "/stack.npy";
  for (int sig : {SIGUSR1, SIGALRM, SIGTERM}) {
    std::ofstream(out) << "old";
    expect_clean_end(sig,
                     {"run", "--checkpoint", test::model("tiny-llama"), "--layer", "all", "--ids",
                      "1,2,3,4,5,6,7,8", "-o", out},
                     dir, out);
  }
}

// A file size limit: attn ignores SIGXFSZ, so the write fails with EFBIG,
// an ordinary file error (exit 4) that removes the temporary file.
TEST(Signals, AFileSizeLimitIsAWriteError) {
  const std::string dir = fresh_dir("signals_fsize");
  std::string rows;
  for (int i = 0; i < 300; ++i) rows += std::to_string(i % 7) + "," + std::to_string(i % 3) + "\n";
  const std::string in = dir + "/rows.csv";
  std::ofstream(in) << rows;
  // sh's ulimit -f counts blocks of 512 or 1024 bytes: 8 is at most 8 KiB,
  // far less than either output.
  const std::vector<std::string> limit = {"sh", "-c", "ulimit -f 8 && exec \"$@\"", "sh"};
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {dir + "/out.json", {"run", in, "-f", "json", "-w", "-o"}},
      {dir + "/stack.npy",
       {"run", "--checkpoint", test::model("tiny-llama"), "--layer", "all", "--ids",
        "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32",
        "-o"}}};
  for (const auto& [out, args] : runs) {
    std::ofstream(out) << "old";
    std::vector<std::string> with_out = args;
    with_out.push_back(out);
    const auto r = test::run_attn(with_out, "", {}, limit);
    EXPECT_EQ(r.code, 4) << r.err;
    EXPECT_EQ(r.err, "attn: error: " + out + ": cannot write: File too large\n");
    EXPECT_FALSE(has_temporary(dir)) << out;
    EXPECT_EQ(test::read_text(out), "old");
  }
}

}  // namespace
}  // namespace attn
