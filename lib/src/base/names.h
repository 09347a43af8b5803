// Names in messages: a word that is not one of a list, and the nearest
// names to it (for "did you mean").
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attn {

// "'foo' is not one of a, b, c" plus "; did you mean 'b'?" when one is close.
std::string not_one_of(std::string_view got, const std::vector<std::string>& names);

// The nearest name to `word` by edit distance, however far.
std::string nearest_name(std::string_view word, const std::vector<std::string>& names);

// The closest name to `word` by edit distance, or "" if none is close.
std::string closest_name(std::string_view word, const std::vector<std::string>& names);

}  // namespace attn
