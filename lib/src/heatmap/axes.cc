#include "heatmap/axes.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/number_text.h"

namespace attn::heatmap {

int64_t nice_step(double n) {
  int64_t base = 1;
  for (;;) {
    for (int64_t m : {1, 2, 5}) {
      if (static_cast<double>(m * base) >= n) return m * base;
    }
    base *= 10;
  }
}

Ticks colorbar_ticks(double lo, double hi, int want) {
  Ticks t;
  // Half the span: hi - lo overflows for a range such as ±1.7e308, its
  // halves never do, and for any other range half * 2 is exactly hi - lo.
  const double half = hi / 2 - lo / 2;
  if (!(half > 0) || !std::isfinite(half)) return t;
  // A step of 1, 2 or 5 times a power of ten near span / want.
  const double raw = half / want * 2;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  }
  t.step = step;
  const double eps = half * 2e-9;
  const double first = std::ceil(lo / step);
  for (double k = first;; k += 1) {
    double v = k * step;
    if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0" from rounding
    if (v >= hi - eps) break;
    if (v > lo + eps) t.values.push_back(v);
  }
  return t;
}

namespace {

// v with `digits` significant digits in the shortest of fixed and
// scientific notation, the exponent without "+" and leading zeros:
// "1.7e308", "2.5e-7", "0.0156".
std::string short_general(double v, int digits) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, digits);
  std::string s(buf, static_cast<size_t>(r.ptr - buf));
  const size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string exp = s.substr(e + 1);
    const bool neg = exp[0] == '-';
    exp.erase(0, exp.find_first_not_of("+-"));
    exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
    s = s.substr(0, e + 1) + (neg ? "-" : "") + exp;
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace

std::string tick_text(double v, double step) {
  int decimals = 0;
  if (step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  const std::string fixed = format_fixed(v, std::min(decimals, 12));
  if (static_cast<int>(fixed.size()) <= kTickChars) return fixed;
  // Ticks are multiples of the step: the digits from v's first down to the
  // step's tell them apart.
  if (v == 0) return "0";
  const int digits = std::max(
      1, static_cast<int>(std::floor(std::log10(std::fabs(v))) - std::floor(std::log10(step))) + 1);
  const std::string s = short_general(v, std::min(digits, 17));
  return static_cast<int>(s.size()) <= kTickChars ? s : "";
}

std::string end_text(double v) {
  if (!std::isfinite(v)) return format_fixed(v, 0);
  const double a = std::fabs(v);
  if (a >= 1000 && a < 1e6) return format_fixed(v, 0);
  // "-1e-300" has 7 characters: one significant digit always fits.
  std::string s;
  for (int digits = 3; digits >= 1; --digits) {
    s = short_general(v, digits);
    if (static_cast<int>(s.size()) <= kTickChars) break;
  }
  return s;
}

std::string value_text(double v, int decimals) { return format_fixed(v, decimals); }

}  // namespace attn::heatmap
