#include "tokenizer/special_split.h"

#include <algorithm>
#include <utility>

namespace attn::tok {

namespace {

// C's isspace in the C locale, which llama.cpp strips with.
bool is_c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// The minimum of (rank, position) over ranges of the positions where a
// token starts, sorted by position: a segment tree.
class RankTree {
 public:
  explicit RankTree(std::vector<std::pair<size_t, int32_t>> starts)
      : starts_(std::move(starts)), n_(starts_.size()), tree_(2 * n_) {
    for (size_t i = 0; i < n_; ++i) tree_[n_ + i] = static_cast<uint32_t>(i);
    for (size_t i = n_; i-- > 1;) tree_[i] = better(tree_[2 * i], tree_[2 * i + 1]);
  }

  // The index in starts() of the best start in [begin, end) of the text,
  // or -1.
  int64_t best(size_t begin, size_t end) const {
    const auto by_pos = [](const std::pair<size_t, int32_t>& s, size_t p) { return s.first < p; };
    size_t lo = static_cast<size_t>(
        std::lower_bound(starts_.begin(), starts_.end(), begin, by_pos) - starts_.begin());
    size_t hi = static_cast<size_t>(std::lower_bound(starts_.begin(), starts_.end(), end, by_pos) -
                                    starts_.begin());
    int64_t out = -1;
    for (lo += n_, hi += n_; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) out = pick(out, tree_[lo++]);
      if (hi & 1) out = pick(out, tree_[--hi]);
    }
    return out;
  }

  const std::vector<std::pair<size_t, int32_t>>& starts() const { return starts_; }

 private:
  uint32_t better(uint32_t a, uint32_t b) const {
    return starts_[b].second < starts_[a].second ? b : a;  // a is to the left
  }
  int64_t pick(int64_t a, uint32_t b) const {
    if (a < 0) return b;
    const auto& x = starts_[static_cast<size_t>(a)];
    const auto& y = starts_[b];
    if (y.second != x.second) return y.second < x.second ? b : a;
    return y.first < x.first ? b : a;
  }

  std::vector<std::pair<size_t, int32_t>> starts_;  // position, rank
  size_t n_;
  std::vector<uint32_t> tree_;
};

}  // namespace

SpecialSplitter::SpecialSplitter(std::vector<SpecialToken> tokens) : specials_(std::move(tokens)) {
  tokens_.reserve(specials_.size());
  for (const SpecialToken& s : specials_) {
    AddedToken a;
    for (unsigned char c : s.text) a.content += static_cast<char32_t>(c);
    a.id = s.id;
    tokens_.push_back(std::move(a));
    longest_ = std::max(longest_, s.text.size());
  }
  for (const AddedToken& a : tokens_) set_.add(&a);
  set_.build();
}

std::vector<Fragment> SpecialSplitter::split(std::string_view text) const {
  std::vector<Fragment> out;
  if (text.empty()) return out;
  if (tokens_.empty()) {
    out.push_back(Fragment{0, text.size(), -1});
    return out;
  }
  // The longest token at each byte is the one llama.cpp tries first there
  // (it tries longer tokens first, and two tokens of one length cannot
  // start at one byte); its rank is its place in the order of trial.
  const std::vector<int32_t> longest = set_.longest_at(text);
  std::vector<std::pair<size_t, int32_t>> starts;
  for (size_t i = 0; i < longest.size(); ++i) {
    if (longest[i] >= 0) starts.emplace_back(i, longest[i]);
  }
  const RankTree tree(std::move(starts));
  const auto& at = tree.starts();
  auto length = [&](int32_t rank) { return tokens_[static_cast<size_t>(rank)].content.size(); };

  // Each part [a, b) is text that no token taken so far touches: the token
  // llama.cpp takes first in it is the one of best rank, leftmost, that
  // lies inside it. Taking it leaves two parts that no token crosses.
  std::vector<std::pair<size_t, size_t>> parts = {{0, text.size()}};
  while (!parts.empty()) {
    const auto [a, b] = parts.back();
    parts.pop_back();
    // Tokens that start near b may run past it; there the longest token
    // that ends by b is looked for in the bytes before b alone.
    size_t crossing = b;
    const auto near = std::lower_bound(at.begin(), at.end(),
                                       std::make_pair(b - std::min(b - a, longest_), int32_t{-1}));
    for (auto it = near; it != at.end() && it->first < b; ++it) {
      if (it->first + length(it->second) > b) {
        crossing = it->first;
        break;
      }
    }
    size_t best_pos = 0;
    int32_t best_rank = -1;
    if (const int64_t k = tree.best(a, crossing); k >= 0) {
      best_pos = at[static_cast<size_t>(k)].first;
      best_rank = at[static_cast<size_t>(k)].second;
    }
    if (crossing < b) {
      const std::vector<int32_t> tail = set_.longest_at(text.substr(crossing, b - crossing));
      for (size_t i = 0; i < tail.size(); ++i) {
        if (tail[i] >= 0 && (best_rank < 0 || tail[i] < best_rank)) {
          best_pos = crossing + i;
          best_rank = tail[i];
        }
      }
    }
    if (best_rank < 0) {
      out.push_back(Fragment{a, b, -1});
      continue;
    }
    const SpecialToken& s = specials_[static_cast<size_t>(best_rank)];
    size_t left = best_pos, right = best_pos + s.text.size();
    out.push_back(Fragment{left, right, s.id});
    if (s.lstrip) {
      while (left > a && is_c_space(text[left - 1])) --left;
    }
    if (s.rstrip) {
      while (right < b && is_c_space(text[right])) ++right;
    }
    if (left > a) parts.emplace_back(a, left);
    if (right < b) parts.emplace_back(right, b);
  }
  std::sort(out.begin(), out.end(),
            [](const Fragment& x, const Fragment& y) { return x.begin < y.begin; });
  return out;
}

}  // namespace attn::tok
