// Numbers along the figure's axes: how many labels to skip so they never
// overlap, the colorbar's tick values, and how values are written (ticks,
// range ends, cell annotations).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::heatmap {

// The smallest of 1, 2, 5, 10, 20, 50, ... that is >= n (n >= 1).
int64_t nice_step(double n);

// Tick values strictly inside (lo, hi) at a round step, about `want` of them.
struct Ticks {
  std::vector<double> values;
  double step = 0;
};
Ticks colorbar_ticks(double lo, double hi, int want);

// The most characters a colorbar label may have: the room the layout keeps
// beside the bar (kTickTextWidth), so labels never run into its title.
constexpr int kTickChars = 8;

// A tick value with as many decimals as its step needs ("0.2", "-1", "250"),
// or in short scientific notation ("5e307", "2e-12") when that would take
// more than kTickChars; "" when even that does not fit (the tick is left out).
std::string tick_text(double v, double step);

// A range end with three significant digits ("0.0156", "0.853", "2048",
// "1.7e308"), fewer when needed to stay within kTickChars.
std::string end_text(double v);

// A cell value with `decimals` digits after the point; "nan"/"inf" as such.
std::string value_text(double v, int decimals);

}  // namespace attn::heatmap
