// The tokenizer's fuzz entry point: a tokenizer.json and a text in one
// input, read and encoded as `attn tokenize` does.
#include <stdexcept>
#include <string>
#include <string_view>

#include "attn/error.h"
#include "attn/tokenizer.h"
#include "base/utf8.h"
#include "fuzz_entry.h"

namespace attn::fuzz {

void tokenizer_text(std::string_view data) {
  const size_t nul = data.find('\0');
  const std::string_view json = data.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? "" : data.substr(nul + 1);
  try {
    const Tokenizer t = Tokenizer::from_json(json, "fuzz.json");
    for (const bool special : {true, false}) {
      try {
        const Encoding e = t.encode(text, special, "text");
        if (e.ids.size() != e.tokens.size()) {
          throw std::logic_error("encode gave " + std::to_string(e.ids.size()) + " ids and " +
                                 std::to_string(e.tokens.size()) + " tokens");
        }
        for (const std::string& token : e.tokens) {
          // What attn tokenize prints: valid UTF-8 whatever the token holds.
          const std::string shown = t.readable(token);
          if (invalid_utf8_offset(shown) != std::string_view::npos) {
            throw std::logic_error("readable() gave text that is not UTF-8");
          }
        }
        for (const int64_t id : e.ids) t.token(id);
      } catch (const Error& err) {
        if (err.kind() == ErrorKind::kInternal) throw std::logic_error(err.what());
      }
    }
  } catch (const Error& err) {
    if (err.kind() == ErrorKind::kInternal) throw std::logic_error(err.what());
  }
}

}  // namespace attn::fuzz
