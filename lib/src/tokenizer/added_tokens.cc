#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <type_traits>

#include "tokenizer/unicode.h"

namespace attn::tok {

namespace {

uint64_t edge_key(uint32_t node, char32_t c) { return (static_cast<uint64_t>(node) << 21) | c; }

bool is_word_char(char32_t c) {
  return unicode::is_letter(c) || unicode::is_number(c) || c == U'_';
}

}  // namespace

uint32_t AddedTokenSet::child(uint32_t node, char32_t c) const {
  const auto it = edges_.find(edge_key(node, c));
  return it == edges_.end() ? kNone : it->second;
}

void AddedTokenSet::add(const AddedToken* token) {
  if (token->content.empty()) return;
  if (fail_.empty()) {  // the root
    fail_.push_back(0);
    terminal_.push_back(-1);
    parent_.push_back(0);
    via_.push_back(0);
    depth_.push_back(0);
  }
  uint32_t node = 0;
  for (auto c = token->content.rbegin(); c != token->content.rend(); ++c) {
    uint32_t next = child(node, *c);
    if (next == kNone) {
      next = static_cast<uint32_t>(fail_.size());
      edges_.emplace(edge_key(node, *c), next);
      fail_.push_back(0);
      terminal_.push_back(-1);
      parent_.push_back(node);
      via_.push_back(*c);
      depth_.push_back(depth_[node] + 1);
    }
    node = next;
  }
  if (terminal_[node] < 0) terminal_[node] = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
}

void AddedTokenSet::build() {
  const size_t n = fail_.size();
  // Nodes by depth, so that a node's failure link is known before its
  // children's are computed from it.
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return depth_[a] < depth_[b]; });
  longest_.assign(n, -1);
  for (const uint32_t v : order) {
    if (v == 0) continue;
    const uint32_t p = parent_[v];
    uint32_t f = 0;
    if (p != 0) {
      uint32_t u = fail_[p];
      for (;;) {
        const uint32_t w = child(u, via_[v]);
        if (w != kNone) {
          f = w;
          break;
        }
        if (u == 0) break;
        u = fail_[u];
      }
    }
    fail_[v] = f;
    // The longest token that is a suffix of this node's string: its own,
    // or the one of its longest proper suffix in the trie.
    longest_[v] = terminal_[v] >= 0 ? terminal_[v] : longest_[f];
  }
  parent_ = {};
  via_ = {};
  depth_ = {};
}

template <typename Text>
std::vector<int32_t> AddedTokenSet::longest_in(const Text& text) const {
  // The automaton reads the text backwards: after text[i], its node is the
  // longest reversed token prefix that ends the reversed text so far, so
  // longest_ there is the longest token that starts at i.
  std::vector<int32_t> out(text.size(), -1);
  if (tokens_.empty()) return out;
  uint32_t node = 0;
  for (size_t i = text.size(); i-- > 0;) {
    const auto c = static_cast<char32_t>(
        static_cast<std::make_unsigned_t<typename Text::value_type>>(text[i]));
    for (;;) {
      const uint32_t w = child(node, c);
      if (w != kNone) {
        node = w;
        break;
      }
      if (node == 0) break;
      node = fail_[node];
    }
    out[i] = longest_[node];
  }
  return out;
}

std::vector<int32_t> AddedTokenSet::longest_at(const std::u32string& text) const {
  return longest_in(text);
}

std::vector<int32_t> AddedTokenSet::longest_at(std::string_view bytes) const {
  return longest_in(bytes);
}

std::vector<Piece> AddedTokenSet::split(const Piece& in) const {
  const std::u32string& s = in.text;
  std::vector<Piece> out;
  if (tokens_.empty() || s.empty()) {
    out.push_back(in);
    return out;
  }
  const std::vector<int32_t> longest = longest_at(s);
  size_t start_offset = 0;  // where the text not yet given to a piece begins
  size_t i = 0;
  while (i < s.size()) {
    if (longest[i] < 0) {
      ++i;
      continue;
    }
    const AddedToken* hit = tokens_[static_cast<size_t>(longest[i])];
    size_t start = i, stop = i + hit->content.size();
    i = stop;
    if (hit->single_word) {
      const bool start_space = start == 0 || !is_word_char(s[start - 1]);
      const bool stop_space = stop == s.size() || !is_word_char(s[stop]);
      if (!start_space || !stop_space) continue;
    }
    if (hit->lstrip) {
      // Spaces before the token, but none a piece already took: the scan
      // stops at start_offset, so each character is looked at once.
      while (start > start_offset && unicode::is_white_space(s[start - 1])) --start;
    }
    if (hit->rstrip) {
      while (stop < s.size() && unicode::is_white_space(s[stop])) ++stop;
      i = stop;
    }
    if (start_offset < start) {
      out.push_back(Piece{s.substr(start_offset, start - start_offset), std::nullopt,
                          in.starts && start_offset == 0});
    }
    out.push_back(Piece{s.substr(start, stop - start), hit->id, false});
    start_offset = stop;
  }
  if (start_offset < s.size()) {
    out.push_back(Piece{s.substr(start_offset), std::nullopt, in.starts && start_offset == 0});
  }
  return out;
}

}  // namespace attn::tok
