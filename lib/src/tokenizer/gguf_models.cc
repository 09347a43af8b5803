// The three models of GGUF vocabularies on one piece of text, as
// llama.cpp's sessions run them (llm_tokenizer_spm_session,
// llm_tokenizer_bpe_session, llm_tokenizer_wpm_session): the same
// symbols, the same order of merges, the same fallbacks.
#include <cstdio>
#include <queue>
#include <string>
#include <vector>

#include "attn/error.h"
#include "base/utf8.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

namespace attn::tok {

namespace {

// The bytes of the character a byte starts, by its high bits, as
// llama.cpp's unicode_len_utf8 counts them.
size_t char_bytes(char lead) {
  static const size_t kLength[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLength[static_cast<unsigned char>(lead) >> 4];
}

struct Symbol {
  size_t begin = 0, bytes = 0;  // in the text; bytes 0: merged away
  int prev = -1, next = -1;
};

// The text split into its characters, linked.
std::vector<Symbol> characters(const std::string& text) {
  std::vector<Symbol> out;
  for (size_t at = 0; at < text.size();) {
    Symbol s;
    s.begin = at;
    s.bytes = std::min(char_bytes(text[at]), text.size() - at);
    at += s.bytes;
    s.prev = static_cast<int>(out.size()) - 1;
    s.next = at == text.size() ? -1 : static_cast<int>(out.size()) + 1;
    out.push_back(s);
  }
  return out;
}

void replace_spaces(std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == ' ') {
      out += "\xE2\x96\x81";
    } else {
      out += c;
    }
  }
  s = std::move(out);
}

bool is_chinese(char32_t c) {
  return (c >= 0x04E00 && c <= 0x09FFF) || (c >= 0x03400 && c <= 0x04DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0x0F900 && c <= 0x0FAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

}  // namespace

void GgufVocab::spm(const std::string& given, std::vector<int64_t>& out,
                    const std::string& source) const {
  std::string text = given;
  replace_spaces(text);
  std::vector<Symbol> sym = characters(text);
  // The pair whose token scores highest first, the leftmost among equals.
  struct Bigram {
    float score;
    int left, right;
    size_t bytes;
  };
  auto lower = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(lower)> queue(lower);
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const auto id = find(std::string_view(text).substr(
        sym[static_cast<size_t>(left)].begin,
        sym[static_cast<size_t>(left)].bytes + sym[static_cast<size_t>(right)].bytes));
    if (!id) return;
    queue.push(
        Bigram{scores_[static_cast<size_t>(*id)], left, right,
               sym[static_cast<size_t>(left)].bytes + sym[static_cast<size_t>(right)].bytes});
  };
  for (size_t i = 1; i < sym.size(); ++i) consider(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[static_cast<size_t>(b.left)];
    Symbol& r = sym[static_cast<size_t>(b.right)];
    if (l.bytes == 0 || r.bytes == 0 || l.bytes + r.bytes != b.bytes) continue;  // stale
    l.bytes += r.bytes;
    r.bytes = 0;
    l.next = r.next;
    if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = b.left;
    consider(l.prev, b.left);
    consider(b.left, l.next);
  }
  // Every merged symbol is a token; a character that is not one is its
  // bytes, as <0xNN> tokens (or the byte itself where the vocabulary has it).
  for (int i = sym.empty() ? -1 : 0; i >= 0; i = sym[static_cast<size_t>(i)].next) {
    const Symbol& s = sym[static_cast<size_t>(i)];
    const std::string_view piece = std::string_view(text).substr(s.begin, s.bytes);
    if (const auto id = find(piece)) {
      out.push_back(*id);
      continue;
    }
    for (char c : piece) {
      int64_t id = byte_token(static_cast<unsigned char>(c), true);
      if (id < 0) id = byte_token(static_cast<unsigned char>(c), false);
      if (id < 0) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned char>(c));
        throw_input(source, std::string("the vocabulary has no token for the byte ") + hex + " (" +
                                name_ + ": tokenizer.ggml.tokens)");
      }
      out.push_back(id);
    }
  }
}

void GgufVocab::bpe(const std::string& text, std::vector<int64_t>& out) const {
  std::string s = text;
  if (pre_.escape_spaces) replace_spaces(s);
  const std::u32string cps = to_u32(s);
  RegexBudget budget(cps.size());
  for (const auto& [begin, end] : gguf_pre_split(pre_, cps, budget)) {
    std::string word;
    const std::string bytes = to_utf8(cps.substr(begin, end - begin));
    if (pre_.byte_encode) {
      for (unsigned char b : bytes) append_utf8(word, byte_char(b));
    } else {
      word = bytes;
    }
    bpe_word(word, out);
  }
}

void GgufVocab::bpe_word(const std::string& word, std::vector<int64_t>& out) const {
  if (word.empty()) return;
  const bool whole = (pre_.ignore_merges ||
                      (pre_.newline_words && word.find_first_not_of('\n') == std::string::npos)) &&
                     find(word).has_value();
  if (whole) {
    out.push_back(*find(word));
    return;
  }
  std::vector<Symbol> sym = characters(word);
  std::vector<int64_t> id(sym.size());
  for (size_t i = 0; i < sym.size(); ++i) {
    const auto t = find(std::string_view(word).substr(sym[i].begin, sym[i].bytes));
    id[i] = t ? *t : -1;
  }
  // The pair of lowest rank first, the leftmost among equals; merges only
  // join tokens (the vocabulary was checked for that).
  struct Bigram {
    int64_t rank;
    int left, right;
    int64_t a, b;
  };
  auto lower = [](const Bigram& x, const Bigram& y) {
    return x.rank > y.rank || (x.rank == y.rank && x.left > y.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(lower)> queue(lower);
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const int64_t a = id[static_cast<size_t>(left)], b = id[static_cast<size_t>(right)];
    if (a < 0 || b < 0) return;
    const auto it = merges_.find((static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b));
    if (it != merges_.end()) queue.push(Bigram{it->second.rank, left, right, a, b});
  };
  for (size_t i = 1; i < sym.size(); ++i) consider(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram g = queue.top();
    queue.pop();
    Symbol& l = sym[static_cast<size_t>(g.left)];
    const auto right = static_cast<size_t>(g.right);
    Symbol& r = sym[right];
    // Stale: either side merged away or into something else since.
    if (l.bytes == 0 || r.bytes == 0 || id[static_cast<size_t>(g.left)] != g.a ||
        id[right] != g.b) {
      continue;
    }
    id[static_cast<size_t>(g.left)] =
        merges_.at((static_cast<uint64_t>(g.a) << 32) | static_cast<uint64_t>(g.b)).merged;
    l.bytes += r.bytes;
    r.bytes = 0;
    l.next = r.next;
    if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = g.left;
    consider(l.prev, g.left);
    consider(g.left, l.next);
  }
  // A symbol that is no token is its bytes, each where the vocabulary has
  // a token for it (GPT-2's alphabet: the byte as a character; raw UTF-8
  // vocabularies: <0xNN>), else left out, as llama.cpp does.
  for (int i = 0; i >= 0; i = sym[static_cast<size_t>(i)].next) {
    if (id[static_cast<size_t>(i)] >= 0) {
      out.push_back(id[static_cast<size_t>(i)]);
      continue;
    }
    const Symbol& s = sym[static_cast<size_t>(i)];
    for (char c : std::string_view(word).substr(s.begin, s.bytes)) {
      const int64_t b = byte_token(static_cast<unsigned char>(c), !pre_.byte_encode);
      if (b >= 0) out.push_back(b);
    }
  }
}

void GgufVocab::wpm(const std::string& text, std::vector<int64_t>& out) const {
  // Words: whitespace separates them, punctuation, ASCII symbols and CJK
  // characters are words of their own, controls are dropped; lowercased
  // and without accents as the normalizer options say (llama.cpp's NFD
  // keeps one code point per character: the first of its decomposition).
  std::vector<std::string> words(1);
  for (char32_t c : to_u32(text)) {
    if (strip_accents_) {
      const std::u32string d = unicode::nfd(std::u32string(1, c));
      if (!d.empty()) c = d[0];
    }
    if (unicode::is_white_space(c)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    const unicode::Category cat = unicode::category(c);
    const bool control = cat == unicode::Category::Cc || cat == unicode::Category::Cf ||
                         cat == unicode::Category::Cs || cat == unicode::Category::Co;
    if (c == 0 || c == 0xFFFD || control) continue;
    if (strip_accents_ && unicode::is_mark(c)) continue;
    const bool alone =
        unicode::is_punctuation(c) || (c < 0x7F && unicode::is_symbol(c)) || is_chinese(c);
    if (lowercase_) {
      std::u32string low;
      unicode::append_lower(c, low);
      if (low.size() == 1) c = low[0];
    }
    std::string s;
    append_utf8(s, c);
    if (alone) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = s;
      words.emplace_back();
    } else {
      words.back() += s;
    }
  }
  // Each word, after SentencePiece's ▁, as the longest tokens from the
  // left (bytes, as llama.cpp cuts them); a word with a gap is [UNK].
  for (const std::string& w : words) {
    if (w.empty()) continue;
    const std::string word = "\xE2\x96\x81" + w;
    const size_t n = word.size(), kept = out.size();
    for (size_t i = 0; i < n; ++i) {
      bool match = false;
      for (size_t j = std::min(n, i + max_token_bytes_ + 1); j > i; --j) {
        if (const auto id = find(std::string_view(word).substr(i, j - i))) {
          out.push_back(*id);
          match = true;
          i = j - 1;
          break;
        }
      }
      if (!match) {
        out.resize(kept);
        break;
      }
    }
    if (out.size() == kept) out.push_back(unk_);
  }
}

}  // namespace attn::tok
