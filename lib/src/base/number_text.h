// Numbers as text: shortest round-trip printing (std::to_chars), fixed-point
// printing for tables and traces, and parsing of already-validated decimal
// text with correct handling of values outside the double range.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attn {

// Shortest text that parses back to exactly v ("0.1", "1e-300"). Non-finite
// values give "nan", "inf", "-inf" (callers that write JSON quote them).
std::string format_shortest(double v);
// The same for a float: the shortest text that parses back to the float.
std::string format_shortest(float v);
// Appends format_shortest(v) to out without a temporary string.
void append_shortest(std::string& out, double v);
void append_shortest(std::string& out, float v);

// Fixed-point with `decimals` digits after the point; "-0.0000" is printed as
// "0.0000". Non-finite values as "nan", "inf", "-inf".
std::string format_fixed(double v, int decimals);

// Scientific with `decimals` digits after the point ("1.2500e+03").
std::string format_scientific(double v, int decimals);

// Text of a decimal number already checked by a grammar (JSON or CSV):
// correctly rounded; values too large become +-inf, too small +-0 (as
// Python's float() does).
double parse_double_text(const char* begin, const char* end);

// Parses a whole string as a finite or non-finite number: accepts the
// decimal grammar plus "inf", "-inf", "+inf", "nan", "infinity" (any case).
// Returns false when the text is not a number.
bool parse_number_word(std::string_view text, double* out);

// Parses a whole string of decimal digits as an unsigned integer. Returns
// nullopt for anything else (a sign, a point, an exponent, spaces) and for a
// value past 2^64 - 1, so callers range-check integers as integers.
std::optional<uint64_t> parse_unsigned_text(std::string_view text);

}  // namespace attn
