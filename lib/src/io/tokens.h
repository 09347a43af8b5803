// Token files (--tokens FILE): the labels of a model's input, as a JSON list
// of strings (["<s>", "▁The", "▁cat"], what tokenizer.convert_ids_to_tokens
// gives, saved with json.dump) or as UTF-8 text with one token per line.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/file_io.h"

namespace attn {

// Reads the tokens of `path` ("-" is stdin). A JSON list must hold strings
// only; text must be UTF-8 (a final newline ends the last line, it does not
// add an empty token; \r\n line ends are taken as \n). Throws attn::Error
// (kInput) naming the place of the first bad token, kFile when unreadable.
std::vector<std::string> read_tokens(const std::string& path,
                                     int64_t max_bytes = kDefaultMaxInputBytes);

}  // namespace attn
