// Head summaries: one number per head, the mean of a statistic of its
// weights over the query rows, and its mean and spread over sentences.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attn/analysis.h"
#include "attn/error.h"
#include "base/names.h"

namespace attn {

const std::vector<std::string>& head_stat_names() {
  static const std::vector<std::string> names = {"entropy", "first", "previous", "self",
                                                 "distance"};
  return names;
}

HeadStat parse_head_stat(const std::string& text) {
  const std::vector<std::string>& names = head_stat_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<HeadStat>(i);
  }
  throw_usage("--summary: " + not_one_of(text, names));
}

const std::string& name(HeadStat stat) { return head_stat_names()[static_cast<size_t>(stat)]; }

const char* head_stat_meaning(HeadStat stat) {
  static const char* const kMeaning[] = {
      "entropy of the weights (nats)", "weight on the first token", "weight on the previous token",
      "weight on the token itself", "mean distance to the keys attended"};
  return kMeaning[static_cast<int>(stat)];
}

int64_t query_shift(const double* row0, int64_t q, int64_t k) {
  if (k <= q) return 0;
  for (int64_t j = 1; j < k; ++j) {
    if (row0[j] != 0) return k - q;
  }
  return 0;
}

HeadSummary::HeadSummary(HeadStat stat, int64_t q, int64_t k, int64_t shift)
    : stat_(stat), q_(q), k_(k), shift_(shift) {}

void HeadSummary::add_row(int64_t i, const double* w) {
  const int64_t pos = i + shift_;
  for (int64_t j = std::max<int64_t>(pos + 1, 0); causal_ && j < k_; ++j) causal_ = w[j] == 0;
  double total = 0;
  for (int64_t j = 0; j < k_; ++j) total += w[j];
  if (total == 0) {
    ++fully_masked_;
    return;
  }
  double v = 0;
  switch (stat_) {
    case HeadStat::kEntropy:
      for (int64_t j = 0; j < k_; ++j) v -= w[j] > 0 ? w[j] * std::log(w[j]) : 0.0;
      break;
    case HeadStat::kFirst:
      v = w[0];
      break;
    case HeadStat::kPrevious:
      if (pos < 1 || pos > k_) return;  // no previous token
      v = w[pos - 1];
      break;
    case HeadStat::kSelf:
      if (pos >= k_) return;
      v = w[pos];
      break;
    case HeadStat::kDistance:
      for (int64_t j = 0; j < k_; ++j) v += w[j] * static_cast<double>(std::llabs(pos - j));
      break;
  }
  if (std::isnan(total)) v = total;  // a NaN weight in the row: a NaN value, whatever the stat
  // The query at the first key position sees that key alone when the
  // weights are causal; whether they are is known once every panel is read.
  if (pos == 0) {
    first_ = v;
    has_first_ = true;
  } else {
    sum_ += v;
    ++rows_;
  }
}

int64_t HeadSummary::rows_counted(bool causal) const {
  if (k_ == 1) return 0;  // every query sees a single key
  return rows_ + (has_first_ && !causal ? 1 : 0);
}

double HeadSummary::value(bool causal) const {
  const int64_t n = rows_counted(causal);
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  return (sum_ + (has_first_ && !causal ? first_ : 0.0)) / static_cast<double>(n);
}

std::string left_out_text(HeadStat stat, int64_t q, int64_t k, int64_t shift, bool causal,
                          int64_t fully_masked_rows) {
  std::vector<std::string> parts;
  if (k == 1) {
    parts.push_back("every query, each of which sees a single key");
  } else {
    const bool first_alone = causal && shift == 0 && q > 0;
    const bool no_previous = stat == HeadStat::kPrevious && shift == 0 && q > 0;
    if (first_alone && no_previous) {
      parts.push_back("query 0, which sees a single key (causal) and has no previous token");
    } else if (first_alone) {
      parts.push_back("query 0, which sees a single key (causal)");
    } else if (no_previous) {
      parts.push_back("query 0, which has no previous token");
    }
  }
  if (fully_masked_rows > 0) {
    parts.push_back(std::to_string(fully_masked_rows) + " fully masked row" +
                    (fully_masked_rows == 1 ? "" : "s"));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

HeadSummaries summarise_heads(const Tensor<double>& weights, HeadStat stat) {
  if (weights.rank() < 2) {
    throw_internal("summarise_heads: rank " + std::to_string(weights.rank()));
  }
  const int64_t q = weights.dim(weights.rank() - 2), k = weights.dim(weights.rank() - 1);
  const int64_t panels = q * k == 0 ? 0 : weights.size() / (q * k);
  HeadSummaries out;
  out.stat = stat;
  if (panels == 0) return out;
  out.shift = query_shift(weights.data(), q, k);
  std::vector<HeadSummary> heads;
  heads.reserve(static_cast<size_t>(panels));
  bool causal = true;
  int64_t masked = 0;
  for (int64_t p = 0; p < panels; ++p) {
    heads.emplace_back(stat, q, k, out.shift);
    for (int64_t i = 0; i < q; ++i) heads.back().add_row(i, weights.data() + (p * q + i) * k);
    causal = causal && heads.back().causal();
    masked = std::max(masked, heads.back().rows_fully_masked());
  }
  out.causal = causal;
  for (const HeadSummary& h : heads) {
    out.values.push_back(h.value(causal));
    out.rows_counted = std::max(out.rows_counted, h.rows_counted(causal));
  }
  out.left_out = left_out_text(stat, q, k, out.shift, causal, masked);
  return out;
}

void SummaryMoments::add(const std::vector<double>& values) {
  if (values.size() != n_.size()) {
    throw_internal("SummaryMoments: " + std::to_string(values.size()) + " values for " +
                   std::to_string(n_.size()) + " cells");
  }
  for (size_t c = 0; c < values.size(); ++c) {
    if (std::isnan(values[c])) continue;
    const double delta = values[c] - mean_[c];
    ++n_[c];
    mean_[c] += delta / static_cast<double>(n_[c]);
    m2_[c] += delta * (values[c] - mean_[c]);
  }
}

std::vector<double> SummaryMoments::mean() const {
  std::vector<double> out(mean_.size());
  for (size_t c = 0; c < out.size(); ++c) {
    out[c] = n_[c] ? mean_[c] : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

std::vector<double> SummaryMoments::sd() const {
  std::vector<double> out(m2_.size());
  for (size_t c = 0; c < out.size(); ++c) {
    out[c] = n_[c] ? std::sqrt(m2_[c] / static_cast<double>(n_[c]))
                   : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

std::vector<int64_t> top_cells(const std::vector<double>& values, HeadStat stat, int64_t n) {
  std::vector<int64_t> order;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isnan(values[i])) order.push_back(static_cast<int64_t>(i));
  }
  const bool smallest = stat == HeadStat::kEntropy;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const double va = values[static_cast<size_t>(a)], vb = values[static_cast<size_t>(b)];
    return smallest ? va < vb : va > vb;
  });
  if (static_cast<int64_t>(order.size()) > n) order.resize(static_cast<size_t>(n));
  return order;
}

}  // namespace attn
