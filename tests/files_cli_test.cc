// Files through the program: outputs fail with exit 4 and the OS reason and
// are never left half-written (nor their temporary files, signals
// included); outputs go through links and into devices without replacing
// them, and never replace an input the run reads (tensor references,
// tokens, fonts, a checkpoint's files); a failed run replaces no output; a
// file cut short while it is read is an input error; and a closed pipe ends
// every command quietly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_inputs.h"
#include "model_util.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::model_copy;
using test::read_text;
using test::rows_csv;
using test::run_attn;
using test::source_path;
using test::start_attn;
using test::sweet;
using test::temp_dir;
using test::tiny;
using test::write_safetensors;
using test::write_temp;

std::string tokens() { return source_path("data/csv/tokens.csv"); }

TEST(Files, OutputIntoADirectory) {
  for (const char* flag : {"-o", "--weights-out", "--heatmap"}) {
    const std::string dir = temp_dir() + "/out_dir" + std::string(flag).substr(2) + ".png";
    ::mkdir(dir.c_str(), 0755);
    auto r = run_attn({"run", sweet(), flag, dir});
    EXPECT_EQ(r.code, 4) << flag;
    EXPECT_EQ(r.err, "attn: error: " + dir + ": cannot write: Is a directory\n") << flag;
    EXPECT_EQ(r.out, "") << flag;
  }
}

TEST(Files, FullDeviceGivesExitFour) {
  auto o = run_attn({"run", sweet(), "-o", "/dev/full"});
  EXPECT_EQ(o.code, 4);
  EXPECT_EQ(o.err, "attn: error: /dev/full: cannot write: No space left on device\n");
  auto w = run_attn({"run", sweet(), "--weights-out", "/dev/full", "-o", "/dev/null"});
  EXPECT_EQ(w.code, 4);
  EXPECT_EQ(w.err, "attn: error: /dev/full: cannot write: No space left on device\n");
  // A heatmap's format comes from its name: full.png is a link to /dev/full.
  const std::string png = temp_dir() + "/full.png";
  ASSERT_EQ(::symlink("/dev/full", png.c_str()), 0);
  auto h = run_attn({"run", sweet(), "--heatmap", png});
  EXPECT_EQ(h.code, 4);
  EXPECT_EQ(h.err, "attn: error: " + png + ": cannot write: No space left on device\n");
  EXPECT_EQ(h.out, "") << "files are written before stdout";
  auto hm = run_attn({"heatmap", tokens(), "-o", png});
  EXPECT_EQ(hm.code, 4);
  EXPECT_EQ(hm.err, "attn: error: " + png + ": cannot write: No space left on device\n");
}

TEST(Files, FullStdoutGivesExitFour) {
  // sh -c 'exec attn "$@" >/dev/full' attn ARGS: stdout is the full device.
  const std::vector<std::string> full_stdout = {"sh", "-c", "exec \"$0\" \"$@\" >/dev/full"};
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", sweet()}, {"examples"}, {"heatmap", tokens(), "--show"}}) {
    auto r = run_attn(args, "", {}, full_stdout);
    EXPECT_EQ(r.code, 4) << args[0];
    EXPECT_EQ(r.err, "attn: error: <stdout>: cannot write: No space left on device\n") << args[0];
  }
}

TEST(Files, SmallFullFilesystemLeavesTheOldFileAndNoTemporary) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a 64k tmpfs needs root";
  const std::string dir = temp_dir() + "/small_fs";
  ::mkdir(dir.c_str(), 0755);
  if (std::system(("mount -t tmpfs -o size=64k tmpfs " + dir + " 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "mount -t tmpfs failed (no CAP_SYS_ADMIN here); FullDeviceGivesExitFour "
                    "covers ENOSPC with /dev/full";
  }
  struct Unmount {
    std::string dir;
    ~Unmount() { (void)!std::system(("umount " + dir).c_str()); }
  } unmount{dir};
  const std::string out = dir + "/out.json";
  ASSERT_EQ(run_attn({"run", sweet(), "-f", "json", "-o", out}).code, 0);
  const std::string before = read_text(out);
  // 300 x 300 weights as JSON: about 2 MB, far more than the 64k left.
  const std::string big = rows_csv("rows300.csv", 300);
  auto r = run_attn({"run", big, "--weights", "-f", "json", "-o", out});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + out + ": cannot write: No space left on device\n");
  EXPECT_EQ(read_text(out), before);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename(), "out.json");
    ++files;
  }
  EXPECT_EQ(files, 1) << "the temporary file was removed";
}

TEST(Files, UnwritableDirectoryGivesExitFour) {
  const std::string dir = temp_dir() + "/read_only";
  ::mkdir(dir.c_str(), 0555);
  ::chmod(temp_dir().c_str(), 0755);
  std::vector<std::string> as_nobody;
  if (::geteuid() == 0) as_nobody = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  // The input goes next to it: nobody may not be able to read the source
  // tree (a clone under /root, mode 0700).
  const std::string in = write_temp("unwritable_dir_input.json", read_text(sweet()));
  ::chmod(in.c_str(), 0644);
  auto r = run_attn({"run", in, "-o", dir + "/out.json"}, "", {}, as_nobody);
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + dir +
                       "/out.json: cannot create a temporary file next to it: Permission denied\n");
}

TEST(Files, MissingUnreadableOrDirectoryInputsOfEveryKind) {
  const std::string missing = temp_dir() + "/no_such_file.csv";
  const std::string nf = "attn: error: " + missing + ": cannot open: No such file or directory\n";
  const std::vector<std::vector<std::string>> cases = {
      {"run", missing},
      {"run", "--x", missing},
      {"run", tokens(), "--mask", missing},
      {"run", tokens(), "--bias", missing},
      {"run", tokens(), "--key-padding-mask", missing},
      {"run", "--q", tokens(), "--k", tokens(), "--v", missing},
      {"run", sweet(), "--expect", missing},
      {"heatmap", missing, "--show"},
  };
  for (const auto& args : cases) {
    auto r = run_attn(args);
    EXPECT_EQ(r.code, 4) << args[1] << " " << args[2];
    EXPECT_EQ(r.err, nf) << args[1] << " " << args[2];
  }
  const std::string dir = temp_dir();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "--x", dir}, {"heatmap", dir, "--show"}, {"run", sweet(), "--expect", dir}}) {
    auto r = run_attn(args);
    EXPECT_EQ(r.code, 4) << args[1];
    EXPECT_EQ(r.err, "attn: error: " + dir + ": cannot read: Is a directory\n") << args[1];
  }
}

TEST(Files, NoOutputFlagOverwritesAnInput) {
  const std::string x = write_temp("in_x.csv", "1,0\n0,1\n");
  const std::string m = write_temp("in_mask.csv", "0,1\n0,0\n");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"run", x, "--mask", m, "-o", m}, "-o " + m + ": refusing to overwrite the input file " + m},
      {{"run", "--x", x, "--weights-out", x},
       "--weights-out " + x + ": refusing to overwrite the input file " + x},
      {{"run", x, "--heatmap", x},
       "--heatmap " + x + ": refusing to overwrite the input file " + x},
      {{"run", x, "--bias", m, "--heatmap", m},
       "--heatmap " + m + ": refusing to overwrite the input file " + m},
      {{"heatmap", x, "-o", x}, "-o " + x + ": refusing to overwrite the input file " + x},
      {{"run", sweet(), "--expect", m, "-o",
        temp_dir() + "/../" + std::filesystem::path(temp_dir()).filename().string() +
            "/in_mask.csv"},
       "-o " + temp_dir() + "/../" + std::filesystem::path(temp_dir()).filename().string() +
           "/in_mask.csv: refusing to overwrite the input file " + m},
  };
  for (const Case& c : cases) {
    auto r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << c.err;
    EXPECT_EQ(r.err, "attn: error: " + c.err + "\n");
  }
  EXPECT_EQ(read_text(x), "1,0\n0,1\n");
  EXPECT_EQ(read_text(m), "0,1\n0,0\n");
}

TEST(Files, TwoOutputsIntoOneFileAreRefused) {
  const std::string out = temp_dir() + "/both.json";
  auto r = run_attn({"run", sweet(), "-o", out, "--weights-out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --weights-out " + out +
                       ": -o writes that file too; give each output its own file\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  auto devnull = run_attn({"run", sweet(), "-o", "/dev/null", "--weights-out", "/dev/null"});
  EXPECT_EQ(devnull.code, 0) << devnull.err;
}

// Every command, its output cut short by a reader that stops after a line.
TEST(Files, ClosedPipeEndsEveryCommandQuietly) {
  const std::string big = rows_csv("rows500.csv", 500);
  const std::vector<std::string> commands = {
      "run " + big + " -f csv --weights",
      "run " + big + " -f json --weights",
      "run " + big + " --weights",
      "run " + big + " --trace",
      "run " + big + " --emit-pytorch",
      "run " + big + " --show",
      "run --example sweet --similarity",
      "examples",
      "examples show multihead",
      "heatmap " + big + " --show",
      "run --help",
      "--version",
  };
  const std::string err = temp_dir() + "/pipe.err";
  for (const std::string& c : commands) {
    const std::string cmd = "bash -c 'set -o pipefail; \"" + std::string(ATTN_BINARY) + "\" " + c +
                            " 2>\"" + err + "\" | head -1 >/dev/null'";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 0) << c;
    EXPECT_EQ(read_text(err), "") << c;
  }
}

TEST(Files, EmptyFileNamesAreUsageErrorsNamingTheFlag) {
  // -o '' used to print to stdout, --expect '' to check nothing.
  const std::string in = ": empty file name; give a file, or - for stdin\n";
  const std::string out = ": empty file name; give a file, or - for stdout\n";
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  std::vector<Case> cases = {
      {{"run", ""}, "input" + in},
      {{"run", sweet(), "", "--out-dir", temp_dir() + "/empty_names"}, "input" + in},
      {{"run", sweet(), "-o", ""}, "-o" + out},
      {{"run", sweet(), "--output", ""}, "-o" + out},
      {{"run", sweet(), "--weights-out", ""}, "--weights-out" + out},
      {{"run", sweet(), "--heatmap", ""}, "--heatmap" + out},
      {{"run", sweet(), tokens(), "--out-dir", ""}, "--out-dir: empty directory name\n"},
      {{"heatmap", "", "--show"}, "input" + in},
      {{"heatmap", tokens(), "-o", ""}, "-o" + out},
      {{"heatmap", tokens(), "--output", ""}, "-o" + out},
  };
  for (const char* flag :
       {"--x", "--y", "--q", "--k", "--v", "--mask", "--bias", "--key-padding-mask", "--expect"}) {
    cases.push_back({{"run", sweet(), flag, ""}, flag + in});
  }
  for (const Case& c : cases) {
    auto r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << c.err;
    EXPECT_EQ(r.err, "attn: error: " + c.err) << c.err;
    EXPECT_EQ(r.out, "") << c.err;
  }
  EXPECT_FALSE(std::filesystem::exists(temp_dir() + "/empty_names"));
}

// A fresh directory under the test's temporary directory.
// ---- where outputs go ----------------------------------------------------------

// Every writer (-o, --weights-out, --heatmap, --out-dir results, attn heatmap
// -o) goes through one function; these drive it through each flag.
std::string fresh_dir(const std::string& name) {
  const std::string dir = temp_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

bool is_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

std::string link_target(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n < 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

mode_t file_type(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// The names in a directory, hidden ones included, sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The argument lists that write one file through each writer, the file
// being `out` (.json for -o and --weights-out, .png for the heatmaps).
struct Writer {
  const char* what;
  std::vector<std::string> args;  // `out` goes last
};

std::vector<Writer> writers() {
  return {
      {"-o", {"run", sweet(), "-f", "json", "-o"}},
      {"--weights-out", {"run", sweet(), "-o", "/dev/null", "--weights-out"}},
      {"--heatmap", {"run", sweet(), "-o", "/dev/null", "--heatmap"}},
      {"heatmap -o", {"heatmap", tokens(), "-o"}},
  };
}

std::vector<std::string> with(std::vector<std::string> args, const std::string& last) {
  args.push_back(last);
  return args;
}

TEST(Files, SymlinkOutputUpdatesTheTargetAndKeepsTheLink) {
  for (const Writer& w : writers()) {
    const std::string dir = fresh_dir("link_to_file");
    const std::string ext =
        std::string(w.what).find("heatmap") != std::string::npos ? ".png" : ".json";
    std::filesystem::create_directories(dir + "/real");
    const std::string target = dir + "/real/target" + ext;
    std::ofstream(target) << "old";
    ::chmod(target.c_str(), 0640);
    // Relative, as ln -s writes them: resolved from the link's directory.
    const std::string link = dir + "/link" + ext;
    ASSERT_EQ(::symlink(("real/target" + ext).c_str(), link.c_str()), 0);
    auto r = run_attn(with(w.args, link));
    EXPECT_EQ(r.code, 0) << w.what << ": " << r.err;
    EXPECT_TRUE(is_link(link)) << w.what << ": the link was replaced";
    EXPECT_EQ(link_target(link), "real/target" + ext) << w.what;
    const std::string text = read_text(target);
    EXPECT_NE(text, "old") << w.what;
    // A result document, a weights array, or a PNG.
    if (ext == ".png") {
      EXPECT_EQ(text.substr(0, 4), "\x89PNG") << w.what;
    } else {
      EXPECT_TRUE(!text.empty() && (text[0] == '{' || text[0] == '[')) << w.what;
    }
    struct stat st {};
    ::stat(target.c_str(), &st);
    EXPECT_EQ(st.st_mode & 07777, 0640u) << w.what << ": the target keeps its permissions";
    EXPECT_EQ(entries(dir + "/real"), std::vector<std::string>{"target" + ext}) << w.what;
  }
}

TEST(Files, DanglingSymlinkCreatesItsTargetWhenTheDirectoryExists) {
  for (const Writer& w : writers()) {
    const std::string dir = fresh_dir("dangling");
    const std::string ext =
        std::string(w.what).find("heatmap") != std::string::npos ? ".png" : ".json";
    std::filesystem::create_directories(dir + "/sub");
    // Two links: link -> hop -> sub/new (hop is absolute).
    const std::string hop = dir + "/hop" + ext, link = dir + "/link" + ext;
    ASSERT_EQ(::symlink((dir + "/sub/new" + ext).c_str(), hop.c_str()), 0);
    ASSERT_EQ(::symlink(("hop" + ext).c_str(), link.c_str()), 0);
    auto r = run_attn(with(w.args, link));
    EXPECT_EQ(r.code, 0) << w.what << ": " << r.err;
    EXPECT_TRUE(is_link(link) && is_link(hop)) << w.what;
    EXPECT_EQ(file_type(dir + "/sub/new" + ext), S_IFREG) << w.what;
    EXPECT_EQ(entries(dir + "/sub"), std::vector<std::string>{"new" + ext}) << w.what;
  }
  // Into a directory that does not exist: exit 4, and the link stays.
  const std::string dir = fresh_dir("dangling_nowhere");
  const std::string link = dir + "/out.json";
  ASSERT_EQ(::symlink("missing/out.json", link.c_str()), 0);
  auto r = run_attn({"run", sweet(), "-o", link});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + link +
                       ": cannot create a temporary file next to the link's "
                       "target " +
                       dir + "/missing/out.json: No such file or directory\n");
  EXPECT_TRUE(is_link(link));
}

TEST(Files, SymlinkToADirectoryGivesExitFour) {
  const std::string dir = fresh_dir("link_to_dir");
  const std::string link = dir + "/out.json";
  ASSERT_EQ(::symlink(dir.c_str(), link.c_str()), 0);
  auto r = run_attn({"run", sweet(), "-o", link});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + link + ": cannot write: Is a directory\n");
  EXPECT_TRUE(is_link(link));
}

TEST(Files, DevicesAndLinksToDevicesAreWrittenNotReplaced) {
  const std::string dir = fresh_dir("link_to_null");
  for (const Writer& w : writers()) {
    const std::string link =
        dir + "/null" +
        (std::string(w.what).find("heatmap") != std::string::npos ? ".png" : ".json");
    std::filesystem::remove(link);
    ASSERT_EQ(::symlink("/dev/null", link.c_str()), 0);
    auto r = run_attn(with(w.args, link));
    EXPECT_EQ(r.code, 0) << w.what << ": " << r.err;
    EXPECT_TRUE(is_link(link)) << w.what;
    EXPECT_EQ(file_type("/dev/null"), S_IFCHR) << w.what;
    if (std::string(w.what).find("heatmap") != std::string::npos) continue;  // needs .png
    auto direct = run_attn(with(w.args, "/dev/null"));
    EXPECT_EQ(direct.code, 0) << w.what << ": " << direct.err;
    EXPECT_EQ(file_type("/dev/null"), S_IFCHR) << w.what;
  }
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"null.json", "null.png"}));
}

TEST(Files, DevStdoutWritesToStdout) {
  const std::string want = run_attn({"run", sweet()}).out;
  ASSERT_FALSE(want.empty());
  struct stat before {};
  ASSERT_EQ(::lstat("/dev/stdout", &before), 0);
  // Here stdout is a regular file (the test's capture): the classic case
  // where a rename would have replaced /dev/stdout itself.
  auto r = run_attn({"run", sweet(), "-o", "/dev/stdout"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, want);
  const std::string link = fresh_dir("link_to_stdout") + "/out.txt";
  ASSERT_EQ(::symlink("/dev/stdout", link.c_str()), 0);
  auto l = run_attn({"run", sweet(), "-o", link});
  EXPECT_EQ(l.code, 0) << l.err;
  EXPECT_EQ(l.out, want);
  EXPECT_TRUE(is_link(link));
  // Two outputs may both go to stdout, as to /dev/null: each is whole.
  const std::string weights = fresh_dir("stdout_weights") + "/w.json";
  const std::string csv = run_attn({"run", sweet(), "-f", "csv", "--weights-out", weights}).out;
  auto both =
      run_attn({"run", sweet(), "-f", "csv", "-o", "/dev/stdout", "--weights-out", "/dev/fd/1"});
  EXPECT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(both.out.size(), csv.size() + read_text(weights).size());
  EXPECT_NE(both.out.find(csv), std::string::npos);
  EXPECT_NE(both.out.find(read_text(weights)), std::string::npos);
  struct stat after {};
  ASSERT_EQ(::lstat("/dev/stdout", &after), 0);
  EXPECT_EQ(after.st_mode & S_IFMT, before.st_mode & S_IFMT);
  EXPECT_EQ(after.st_ino, before.st_ino) << "/dev/stdout is the same file";
}

TEST(Files, FigureToStdoutBesideTheResultIsRefused) {
  // A PNG into the table on stdout, by any name of stdout.
  for (const char* name : {"-", "/dev/stdout", "/dev/fd/1"}) {
    auto r = run_attn({"run", sweet(), "--heatmap", name});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_EQ(r.err, std::string("attn: error: --heatmap ") + name +
                         " writes the figure to stdout, which already carries the result; "
                         "write the result with -o FILE\n");
    EXPECT_EQ(r.out, "") << name;
  }
  // With the result in a file, the figure alone goes to stdout.
  const std::string out = fresh_dir("figure_to_stdout") + "/out.json";
  auto ok = run_attn({"run", sweet(), "-o", out, "--heatmap", "-"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out.substr(0, 4), "\x89PNG");
}

TEST(Files, FifoIsWrittenInPlace) {
  const std::string fifo = fresh_dir("fifo") + "/out.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    got = read_text(fifo);  // opening blocks until attn opens the other end
    done = true;
  });
  auto r = run_attn({"run", sweet(), "-f", "json", "-o", fifo});
  // Should attn fail before opening the FIFO, release the reader.
  for (int i = 0; i < 200 && !done; ++i) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reader.join();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(got, run_attn({"run", sweet(), "-f", "json"}).out);
  EXPECT_EQ(file_type(fifo), S_IFIFO);
}

TEST(Files, BatchResultsGoThroughLinksInTheOutputDirectory) {
  const std::string dir = fresh_dir("batch_links");
  std::filesystem::create_directories(dir + "/out");
  std::filesystem::create_directories(dir + "/elsewhere");
  const std::string link = dir + "/out/sweet.json";
  ASSERT_EQ(::symlink("../elsewhere/kept.json", link.c_str()), 0);
  auto r = run_attn({"run", sweet(), tokens(), "--out-dir", dir + "/out", "-f", "json", "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(is_link(link));
  EXPECT_EQ(read_text(dir + "/elsewhere/kept.json"), run_attn({"run", sweet(), "-f", "json"}).out);
  EXPECT_EQ(entries(dir + "/out"), (std::vector<std::string>{"sweet.json", "tokens.json"}));
}

TEST(Files, LongestFileNamesFitTheirTemporaryFile) {
  // 255 bytes is NAME_MAX: the temporary name must not add to it.
  const std::string dir = fresh_dir("long_names");
  const std::string json = dir + "/" + std::string(250, 'a') + ".json";
  const std::string png = dir + "/" + std::string(251, 'b') + ".png";
  auto r = run_attn({"run", sweet(), "-f", "json", "-o", json, "--heatmap", png});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(json).substr(0, 12), "{\n  \"labels\"");
  EXPECT_EQ(read_text(json).substr(read_text(json).size() - 4), "]\n}\n");
  EXPECT_EQ(read_text(png).substr(0, 4), "\x89PNG");
  auto w = run_attn({"run", sweet(), "-o", "/dev/null", "--weights-out", json});
  EXPECT_EQ(w.code, 0) << w.err;
  // One byte more is the file system's limit, reported as such; nothing is left.
  const std::string too_long = dir + "/" + std::string(251, 'c') + ".json";
  auto t = run_attn({"run", sweet(), "-o", too_long});
  EXPECT_EQ(t.code, 4);
  EXPECT_EQ(t.err, "attn: error: " + too_long + ": cannot replace: File name too long\n");
  EXPECT_EQ(entries(dir),
            (std::vector<std::string>{json.substr(dir.size() + 1), png.substr(dir.size() + 1)}));
}

TEST(Files, SignalDuringAWriteLeavesNoTemporaryFile) {
  struct Case {
    int sig;
    std::vector<std::string> args;  // the output file goes last
  };
  const std::vector<Case> cases = {
      {SIGTERM, {"run", sweet(), "-f", "json", "-o"}},
      {SIGINT, {"run", sweet(), "-o", "/dev/null", "--heatmap"}},
      {SIGHUP, {"heatmap", tokens(), "-o"}},
  };
  for (const Case& c : cases) {
    const std::string dir = fresh_dir("signal_" + std::to_string(c.sig));
    const std::string out = dir + "/out.png";
    std::ofstream(out) << "old";
    // The test hook waits with the temporary file written, before the rename.
    const pid_t pid = start_attn(with(c.args, out), {"ATTN_DEBUG_PAUSE_BEFORE_RENAME=30"});
    ASSERT_GT(pid, 0);
    bool seen = false;
    for (int i = 0; i < 800 && !seen; ++i) {
      for (const std::string& name : entries(dir)) seen = seen || name.rfind(".attn-", 0) == 0;
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(seen) << "no temporary file appeared; signal " << c.sig;
    ::kill(pid, seen ? c.sig : SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == c.sig)
        << "attn ends by the signal, as without the handler; signal " << c.sig;
    EXPECT_EQ(entries(dir), std::vector<std::string>{"out.png"}) << "signal " << c.sig;
    EXPECT_EQ(read_text(out), "old") << "signal " << c.sig;
  }
}

// ---- outputs never replace an input; a failed run replaces no output ----

std::string file_bytes(const std::string& path) { return read_text(path); }

TEST(Files, NoOutputReplacesATensorReferenceTokensOrAFont) {
  const std::string st = write_temp("ref.safetensors", "");
  {
    // One 2x2 float64 tensor "x".
    const std::string header = R"({"x":{"dtype":"F64","shape":[2,2],"data_offsets":[0,32]}})";
    std::string bytes(8, '\0');
    const uint64_t n = header.size();
    std::memcpy(&bytes[0], &n, 8);
    bytes += header;
    const double cells[4] = {1, 0, 0, 1};
    bytes.append(reinterpret_cast<const char*>(cells), sizeof cells);
    std::ofstream(st, std::ios::binary) << bytes;
  }
  const std::string npz = temp_dir() + "/ref.npz";
  ASSERT_EQ(run_attn({"run", "--x", st + ":x", "-o", npz, "-w"}).code, 0);
  const std::string tok = write_temp("ref_tokens.txt", "a\nb\n");
  const std::string st_before = file_bytes(st), npz_before = file_bytes(npz);
  struct Case {
    std::vector<std::string> args;
    std::string out, input;
  };
  const std::vector<Case> cases = {
      {{"run", "--x", st + ":x", "-o", st}, st, st},
      {{"run", "--x", st + ":x", "--weights-out", st}, st, st},
      {{"run", "--x", npz + ":output", "-o", npz}, npz, npz},
      {{"run", "--x", st + ":x", "--tokens", tok, "-o", tok}, tok, tok},
      {{"heatmap", npz + ":weights", "-o", npz}, npz, npz},
      {{"heatmap", npz, "--tokens", tok, "-o", tok}, tok, tok},
      {{"diff", npz + ":weights", npz + ":weights", "--heatmap", npz}, npz, npz},
  };
  for (const Case& c : cases) {
    const auto r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.out + ": refusing to overwrite the input file " + c.input),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(file_bytes(st), st_before);
  EXPECT_EQ(file_bytes(npz), npz_before);
  EXPECT_EQ(read_text(tok), "a\nb\n");

  const std::string font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (!fs::exists(font)) GTEST_SKIP() << "no DejaVuSans.ttf (fonts-dejavu-core) for --font";
  const std::string copy = temp_dir() + "/guard_font.ttf";
  fs::copy_file(font, copy, fs::copy_options::overwrite_existing);
  const std::string font_before = file_bytes(copy);
  const auto f = run_attn({"run", "--example", "sweet", "--font", copy, "--heatmap", copy});
  EXPECT_EQ(f.code, 2) << f.err;
  EXPECT_NE(f.err.find("refusing to overwrite the input file " + copy), std::string::npos) << f.err;
  EXPECT_EQ(file_bytes(copy), font_before);
}

TEST(Files, NoOutputReplacesAFileOfTheCheckpoint) {
  const std::string m = model_copy("tiny-llama", "guarded");
  const std::string link = temp_dir() + "/weights_link.safetensors";
  fs::remove(link);
  fs::create_symlink(m + "/model.safetensors", link);
  const std::string model_before = file_bytes(m + "/model.safetensors");
  const std::string config_before = file_bytes(m + "/config.json");
  const std::vector<std::string> base = {"run", "--checkpoint",     m, "--layer", "0",
                                         "--x", m + "/x_layer0.npy"};
  for (const auto& [flag, out] :
       std::vector<std::pair<std::string, std::string>>{{"--weights-out", m + "/model.safetensors"},
                                                        {"-o", m + "/config.json"},
                                                        {"-o", link},
                                                        {"--heatmap", m + "/model.safetensors"}}) {
    std::vector<std::string> args = base;
    args.push_back(flag);
    args.push_back(out);
    const auto r = run_attn(args);
    EXPECT_EQ(r.code, 2) << flag << " " << out << ": " << r.err;
    EXPECT_NE(r.err.find(flag + " " + out + ": refusing to overwrite the input file "),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(file_bytes(m + "/model.safetensors"), model_before);
  EXPECT_EQ(file_bytes(m + "/config.json"), config_before);
  // A checkpoint given as a file guards the config.json beside it too.
  const auto c = run_attn({"run", "--checkpoint", m + "/model.safetensors", "--layer", "0", "--x",
                           m + "/x_layer0.npy", "-o", m + "/config.json"});
  EXPECT_EQ(c.code, 2) << c.err;
  EXPECT_EQ(file_bytes(m + "/config.json"), config_before);
}

TEST(Files, AFailedRunReplacesNoNamedOutput) {
  const std::string dir = temp_dir() + "/all_or_none";
  fs::create_directories(dir);
  const std::string w = dir + "/w.json", h = dir + "/h.svg", o = dir + "/o.json";
  for (const std::string& f : {w, h, o}) std::ofstream(f) << "old";
  // The weights were written first, and stayed replaced, before.
  const auto r = run_attn(
      {"run", "--example", "sweet", "-o", "/dev/full", "--weights-out", w, "--heatmap", h});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: /dev/full: cannot write: No space left on device\n");
  EXPECT_EQ(read_text(w), "old");
  EXPECT_EQ(read_text(h), "old");
  // The device among the named files, the regular file last.
  const std::string full_png = dir + "/full.png";
  fs::remove(full_png);
  fs::create_symlink("/dev/full", full_png);
  const auto r2 =
      run_attn({"run", "--example", "sweet", "--heatmap", full_png, "-o", o, "--weights-out", w});
  EXPECT_EQ(r2.code, 4) << r2.err;
  EXPECT_EQ(read_text(o), "old");
  EXPECT_EQ(read_text(w), "old");
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_NE(e.path().filename().string().rfind(".attn-", 0), 0u) << e.path();
  }
  // And when all can be written, all are.
  const auto ok = run_attn(
      {"run", "--example", "sweet", "-o", o, "--weights-out", w, "--heatmap", h, "-f", "json"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(read_text(o), "old");
  EXPECT_NE(read_text(w), "old");
  EXPECT_NE(read_text(h).find("<svg"), std::string::npos);
}

TEST(Files, ATruncatedSafetensorsGivesExitThreeNamingTheFile) {
  // The whole program, with the file cut while the run reads it: a run
  // over a large tensor, the file truncated from outside mid-way.
  const int64_t n = int64_t{1} << 24;  // 128 MiB: reading it takes a while
  const std::string path = write_safetensors("race.safetensors", n);
  std::vector<std::string> args = {"run", "--x", path, "-o", "/dev/null", "--max-elements", "2^30"};
  // The cut comes from a shell running beside attn; either it lands
  // while attn reads (exit 3, named) or after (exit 0 or an error of the
  // numbers); never a signal.
  const std::string cmd = "( sleep 0.05; truncate -s 4096 " + test::quote(path) + " ) & " +
                          test::quote(ATTN_BINARY) + " run --x " + test::quote(path) +
                          " -o /dev/null --max-elements '2^30' --max-input-bytes '2^31'";
  const test::Run r = test::run_redirected(cmd, temp_dir() + "/race.out", temp_dir() + "/race.err");
  EXPECT_LT(r.code, 128) << "killed by a signal: " << r.err;
  if (r.code == 3 && r.err.find("cut short") != std::string::npos) {
    EXPECT_EQ(r.err, "attn: error: " + path +
                         ":w: the file was cut short while attn read it (another program "
                         "truncated or rewrote it); run again once the file is complete\n");
  }
}

}  // namespace
}  // namespace attn
