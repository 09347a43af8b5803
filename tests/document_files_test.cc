// The files a document names for its tensors ("X": "x.csv"): opened
// beneath the document's directory in one step and read from that
// descriptor, so that a file swapped for a link out of the directory
// between a check and the open is never read; what a reference names when
// it is not a regular file (a directory, a loop of links, a FIFO); NUL
// bytes in a reference; numbers pasted into a string.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "attn/error.h"
#include "commands/run.h"
#include "commands/run_internal.h"
#include "io/open_beneath.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::run_attn;

std::string fresh_dir(const std::string& name) {
  const std::string dir = test::temp_dir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

const std::string kTail = "; a document names files in its own directory (or below it)";

// Another thread swaps the referenced file between a regular file and a
// link to a file outside the directory, as fast as it can, while the
// document is read again and again: every read gives the regular file's
// numbers or the refusal of the link, never the outside file's.
TEST(DocumentFiles, AFileSwappedForALinkOutIsNeverRead) {
  const std::string top = fresh_dir("docfiles_race");
  const std::string dir = top + "/doc";
  fs::create_directories(dir);
  write(top + "/secret.csv", "666,666\n666,666\n");
  write(dir + "/good.csv", "1,2\n3,4\n");
  write(dir + "/race.csv", "1,2\n3,4\n");
  write(dir + "/d.json", R"({"X": "race.csv"})");
  std::atomic<bool> stop{false};
  std::atomic<int> swaps{0};
  // Each swap is a rename over race.csv, so the name always exists: a
  // link to the secret, then a hard link to good.csv.
  std::thread swapper([&] {
    const std::string link = dir + "/link.tmp", file = dir + "/file.tmp",
                      target = dir + "/race.csv", good = dir + "/good.csv";
    while (!stop.load()) {
      ::unlink(link.c_str());
      ::unlink(file.c_str());
      if (::symlink("../secret.csv", link.c_str()) != 0 ||
          ::link(good.c_str(), file.c_str()) != 0) {
        break;
      }
      // Each state held a moment, so that runs meet both and the turns.
      ::rename(link.c_str(), target.c_str());
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      ::rename(file.c_str(), target.c_str());
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      swaps.fetch_add(1);
    }
  });
  RunRequest req;
  req.input = dir + "/d.json";
  const std::string refused = req.input +
                              ": X: \"race.csv\" leads out of the document's directory "
                              "through a symbolic link" +
                              kTail;
  int runs = 0, read = 0, refusals = 0, other = 0;
  // At least 500 runs during at least 500 swaps (a loaded machine may
  // give the swapper little time), for at most a minute.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && (runs < 500 || swaps.load() < 500)) {
    ++runs;
    try {
      const InputDocument doc = detail::load_document(req);
      ASSERT_TRUE(doc.X.has_value());
      const Tensor<double>& x = doc.X->tensor;
      ASSERT_EQ(x.size(), 4);
      EXPECT_EQ(x[0], 1) << "run " << runs << " read another file than race.csv";
      ++read;
    } catch (const Error& e) {
      if (e.what() == refused) {
        ++refusals;
      } else {
        ++other;
        ADD_FAILURE() << "run " << runs << ": " << e.what();
      }
    }
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(read + refusals, runs);
  EXPECT_EQ(other, 0);
  EXPECT_GE(swaps.load(), 500);
  RecordProperty("runs", runs);
  RecordProperty("read", read);
  RecordProperty("refused", refusals);
  RecordProperty("swaps", swaps.load());
}

// The document's own directory swapped (its path a link flipped between
// the document's directory and another that holds a file of the same
// name): the files it names come from the directory it was read from.
TEST(DocumentFiles, TheDocumentAndItsFilesComeFromOneDirectory) {
  const std::string top = fresh_dir("docfiles_dir_race");
  fs::create_directories(top + "/docs");
  fs::create_directories(top + "/private");
  write(top + "/docs/d.json", R"({"X": "x.csv"})");
  write(top + "/docs/x.csv", "1,2\n3,4\n");
  write(top + "/private/x.csv", "666,666\n666,666\n");
  fs::create_directory_symlink("docs", top + "/current");
  std::atomic<bool> stop{false};
  std::atomic<int> swaps{0};
  std::thread swapper([&] {
    const std::string link = top + "/link.tmp", current = top + "/current";
    while (!stop.load()) {
      for (const char* target : {"private", "docs"}) {
        ::unlink(link.c_str());
        if (::symlink(target, link.c_str()) != 0) return;
        ::rename(link.c_str(), current.c_str());
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
      swaps.fetch_add(1);
    }
  });
  RunRequest req;
  req.input = top + "/current/d.json";
  const std::string missing = req.input + ": cannot open: No such file or directory";
  int runs = 0, read = 0, refusals = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && (runs < 500 || swaps.load() < 500)) {
    ++runs;
    try {
      const InputDocument doc = detail::load_document(req);
      ASSERT_TRUE(doc.X.has_value());
      EXPECT_EQ(doc.X->tensor[0], 1) << "run " << runs << " read the other directory's x.csv";
      ++read;
    } catch (const Error& e) {
      EXPECT_EQ(e.what(), missing) << "run " << runs;
      ++refusals;
    }
  }
  stop = true;
  swapper.join();
  EXPECT_GE(swaps.load(), 500);
  RecordProperty("runs", runs);
  RecordProperty("read", read);
  RecordProperty("refused", refusals);
}

// Links that stay inside the directory are followed; the file is named in
// messages as the run finds it (the document's directory and the
// reference), not by its resolved path.
TEST(DocumentFiles, LinksInsideTheDirectoryAreFollowed) {
  const std::string dir = fresh_dir("docfiles_inside");
  fs::create_directories(dir + "/data");
  write(dir + "/data/x.csv", "1,2\n3,4\n");
  fs::create_symlink("data/x.csv", dir + "/x.csv");
  fs::create_symlink("data", dir + "/alias");
  write(dir + "/plain.json", R"({"X": "data/x.csv"})");
  write(dir + "/link.json", R"({"X": "x.csv"})");
  write(dir + "/dirlink.json", R"({"X": "alias/x.csv"})");
  const auto plain = run_attn({"run", dir + "/plain.json", "-f", "json"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  for (const char* doc : {"/link.json", "/dirlink.json"}) {
    const auto r = run_attn({"run", dir + doc, "-f", "json"});
    EXPECT_EQ(r.code, 0) << doc << ": " << r.err;
    EXPECT_EQ(r.out, plain.out) << doc;
  }
  write(dir + "/data/bad.csv", "1,2\n3\n");
  write(dir + "/bad.json", R"({"X": "data/bad.csv"})");
  const auto bad = run_attn({"run", dir + "/bad.json"});
  EXPECT_EQ(bad.code, 3);
  EXPECT_EQ(bad.err.rfind("attn: error: " + dir + "/data/bad.csv:2:", 0), 0u) << bad.err;
}

// What a reference names, when it is not a file attn reads, is said as it
// is: a directory, a loop of links, a FIFO (alone or with a tensor's
// name), a missing file.
TEST(DocumentFiles, WhatAReferenceNamesIsSaid) {
  const std::string dir = fresh_dir("docfiles_kinds");
  fs::create_directories(dir + "/sub");
  fs::create_symlink("loop", dir + "/loop");
  ASSERT_EQ(::mkfifo((dir + "/pipe.csv").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir + "/pipe.safetensors").c_str(), 0600), 0);
  struct Case {
    std::string reference;
    int code;
    std::string message;  // after "DOC: X: "
  };
  const std::vector<Case> cases = {
      {".", 3, "\".\" is a directory, not a regular file"},
      {"sub", 3, "\"sub\" is a directory, not a regular file"},
      {"loop", 3, "\"loop\" is a loop of symbolic links"},
      {"pipe.csv", 3, "\"pipe.csv\" is a FIFO (named pipe), not a regular file"},
      {"pipe.safetensors:w", 3,
       "\"pipe.safetensors:w\" is a FIFO (named pipe), not a regular file"},
  };
  for (const Case& c : cases) {
    const std::string doc = dir + "/d.json";
    write(doc, "{\"X\": \"" + c.reference + "\"}");
    const auto r = run_attn({"run", doc}, "", {}, {"timeout", "20"});
    EXPECT_EQ(r.code, c.code) << c.reference;
    EXPECT_EQ(r.err, "attn: error: " + doc + ": X: " + c.message + "\n");
  }
  write(dir + "/d.json", R"({"X": "none.csv"})");
  const auto missing = run_attn({"run", dir + "/d.json"});
  EXPECT_EQ(missing.code, 4);
  EXPECT_EQ(missing.err,
            "attn: error: " + dir + "/none.csv: cannot open: No such file or directory\n");
}

// A NUL byte in a reference is refused by name, whatever follows it: the
// operating system would read the name only up to it ("x.csv\u0000.csv"
// would open x.csv).
TEST(DocumentFiles, ANulInAReferenceIsRefused) {
  const std::string dir = fresh_dir("docfiles_nul");
  write(dir + "/x.csv", "1,2\n3,4\n");
  for (const std::string& ref : {std::string("x.csv\\u0000.csv"), std::string("a\\u0000b")}) {
    const std::string doc = dir + "/d.json";
    write(doc, "{\"X\": \"" + ref + "\"}");
    const auto r = run_attn({"run", doc});
    EXPECT_EQ(r.code, 3) << ref;
    EXPECT_EQ(r.err, "attn: error: " + doc + ": X: \"" + ref +
                         "\" holds a NUL byte, which no file name can hold\n");
  }
  // Read from stdin too, where no file is read at all.
  const auto piped = run_attn({"run", "-"}, R"({"X": "x.csv\u0000"})");
  EXPECT_EQ(piped.code, 3);
  EXPECT_EQ(piped.err,
            "attn: error: <stdin>: X: \"x.csv\\u0000\" holds a NUL byte, which no file name can "
            "hold\n");
}

// The same for a checkpoint index's shard: a name, never a path.
TEST(DocumentFiles, ANulInAShardNameIsRefused) {
  const std::string dir = fresh_dir("docfiles_shard_nul");
  fs::copy_file(test::model("tiny-llama/config.json"), dir + "/config.json");
  fs::copy_file(test::model("tiny-llama/model.safetensors"), dir + "/model.safetensors");
  const std::string index = dir + "/model.safetensors.index.json";
  write(index, R"({"weight_map": {"model.norm.weight": "model.safetensors\u0000.x"}})");
  const auto r = run_attn({"run", "--checkpoint", dir, "--ids", "1,2"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + index +
                       ": weight_map names \"model.safetensors\\u0000.x\", which holds a NUL "
                       "byte; no file name can hold one\n");
}

// An error's message is one C string: a NUL in it is written as \u0000,
// so that nothing after it is lost.
TEST(ErrorMessages, ANulIsWrittenNotCut) {
  const Error e(ErrorKind::kFile, std::string("a\0b: cannot open", 16));
  EXPECT_EQ(std::string(e.what()), "a\\u0000b: cannot open");
}

// Numbers pasted into a string ("[[1, 2], [3, 4]]") are not a file's name.
TEST(DocumentFiles, AMatrixInQuotesIsSaidToBeAString) {
  const std::string dir = fresh_dir("docfiles_string");
  const std::string doc = dir + "/d.json";
  write(doc, R"({"X": [[1, 2]], "params": {"W_q": "[[1, 2], [3, 4]]"}})");
  const std::string why =
      ": params.W_q: \"[[1, 2], [3, 4]]\" is a string, which names a file; a matrix is written "
      "as a JSON array, without the quotes\n";
  const auto r = run_attn({"run", doc});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + doc + why);
  const auto piped =
      run_attn({"run", "-"}, R"({"X": [[1, 2]], "params": {"W_q": "[[1, 2], [3, 4]]"}})");
  EXPECT_EQ(piped.code, 3);
  EXPECT_EQ(piped.err, "attn: error: <stdin>" + why);
}

// Without openat2 (Linux before 5.6) each step is opened with O_NOFOLLOW:
// no link is followed at all, ".." never.
TEST(OpenBeneath, WithoutOpenat2NoLinkIsFollowed) {
  const std::string dir = fresh_dir("beneath");
  fs::create_directories(dir + "/sub");
  write(dir + "/sub/x.csv", "1\n");
  fs::create_symlink("sub/x.csv", dir + "/link.csv");
  fs::create_symlink("sub", dir + "/alias");
  const int d = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(d, 0);
  auto error_of = [&](const std::string& rel) {
    const detail::BeneathFile f = detail::open_without_links(d, rel);
    if (f.fd >= 0) ::close(f.fd);
    EXPECT_TRUE(f.no_links);
    return f.fd >= 0 ? 0 : f.error;
  };
  EXPECT_EQ(error_of("sub/x.csv"), 0);
  EXPECT_EQ(error_of("./sub//x.csv"), 0);
  EXPECT_EQ(error_of("link.csv"), ELOOP);
  EXPECT_EQ(error_of("alias/x.csv"), ELOOP);
  EXPECT_EQ(error_of("sub/../sub/x.csv"), EXDEV);
  EXPECT_EQ(error_of("none.csv"), ENOENT);
  // openat2 follows the links that stay inside, and refuses the way out.
  auto beneath = [&](const std::string& rel) {
    const detail::BeneathFile f = detail::open_beneath(d, rel);
    if (f.fd >= 0) ::close(f.fd);
    return f.no_links ? -1 : f.fd >= 0 ? 0 : f.error;
  };
  fs::create_symlink("../..", dir + "/up");
  if (beneath("sub/x.csv") != -1) {  // -1: this kernel has no openat2
    EXPECT_EQ(beneath("link.csv"), 0);
    EXPECT_EQ(beneath("alias/x.csv"), 0);
    EXPECT_EQ(beneath("up/etc/hostname"), EXDEV);
    EXPECT_EQ(beneath("sub/../../x"), EXDEV);
  }
  ::close(d);
}

}  // namespace
}  // namespace attn
