// The settings of attention as current models run it: grouped-query heads,
// RoPE, ALiBi, sliding windows, soft-capping and sinks. Each malformed value
// is an input error that names its key and says what would be valid.
#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "attn/json_tensor.h"
#include "base/number_text.h"
#include "io/settings.h"
#include "problem/problem_internal.h"
#include "problem/variant_unit.h"

namespace attn::detail {

std::vector<double> alibi_paper_slopes(int64_t n) {
  // Press et al.: a geometric sequence starting at 2^(-8/n') for the
  // largest power of two n' <= n; the remaining heads take every other
  // slope of the sequence for 2n' heads.
  int64_t np = 1;
  while (np * 2 <= n) np *= 2;
  std::vector<double> m;
  for (int64_t h = 0; h < n; ++h) {
    if (h < np) {
      m.push_back(std::pow(2.0, -8.0 * static_cast<double>(h + 1) / static_cast<double>(np)));
    } else {
      const double e = 2.0 * static_cast<double>(h - np) + 1.0;
      m.push_back(std::pow(2.0, -4.0 * e / static_cast<double>(np)));
    }
  }
  return m;
}

namespace {

std::string divisors(int64_t n) {
  std::string s;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) s += (s.empty() ? "" : ", ") + std::to_string(d);
  }
  return s;
}

bool has_param(const InputDocument& doc, const char* name) {
  for (const NamedInput& n : doc.params) {
    if (n.name == name) return true;
  }
  return false;
}

}  // namespace

void resolve_modern(const InputDocument& doc, Problem& p) {
  const RunSettings& s = doc.settings;
  auto place = [&](const std::string& key) { return place_path(doc.settings_place, key); };
  p.kv_heads = p.heads;
  if (!detail::variant_unit(p.variant).fast_kernel) {
    for (const Setting& row : settings_table()) {
      if (row.given && row.given(s)) {
        throw_input(
            place(std::string(row.modern)),
            "applies to variants scaled_dot and dot only, not " + std::string(name(p.variant)));
      }
    }
    return;
  }

  if (s.kv_heads) {
    const int64_t kv = *s.kv_heads;
    if (kv > p.heads || p.heads % kv != 0) {
      throw_input(place("kv_heads"), std::to_string(kv) + " does not divide heads " +
                                         std::to_string(p.heads) +
                                         " (query heads share key/value heads in equal groups); "
                                         "use one of " +
                                         divisors(p.heads));
    }
    p.kv_heads = kv;
  } else if (p.kv_heads_from_shapes > 0) {
    p.kv_heads = p.kv_heads_from_shapes;
  }
  if (p.grouped() && p.mode == Mode::kSelf && (!has_param(doc, "W_k") || !has_param(doc, "W_v"))) {
    throw_input(place("kv_heads"),
                std::to_string(p.kv_heads) + " differs from heads " + std::to_string(p.heads) +
                    ", so self mode needs params.W_k and params.W_v to project X to " +
                    std::to_string(p.kv_heads) +
                    (p.kv_heads == 1 ? " key/value head" : " key/value heads"));
  }

  if (s.alibi.value_or(false)) {
    if (s.alibi_slopes) {
      if (static_cast<int64_t>(s.alibi_slopes->size()) != p.heads) {
        throw_input(place("alibi"), std::to_string(s.alibi_slopes->size()) +
                                        (s.alibi_slopes->size() == 1 ? " slope" : " slopes") +
                                        " for " + std::to_string(p.heads) +
                                        (p.heads == 1 ? " head" : " heads") +
                                        "; give one slope per head, or true for the ALiBi "
                                        "paper's slopes");
      }
      p.alibi = *s.alibi_slopes;
    } else {
      p.alibi = alibi_paper_slopes(p.heads);
    }
  }

  if (s.window) {
    p.masks.window = true;
    p.masks.window_left = s.window->first;
    p.masks.window_right = s.window->second;
  }
  if (s.softcap) p.softcap = *s.softcap;

  if (s.sinks) {
    const auto n = static_cast<int64_t>(s.sinks->size());
    if (n == 1) {
      p.sinks.assign(static_cast<size_t>(p.heads), s.sinks->front());
    } else if (n == p.heads) {
      p.sinks = *s.sinks;
    } else {
      throw_input(place("sinks"), std::to_string(n) + " values for " + std::to_string(p.heads) +
                                      (p.heads == 1 ? " head" : " heads") +
                                      "; give one number for every head, or one per head");
    }
  }

  if (s.qk_norm) p.qk_norm = *s.qk_norm;
  const bool rope = s.rope.value_or(s.rope_theta || s.rope_dims || s.rope_layout ||
                                    s.rope_q_offset || s.rope_k_offset || s.rope_scaling);
  if (rope) {
    Rope r;
    r.theta = s.rope_theta.value_or(10000.0);
    r.dims = s.rope_dims.value_or(0);
    r.layout = s.rope_layout.value_or(RopeLayout::kHalf);
    r.q_offset = p.q_offset;  // resolve_positions: one pair of positions for all
    r.k_offset = p.k_offset;
    r.scaling = s.rope_scaling;
    p.rope = r;
  }
}

void resolve_positions(const InputDocument& doc, Problem& p) {
  const RunSettings& s = doc.settings;
  auto place = [&](const std::string& key) { return place_path(doc.settings_place, key); };
  // rope.q_offset and --rope-offset are older names of the same positions.
  auto pick = [&](const std::optional<int64_t>& top, const std::optional<int64_t>& alias,
                  const char* key) -> int64_t {
    if (top && alias && *top != *alias) {
      throw_input(place(key), std::to_string(*top) + " disagrees with rope." + key + " " +
                                  std::to_string(*alias) +
                                  "; they name one position (rope's is the older name)");
    }
    return top.value_or(alias.value_or(0));
  };
  p.q_offset = pick(s.q_offset, s.rope_q_offset, "q_offset");
  p.k_offset = pick(s.k_offset, s.rope_k_offset, "k_offset");
  if (s.causal_bottom_right.value_or(false) && s.causal.value_or(false)) {
    if (s.q_offset || s.rope_q_offset) {
      throw_input(place("causal"),
                  "bottom_right places the queries itself (q_offset = k_offset + len_k - len_q); "
                  "give it or q_offset, not both");
    }
    if (p.len_q > p.len_k) {
      throw_input(place("causal"),
                  "bottom_right with " + std::to_string(p.len_q) + " queries and " +
                      std::to_string(p.len_k) + " keys would put queries 0 to " +
                      std::to_string(p.len_q - p.len_k - 1) +
                      " before every key, where they see none (flash-attn leaves them zero); "
                      "give at most as many queries as keys, or causal true (top-left)");
    }
    p.q_offset = p.k_offset + p.len_k - p.len_q;
    p.causal_bottom_right = true;
  }
  p.masks.diagonal = p.q_offset - p.k_offset;
}

void resolve_rope_width(const InputDocument& doc, Problem& p) {
  if (!p.rope) return;
  const int64_t width = p.head_dim_q();
  const std::string place = place_path(doc.settings_place, "rope.dims");
  if (width < 2) {
    throw_input(place, "the head width " + std::to_string(width) +
                           " is too narrow for RoPE, which rotates pairs of features");
  }
  if (p.rope->dims == 0) {
    if (width % 2 != 0) {
      throw_input(place, "the head width " + std::to_string(width) +
                             " is odd, so not every feature can rotate; give an even rope.dims "
                             "of at most " +
                             std::to_string(width - 1));
    }
    p.rope->dims = width;
  } else if (p.rope->dims > width) {
    throw_input(place, std::to_string(p.rope->dims) + " is wider than the head width " +
                           std::to_string(width) + "; give an even number of at most " +
                           std::to_string(width - width % 2));
  }
  Rope& r = *p.rope;
  if (r.scaling) check_rope_scaling(*r.scaling, r.dims, place_path(doc.settings_place, "rope"));
  // The sequence's last position decides dynamic and longrope scaling, as
  // transformers' max(position_ids) + 1 does.
  const int64_t seq_len = std::max(r.q_offset + p.len_q, r.k_offset + p.len_k);
  RopeFrequencies f = rope_frequencies(r.theta, r.dims, r.scaling, seq_len);
  check_rope_frequencies(f, r.theta, r.scaling, seq_len - 1, doc.settings_place);
  r.inv_freq = std::move(f.inv_freq);
  r.attention = f.attention;
}

}  // namespace attn::detail
