// Files through the program: outputs fail with exit 4 and the OS reason and
// are never left half-written (nor their temporary files, signals
// included); outputs go through links and into devices without replacing
// them; and a closed pipe ends every command quietly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
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
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::rows_csv;
using test::run_attn;
using test::source_path;
using test::sweet;
using test::temp_dir;
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

// Starts attn with extra environment assignments, its standard streams on
// /dev/null and the signals a test sends at their default action (a shell
// that starts the suite in the background ignores SIGINT).
pid_t start_attn(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> words = {ATTN_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<std::string> vars(env);
  for (char** e = environ; *e; ++e) vars.push_back(*e);
  std::vector<char*> envp;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  if (posix_spawn(&pid, ATTN_BINARY, &files, &attr, argv.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  return pid;
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

}  // namespace
}  // namespace attn
