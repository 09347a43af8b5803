// A corpus of sentences, read a line at a time so that its length costs no
// memory: JSON Lines (`attn run --texts FILE`: a JSON string, or an object
// with a string "text", per line, as the datasets library writes them) or
// plain text (`--text-file FILE --each-line`: a sentence a line). Blank
// lines are skipped; a line's final "\r" is not part of it.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace attn {

enum class CorpusFormat { kJsonLines, kLines };

class CorpusReader {
 public:
  // Opens `path`: a regular file is streamed (and refused when larger than
  // max_bytes); stdin ("-"), a pipe or a device is read whole, within
  // max_bytes. File errors name it.
  CorpusReader(const std::string& path, CorpusFormat format, int64_t max_bytes);
  ~CorpusReader();
  CorpusReader(const CorpusReader&) = delete;
  CorpusReader& operator=(const CorpusReader&) = delete;

  // The next sentence and its line (1-based); false at the end. A line
  // that is no sentence is an input error naming "path:line".
  bool next(std::string& text, int64_t& line);
  // Back to the first line, for a second reading.
  void rewind();

 private:
  bool next_line(std::string& out);

  std::string path_;
  CorpusFormat format_;
  std::FILE* file_ = nullptr;
  std::string whole_;  // all of it, when it is not a regular file
  size_t at_ = 0;
  int64_t line_ = 0;
};

// One line of JSON Lines as its text: a JSON string, or an object with a
// string member "text" (other members ignored). `place` is "path:line".
std::string json_line_text(std::string_view line, const std::string& place);

}  // namespace attn
