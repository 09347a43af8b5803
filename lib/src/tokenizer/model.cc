#include "tokenizer/model.h"

#include <cstdio>
#include <queue>
#include <tuple>

#include "base/utf8.h"

namespace attn::tok {

void Vocab::add(const std::string& token, int64_t id) {
  ids[token] = id;
  if (static_cast<size_t>(id) >= tokens.size()) tokens.resize(static_cast<size_t>(id) + 1);
  tokens[static_cast<size_t>(id)] = token;
}

namespace {

// The code points of valid UTF-8 text as their byte strings.
std::vector<std::string> characters(const std::string& word) {
  std::vector<std::string> out;
  const auto* p = reinterpret_cast<const unsigned char*>(word.data());
  const auto* end = p + word.size();
  while (p < end) {
    size_t n = utf8_sequence_length(p, end);
    if (n == 0) n = 1;  // not reached: text is checked before it gets here
    out.emplace_back(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  return out;
}

uint64_t pair_key(int64_t a, int64_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b);
}

}  // namespace

void bpe_word(const Vocab& v, const Bpe& m, const std::string& word, std::vector<int64_t>& ids) {
  if (word.empty()) return;
  // ignore_merges (Llama 3): a word the vocabulary holds whole is one token.
  if (m.ignore_merges) {
    if (const auto id = v.find(word)) {
      ids.push_back(*id);
      return;
    }
  }
  // The initial symbols: one per character (with the prefix and suffix the
  // model adds), else its bytes as <0xNN> tokens, else the unknown token.
  std::vector<int64_t> sym;
  const std::vector<std::string> chars = characters(word);
  bool last_unk = false;
  for (size_t i = 0; i < chars.size(); ++i) {
    std::string s = chars[i];
    if (i > 0) s = m.continuing_subword_prefix + s;
    if (i + 1 == chars.size()) s += m.end_of_word_suffix;
    if (const auto id = v.find(s)) {
      sym.push_back(*id);
      last_unk = false;
      continue;
    }
    if (m.byte_fallback) {
      // The bytes of the string looked up, prefix and suffix included, as
      // the library takes them.
      std::vector<int64_t> bytes;
      for (unsigned char b : s) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        const auto id = v.find(name);
        if (!id) {
          bytes.clear();
          break;
        }
        bytes.push_back(*id);
      }
      if (!bytes.empty()) {
        sym.insert(sym.end(), bytes.begin(), bytes.end());
        last_unk = false;
        continue;
      }
    }
    if (m.unk) {
      if (!(m.fuse_unk && last_unk)) sym.push_back(*m.unk);
      last_unk = true;
    }
    // Without an unknown token the tokenizers library drops the character.
  }
  // Merges, lowest rank first and leftmost among equal ranks, over a linked
  // list of symbols: O(n log n) in the word's length.
  const size_t n = sym.size();
  std::vector<size_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = i == 0 ? SIZE_MAX : i - 1;
    next[i] = i + 1 < n ? i + 1 : SIZE_MAX;
  }
  using Candidate = std::tuple<int64_t, size_t, int64_t, int64_t>;  // rank, left, left id, right id
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto consider = [&](size_t left) {
    if (left == SIZE_MAX || next[left] == SIZE_MAX) return;
    const auto it = m.merges.find(pair_key(sym[left], sym[next[left]]));
    if (it != m.merges.end()) heap.emplace(it->second.first, left, sym[left], sym[next[left]]);
  };
  for (size_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    const auto [rank, left, a, b] = heap.top();
    heap.pop();
    const size_t right = next[left];
    // Stale: the left symbol merged away, changed, or lost its neighbour.
    if (!alive[left] || right == SIZE_MAX || sym[left] != a || sym[right] != b) continue;
    sym[left] = m.merges.at(pair_key(a, b)).second;
    alive[right] = false;
    next[left] = next[right];
    if (next[right] != SIZE_MAX) prev[next[right]] = left;
    consider(prev[left]);
    consider(left);
  }
  for (size_t i = 0; i < n; ++i) {
    if (alive[i]) ids.push_back(sym[i]);
  }
}

void wordpiece_word(const Vocab& v, const WordPiece& m, const std::string& word,
                    std::vector<int64_t>& ids) {
  const std::vector<std::string> chars = characters(word);
  if (chars.empty()) return;
  if (chars.size() > m.max_input_chars_per_word) {
    ids.push_back(m.unk);
    return;
  }
  std::vector<int64_t> pieces;
  size_t start = 0;
  while (start < chars.size()) {
    // The longest piece that could be a token, then shorter ones.
    const size_t prefix = start > 0 ? m.continuing_subword_prefix.size() : 0;
    size_t end = start, bytes = prefix;
    while (end < chars.size() && bytes + chars[end].size() <= m.max_token_bytes) {
      bytes += chars[end++].size();
    }
    std::optional<int64_t> found;
    for (; end > start; --end) {
      std::string s = start > 0 ? m.continuing_subword_prefix : "";
      for (size_t i = start; i < end; ++i) s += chars[i];
      if ((found = v.find(s))) break;
    }
    if (!found) {
      ids.push_back(m.unk);  // the whole word, as the library does
      return;
    }
    pieces.push_back(*found);
    start = end;
  }
  ids.insert(ids.end(), pieces.begin(), pieces.end());
}

}  // namespace attn::tok
