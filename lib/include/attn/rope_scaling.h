// RoPE scaling: the frequencies a model's config.json asks for instead of
// RoPE's own theta^(-2p/d), as Hugging Face's `rope_scaling` (and v5's
// `rope_parameters`) writes them: linear, dynamic (NTK), llama3, yarn and
// longrope. Each kind is a function of the rotated width, the base, and,
// for dynamic and longrope, the length of the sequence; yarn and longrope
// also scale the cosines and sines by an attention factor. The formulas
// are transformers' (modeling_rope_utils.py), computed in float64.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {

namespace json {
class Value;
}

enum class RopeScalingKind { kLinear, kDynamic, kLlama3, kYarn, kLongrope };

struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::kLinear;
  double factor = 1;                   // 0: longrope/yarn derive it from the lengths below
  int64_t max_positions = 0;           // max_position_embeddings (0: not given)
  int64_t original_max_positions = 0;  // original_max_position_embeddings (0: not given)
  bool original_from_config = false;   // longrope: given beside rope_scaling (Phi-3's spelling)
  double low_freq_factor = 1, high_freq_factor = 4;  // llama3
  double beta_fast = 32, beta_slow = 1;              // yarn
  std::optional<double> mscale, mscale_all_dim;      // yarn (DeepSeek's spelling)
  bool truncate = true;                              // yarn: round the ramp's ends
  std::optional<double> attention_factor;            // yarn, longrope
  std::vector<double> short_factor, long_factor;     // longrope, one per rotated pair
};

// The name config.json writes ("linear", "dynamic", "llama3", "yarn",
// "longrope").
const char* rope_scaling_name(RopeScalingKind kind);

// Reads a `rope_scaling` object ({"rope_type": "yarn", "factor": 4, ...};
// "type" is the older spelling of "rope_type"). `max_positions` and
// `original_max_positions` are config.json's top-level
// max_position_embeddings and original_max_position_embeddings (0 when
// absent); the object may carry max_position_embeddings itself. Returns
// nullopt for "default". Keys named in `ignored` (v5's rope_theta and
// partial_rotary_factor, read by the caller) are skipped; any other key,
// an unknown type, or a missing or out-of-range field is an input error
// naming `place` and the field.
std::optional<RopeScaling> parse_rope_scaling(const json::Value& v, const std::string& place,
                                              int64_t max_positions, int64_t original_max_positions,
                                              const std::vector<std::string>& ignored = {});

// The inverse frequencies of the `dims / 2` rotated pairs and the factor
// the cosines and sines are multiplied by, for a sequence whose largest
// position is seq_len - 1. No scaling: theta^(-2p/dims) and 1.
struct RopeFrequencies {
  std::vector<double> inv_freq;
  double attention = 1;
};
RopeFrequencies rope_frequencies(double theta, int64_t dims, const std::optional<RopeScaling>& s,
                                 int64_t seq_len);

// An input error (naming `place`) when s cannot scale `dims` rotated
// features: longrope's lists of another length, dynamic with dims < 4.
void check_rope_scaling(const RopeScaling& s, int64_t dims, const std::string& place);

// An input error when the frequencies rope_frequencies gave for theta and
// s are not finite and above 0, the angle of a pair at `last_position`
// is not finite, or the attention factor is not finite and above 0 (a
// factor of 1e-308, a yarn mscale far below 0): RoPE would turn them into
// NaN scores. The message names the setting that made them, as
// `settings_place`'s "rope.theta" or "rope.scaling" and its field.
void check_rope_frequencies(const RopeFrequencies& f, double theta,
                            const std::optional<RopeScaling>& s, int64_t last_position,
                            const std::string& settings_place);

}  // namespace attn
