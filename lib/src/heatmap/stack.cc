// Stacks of attention weights ([layers][batch][heads][q][k]) drawn where
// they lie: the chosen panels are read from the memory-mapped file, reduced
// block by block when large, and the pages read are given back as the
// reading goes, so the memory held stays near the figure's own size.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "attn/error.h"
#include "attn/heatmap.h"
#include "attn/options.h"
#include "base/names.h"

namespace attn {

namespace {

void check_choice(const char* flag, const std::optional<int64_t>& i, int64_t n, const char* what) {
  if (i && (*i < 0 || *i >= n)) {
    throw_usage(std::string(flag) + " " + std::to_string(*i) + ": out of range; the stack has " +
                std::to_string(n) + " " + what + (n == 1 ? "" : "s") + " (0 to " +
                std::to_string(n - 1) + ")");
  }
}

// One [q][k] panel of the stack, reduced by `f` (1: as it is) into out,
// which holds ceil(q/f) × ceil(k/f) cells. Each row is decoded whole (one
// dispatch on the cell type a row, not a cell).
// causal[0] stays true while every cell right of the diagonal j = i is
// exactly 0 (a causal mask, top-left), causal[1] the same for j = i + k - q
// (bottom-right, a KV cache's).
void read_panel(const BinaryArray& a, int64_t offset, int64_t q, int64_t k, int64_t f,
                Reduce reduce, double* out, bool causal[2]) {
  const int64_t rq = (q + f - 1) / f, rk = (k + f - 1) / f;
  const bool mean = reduce == Reduce::kMean;
  std::fill(out, out + rq * rk, mean ? 0.0 : -std::numeric_limits<double>::infinity());
  std::vector<double> values(static_cast<size_t>(k));
  for (int64_t i = 0; i < q; ++i) {
    double* row = out + (i / f) * rk;
    decode_cells(a.data + cells_bytes(a.type, static_cast<uint64_t>(offset + i * k)), a.type, k,
                 values.data());
    for (int side = 0; side < 2; ++side) {
      const int64_t first = std::max<int64_t>(i + 1 + (side ? k - q : 0), 0);
      for (int64_t j = first; causal[side] && j < k; ++j) causal[side] = values[j] == 0;
    }
    for (int64_t j = 0; j < k; ++j) {
      const double v = values[static_cast<size_t>(j)];
      double& cell = row[j / f];
      if (mean) {
        cell += v;
      } else if (v > cell || std::isnan(v)) {
        cell = v;
      }
    }
  }
  if (mean && f > 1) {
    for (int64_t bi = 0; bi < rq; ++bi) {
      const int64_t h = std::min(f, q - bi * f);
      for (int64_t bj = 0; bj < rk; ++bj) {
        const int64_t w = std::min(f, k - bj * f);
        out[bi * rk + bj] /= static_cast<double>(h * w);
      }
    }
  }
  // The panel's pages are read; a mapped file need not keep them.
  a.keep.release(a.data + cells_bytes(a.type, static_cast<uint64_t>(offset)),
                 cells_bytes(a.type, static_cast<uint64_t>(q * k)));
}

// The stack's axes and the layers, heads and batch entry chosen, checked
// (`what` names the work in the message for an empty stack).
struct Picked {
  int64_t L, B, H, Q, K;
  int64_t b, nl, nh;
  std::vector<int64_t> layers, heads;            // the ones drawn, in order
  bool some_layers = false, some_heads = false;  // not all of them
};

// A list flag's indices, each in range (a usage error naming it).
// The layers (or heads) drawn: the one chosen, else the list, else all n.
std::vector<int64_t> drawn(const std::optional<int64_t>& one, const std::vector<int64_t>& list,
                           int64_t n) {
  if (one) return {*one};
  if (!list.empty()) return list;
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  return all;
}

void check_list(const char* flag, const std::vector<int64_t>& list, int64_t n, const char* what) {
  for (int64_t i : list) check_choice(flag, i, n, what);
}

Picked pick(const BinaryArray& a, const StackChoice& c, const std::string& source,
            const char* function, const char* what) {
  if (a.shape.size() != 5) {
    throw_internal(std::string(function) + ": rank " + std::to_string(a.shape.size()));
  }
  Picked p{a.shape[0], a.shape[1], a.shape[2], a.shape[3], a.shape[4], 0,
           0,          0,          {},         {},         false,      false};
  if (shape_size(a.shape) == 0) {
    throw_input(source, std::string("nothing to ") + what + ": the stack is empty (shape " +
                            shape_string(a.shape) + ")");
  }
  check_choice("--layer", c.layer, p.L, "layer");
  check_choice("--batch", c.batch, p.B, "batch entry");
  check_choice("--head", c.head, p.H, "head");
  check_list("--layers", c.layers, p.L, "layer");
  check_list("--heads", c.heads, p.H, "head");
  p.b = c.batch.value_or(0);
  p.layers = drawn(c.layer, c.layers, p.L);
  p.heads = drawn(c.head, c.heads, p.H);
  p.nl = static_cast<int64_t>(p.layers.size());
  p.nh = static_cast<int64_t>(p.heads.size());
  p.some_layers = p.nl < p.L || c.layer.has_value() || !c.layers.empty();
  p.some_heads = p.nh < p.H || c.head.has_value() || !c.heads.empty();
  return p;
}

}  // namespace

HeatmapData heatmap_from_stack(const BinaryArray& a, const StackChoice& c,
                               const std::string& source) {
  const Picked pk = pick(a, c, source, "heatmap_from_stack", "draw");
  const int64_t B = pk.B, H = pk.H, Q = pk.Q, K = pk.K, b = pk.b;
  const int64_t nl = pk.nl, nh = pk.nh;
  const int64_t f = std::max<int64_t>(1, (std::max(Q, K) + c.max_side - 1) / c.max_side);
  const int64_t rq = (Q + f - 1) / f, rk = (K + f - 1) / f;

  auto values = std::make_shared<std::vector<double>>(static_cast<size_t>(nl * nh * rq * rk));
  bool causal[2] = {Q > 1, Q > 1 && K > Q};
  for (int64_t l = 0; l < nl; ++l) {
    for (int64_t h = 0; h < nh; ++h) {
      const int64_t offset =
          ((pk.layers[static_cast<size_t>(l)] * B + b) * H + pk.heads[static_cast<size_t>(h)]) * Q *
          K;
      read_panel(a, offset, Q, K, f, c.reduce, values->data() + (l * nh + h) * rq * rk, causal);
    }
  }

  HeatmapData d;
  // A stack carries no mask; where every cell right of the diagonal is
  // exactly 0 in every panel drawn, the attention was causal: those cells
  // are drawn masked (a block, where all its cells are), as a run draws them.
  const int side = causal[0] ? 0 : causal[1] ? 1 : -1;
  if (side >= 0) {
    const int64_t shift = side ? K - Q : 0;
    auto masked = std::make_shared<std::vector<uint8_t>>(values->size(), uint8_t{0});
    for (int64_t p = 0; p < nl * nh; ++p) {
      for (int64_t bi = 0; bi < rq; ++bi) {
        const int64_t last_row = std::min(Q, (bi + 1) * f) - 1;
        for (int64_t bj = 0; bj < rk; ++bj) {
          // The block's every cell is right of the diagonal when its first
          // column is right of its last row's diagonal cell.
          if (bj * f > last_row + shift)
            (*masked)[static_cast<size_t>((p * rq + bi) * rk + bj)] = 1;
        }
      }
    }
    d.owned_masked = masked;
    d.masked = masked->data();
  }
  d.owned_values = values;
  d.values = values->data();
  d.batch = nl;
  d.heads = nh;
  d.rows = rq;
  d.cols = rk;
  d.cell_block = f;
  d.source_rows = Q;
  d.source_cols = K;
  d.batch_axis = nl > 1;
  d.batch_name = "layer";
  // The model view: many small panels, captioned "L3 H5" and "L3 mean".
  d.short_captions = nl > 1;
  d.model_view = nl > 1;
  d.head_axis = nh > 1;
  d.head_average = nh > 1;
  d.zero_based = true;
  d.source = source;
  d.value_name = "weights";
  auto list = [](const std::vector<int64_t>& ids) {
    std::string s;
    for (int64_t i : ids) s += (s.empty() ? "" : ",") + std::to_string(i);
    return s;
  };
  if (pk.some_layers) d.batch_ids = pk.layers;
  if (pk.some_heads) d.head_ids = pk.heads;
  std::string where;
  if (pk.some_layers) where = (nl == 1 ? "layer " : "layers ") + list(pk.layers);
  if (pk.some_heads) {
    where +=
        (where.empty() ? "" : ", ") + std::string(nh == 1 ? "head " : "heads ") + list(pk.heads);
  }
  if (B > 1) where += (where.empty() ? "" : ", ") + std::string("batch ") + std::to_string(b);
  d.subtitle = "stack " + shape_string(a.shape) + " [layers][batch][heads][q][k]" +
               (where.empty() ? "" : "; " + where) +
               (side == 0   ? "; causal: the zeros right of the diagonal drawn as masked"
                : side == 1 ? "; causal (bottom-right): the zeros right of the diagonal drawn "
                              "as masked"
                            : "");
  // How far the panels were reduced is the note under the figure's to say
  // (cell_block): the figure may merge the reduced cells again.
  return d;
}

namespace {

// One reading of the stack for its head summaries: the values, what was
// left out, and (for the page's hover) each head's weights in at most
// 24 x 24 block means.
struct SummaryPass {
  Picked pk;
  std::shared_ptr<std::vector<double>> values, patterns;
  int64_t pr = 0, pc = 0, f = 1;
  std::string left_out;
};

SummaryPass summary_pass(const BinaryArray& a, const StackChoice& c, HeadStat stat,
                         const std::string& source, bool patterns) {
  SummaryPass out{pick(a, c, source, "head_summary", "summarise"), {}, {}, 0, 0, 1, ""};
  const Picked& pk = out.pk;
  const int64_t B = pk.B, H = pk.H, Q = pk.Q, K = pk.K, b = pk.b;
  const int64_t nl = pk.nl, nh = pk.nh;
  auto cell = [&](int64_t flat) {
    return a.data + cells_bytes(a.type, static_cast<uint64_t>(flat));
  };
  std::vector<double> row(static_cast<size_t>(K));
  decode_cells(cell(((pk.layers[0] * B + b) * H + pk.heads[0]) * Q * K), a.type, K, row.data());
  const int64_t shift = query_shift(row.data(), Q, K);
  const int64_t f = out.f = std::max<int64_t>(1, (std::max(Q, K) + 23) / 24);
  const int64_t pr = out.pr = (Q + f - 1) / f, pc = out.pc = (K + f - 1) / f;
  if (patterns) {
    out.patterns =
        std::make_shared<std::vector<double>>(static_cast<size_t>(nl * nh * pr * pc), 0.0);
  }
  std::vector<HeadSummary> heads;
  heads.reserve(static_cast<size_t>(nl * nh));
  bool causal = true;
  int64_t masked = 0;
  for (int64_t l = 0; l < nl; ++l) {
    for (int64_t h = 0; h < nh; ++h) {
      const int64_t offset =
          ((pk.layers[static_cast<size_t>(l)] * B + b) * H + pk.heads[static_cast<size_t>(h)]) * Q *
          K;
      heads.emplace_back(stat, Q, K, shift);
      for (int64_t i = 0; i < Q; ++i) {
        decode_cells(cell(offset + i * K), a.type, K, row.data());
        if (patterns) {
          double* pattern = out.patterns->data() + ((l * nh + h) * pr + i / f) * pc;
          for (int64_t j = 0; j < K; ++j) {
            const int64_t cells = std::min(f, Q - (i / f) * f) * std::min(f, K - (j / f) * f);
            pattern[j / f] += row[static_cast<size_t>(j)] / static_cast<double>(cells);
          }
        }
        heads.back().add_row(i, row.data());
      }
      causal = causal && heads.back().causal();
      masked = std::max(masked, heads.back().rows_fully_masked());
      a.keep.release(cell(offset), cells_bytes(a.type, static_cast<uint64_t>(Q * K)));
    }
  }
  // Whether the first query sees a single key is known once every head is read.
  out.values = std::make_shared<std::vector<double>>();
  for (const HeadSummary& h : heads) out.values->push_back(h.value(causal));
  out.left_out = left_out_text(stat, Q, K, shift, causal, masked);
  return out;
}

}  // namespace

StackSummaries stack_head_summaries(const BinaryArray& a, const StackChoice& c, HeadStat stat,
                                    const std::string& source) {
  const SummaryPass p = summary_pass(a, c, stat, source, false);
  StackSummaries out;
  out.values = *p.values;
  out.left_out = p.left_out;
  out.layers = p.pk.layers;
  out.heads = p.pk.heads;
  return out;
}

HeatmapData head_summary(const BinaryArray& a, const StackChoice& c, HeadStat stat,
                         const std::string& source) {
  const SummaryPass p = summary_pass(a, c, stat, source, true);
  const Picked& pk = p.pk;
  const int64_t B = pk.B, b = pk.b, nl = pk.nl, nh = pk.nh, f = p.f, pr = p.pr, pc = p.pc;
  const auto& values = p.values;
  const auto& patterns = p.patterns;
  HeatmapData d;
  d.owned_values = values;
  d.values = values->data();
  d.rows = nl;
  d.cols = nh;
  d.cell_patterns = patterns;
  d.pattern_rows = pr;
  d.pattern_cols = pc;
  d.pattern_title = f == 1 ? "the head's weights"
                           : "the head's weights, " + std::to_string(f) + "×" + std::to_string(f) +
                                 " block means";
  d.source = source;
  d.row_title = "layers";
  d.col_title = "heads";
  // Indices name the rows and columns, unless only some were picked.
  if (pk.some_layers) {
    for (int64_t l : pk.layers) d.row_labels.push_back(std::to_string(l));
  }
  if (pk.some_heads) {
    for (int64_t h : pk.heads) d.col_labels.push_back(std::to_string(h));
  }
  d.value_name = head_stat_meaning(stat);
  d.zero_based = stat == HeadStat::kFirst || stat == HeadStat::kPrevious || stat == HeadStat::kSelf;
  const std::string& left_out = p.left_out;
  d.subtitle = "head summary: " + std::string(head_stat_meaning(stat)) +
               ", the mean over the query rows" +
               (left_out.empty() ? "" : " (left out: " + left_out + ")") + "; stack " +
               shape_string(a.shape) + " [layers][batch][heads][q][k]" +
               (B > 1 ? "; batch " + std::to_string(b) : "");
  return d;
}

}  // namespace attn
