// RoPE scaling as transformers computes it (modeling_rope_utils.py), in
// float64: each kind's inverse frequencies and attention factor, and the
// reading of config.json's `rope_scaling` object with its checks.
#include "attn/rope_scaling.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "attn/json.h"
#include "attn/json_tensor.h"
#include "base/number_text.h"

namespace attn {

namespace {

struct Kind {
  const char* name;
  RopeScalingKind kind;
};
constexpr Kind kKinds[] = {{"linear", RopeScalingKind::kLinear},
                           {"dynamic", RopeScalingKind::kDynamic},
                           {"llama3", RopeScalingKind::kLlama3},
                           {"yarn", RopeScalingKind::kYarn},
                           {"longrope", RopeScalingKind::kLongrope}};

// The keys each kind reads besides rope_type / type.
std::vector<std::string> keys_of(RopeScalingKind k) {
  switch (k) {
    case RopeScalingKind::kLinear:
      return {"factor"};
    case RopeScalingKind::kDynamic:
      return {"factor", "original_max_position_embeddings", "max_position_embeddings"};
    case RopeScalingKind::kLlama3:
      return {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor",
              "max_position_embeddings"};
    case RopeScalingKind::kYarn:
      return {"factor",
              "original_max_position_embeddings",
              "beta_fast",
              "beta_slow",
              "mscale",
              "mscale_all_dim",
              "truncate",
              "attention_factor",
              "max_position_embeddings"};
    case RopeScalingKind::kLongrope:
      return {"factor",           "original_max_position_embeddings", "short_factor", "long_factor",
              "attention_factor", "max_position_embeddings"};
  }
  return {};
}

class Reader {
 public:
  Reader(const json::Value& v, std::string place) : v_(v), place_(std::move(place)) {}

  const json::Value* get(const char* key) const {
    const json::Value* f = v_.find(key);
    return f && !f->is_null() ? f : nullptr;
  }
  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw_input(place_, std::string("rope_scaling \"") + key + "\" " + what);
  }
  std::optional<double> number(const char* key) const {
    const json::Value* f = get(key);
    if (!f) return std::nullopt;
    if (!f->is_number() || !std::isfinite(f->as_number())) fail(key, "must be a number");
    return f->as_number();
  }
  std::optional<double> positive(const char* key) const {
    const auto x = number(key);
    if (x && !(*x > 0)) fail(key, "must be a positive number, got " + format_shortest(*x));
    return x;
  }
  int64_t count(const char* key) const {
    const auto x = number(key);
    if (!x) return 0;
    if (!(*x >= 1 && *x <= 1e12 && *x == std::floor(*x))) fail(key, "must be a positive integer");
    return static_cast<int64_t>(*x);
  }
  std::vector<double> list(const char* key) const {
    const json::Value* f = get(key);
    if (!f) fail(key, "is missing (longrope needs short_factor and long_factor)");
    if (!f->is_array()) fail(key, "must be a list of numbers");
    std::vector<double> out;
    for (size_t i = 0; i < f->size(); ++i) {
      const json::Value e = f->element(i);
      if (!e.is_number() || !(e.as_number() > 0) || !std::isfinite(e.as_number())) {
        fail(key, "[" + std::to_string(i) + "] must be a positive number");
      }
      out.push_back(e.as_number());
    }
    return out;
  }

 private:
  const json::Value& v_;
  std::string place_;
};

double default_inv_freq(double theta, int64_t p, int64_t dims) {
  return 1.0 / std::pow(theta, static_cast<double>(2 * p) / static_cast<double>(dims));
}

// YaRN's attention factor of a scale (DeepSeek's get_mscale).
double yarn_mscale(double scale, double m) {
  return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
}

}  // namespace

const char* rope_scaling_name(RopeScalingKind kind) {
  for (const Kind& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

std::optional<RopeScaling> parse_rope_scaling(const json::Value& v, const std::string& place,
                                              int64_t max_positions, int64_t original_max_positions,
                                              const std::vector<std::string>& ignored) {
  if (!v.is_object()) {
    throw_input(place,
                "rope_scaling must be an object such as {\"rope_type\": \"linear\", "
                "\"factor\": 2}, got " +
                    json::describe(v));
  }
  const Reader r(v, place);
  const json::Value* type = r.get("rope_type");
  if (!type) type = r.get("type");
  if (!type || !type->is_string()) {
    throw_input(place,
                "rope_scaling has no \"rope_type\" (linear, dynamic, llama3, yarn, "
                "longrope or default)");
  }
  const std::string name = type->as_string();
  if (name == "default") return std::nullopt;
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds) {
    if (name == k.name) kind = &k;
  }
  if (!kind) {
    throw_input(place, "rope_scaling type \"" + message_text(name) +
                           "\" is not one attn computes (linear, dynamic, llama3, yarn, "
                           "longrope, default)");
  }
  // A key this kind does not read would change another implementation's
  // numbers and not attn's: refused by name rather than ignored.
  const std::vector<std::string> known = keys_of(kind->kind);
  for (const json::Member& m : v.members()) {
    if (m.key == "rope_type" || m.key == "type" || m.value.is_null()) continue;
    if (std::find(known.begin(), known.end(), m.key) != known.end()) continue;
    if (std::find(ignored.begin(), ignored.end(), m.key) != ignored.end()) continue;
    throw_input(place, "rope_scaling \"" + message_text(m.key) + "\" is not a field of " + name +
                           " scaling that attn reads; remove it or check the type");
  }

  RopeScaling s;
  s.kind = kind->kind;
  s.factor = r.positive("factor").value_or(0);
  s.max_positions = max_positions;
  if (const int64_t m = r.count("max_position_embeddings")) s.max_positions = m;
  s.original_max_positions = r.count("original_max_position_embeddings");
  const auto need_factor = [&] {
    if (s.factor == 0) r.fail("factor", "is missing (" + name + " scaling needs it)");
  };
  switch (s.kind) {
    case RopeScalingKind::kLinear:
      need_factor();
      break;
    case RopeScalingKind::kDynamic:
      need_factor();
      if (s.max_positions == 0) {
        r.fail("max_position_embeddings",
               "is missing: dynamic scaling grows the base past the model's "
               "max_position_embeddings");
      }
      break;
    case RopeScalingKind::kLlama3:
      need_factor();
      if (s.original_max_positions == 0) {
        r.fail("original_max_position_embeddings", "is missing (llama3 scaling needs it)");
      }
      s.low_freq_factor = r.positive("low_freq_factor").value_or(0);
      s.high_freq_factor = r.positive("high_freq_factor").value_or(0);
      if (s.low_freq_factor == 0) r.fail("low_freq_factor", "is missing (llama3 scaling needs it)");
      if (s.high_freq_factor == 0) {
        r.fail("high_freq_factor", "is missing (llama3 scaling needs it)");
      }
      if (!(s.high_freq_factor > s.low_freq_factor)) {
        r.fail("high_freq_factor", "must be larger than low_freq_factor");
      }
      break;
    case RopeScalingKind::kYarn:
      s.beta_fast = r.positive("beta_fast").value_or(32);
      s.beta_slow = r.positive("beta_slow").value_or(1);
      s.mscale = r.number("mscale");
      s.mscale_all_dim = r.number("mscale_all_dim");
      s.attention_factor = r.positive("attention_factor");
      if (const json::Value* t = r.get("truncate")) {
        if (!t->is_bool()) r.fail("truncate", "must be true or false");
        s.truncate = t->as_bool();
      }
      if (s.original_max_positions == 0 && s.max_positions == 0) {
        r.fail("original_max_position_embeddings",
               "is missing, and so is max_position_embeddings (yarn scaling needs one)");
      }
      if (s.factor == 0) {
        if (s.original_max_positions == 0 || s.max_positions == 0) {
          need_factor();
        }
        s.factor =
            static_cast<double>(s.max_positions) / static_cast<double>(s.original_max_positions);
      }
      break;
    case RopeScalingKind::kLongrope:
      s.short_factor = r.list("short_factor");
      s.long_factor = r.list("long_factor");
      s.attention_factor = r.positive("attention_factor");
      // Phi-3 writes the pretrained length beside rope_scaling and derives
      // the factor from the two lengths (transformers does the same).
      if (original_max_positions > 0) {
        s.original_max_positions = original_max_positions;
        s.original_from_config = true;
        if (s.max_positions == 0) {
          r.fail("max_position_embeddings", "is missing (longrope scaling needs it)");
        }
        s.factor =
            static_cast<double>(s.max_positions) / static_cast<double>(s.original_max_positions);
      } else {
        need_factor();
        if (s.original_max_positions == 0) s.original_max_positions = s.max_positions;
        if (s.original_max_positions == 0) {
          r.fail("original_max_position_embeddings",
                 "is missing, and so is max_position_embeddings (longrope scaling needs one)");
        }
      }
      break;
  }
  return s;
}

void check_rope_scaling(const RopeScaling& s, int64_t dims, const std::string& place) {
  if (s.kind == RopeScalingKind::kDynamic && dims < 4) {
    throw_input(place,
                "dynamic rope_scaling needs at least 4 rotated features (its base grows "
                "by a power dims / (dims - 2)); " +
                    std::to_string(dims) + " rotate");
  }
  if (s.kind == RopeScalingKind::kLongrope) {
    const auto half = static_cast<size_t>(dims / 2);
    for (const auto* l : {&s.short_factor, &s.long_factor}) {
      if (l->size() != half) {
        throw_input(place, std::string("rope_scaling \"") +
                               (l == &s.short_factor ? "short_factor" : "long_factor") + "\" has " +
                               std::to_string(l->size()) + " values; " + std::to_string(dims) +
                               " rotated features need one per pair, " + std::to_string(half));
      }
    }
  }
}

namespace {

// The setting that made a frequency or the attention factor what it is,
// for messages: its place, its name and its value.
struct Cause {
  std::string place, what;
};

std::string scaling_field(const char* key, double value) {
  return std::string("rope_scaling \"") + key + "\" " + format_shortest(value);
}

// What sets the frequencies: theta alone, or the scaling's factor (a
// longrope list's entry for pair p).
Cause frequency_cause(double theta, const std::optional<RopeScaling>& s, int64_t last_position,
                      size_t p, const std::string& settings_place) {
  if (!s) return {place_path(settings_place, "rope.theta"), "theta " + format_shortest(theta)};
  const std::string place = place_path(settings_place, "rope.scaling");
  if (s->kind != RopeScalingKind::kLongrope) return {place, scaling_field("factor", s->factor)};
  const bool long_list = last_position + 1 > s->original_max_positions;
  const std::vector<double>& list = long_list ? s->long_factor : s->short_factor;
  const std::string key = long_list ? "long_factor" : "short_factor";
  return {place,
          "rope_scaling \"" + key + "\"[" + std::to_string(p) + "] " + format_shortest(list[p])};
}

// What sets the attention factor of yarn and longrope.
Cause attention_cause(const RopeScaling& s, const std::string& settings_place) {
  const std::string place = place_path(settings_place, "rope.scaling");
  if (s.attention_factor) return {place, scaling_field("attention_factor", *s.attention_factor)};
  if (s.kind == RopeScalingKind::kYarn && s.mscale.value_or(0) != 0 &&
      s.mscale_all_dim.value_or(0) != 0) {
    return {place, scaling_field("mscale", *s.mscale) + " with \"mscale_all_dim\" " +
                       format_shortest(*s.mscale_all_dim)};
  }
  if (s.kind == RopeScalingKind::kLongrope && s.original_max_positions <= 1) {
    return {place, "rope_scaling \"original_max_position_embeddings\" " +
                       std::to_string(s.original_max_positions)};
  }
  return {place, scaling_field("factor", s.factor)};
}

}  // namespace

void check_rope_frequencies(const RopeFrequencies& f, double theta,
                            const std::optional<RopeScaling>& s, int64_t last_position,
                            const std::string& settings_place) {
  if (s && !(std::isfinite(f.attention) && f.attention > 0)) {
    const Cause c = attention_cause(*s, settings_place);
    throw_input(c.place, c.what + " makes the attention factor " + format_shortest(f.attention) +
                             "; it must be finite and above 0");
  }
  const double last = static_cast<double>(std::max<int64_t>(last_position, 0));
  for (size_t p = 0; p < f.inv_freq.size(); ++p) {
    const double x = f.inv_freq[p];
    if (!(std::isfinite(x) && x > 0)) {
      const Cause c = frequency_cause(theta, s, last_position, p, settings_place);
      throw_input(c.place, c.what + " makes the rotation frequency of pair " + std::to_string(p) +
                               " " + format_shortest(x) +
                               "; RoPE needs finite frequencies above 0");
    }
    if (!std::isfinite(last * x)) {
      const Cause c = frequency_cause(theta, s, last_position, p, settings_place);
      throw_input(c.place, c.what + " makes the rotation angle of pair " + std::to_string(p) +
                               " at position " + std::to_string(last_position) +
                               " infinite (frequency " + format_shortest(x) +
                               "); RoPE needs finite angles");
    }
  }
}

RopeFrequencies rope_frequencies(double theta, int64_t dims, const std::optional<RopeScaling>& s,
                                 int64_t seq_len) {
  const int64_t half = dims / 2;
  RopeFrequencies f;
  f.inv_freq.resize(static_cast<size_t>(half));
  for (int64_t p = 0; p < half; ++p)
    f.inv_freq[static_cast<size_t>(p)] = default_inv_freq(theta, p, dims);
  if (!s) return f;
  const double d = static_cast<double>(dims);
  switch (s->kind) {
    case RopeScalingKind::kLinear:
      for (double& x : f.inv_freq) x /= s->factor;
      break;
    case RopeScalingKind::kDynamic: {
      const double max = static_cast<double>(s->max_positions);
      const double len = seq_len > s->max_positions ? static_cast<double>(seq_len) : max;
      const double base = theta * std::pow(s->factor * len / max - (s->factor - 1), d / (d - 2));
      for (int64_t p = 0; p < half; ++p)
        f.inv_freq[static_cast<size_t>(p)] = default_inv_freq(base, p, dims);
      break;
    }
    case RopeScalingKind::kLlama3: {
      const double old = static_cast<double>(s->original_max_positions);
      const double low_wavelen = old / s->low_freq_factor;
      const double high_wavelen = old / s->high_freq_factor;
      for (double& x : f.inv_freq) {
        const double wavelen = 2 * M_PI / x;
        if (wavelen > low_wavelen) {
          x /= s->factor;
        } else if (!(wavelen < high_wavelen)) {
          const double smooth =
              (old / wavelen - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
          x = (1 - smooth) * x / s->factor + smooth * x;
        }
      }
      break;
    }
    case RopeScalingKind::kYarn: {
      const double original = static_cast<double>(
          s->original_max_positions > 0 ? s->original_max_positions : s->max_positions);
      const double factor = s->factor;
      if (s->attention_factor) {
        f.attention = *s->attention_factor;
      } else if (s->mscale.value_or(0) != 0 && s->mscale_all_dim.value_or(0) != 0) {
        f.attention = yarn_mscale(factor, *s->mscale) / yarn_mscale(factor, *s->mscale_all_dim);
      } else {
        f.attention = yarn_mscale(factor, 1);
      }
      const auto correction_dim = [&](double rotations) {
        return d * std::log(original / (rotations * 2 * M_PI)) / (2 * std::log(theta));
      };
      double low = correction_dim(s->beta_fast), high = correction_dim(s->beta_slow);
      if (s->truncate) {
        low = std::floor(low);
        high = std::ceil(high);
      }
      low = std::max(low, 0.0);
      high = std::min(high, d - 1);
      if (low == high) high += 0.001;  // transformers: "prevent singularity"
      for (int64_t p = 0; p < half; ++p) {
        const double pos = std::pow(theta, static_cast<double>(2 * p) / d);
        const double ramp = std::clamp((static_cast<double>(p) - low) / (high - low), 0.0, 1.0);
        const double extrapolation = 1 - ramp;
        f.inv_freq[static_cast<size_t>(p)] =
            1.0 / (factor * pos) * (1 - extrapolation) + 1.0 / pos * extrapolation;
      }
      break;
    }
    case RopeScalingKind::kLongrope: {
      const double original = static_cast<double>(s->original_max_positions);
      if (s->attention_factor) {
        f.attention = *s->attention_factor;
      } else {
        f.attention =
            s->factor <= 1 ? 1.0 : std::sqrt(1 + std::log(s->factor) / std::log(original));
      }
      const std::vector<double>& ext =
          seq_len > s->original_max_positions ? s->long_factor : s->short_factor;
      for (int64_t p = 0; p < half; ++p) {
        f.inv_freq[static_cast<size_t>(p)] =
            1.0 / (ext[static_cast<size_t>(p)] * std::pow(theta, static_cast<double>(2 * p) / d));
      }
      break;
    }
  }
  return f;
}

}  // namespace attn
