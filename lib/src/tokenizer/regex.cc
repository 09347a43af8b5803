#include "tokenizer/regex.h"

#include <cstdint>
#include <limits>

#include "attn/error.h"
#include "base/utf8.h"
#include "tokenizer/unicode.h"

namespace attn::tok {

namespace {

using unicode::Category;

// One test of a character class: a range of code points, a set of general
// categories, or the White_Space property; each may be negated (\P{L}, \S).
struct ClassItem {
  enum Kind { kRange, kCategories, kSpace, kAny } kind = kRange;
  char32_t lo = 0, hi = 0;
  uint32_t categories = 0;  // bit per Category
  bool negated = false;

  bool test(char32_t c) const {
    bool in = false;
    switch (kind) {
      case kRange:
        in = c >= lo && c <= hi;
        break;
      case kCategories:
        in = (categories >> static_cast<unsigned>(unicode::category(c))) & 1u;
        break;
      case kSpace:
        in = unicode::is_white_space(c);
        break;
      case kAny:
        in = c != U'\n';
        break;
    }
    return in != negated;
  }
};

// A class: its items (ranges, categories, \s) and, for a group that reads
// one character, the classes of the group's alternatives (`either`), any of
// which may match, and of its look-aheads (`also`), each of which must.
struct CharClass {
  std::vector<ClassItem> items;
  std::vector<CharClass> either;
  std::vector<CharClass> also;
  bool negated = false;  // of the items and `either`, not of `also`
  bool test(char32_t c) const {
    bool any = false;
    for (const ClassItem& i : items) {
      if (i.test(c)) {
        any = true;
        break;
      }
    }
    for (size_t k = 0; !any && k < either.size(); ++k) any = either[k].test(c);
    if (any == negated) return false;
    for (const CharClass& a : also) {
      if (!a.test(c)) return false;
    }
    return true;
  }
};

struct Node;
using Seq = std::vector<Node>;

struct Node {
  enum Kind { kChar, kGroup, kLookahead, kAnchor } kind = kChar;
  CharClass cls;          // kChar
  std::vector<Seq> alts;  // kGroup, kLookahead
  bool negative = false;  // kLookahead: (?!..)
  bool at_end = false;    // kAnchor: $ (else ^)
  size_t min = 1, max = 1;
};

// The class of a group that always reads exactly one character: each
// alternative is look-aheads that test one character, then one character
// ((A|B|C), (?=[\p{L}])([^a-z])). Such a group is quantified like a
// class, in a loop: repeating it costs what repeating a class costs.
bool one_character(const std::vector<Seq>& alts, CharClass& out) {
  CharClass group;
  for (const Seq& alt : alts) {
    if (alt.empty()) return false;
    CharClass one;
    for (size_t i = 0; i + 1 < alt.size(); ++i) {
      const Node& n = alt[i];
      CharClass look;
      if (n.kind != Node::kLookahead || !one_character(n.alts, look)) return false;
      if (n.negative) {
        CharClass not_look;
        not_look.either.push_back(std::move(look));
        not_look.negated = true;
        look = std::move(not_look);
      }
      one.also.push_back(std::move(look));
    }
    const Node& last = alt.back();
    if (last.min != 1 || last.max != 1) return false;
    if (last.kind == Node::kChar) {
      one.either.push_back(last.cls);
    } else if (last.kind == Node::kGroup) {
      CharClass inner;
      if (!one_character(last.alts, inner)) return false;
      one.either.push_back(std::move(inner));
    } else {
      return false;
    }
    group.either.push_back(std::move(one));
  }
  out = std::move(group);
  return true;
}

constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();
constexpr size_t kMaxPatternLength = 4096;
constexpr int kMaxDepth = 32;

uint32_t bit(Category c) { return 1u << static_cast<unsigned>(c); }

// The categories of \p{NAME}: a two-letter category or its one-letter group.
bool category_mask(const std::u32string& name, uint32_t& mask) {
  static const char* const kNames[] = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                                       "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc",
                                       "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"};
  std::string n;
  for (char32_t c : name) {
    if (c > 0x7F) return false;
    n += static_cast<char>(c);
  }
  // Long names as Oniguruma also spells them.
  if (n == "Letter") n = "L";
  if (n == "Number") n = "N";
  if (n == "Mark") n = "M";
  if (n == "Punctuation") n = "P";
  if (n == "Symbol") n = "S";
  if (n == "Separator") n = "Z";
  if (n == "Other") n = "C";
  mask = 0;
  for (unsigned i = 0; i < std::size(kNames); ++i) {
    const std::string k = kNames[i];
    if (k == n || (n.size() == 1 && k[0] == n[0])) mask |= 1u << i;
  }
  return mask != 0;
}

class Parser {
 public:
  Parser(const std::u32string& p, const std::string& place, RegexSyntax syntax)
      : p_(p), place_(place), syntax_(syntax) {}

  std::vector<Seq> parse() {
    // The parser and the matcher recurse once per group and per element of
    // a sequence: a hostile pattern must not run them out of stack. Real
    // files' patterns are a few hundred characters, nested two deep.
    if (p_.size() > kMaxPatternLength) {
      fail("a pattern of " + std::to_string(p_.size()) + " characters (at most " +
           std::to_string(kMaxPatternLength) + ")");
    }
    std::vector<Seq> alts = alternation(false);
    if (i_ < p_.size()) fail("unbalanced ')'");
    return alts;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string pattern;
    for (char32_t c : p_) append_utf8(pattern, c);
    if (pattern.size() > 120) pattern = pattern.substr(0, 117) + "...";
    throw_input(place_, "the regex cannot be run by attn: " + what + " at character " +
                            std::to_string(i_) + " of " + pattern);
  }

  bool at(char32_t c) const { return i_ < p_.size() && p_[i_] == c; }

  std::vector<Seq> alternation(bool nested) {
    std::vector<Seq> alts(1);
    while (i_ < p_.size()) {
      if (at(U')')) {
        if (!nested) fail("unbalanced ')'");
        break;
      }
      if (at(U'|')) {
        ++i_;
        alts.emplace_back();
        continue;
      }
      alts.back().push_back(atom());
    }
    return alts;
  }

  Node atom() {
    Node n;
    const char32_t c = p_[i_];
    if (c == U'(') {
      if (++depth_ > kMaxDepth) fail("groups nested deeper than " + std::to_string(kMaxDepth));
      ++i_;
      bool saved_ci = ci_;
      if (at(U'?')) {
        ++i_;
        if (at(U':')) {
          ++i_;
        } else if (at(U'=') || at(U'!')) {
          n.kind = Node::kLookahead;
          n.negative = at(U'!');
          ++i_;
        } else if (at(U'i') && i_ + 1 < p_.size() && p_[i_ + 1] == U':') {
          ci_ = true;
          i_ += 2;
        } else {
          fail("an unsupported group (?" + std::string(1, static_cast<char>(p_[i_] & 0x7F)));
        }
      }
      if (n.kind != Node::kLookahead) n.kind = Node::kGroup;
      n.alts = alternation(true);
      if (!at(U')')) fail("a group without its ')'");
      ++i_;
      --depth_;
      ci_ = saved_ci;
      if (n.kind == Node::kLookahead) {
        if (i_ < p_.size() && (at(U'?') || at(U'*') || at(U'+') || at(U'{'))) {
          fail("a quantified look-ahead");
        }
        return n;
      }
    } else if (c == U'[') {
      n.cls = bracket();
    } else if (c == U'\\') {
      ++i_;
      n.cls.items.push_back(escape(false));
    } else if (c == U'.') {
      ++i_;
      n.cls.items.push_back(ClassItem{ClassItem::kAny, 0, 0, 0, false});
    } else if (c == U'^' || c == U'$') {
      // ECMAScript's anchors (not multiline): the start and the end of the
      // text searched. Oniguruma's $ also matches before a newline; attn
      // runs no pattern with it.
      if (syntax_ != RegexSyntax::kEcmaScript) fail("anchors");
      ++i_;
      n.kind = Node::kAnchor;
      n.at_end = c == U'$';
      if (i_ < p_.size() && (at(U'?') || at(U'*') || at(U'+') || at(U'{'))) {
        fail("a quantified anchor");
      }
      return n;
    } else if (c == U'*' || c == U'+' || c == U'?' || c == U'{') {
      fail("a quantifier with nothing before it");
    } else {
      ++i_;
      literal(n.cls, c, c);
    }
    quantifier(n);
    return n;
  }

  void quantifier(Node& n) {
    if (i_ >= p_.size()) return;
    size_t min = 1, max = 1;
    const char32_t c = p_[i_];
    if (c == U'?') {
      min = 0;
    } else if (c == U'*') {
      min = 0;
      max = kUnbounded;
    } else if (c == U'+') {
      max = kUnbounded;
    } else if (c == U'{') {
      size_t j = i_ + 1;
      auto number = [&](size_t& out) {
        const size_t start = j;
        out = 0;
        while (j < p_.size() && p_[j] >= U'0' && p_[j] <= U'9' && j - start < 6) {
          out = out * 10 + (p_[j] - U'0');
          ++j;
        }
        return j > start;
      };
      if (!number(min)) return;  // a literal '{', as Oniguruma reads it
      max = min;
      if (j < p_.size() && p_[j] == U',') {
        ++j;
        if (!number(max)) max = kUnbounded;
      }
      if (j >= p_.size() || p_[j] != U'}' || max < min) fail("a malformed {n,m}");
      i_ = j;
    } else {
      return;
    }
    ++i_;
    if (at(U'?') || at(U'+')) fail("lazy or possessive quantifiers");
    if (n.kind == Node::kGroup && max > 1) {
      CharClass cls;
      if (!one_character(n.alts, cls)) fail("a repeated group");
      n.kind = Node::kChar;
      n.cls = std::move(cls);
      n.alts.clear();
    }
    n.min = min;
    n.max = max;
  }

  // A literal code point (or range) into a class, with its other ASCII case
  // inside (?i:..).
  void literal(CharClass& cls, char32_t lo, char32_t hi) {
    cls.items.push_back(ClassItem{ClassItem::kRange, lo, hi, 0, false});
    if (!ci_) return;
    for (char32_t c = lo; c <= hi && c <= U'z'; ++c) {
      if (c >= U'a' && c <= U'z') {
        cls.items.push_back(ClassItem{ClassItem::kRange, c - 32, c - 32, 0, false});
      } else if (c >= U'A' && c <= U'Z') {
        cls.items.push_back(ClassItem{ClassItem::kRange, c + 32, c + 32, 0, false});
      }
    }
  }

  // After a backslash: a class escape or an escaped literal.
  ClassItem escape(bool in_bracket) {
    if (i_ >= p_.size()) fail("a trailing backslash");
    const char32_t c = p_[i_++];
    ClassItem item;
    switch (c) {
      case U's':
      case U'S':
        item.kind = ClassItem::kSpace;
        item.negated = c == U'S';
        return item;
      case U'd':
      case U'D':
        item.kind = ClassItem::kCategories;
        item.categories = bit(Category::Nd);
        item.negated = c == U'D';
        return item;
      case U'w':
      case U'W':
        // Oniguruma's Unicode word characters: letters, marks, decimal
        // digits and connector punctuation.
        item.kind = ClassItem::kCategories;
        category_mask(U"L", item.categories);
        {
          uint32_t m = 0;
          category_mask(U"M", m);
          item.categories |= m | bit(Category::Nd) | bit(Category::Pc);
        }
        item.negated = c == U'W';
        return item;
      case U'p':
      case U'P': {
        if (!at(U'{')) fail("\\p without {NAME}");
        const size_t close = p_.find(U'}', i_);
        if (close == std::u32string::npos) fail("\\p{ without its '}'");
        std::u32string name = p_.substr(i_ + 1, close - i_ - 1);
        bool negate = c == U'P';
        if (!name.empty() && name[0] == U'^') {
          negate = !negate;
          name.erase(0, 1);
        }
        item.kind = ClassItem::kCategories;
        if (!category_mask(name, item.categories)) fail("an unknown property");
        item.negated = negate;
        i_ = close + 1;
        return item;
      }
      case U'n':
        return ClassItem{ClassItem::kRange, U'\n', U'\n', 0, false};
      case U'r':
        return ClassItem{ClassItem::kRange, U'\r', U'\r', 0, false};
      case U't':
        return ClassItem{ClassItem::kRange, U'\t', U'\t', 0, false};
      case U'f':
        return ClassItem{ClassItem::kRange, U'\f', U'\f', 0, false};
      case U'v':
        return ClassItem{ClassItem::kRange, U'\v', U'\v', 0, false};
      case U'x': {
        char32_t v = 0;
        size_t digits = 0;
        const bool braced = at(U'{');
        if (braced) ++i_;
        while (i_ < p_.size() && digits < (braced ? 6u : 2u)) {
          const char32_t h = p_[i_];
          const int d = h >= U'0' && h <= U'9'   ? static_cast<int>(h - U'0')
                        : h >= U'a' && h <= U'f' ? static_cast<int>(h - U'a' + 10)
                        : h >= U'A' && h <= U'F' ? static_cast<int>(h - U'A' + 10)
                                                 : -1;
          if (d < 0) break;
          v = v * 16 + static_cast<char32_t>(d);
          ++digits;
          ++i_;
        }
        if (braced) {
          if (!at(U'}')) fail("\\x{ without its '}'");
          ++i_;
        }
        if (digits == 0 || v > 0x10FFFF) fail("a malformed \\x escape");
        return ClassItem{ClassItem::kRange, v, v, 0, false};
      }
      default:
        break;
    }
    // An escaped punctuation character stands for itself; letters and
    // digits are escapes this matcher does not know (\b, \A, \1, ...).
    if ((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9')) {
      fail(std::string("the escape \\") + static_cast<char>(c));
    }
    (void)in_bracket;
    return ClassItem{ClassItem::kRange, c, c, 0, false};
  }

  CharClass bracket() {
    ++i_;  // '['
    CharClass cls;
    if (at(U'^')) {
      cls.negated = true;
      ++i_;
    }
    bool first = true;
    while (i_ < p_.size() && (!at(U']') || first)) {
      first = false;
      if (at(U'[')) fail("nested classes");
      char32_t lo = 0;
      if (at(U'\\')) {
        ++i_;
        ClassItem item = escape(true);
        if (item.kind != ClassItem::kRange || item.lo != item.hi) {
          cls.items.push_back(item);
          continue;
        }
        lo = item.lo;
      } else {
        lo = p_[i_++];
      }
      char32_t hi = lo;
      if (at(U'-') && i_ + 1 < p_.size() && p_[i_ + 1] != U']') {
        ++i_;
        if (at(U'\\')) {
          ++i_;
          const ClassItem item = escape(true);
          if (item.kind != ClassItem::kRange) fail("a range ending in a class");
          hi = item.lo;
        } else {
          hi = p_[i_++];
        }
        if (hi < lo) fail("a range out of order");
      }
      literal(cls, lo, hi);
    }
    if (!at(U']')) fail("a class without its ']'");
    ++i_;
    return cls;
  }

  const std::u32string& p_;
  const std::string& place_;
  RegexSyntax syntax_;
  size_t i_ = 0;
  int depth_ = 0;
  bool ci_ = false;
};

// Where a sequence continues once a group's alternative has matched.
struct Frame {
  const Seq* seq;
  size_t index;
  const Frame* parent;
};

class Matcher {
 public:
  // Counts its steps in `used` and stops when they pass `limit`: a
  // pattern that backtracks without end (\s*\s*x on a long run of
  // spaces), or a look-ahead that reads to the end of the text at every
  // position ((?=a*)b), is stopped instead of taking hours.
  Matcher(const std::u32string& text, uint64_t& used, uint64_t limit)
      : t_(text), used_(used), limit_(limit) {}

  bool exhausted() const { return used_ > limit_; }

  // The end of the match of seq[i..] and then the frames, from pos; false
  // when there is none (or the budget is spent).
  bool match(const Seq& seq, size_t i, size_t pos, const Frame* k, size_t& end) {
    if (++used_ > limit_) return false;
    if (i == seq.size()) {
      if (!k) {
        end = pos;
        return true;
      }
      return match(*k->seq, k->index, pos, k->parent, end);
    }
    const Node& n = seq[i];
    switch (n.kind) {
      case Node::kChar: {
        // Each character read is a step: a run read again from every
        // position of a long text is the quadratic case the budget stops.
        size_t run = 0;
        while (run < n.max && pos + run < t_.size() && n.cls.test(t_[pos + run])) {
          ++run;
          if (++used_ > limit_) return false;
        }
        if (run < n.min) return false;
        for (size_t r = run + 1; r-- > n.min;) {
          if (match(seq, i + 1, pos + r, k, end)) return true;
          if (exhausted()) return false;
        }
        return false;
      }
      case Node::kGroup: {
        const Frame after{&seq, i + 1, k};
        for (const Seq& alt : n.alts) {
          if (match(alt, 0, pos, &after, end)) return true;
          if (exhausted()) return false;
        }
        return n.min == 0 && match(seq, i + 1, pos, k, end);
      }
      case Node::kLookahead: {
        bool found = false;
        size_t ignored = 0;
        for (const Seq& alt : n.alts) {
          if (match(alt, 0, pos, nullptr, ignored)) {
            found = true;
            break;
          }
          if (exhausted()) return false;
        }
        if (found == n.negative) return false;
        return match(seq, i + 1, pos, k, end);
      }
      case Node::kAnchor:
        if (pos != (n.at_end ? t_.size() : 0)) return false;
        return match(seq, i + 1, pos, k, end);
    }
    return false;
  }

 private:
  const std::u32string& t_;
  uint64_t& used_;
  uint64_t limit_;
};

}  // namespace

struct Regex::Program {
  Seq root;  // one group of the pattern's alternatives
  std::string place;
};

Regex::Regex(const std::u32string& pattern, const std::string& place, RegexSyntax syntax)
    : program_(std::make_unique<Program>()) {
  Node top;
  top.kind = Node::kGroup;
  top.alts = Parser(pattern, place, syntax).parse();
  program_->root.push_back(std::move(top));
  program_->place = place;
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

std::vector<std::pair<size_t, size_t>> Regex::find_all(const std::u32string& text,
                                                       RegexBudget& budget) const {
  std::vector<std::pair<size_t, size_t>> out;
  Matcher m(text, budget.used, budget.steps);
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = 0;
    if (m.match(program_->root, 0, pos, nullptr, end)) {
      if (end > pos) {
        out.emplace_back(pos, end);
        pos = end;
        continue;
      }
    }
    if (m.exhausted()) {
      throw_input(program_->place,
                  "the regex takes more than " + std::to_string(budget.steps) +
                      " steps on a text of " + std::to_string(budget.text_chars) + " characters (" +
                      std::to_string(RegexBudget::kBaseSteps) + " + " +
                      std::to_string(RegexBudget::kStepsPerCharacter) +
                      " per character, for all its patterns); attn stops it rather than run "
                      "for hours");
    }
    ++pos;  // no match here, or an empty one: the search moves on
  }
  return out;
}

}  // namespace attn::tok
