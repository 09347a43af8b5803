#include "attn/check.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "attn/escape.h"
#include "base/number_text.h"
#include "problem/variant_unit.h"

namespace attn {

namespace {

bool close_enough(double got, double want, const CheckReport& rep) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  if (rep.allclose) return std::fabs(got - want) <= rep.atol + rep.rtol * std::fabs(want);
  return std::fabs(got - want) <= rep.tolerance * std::max(1.0, std::fabs(want));
}

Shape unravel(int64_t flat, const Shape& shape) {
  Shape idx(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    idx[a] = flat % shape[a];
    flat /= shape[a];
  }
  return idx;
}

void compare(const std::string& name, const Tensor<double>& got, const Input& want,
             CheckReport& rep) {
  if (got.shape() != want.tensor.shape()) {
    throw_input(want.place, "expected " + name + " has shape " + shape_string(want.tensor.shape()) +
                                " but the result has shape " + shape_string(got.shape()));
  }
  for (int64_t i = 0; i < got.size(); ++i) {
    CheckItem it;
    it.tensor = name;
    it.index = unravel(i, got.shape());
    it.expected = want.tensor[i];
    it.got = got[i];
    it.ok = close_enough(it.got, it.expected, rep);
    if (!it.ok) ++rep.mismatches;
    rep.items.push_back(it);
  }
}

std::string index_text(const Shape& idx) {
  std::string s;
  for (int64_t i : idx) s += "[" + std::to_string(i) + "]";
  return s;
}

}  // namespace

CheckReport check_result(const Result& r, const Expected& e) {
  CheckReport rep;
  rep.tolerance = e.tolerance.value_or(kDefaultTolerance);
  // The coarser of the reference's storage and the run's arithmetic.
  double rtol = kDefaultTolerance, atol = kDefaultTolerance;
  if (e.stored == "bf16") {
    rtol = kBFloat16Rtol, atol = kBFloat16Atol;
  } else if (e.stored == "f16") {
    rtol = kFloat16Rtol, atol = kFloat16Atol;
  } else if (e.stored == "f32" || r.dtype == DType::kF32) {
    rtol = kFloat32Rtol, atol = kFloat32Atol;
  }
  const bool narrow = rtol != kDefaultTolerance;
  if (e.rtol || e.atol || (narrow && !e.tolerance)) {
    rep.allclose = true;
    rep.rtol = e.rtol.value_or(rtol);
    rep.atol = e.atol.value_or(atol);
  }
  if (e.output) compare("output", r.output, *e.output, rep);
  if (e.weights) {
    if (!r.weights) throw_internal("check of weights without computed weights");
    compare("weights", *r.weights, *e.weights, rep);
  }
  if (!e.output && !e.weights) {
    throw_input(e.place, "nothing to check: expected has neither output nor weights");
  }
  return rep;
}

namespace {

// Index sets as "0–4, 7, 9–11" (at most ten runs, then "…").
std::string ranges_text(const std::vector<int64_t>& idx) {
  std::string s;
  size_t runs = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    if (++runs > 10) return s + ", …";
    if (!s.empty()) s += ", ";
    s += std::to_string(idx[i]);
    if (j > i) s += (j == i + 1 ? ", " : "–") + std::to_string(idx[j]);
    i = j + 1;
  }
  return s;
}

// The names of a checked tensor's axes, as the result shapes it
// (docs/spec.md): output [batch][head][query][column] with 4D input,
// [batch][query][column] batched, else [query][column]; weights
// [batch][head][query][key] less the axes the run does not have.
std::vector<std::string> axis_names(const std::string& tensor, int rank, const Problem& p) {
  std::vector<std::string> names = {"query", tensor == "weights" ? "key" : "column"};
  const int lead = rank - 2;
  if (lead == 2) names.insert(names.begin(), {"batch", "head"});
  if (lead == 1) names.insert(names.begin(), p.four_d || p.batched ? "batch" : "head");
  return names;
}

// Which batch items, heads and query rows hold a mismatch, and which do
// not: one line each for the axes longer than one.
std::string where_they_differ(const CheckReport& rep, const Problem& p) {
  struct Axis {
    const char* name;
    const char* plural;
    int64_t size;
    std::vector<uint8_t> differs;
  };
  Axis axes[] = {{"batch", "batch items", p.batch, {}},
                 {"head", "heads", p.heads, {}},
                 {"query", "query rows", p.len_q, {}}};
  for (Axis& a : axes) a.differs.assign(static_cast<size_t>(a.size), 0);
  auto mark = [&](const std::string& name, int64_t i) {
    for (Axis& a : axes) {
      if (name == a.name && i < a.size) a.differs[static_cast<size_t>(i)] = 1;
    }
  };
  // Concatenated head outputs without W_o: a column block is a head.
  const bool heads_by_column = !p.four_d && p.heads > 1 && !p.params.W_o &&
                               !detail::bidaf_pipeline(p.variant) && p.d_out == p.concat_width();
  for (const CheckItem& it : rep.items) {
    if (it.ok) continue;
    const std::vector<std::string> names =
        axis_names(it.tensor, static_cast<int>(it.index.size()), p);
    for (size_t a = 0; a + 1 < names.size(); ++a) mark(names[a], it.index[a]);
    if (heads_by_column && it.tensor == "output") mark("head", it.index.back() / p.head_dim_v());
  }
  // One line per axis longer than one on which something differs.
  std::string out;
  for (const Axis& a : axes) {
    std::vector<int64_t> bad, good;
    for (int64_t i = 0; i < a.size; ++i) {
      (a.differs[static_cast<size_t>(i)] ? bad : good).push_back(i);
    }
    if (a.size < 2 || bad.empty()) continue;
    out += std::string("  ") + a.plural + ": ";
    if (good.empty()) {
      out += "all " + std::to_string(a.size) + " differ\n";
    } else {
      out += ranges_text(bad) + " differ; " + ranges_text(good) +
             (good.size() == 1 ? " matches" : " match") + "\n";
    }
  }
  return out;
}

// Expected numbers that differ only by the rounding of a narrower float
// (a float32 or bfloat16 reference checked at 1e-9): the tolerances that
// precision takes (torch.testing's defaults), as one line of advice; empty
// when the differences are larger than its rounding, or NaN.
std::string precision_hint(const CheckReport& rep) {
  struct Precision {
    const char* name;
    double rtol, atol;
  };
  static const Precision kPrecisions[] = {
      {"float32", 1.3e-6, 1e-5}, {"float16", 1e-3, 1e-5}, {"bfloat16", 1.6e-2, 1e-5}};
  double largest = 0;
  for (const CheckItem& it : rep.items) {
    const double d = std::fabs(it.got - it.expected);
    if (!it.ok && !std::isfinite(d)) return "";
    if (std::isfinite(d)) largest = std::max(largest, d);
  }
  for (const Precision& pr : kPrecisions) {
    // A check already this loose is not failing for rounding.
    if (rep.allclose && rep.rtol >= pr.rtol && rep.atol >= pr.atol) return "";
    if (!rep.allclose && rep.tolerance >= pr.rtol) return "";
    bool fits = true;
    for (const CheckItem& it : rep.items) {
      fits = fits && std::fabs(it.got - it.expected) <= pr.atol + pr.rtol * std::fabs(it.expected);
    }
    if (fits) {
      return std::string("the expected numbers look like ") + pr.name + " (differences ~" +
             format_scientific(largest, 0) + "): try --rtol " + format_shortest(pr.rtol) +
             " --atol " + format_shortest(pr.atol) + "\n";
    }
  }
  return "";
}

}  // namespace

std::string format_check_report(const CheckReport& rep, const Problem& p, bool mismatches_only) {
  // Differences of rounding alone: the summary and the tolerance to try,
  // not a page of values each off by an ulp of float32.
  const std::string hint = rep.passed() ? "" : precision_hint(rep);
  if (!hint.empty()) mismatches_only = true;
  std::vector<const CheckItem*> shown;
  const bool all = rep.items.size() <= 32 && !mismatches_only;
  for (const CheckItem& it : rep.items) {
    if (!hint.empty()) break;
    if (all || !it.ok) shown.push_back(&it);
    if (!all && shown.size() >= 20) break;
  }
  // Name rows by their label when the index is [query][col] of 2D output.
  auto position = [&](const CheckItem& it) {
    std::string s = it.tensor + index_text(it.index);
    if (!p.batched && it.index.size() == 2 && !p.query_labels.empty() &&
        it.index[0] < static_cast<int64_t>(p.query_labels.size())) {
      s += " (" + terminal_text(p.query_labels[static_cast<size_t>(it.index[0])]);
      if (it.tensor == "weights" && !p.key_labels.empty() &&
          it.index[1] < static_cast<int64_t>(p.key_labels.size())) {
        s += "→" + terminal_text(p.key_labels[static_cast<size_t>(it.index[1])]);
      }
      s += ")";
    }
    return s;
  };
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"position", "expected", "got", "difference", ""});
  for (const CheckItem* it : shown) {
    rows.push_back({position(*it), format_shortest(it->expected), format_shortest(it->got),
                    format_scientific(it->got - it->expected, 2), it->ok ? "ok" : "MISMATCH"});
  }
  std::vector<size_t> w(5, 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      size_t n = 0;
      for (unsigned char ch : r[c]) n += (ch & 0xC0) != 0x80;
      w[c] = std::max(w[c], n);
    }
  }
  // No rows to show (a passed check of many values, or --quiet): the
  // summary line alone, not a table header over nothing.
  std::string out;
  const int64_t total = static_cast<int64_t>(rep.items.size());
  const std::string rule = rep.allclose ? " (rtol " + format_shortest(rep.rtol) + ", atol " +
                                              format_shortest(rep.atol) + ")"
                                        : "";
  if (!rep.passed()) {
    // The summary first: how many, the largest difference and where, and
    // which rows, heads and batch items differ; then the values.
    out += "check FAILED: " + std::to_string(rep.mismatches) + " of " + std::to_string(total) +
           " values differ" + rule + "\n";
    const CheckItem* worst = nullptr;
    double worst_diff = -1;
    for (const CheckItem& it : rep.items) {
      if (it.ok) continue;
      const double d = std::fabs(it.got - it.expected);
      const double key = std::isnan(d) ? INFINITY : d;
      if (key > worst_diff) worst = &it, worst_diff = key;
    }
    if (worst) {
      out += "  largest difference " + format_scientific(worst->got - worst->expected, 2) + " at " +
             position(*worst) + ": expected " + format_shortest(worst->expected) + ", got " +
             format_shortest(worst->got) + "\n";
    }
    out += where_they_differ(rep, p);
    out += hint;
    if (!shown.empty()) out += "\n";
  }
  if (shown.empty()) {
    rows.clear();
  } else {
    out += rep.allclose ? "check against expected (rtol " + format_shortest(rep.rtol) + ", atol " +
                              format_shortest(rep.atol) +
                              ", |got − expected| ≤ atol + rtol·|expected|, as NumPy's allclose)\n"
                        : "check against expected (tolerance " + format_shortest(rep.tolerance) +
                              ", |got − expected| ≤ tol·max(1, |expected|))\n";
  }
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      size_t n = 0;
      for (unsigned char ch : r[c]) n += (ch & 0xC0) != 0x80;
      if (c > 0) out += "  ";
      if (c == 0) {
        out += r[c] + std::string(w[c] - n, ' ');
      } else {
        out += std::string(w[c] - n, ' ') + r[c];
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  if (!all && rep.mismatches > 20 && hint.empty()) {
    out += "... " + std::to_string(rep.mismatches - 20) + " more mismatches not shown\n";
  }
  if (rep.passed()) {
    out += "check passed: all " + std::to_string(total) + " values match" + rule + "\n";
  }
  return out;
}

}  // namespace attn
