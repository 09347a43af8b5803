// Replays the fuzzers' corpora and reproducers (tests/fuzz/<target>/corpus
// and tests/fuzz/<target>/crashes) through the same entry points as the
// libFuzzer targets, so every path the fuzzers found runs in the normal
// suite and a fixed crash stays fixed. Bad input must end in attn::Error
// (which the entry points swallow); anything else escaping is a failure,
// among them the std::logic_error of an output that breaks the escaping
// rules (escape_text).
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_entry.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// Every file of tests/fuzz/<target>/corpus and .../crashes, sorted.
std::vector<std::string> replay_files(const std::string& target) {
  std::vector<std::string> files;
  for (const char* dir : {"corpus", "crashes"}) {
    const fs::path p = test::source_path("tests/fuzz/" + target + "/" + dir);
    if (!fs::is_directory(p)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(p)) {
      if (e.is_regular_file()) files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

template <class Entry>
void replay(const std::string& target, Entry entry) {
  const std::vector<std::string> files = replay_files(target);
  ASSERT_FALSE(files.empty()) << "no corpus under tests/fuzz/" << target;
  for (const std::string& f : files) {
    try {
      entry(test::read_text(f));
    } catch (const std::exception& e) {
      ADD_FAILURE() << f << ": escaped with " << e.what();
    } catch (...) {
      ADD_FAILURE() << f << ": escaped with a non-standard exception";
    }
  }
}

TEST(FuzzReplay, JsonDocumentCorpusAndCrashes) { replay("json", fuzz::json_document); }

TEST(FuzzReplay, CsvMatrixCorpusAndCrashes) { replay("csv", fuzz::csv_matrix); }

TEST(FuzzReplay, NpyMatrixCorpusAndCrashes) { replay("npy", fuzz::npy_matrix); }

TEST(FuzzReplay, EscapeTextCorpusAndCrashes) { replay("escape", fuzz::escape_text); }

TEST(FuzzReplay, CheckpointConfigCorpusAndCrashes) { replay("config", fuzz::checkpoint_config); }

TEST(FuzzReplay, FlagWordsCorpusAndCrashes) { replay("flags", fuzz::flag_words); }

TEST(FuzzReplay, BinaryArchiveCorpusAndCrashes) { replay("binary", fuzz::binary_archive); }
TEST(FuzzReplay, SafetensorsCorpusAndCrashes) { replay("safetensors", fuzz::safetensors_file); }
TEST(FuzzReplay, NpzCorpusAndCrashes) { replay("npz", fuzz::npz_archive); }
TEST(FuzzReplay, GgufCorpusAndCrashes) { replay("gguf", fuzz::gguf_file); }

TEST(FuzzReplay, TokenizerCorpusAndCrashes) { replay("tokenizer", fuzz::tokenizer_text); }

}  // namespace
}  // namespace attn
