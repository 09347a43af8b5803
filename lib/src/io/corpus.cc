#include "io/corpus.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "base/path.h"

namespace attn {

namespace {

// Lines longer than this are no sentence a model reads at once.
constexpr size_t kMaxLineBytes = size_t{1} << 24;

}  // namespace

std::string json_line_text(std::string_view line, const std::string& place) {
  json::Value v;
  try {
    v = json::parse(line, "<line>");
  } catch (const Error& e) {
    // "<line>:1:5: what" as "path:line:5: what".
    std::string what = e.what();
    const std::string prefix = "<line>:1:";
    what = what.compare(0, prefix.size(), prefix) == 0 ? place + ":" + what.substr(prefix.size())
                                                       : place + ": " + what;
    throw Error(ErrorKind::kInput, what);
  }
  if (v.is_string()) return v.as_string();
  const json::Value* text = v.is_object() ? v.find("text") : nullptr;
  if (text && text->is_string()) return text->as_string();
  throw_input(place, "expected a JSON string or an object with a string \"text\", got " +
                         (!v.is_object() ? json::describe(v)
                          : text         ? "an object whose \"text\" is " + json::describe(*text)
                                         : std::string("an object without \"text\"")));
}

CorpusReader::CorpusReader(const std::string& path, CorpusFormat format, int64_t max_bytes)
    : path_(path), format_(format) {
  if (path == "-" || path::kind_of(path) == path::Kind::kOther) {
    // Read once: a second reading finds the pipe empty.
    whole_ = read_file(path, {}, max_bytes);
    return;
  }
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw_file(display_name(path), std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fileno(file_), &st) == 0) {
    const int err = S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (err || st.st_size > max_bytes) {
      std::fclose(file_);
      file_ = nullptr;
      if (err) throw_file(display_name(path), std::string("cannot read: ") + std::strerror(err));
      throw_input(display_name(path), std::to_string(st.st_size) +
                                          " bytes, more than --max-input-bytes " +
                                          std::to_string(max_bytes) + "; raise --max-input-bytes");
    }
  }
}

void CorpusReader::rewind() {
  if (file_) std::rewind(file_);
  at_ = 0;
  line_ = 0;
}

CorpusReader::~CorpusReader() {
  if (file_) std::fclose(file_);
}

bool CorpusReader::next_line(std::string& out) {
  out.clear();
  if (!file_) {
    if (at_ >= whole_.size()) return false;
    const size_t end = std::min(whole_.find('\n', at_), whole_.size());
    out.assign(whole_, at_, end - at_);
    at_ = end + 1;
  } else {
    int c = 0;
    bool any = false;
    while ((c = std::getc(file_)) != EOF) {
      any = true;
      if (c == '\n') break;
      if (out.size() >= kMaxLineBytes) {
        throw_input(display_name(path_) + ":" + std::to_string(line_ + 1),
                    "a line of more than " + std::to_string(kMaxLineBytes) + " bytes");
      }
      out.push_back(static_cast<char>(c));
    }
    if (std::ferror(file_)) {
      throw_file(display_name(path_), std::string("cannot read: ") + std::strerror(errno));
    }
    if (!any) return false;
  }
  ++line_;
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return true;
}

bool CorpusReader::next(std::string& text, int64_t& line) {
  std::string raw;
  while (next_line(raw)) {
    if (raw.find_first_not_of(" \t") == std::string::npos) continue;  // blank
    line = line_;
    const std::string place = display_name(path_) + ":" + std::to_string(line_);
    if (raw.find('\0') != std::string::npos) throw_input(place, "holds a NUL byte");
    text = format_ == CorpusFormat::kJsonLines ? json_line_text(raw, place) : raw;
    return true;
  }
  return false;
}

}  // namespace attn
