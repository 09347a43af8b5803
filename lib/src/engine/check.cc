#include "attn/check.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/number_text.h"

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

std::optional<CheckAlternative> explain_mismatch(const Problem& p, const Expected& e, DType dtype) {
  if (p.variant == Variant::kBiattention) return std::nullopt;
  const bool scalar = p.scale.kind != ScaleKind::kCosine && p.scale.kind != ScaleKind::kNorm;
  const double factor = scale_factor(p);
  ComputeRequest req;
  req.dtype = dtype;
  req.weights = e.weights.has_value();
  auto passes = [&](const Problem& alt, Result& out) {
    try {
      out = compute(alt, req);
      return check_result(out, e).passed();
    } catch (const Error&) {
      return false;
    }
  };
  if (scalar && p.scale_at == ScaleAt::kScores && factor != 1.0) {
    Problem alt = p;
    alt.scale_at = ScaleAt::kOutput;
    Result r;
    if (passes(alt, r)) {
      // "f = 1/√d_k = 0.5" names the factor apart from the formula, so
      // "V·1/√d_k = 0.5" cannot read as the whole product being 0.5.
      const std::string f = p.scale.kind == ScaleKind::kSqrtDk
                                ? "f = 1/√d_k = " + format_shortest(factor)
                                : "f = " + format_shortest(factor);
      return CheckAlternative{
          "--scale-at output",
          "The expected numbers are softmax(QKᵀ)·V·f with the scale factor " + f +
              " applied after the softmax (scale_at: output), not to the scores. The formula "
              "softmax(QKᵀ/√d_k)·V gives the numbers computed here. Run with --scale-at output "
              "to reproduce the expected numbers exactly.",
          std::move(r)};
    }
  }
  if (p.scale.kind != ScaleKind::kNone && scalar) {
    Problem alt = p;
    alt.scale = Scale{ScaleKind::kNone, 1.0};
    alt.temperature = 1.0;
    Result r;
    if (passes(alt, r)) {
      return CheckAlternative{"--scale none",
                              "The expected numbers are softmax(QKᵀ)·V without any scaling of "
                              "the scores. Run with --scale none to reproduce them.",
                              std::move(r)};
    }
  }
  return std::nullopt;
}

std::string format_check_report(const CheckReport& rep, const Problem& p, bool mismatches_only) {
  std::vector<const CheckItem*> shown;
  const bool all = rep.items.size() <= 32 && !mismatches_only;
  for (const CheckItem& it : rep.items) {
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
  if (shown.empty()) {
    rows.clear();
  } else {
    out = rep.allclose ? "check against expected (rtol " + format_shortest(rep.rtol) + ", atol " +
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
  const int64_t total = static_cast<int64_t>(rep.items.size());
  if (!all && rep.mismatches > 20) {
    out += "... " + std::to_string(rep.mismatches - 20) + " more mismatches not shown\n";
  }
  const std::string rule = rep.allclose ? " (rtol " + format_shortest(rep.rtol) + ", atol " +
                                              format_shortest(rep.atol) + ")"
                                        : "";
  if (rep.passed()) {
    out += "check passed: all " + std::to_string(total) + " values match" + rule + "\n";
  } else {
    out += "check FAILED: " + std::to_string(rep.mismatches) + " of " + std::to_string(total) +
           " values differ" + rule + "\n";
  }
  return out;
}

}  // namespace attn
