// Two token sequences aligned as Python's difflib aligns them:
// SequenceMatcher(None, a, b).get_matching_blocks(), step for step (the
// longest matching block, then the same on each side of it), so that attn
// and a script that aligns with difflib keep the same tokens.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "attn/analysis.h"

namespace attn {

namespace {

struct Block {
  int64_t i, j, size;
};

class Matcher {
 public:
  Matcher(const std::vector<std::string>& a, const std::vector<std::string>& b) : a_(a), b_(b) {
    const auto n = static_cast<int64_t>(b.size());
    for (int64_t j = 0; j < n; ++j) b2j_[b[static_cast<size_t>(j)]].push_back(j);
    // difflib's autojunk: in a b of 200 or more, an element found more than
    // 1% of the time (plus one) is "popular" and starts no match (it may
    // still extend one).
    if (n >= 200) {
      const auto ntest = static_cast<size_t>(n / 100 + 1);
      for (auto it = b2j_.begin(); it != b2j_.end();) {
        it = it->second.size() > ntest ? b2j_.erase(it) : std::next(it);
      }
    }
  }

  // difflib's find_longest_match(alo, ahi, blo, bhi), without junk.
  Block longest(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi) const {
    Block best{alo, blo, 0};
    std::map<int64_t, int64_t> j2len;
    for (int64_t i = alo; i < ahi; ++i) {
      std::map<int64_t, int64_t> next;
      const auto found = b2j_.find(a_[static_cast<size_t>(i)]);
      if (found != b2j_.end()) {
        for (int64_t j : found->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          const auto prev = j2len.find(j - 1);
          const int64_t k = next[j] = (prev == j2len.end() ? 0 : prev->second) + 1;
          if (k > best.size) best = {i - k + 1, j - k + 1, k};
        }
      }
      j2len = std::move(next);
    }
    while (best.i > alo && best.j > blo && at_a(best.i - 1) == at_b(best.j - 1)) {
      --best.i;
      --best.j;
      ++best.size;
    }
    while (best.i + best.size < ahi && best.j + best.size < bhi &&
           at_a(best.i + best.size) == at_b(best.j + best.size)) {
      ++best.size;
    }
    return best;
  }

 private:
  const std::string& at_a(int64_t i) const { return a_[static_cast<size_t>(i)]; }
  const std::string& at_b(int64_t j) const { return b_[static_cast<size_t>(j)]; }

  const std::vector<std::string>& a_;
  const std::vector<std::string>& b_;
  std::map<std::string, std::vector<int64_t>> b2j_;
};

}  // namespace

std::vector<std::pair<int64_t, int64_t>> matching_tokens(const std::vector<std::string>& a,
                                                         const std::vector<std::string>& b) {
  const Matcher m(a, b);
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> queue{
      {0, static_cast<int64_t>(a.size()), 0, static_cast<int64_t>(b.size())}};
  std::vector<Block> blocks;
  while (!queue.empty()) {
    const auto [alo, ahi, blo, bhi] = queue.back();
    queue.pop_back();
    const Block x = m.longest(alo, ahi, blo, bhi);
    if (x.size == 0) continue;
    blocks.push_back(x);
    if (alo < x.i && blo < x.j) queue.emplace_back(alo, x.i, blo, x.j);
    if (x.i + x.size < ahi && x.j + x.size < bhi) {
      queue.emplace_back(x.i + x.size, ahi, x.j + x.size, bhi);
    }
  }
  std::sort(blocks.begin(), blocks.end(),
            [](const Block& p, const Block& q) { return std::tie(p.i, p.j) < std::tie(q.i, q.j); });
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Block& x : blocks) {
    for (int64_t t = 0; t < x.size; ++t) out.emplace_back(x.i + t, x.j + t);
  }
  return out;
}

}  // namespace attn
