// The added tokens of tokenizer.json and how the tokenizers library finds
// them in text (its AddedVocabulary): leftmost-longest matches, then each
// match widened by lstrip and rstrip or dropped by single_word, the text
// between matches left for the rest of the pipeline.
//
// The library finds the matches with an Aho-Corasick automaton
// (MatchKind::LeftmostLongest); so does attn, in time linear in the text
// whatever the tokens: the automaton of the reversed tokens, run from the
// end of the text, gives the longest token that starts at each position.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::tok {

struct AddedToken {
  std::u32string content;  // as matched: normalized when `normalized` is set
  std::string text;        // as the file writes it (the token's string)
  int64_t id = 0;
  bool special = false, lstrip = false, rstrip = false, single_word = false, normalized = true;
};

// A piece of the text on its way through the pipeline.
struct Piece {
  std::u32string text;
  std::optional<int64_t> id;  // an added token, already tokenized
  bool starts = false;        // begins the whole text
};

// One of the library's two sets of added tokens: those matched on the
// text as given, or those matched on normalized text.
class AddedTokenSet {
 public:
  // Adds a token (kept by pointer: it must outlive the set). Of two tokens
  // with the same content, the first added is matched.
  void add(const AddedToken* token);
  // Makes the set ready to split text; call once, after the last add.
  void build();
  bool empty() const { return tokens_.empty(); }

  // AddedVocabulary::find_matches on `in`: the added tokens' pieces (with
  // their ids) and the text between them, in order, covering `in` (less
  // what lstrip and rstrip take into a token). O(length of in).
  std::vector<Piece> split(const Piece& in) const;

  // For each position of text, the index (in the order added) of the
  // longest token that starts there, or -1. O(length of text).
  std::vector<int32_t> longest_at(const std::u32string& text) const;
  // The same over bytes, each read as the code point of its value: for a
  // set whose tokens' contents were made from bytes the same way, matching
  // byte for byte (GGUF vocabularies, whose text need not be UTF-8).
  std::vector<int32_t> longest_at(std::string_view bytes) const;
  const AddedToken& token(size_t index) const { return *tokens_[index]; }

 private:
  template <typename Text>
  std::vector<int32_t> longest_in(const Text& text) const;
  uint32_t child(uint32_t node, char32_t c) const;  // kNone when there is none

  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<const AddedToken*> tokens_;
  // The trie of the reversed contents: node 0 is the root; an edge is
  // (node << 21 | character) → child.
  std::unordered_map<uint64_t, uint32_t> edges_;
  std::vector<uint32_t> fail_;     // the longest proper suffix's node
  std::vector<int32_t> longest_;   // the longest token whose reversal ends here, or -1
  std::vector<int32_t> terminal_;  // the token that ends at this node, or -1
  std::vector<uint32_t> parent_;
  std::vector<char32_t> via_;  // the character on the edge from the parent
  std::vector<uint32_t> depth_;
};

}  // namespace attn::tok
