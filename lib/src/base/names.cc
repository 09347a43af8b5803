#include "base/names.h"

#include <algorithm>
#include <cctype>

#include "attn/error.h"

namespace attn {

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1), prev2(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      char x = static_cast<char>(std::tolower(static_cast<unsigned char>(a[i - 1])));
      char y = static_cast<char>(std::tolower(static_cast<unsigned char>(b[j - 1])));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x == y ? 0 : 1)});
      // A swap of two neighbours counts as one edit ("rnu" -> "run").
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    prev2 = prev;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string nearest_name(std::string_view word, const std::vector<std::string>& names) {
  // Names are short: comparing past their length only costs time (the edit
  // distance is quadratic) and cannot make a long word close.
  word = word.substr(0, 64);
  std::string best;
  size_t best_d = std::string::npos;
  for (const std::string& n : names) {
    size_t d = edit_distance(word, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  return best;
}

std::string closest_name(std::string_view word, const std::vector<std::string>& names) {
  if (word.size() > 64) return "";
  const std::string best = nearest_name(word, names);
  const size_t best_d = edit_distance(word, best);
  // Close means: at most a third of the longer word changed (at least 1 edit
  // allowed, at most 3), or one is a prefix of the other.
  size_t limit = std::clamp<size_t>(std::max(word.size(), best.size()) / 3, 1, 3);
  if (best_d <= limit) return best;
  for (const std::string& n : names) {
    if (word.size() >= 3 && n.rfind(std::string(word), 0) == 0) return n;
  }
  return "";
}

std::string not_one_of(std::string_view got, const std::vector<std::string>& names) {
  std::string s = "'" + message_text(got) + "' is not one of ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += ", ";
    s += names[i];
  }
  std::string near = closest_name(got, names);
  if (!near.empty()) s += "; did you mean '" + near + "'?";
  return s;
}

}  // namespace attn
