#include "heatmap/panels.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "attn/error.h"
#include "base/number_text.h"
#include "heatmap/axes.h"

namespace attn::heatmap {

namespace {}  // namespace

int64_t batch_id(const HeatmapData& d, int64_t b) {
  return static_cast<size_t>(b) < d.batch_ids.size() ? d.batch_ids[static_cast<size_t>(b)] : b;
}

int64_t head_id(const HeatmapData& d, int64_t h) {
  return h >= 0 && static_cast<size_t>(h) < d.head_ids.size() ? d.head_ids[static_cast<size_t>(h)]
                                                              : h;
}

std::string panel_caption(const HeatmapData& d, int64_t panel_b, int64_t panel_h, bool short_form) {
  const int64_t b = batch_id(d, panel_b), h = head_id(d, panel_h);
  if (short_form) {
    const std::string head = h < 0 ? "mean" : "H" + std::to_string(h);
    return d.batch_axis ? std::string(1, static_cast<char>(std::toupper(d.batch_name[0]))) +
                              std::to_string(b) + " " + head
                        : head;
  }
  std::string s;
  if (d.batch_axis) s = d.batch_name + " " + std::to_string(b);
  if (h < 0 || d.head_axis) {
    if (!s.empty()) s += ", ";
    s += h < 0 ? "mean of heads" : "head " + std::to_string(h);
  }
  return s;
}

namespace {

void check_index(const char* flag, const std::optional<int64_t>& i, int64_t n, const char* one,
                 const char* many) {
  if (i && *i >= n) {
    throw_usage(std::string(flag) + " " + std::to_string(*i) + ": out of range; the input has " +
                std::to_string(n) + " " + (n == 1 ? one : many) + " (0 to " +
                std::to_string(n - 1) + ")");
  }
}

// 2^-k for the smallest k with 2^k >= n. Summing n finite values each scaled
// by it cannot overflow (two values of 1.7e308 do), and since scaling by a
// power of two is exact, the mean rounds to the same bits as the plain sum's.
double sum_scale(int64_t n) {
  int k = 0;
  while (k < 62 && (int64_t{1} << k) < n) ++k;
  return std::ldexp(1.0, -k);
}

// One matrix of the source (a head), or the mean over the heads of a batch:
// the cell at (r, c) with its state. A masked cell counts as 0 in the mean,
// as a masked weight is 0 (so the mean of weights is PyTorch's
// average_attn_weights); the mean is masked only where every head is.
struct Source {
  const double* values;
  const uint8_t* masked;  // may be null
  int64_t planes;         // 1, or the heads averaged
  int64_t plane_size;

  uint8_t cell(int64_t offset, double* v) const {
    if (planes == 1) {
      if (masked && masked[offset]) return kMasked;
      *v = values[offset];
      return std::isnan(*v) ? kMissing : kValue;
    }
    const double scale = sum_scale(planes);
    double sum = 0;
    int64_t masked_heads = 0;
    bool nan = false;
    for (int64_t h = 0; h < planes; ++h) {
      const int64_t at = h * plane_size + offset;
      if (masked && masked[at]) {
        ++masked_heads;
        continue;
      }
      nan = nan || std::isnan(values[at]);
      sum += values[at] * scale;
    }
    if (masked_heads == planes) return kMasked;
    *v = sum / static_cast<double>(planes) / scale;
    return nan ? kMissing : kValue;
  }
};

// max |value| of each row (or column) of a source, for --normalize.
std::vector<double> norm_divisors(const Source& s, int64_t rows, int64_t cols, bool by_row) {
  std::vector<double> m(static_cast<size_t>(by_row ? rows : cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      double v = 0;
      if (s.cell(r * cols + c, &v) != kValue || !std::isfinite(v)) continue;
      double& slot = m[static_cast<size_t>(by_row ? r : c)];
      slot = std::max(slot, std::fabs(v));
    }
  }
  for (double& x : m) {
    if (x == 0) x = 1;  // an all-zero row stays zero
  }
  return m;
}

// Merges factor x factor blocks of one source into a panel: the mean (or
// max) of the cells that are neither masked nor NaN. A block is masked when
// all its cells are, NaN when its unmasked cells all are.
void reduce_into(const Source& s, int64_t rows, int64_t cols, int64_t f, Reduce how,
                 const std::vector<double>* row_div, const std::vector<double>* col_div,
                 Panel& out) {
  const int64_t sr = (rows + f - 1) / f, sc = (cols + f - 1) / f;
  out.values.assign(static_cast<size_t>(sr * sc), 0.0);
  out.state.assign(static_cast<size_t>(sr * sc), kValue);
  std::vector<double> acc(static_cast<size_t>(sc));
  std::vector<int64_t> count(static_cast<size_t>(sc)), masked(static_cast<size_t>(sc));
  const double start = how == Reduce::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
  const double scale = sum_scale(f * f);  // a block's sum, see sum_scale
  for (int64_t br = 0; br < sr; ++br) {
    std::fill(acc.begin(), acc.end(), start);
    std::fill(count.begin(), count.end(), 0);
    std::fill(masked.begin(), masked.end(), 0);
    const int64_t r_end = std::min(rows, (br + 1) * f);
    for (int64_t r = br * f; r < r_end; ++r) {
      const double rd = row_div ? (*row_div)[static_cast<size_t>(r)] : 1.0;
      for (int64_t bc = 0; bc < sc; ++bc) {
        const int64_t c_end = std::min(cols, (bc + 1) * f);
        double a = acc[static_cast<size_t>(bc)];
        int64_t n = 0, m = 0;
        for (int64_t c = bc * f; c < c_end; ++c) {
          double v = 0;
          const uint8_t st = s.cell(r * cols + c, &v);
          if (st == kMasked) {
            ++m;
            continue;
          }
          if (st == kMissing) continue;
          v /= col_div ? (*col_div)[static_cast<size_t>(c)] : rd;
          a = how == Reduce::kMax ? std::max(a, v) : a + v * scale;
          ++n;
        }
        acc[static_cast<size_t>(bc)] = a;
        count[static_cast<size_t>(bc)] += n;
        masked[static_cast<size_t>(bc)] += m;
      }
    }
    for (int64_t bc = 0; bc < sc; ++bc) {
      const size_t i = static_cast<size_t>(br * sc + bc);
      const size_t k = static_cast<size_t>(bc);
      const int64_t cells = (r_end - br * f) * (std::min(cols, (bc + 1) * f) - bc * f);
      if (masked[k] == cells) {
        out.state[i] = kMasked;
      } else if (count[k] == 0) {
        out.state[i] = kMissing;
      } else {
        out.values[i] =
            how == Reduce::kMax ? acc[k] : acc[k] / static_cast<double>(count[k]) / scale;
      }
    }
  }
}

// The colour range and colormap (see HeatmapOptions).
void choose_range(const HeatmapData& d, const HeatmapOptions& o, Panels& p) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  double least_positive = std::numeric_limits<double>::infinity();  // a log scale's bottom
  std::vector<double> shown;                                        // for a percentile
  for (const Panel& panel : p.panels) {
    for (size_t i = 0; i < panel.values.size(); ++i) {
      if (panel.state[i] != kValue || !std::isfinite(panel.values[i])) continue;
      if (o.ignore_first && p.shown_cols > 1 && static_cast<int64_t>(i) % p.shown_cols == 0) {
        continue;
      }
      lo = std::min(lo, panel.values[i]);
      hi = std::max(hi, panel.values[i]);
      if (panel.values[i] > 0) least_positive = std::min(least_positive, panel.values[i]);
      if (o.vmax_quantile) shown.push_back(panel.values[i]);
    }
  }
  // The range's top from the data, not 1, for weights.
  const bool top_from_data = o.vmax_quantile || o.ignore_first;
  if (o.vmax_quantile && !shown.empty()) {
    // NumPy's percentile (linear between the two nearest ranks).
    const double at = *o.vmax_quantile / 100 * static_cast<double>(shown.size() - 1);
    const size_t k = static_cast<size_t>(std::floor(at));
    std::nth_element(shown.begin(), shown.begin() + static_cast<std::ptrdiff_t>(k), shown.end());
    double v = shown[k];
    if (k + 1 < shown.size()) {
      const double next =
          *std::min_element(shown.begin() + static_cast<std::ptrdiff_t>(k) + 1, shown.end());
      v += (at - static_cast<double>(k)) * (next - v);
    }
    hi = v;
  }
  if (lo > hi) lo = hi = 0;  // nothing to show
  const bool is_signed = lo < 0;
  p.colormap = o.colormap.value_or(is_signed ? Colormap::kRdBu : Colormap::kViridis);
  if (o.normalize != Normalize::kNone) {
    lo = is_signed ? -1 : 0;
    hi = 1;
  } else {
    // Weights: 0 to 1 unless the data's ends are asked for (or pass them).
    if (d.zero_based && !o.vmin_auto && lo > 0) lo = 0;
    if (d.zero_based && !o.vmax_auto && !top_from_data && lo >= 0) hi = std::max(hi, 1.0);
    if (diverging(p.colormap) && !o.vmin && !o.vmax && !o.vmin_auto && !o.vmax_auto) {
      const double m = std::max(std::fabs(lo), std::fabs(hi));
      lo = -m;
      hi = m;
    }
  }
  if (o.vmin) lo = *o.vmin;
  if (o.vmax) hi = *o.vmax;
  if (!(hi > lo)) {
    // A constant matrix, or a single bound beyond the data: widen the range
    // on the side that was not given.
    const double pad = lo == 0 ? 0.5 : std::fabs(lo) * 0.5;
    if (d.zero_based && lo == 0 && !o.vmax) {
      hi = 1;
    } else if (o.vmin && !o.vmax) {
      hi = lo + 2 * pad;
    } else if (o.vmax && !o.vmin) {
      lo = hi - 2 * (hi == 0 ? 0.5 : std::fabs(hi) * 0.5);
    } else {
      lo -= pad;
      hi += pad;
    }
    // Widening 1.7e308 by half of itself overflows: the range stays finite.
    lo = std::max(lo, std::numeric_limits<double>::lowest());
    hi = std::min(hi, std::numeric_limits<double>::max());
  }
  p.scale = o.color_scale;
  p.gamma = o.gamma;
  if (o.color_scale == ColorScale::kLog) {
    // The logarithm needs ends above 0: the bottom at the least positive
    // value drawn unless --vmin gives one.
    if (o.vmin && !(*o.vmin > 0)) {
      throw_usage("--color-scale log: --vmin " + format_shortest(*o.vmin) + " must be above 0");
    }
    if (!o.vmin) lo = least_positive;
    if (!(hi > 0) || !std::isfinite(lo)) {
      throw_input(d.source, "--color-scale log: no value above 0 to draw");
    }
    if (!(hi > lo)) hi = lo * 10;
  }
  p.lo = lo;
  p.hi = hi;
}

}  // namespace

PanelPlan plan_panels(const HeatmapData& d, const HeatmapOptions& o) {
  if (d.batch < 1 || d.heads < 1 || d.rows < 1 || d.cols < 1) {
    throw_input(d.source, "nothing to draw: the matrix is empty (" + std::to_string(d.rows) +
                              " rows, " + std::to_string(d.cols) + " columns)");
  }
  check_index("--batch", o.batch, d.batch, "batch", "batches");
  check_index("--head", o.head, d.heads, "head", "heads");
  PanelPlan plan;
  const int64_t b0 = o.batch.value_or(0), b1 = o.batch ? b0 + 1 : d.batch;
  const int64_t h0 = o.head.value_or(0), h1 = o.head ? h0 + 1 : d.heads;
  const bool mean = d.head_average && d.heads > 1 && !o.head;
  for (int64_t b = b0; b < b1; ++b) {
    for (int64_t h = h0; h < h1; ++h)
      plan.refs.push_back({b, h, panel_caption(d, b, h, d.short_captions)});
    if (mean) plan.refs.push_back({b, -1, panel_caption(d, b, -1, d.short_captions)});
  }
  const int per_batch = static_cast<int>((h1 - h0) + (mean ? 1 : 0));
  const int n = static_cast<int>(plan.refs.size());
  if (b1 - b0 > 1) {
    plan.grid_rows = static_cast<int>(b1 - b0);
    plan.grid_cols = per_batch;
  } else {
    plan.grid_cols = n <= 5 ? n : static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
    plan.grid_rows = (n + plan.grid_cols - 1) / plan.grid_cols;
  }
  return plan;
}

int64_t block_factor(int64_t rows, int64_t cols, int64_t max_rows, int64_t max_cols) {
  max_rows = std::max<int64_t>(max_rows, 1);
  max_cols = std::max<int64_t>(max_cols, 1);
  int64_t f = std::max((rows + max_rows - 1) / max_rows, (cols + max_cols - 1) / max_cols);
  return std::max<int64_t>(f, 1);
}

Panels build_panels(const HeatmapData& d, const HeatmapOptions& o, const PanelPlan& plan,
                    int64_t factor) {
  Panels p;
  p.rows = d.rows;
  p.cols = d.cols;
  p.factor = factor;
  p.shown_rows = (d.rows + factor - 1) / factor;
  p.shown_cols = (d.cols + factor - 1) / factor;
  p.grid_rows = plan.grid_rows;
  p.grid_cols = plan.grid_cols;
  const int64_t plane = d.rows * d.cols;
  for (const PanelRef& ref : plan.refs) {
    const int64_t first = (ref.batch * d.heads + (ref.head < 0 ? 0 : ref.head)) * plane;
    Source s{d.values + first, d.masked ? d.masked + first : nullptr, ref.head < 0 ? d.heads : 1,
             plane};
    std::vector<double> div;
    if (o.normalize != Normalize::kNone) {
      div = norm_divisors(s, d.rows, d.cols, o.normalize == Normalize::kRow);
    }
    Panel panel;
    panel.caption = ref.caption;
    reduce_into(s, d.rows, d.cols, factor, o.reduce,
                o.normalize == Normalize::kRow ? &div : nullptr,
                o.normalize == Normalize::kCol ? &div : nullptr, panel);
    if (factor == 1 && plan.refs.size() == 1 && static_cast<int64_t>(d.cell_text.size()) == plane) {
      panel.texts = d.cell_text;
    }
    for (uint8_t st : panel.state) {
      p.any_masked = p.any_masked || st == kMasked;
      p.any_missing = p.any_missing || st == kMissing;
    }
    p.panels.push_back(std::move(panel));
  }
  choose_range(d, o, p);
  p.scale_name = scale_title(d, o);
  if (range_from_data(d, o)) {
    p.range_note = "colours span the data's range, " + end_text(p.lo) + " to " + end_text(p.hi);
  }
  // A stack reduced as it was read (cell_block) and again here: the note
  // names the source's size and the whole block a shown cell stands for.
  const int64_t block = factor * std::max<int64_t>(d.cell_block, 1);
  if (block > 1) {
    const bool stack = d.cell_block > 1;
    const int64_t src_rows = stack && d.source_rows ? d.source_rows : d.rows;
    const int64_t src_cols = stack && d.source_cols ? d.source_cols : d.cols;
    p.block_note = std::to_string(src_rows) + "x" + std::to_string(src_cols) + " shown as " +
                   std::to_string(p.shown_rows) + "x" + std::to_string(p.shown_cols) + ": " +
                   std::string(name(o.reduce)) + " of " + std::to_string(block) + "x" +
                   std::to_string(block) + " blocks";
  }
  return p;
}

std::string scale_title(const HeatmapData& d, const HeatmapOptions& o) {
  std::string t = d.value_name;
  if (o.vmax_quantile) t += "; top at the " + format_shortest(*o.vmax_quantile) + "th percentile";
  if (o.ignore_first) t += "; range without the first column";
  if (o.color_scale == ColorScale::kLog) t += " (log scale)";
  if (o.color_scale == ColorScale::kPower) {
    t += " (power scale, gamma " + format_shortest(o.gamma) + ")";
  }
  if (o.normalize == Normalize::kRow) t += " / row max";
  if (o.normalize == Normalize::kCol) t += " / column max";
  return t;
}

bool range_from_data(const HeatmapData& d, const HeatmapOptions& o) {
  if (o.vmin || o.vmax || o.normalize != Normalize::kNone) return false;
  return !d.zero_based || o.vmin_auto || o.vmax_auto || o.vmax_quantile || o.ignore_first;
}

// The digits values are written with: --precision's, or whole numbers
// (scores of integer vectors, counts) as such, others with two decimals
// below 10 (three when that writes every value exactly, as 0.125), one
// below 100, else none: fewer digits would turn a weight of 0.25 into a
// misleading "0".
int value_decimals(const Panels& p, const HeatmapOptions& o) {
  if (o.decimals) return *o.decimals;
  bool whole = true, exact3 = true;
  double largest = 0;
  for (const Panel& panel : p.panels) {
    for (size_t i = 0; i < panel.values.size(); ++i) {
      const double v = panel.values[i];
      if (panel.state[i] != kValue || !std::isfinite(v)) continue;
      whole = whole && v == std::round(v);
      exact3 = exact3 && std::fabs(v * 1000 - std::round(v * 1000)) < 1e-9 * std::max(1.0, v);
      largest = std::max(largest, std::fabs(v));
    }
  }
  if (whole || largest >= 100) return 0;
  if (largest >= 10) return 1;
  return exact3 ? 3 : 2;
}

}  // namespace attn::heatmap
