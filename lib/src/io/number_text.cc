#include "base/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace attn {

namespace {

template <class T>
void append_shortest_impl(std::string& out, T v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "inf" : "-inf";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != b[i]) return false;
  }
  return true;
}

}  // namespace

void append_shortest(std::string& out, double v) { append_shortest_impl(out, v); }
void append_shortest(std::string& out, float v) { append_shortest_impl(out, v); }

std::string format_shortest(double v) {
  std::string s;
  append_shortest(s, v);
  return s;
}

std::string format_shortest(float v) {
  std::string s;
  append_shortest(s, v);
  return s;
}

std::string format_fixed(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  std::string s(buf, static_cast<size_t>(r.ptr - buf));
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string format_scientific(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, decimals);
  return std::string(buf, static_cast<size_t>(r.ptr - buf));
}

double parse_double_text(const char* begin, const char* end) {
  double v = 0;
  auto r = std::from_chars(begin, end, v);
  if (r.ec == std::errc()) return v;
  // Out of range: let strtod decide between overflow (+-HUGE_VAL) and
  // underflow (+-0). This path is rare, so the copy does not matter.
  std::string copy(begin, end);
  return std::strtod(copy.c_str(), nullptr);
}

bool parse_number_word(std::string_view text, double* out) {
  std::string_view t = text;
  bool negative = false;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) {
    negative = t[0] == '-';
    t.remove_prefix(1);
  }
  if (iequals(t, "inf") || iequals(t, "infinity")) {
    *out = negative ? -INFINITY : INFINITY;
    return true;
  }
  if (iequals(t, "nan")) {
    *out = NAN;
    return true;
  }
  if (text.empty()) return false;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  if (*b == '+') ++b;
  double v = 0;
  auto r = std::from_chars(b, e, v);
  if (r.ptr != e) return false;
  if (r.ec == std::errc::result_out_of_range) {
    v = parse_double_text(b, e);
  } else if (r.ec != std::errc()) {
    return false;
  }
  // from_chars also accepts "inf"/"nan" spellings we handled above and hex
  // is not accepted in general format; nothing else to reject here.
  *out = v;
  return true;
}

std::optional<uint64_t> parse_unsigned_text(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace attn
