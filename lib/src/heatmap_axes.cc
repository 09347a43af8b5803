#include "heatmap_axes.h"

#include <charconv>
#include <cmath>

#include "attn/number_text.h"

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
  const double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span)) return t;
  // A step of 1, 2 or 5 times a power of ten near span / want.
  const double raw = span / want;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  }
  t.step = step;
  const double first = std::ceil(lo / step);
  for (double k = first;; k += 1) {
    double v = k * step;
    if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0" from rounding
    if (v >= hi - span * 1e-9) break;
    if (v > lo + span * 1e-9) t.values.push_back(v);
  }
  return t;
}

std::string tick_text(double v, double step) {
  int decimals = 0;
  if (step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return format_fixed(v, std::min(decimals, 12));
}

std::string end_text(double v) {
  if (!std::isfinite(v)) return format_fixed(v, 0);
  const double a = std::fabs(v);
  if (a >= 1000 && a < 1e6) return format_fixed(v, 0);
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 3);
  std::string s(buf, static_cast<size_t>(r.ptr - buf));
  if (s == "-0") s = "0";
  return s;
}

std::string value_text(double v, int decimals) { return format_fixed(v, decimals); }

}  // namespace attn::heatmap
