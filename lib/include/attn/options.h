// Run settings: the enumerations of docs/spec.md (mode, variant, scale, ...)
// with their names, and RunSettings, the set of settings that may come from
// the input document or from command-line flags (a flag wins).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/rope_scaling.h"

namespace attn {

enum class Mode { kSelf, kCross, kQkv };
enum class Variant { kScaledDot, kDot, kAdditive, kSingleLayer, kBiattention };
enum class ScaleKind { kSqrtDk, kNone, kDk, kCosine, kNorm, kLongSeq, kValue };
enum class ScaleAt { kScores, kOutput };
enum class MaskConvention { kBlock, kKeep };
enum class FullyMasked { kZero, kUniform, kNan, kError };
enum class ParamsLayout { kMath, kTorch };
enum class DType { kF64, kF32 };
enum class RopeLayout { kHalf, kInterleaved };

struct Scale {
  ScaleKind kind = ScaleKind::kSqrtDk;
  double value = 1.0;  // for kValue: the factor that multiplies the scores
};

// Canonical names, as written in input documents and flags.
std::string_view name(Mode m);
std::string_view name(Variant v);
std::string_view name(ScaleKind s);
std::string name(const Scale& s);  // "sqrt_dk" or the number
std::string_view name(ScaleAt s);
std::string_view name(MaskConvention m);
std::string_view name(FullyMasked f);
std::string_view name(ParamsLayout p);
std::string_view name(DType d);
std::string_view name(RopeLayout l);

// The accepted names of each enumeration, in documentation order.
const std::vector<std::string>& mode_names();
const std::vector<std::string>& variant_names();
const std::vector<std::string>& scale_names();  // without the numeric form
const std::vector<std::string>& scale_at_names();
const std::vector<std::string>& mask_convention_names();
const std::vector<std::string>& fully_masked_names();
const std::vector<std::string>& params_layout_names();
const std::vector<std::string>& dtype_names();
const std::vector<std::string>& rope_layout_names();

// Parsers: nullopt when the text is not an accepted name.
std::optional<Mode> parse_mode(std::string_view s);
std::optional<Variant> parse_variant(std::string_view s);
std::optional<Scale> parse_scale(std::string_view s);  // a name or a number
std::optional<ScaleAt> parse_scale_at(std::string_view s);
std::optional<MaskConvention> parse_mask_convention(std::string_view s);
std::optional<FullyMasked> parse_fully_masked(std::string_view s);
std::optional<ParamsLayout> parse_params_layout(std::string_view s);
std::optional<DType> parse_dtype(std::string_view s);
std::optional<RopeLayout> parse_rope_layout(std::string_view s);

// Settings that may be given in the input file or as flags. Every field is
// optional; merge() lets the flags override the document.
struct RunSettings {
  std::optional<Mode> mode;
  std::optional<Variant> variant;
  std::optional<int64_t> heads;
  std::optional<Scale> scale;
  std::optional<double> temperature;
  std::optional<ScaleAt> scale_at;
  std::optional<bool> causal;
  // causal "bottom_right": q_offset = len_k - len_q (flash-attn, a KV cache).
  std::optional<bool> causal_bottom_right;
  // Positions of query 0 and key 0 (RoPE, causal, window, ALiBi).
  std::optional<int64_t> q_offset, k_offset;
  std::optional<MaskConvention> mask_convention;
  std::optional<double> mask_fill;
  std::optional<FullyMasked> fully_masked;
  std::optional<double> dropout;
  std::optional<uint64_t> seed;
  std::optional<ParamsLayout> params_layout;

  // Attention as current models run it (scaled_dot and dot only).
  std::optional<int64_t> kv_heads;
  // RoPE: `rope` turns it on or off; any of the other fields given alone
  // turns it on too (so a flag such as --rope-theta is enough).
  std::optional<bool> rope;
  std::optional<double> rope_theta;
  std::optional<int64_t> rope_dims;
  std::optional<RopeLayout> rope_layout;
  std::optional<int64_t> rope_q_offset, rope_k_offset;  // older names of q_offset, k_offset
  // Hugging Face's rope_scaling (linear, dynamic, llama3, yarn, longrope).
  std::optional<RopeScaling> rope_scaling;
  // Q/K norm (Qwen 3, Gemma 3): an RMSNorm of each head of Q and K with
  // this epsilon, weighted by params q_norm and k_norm, before RoPE.
  std::optional<double> qk_norm;
  // ALiBi: on or off; slopes empty means the paper's slopes.
  std::optional<bool> alibi;
  std::optional<std::vector<double>> alibi_slopes;
  // Sliding window [left, right], -1 unbounded.
  std::optional<std::pair<int64_t, int64_t>> window;
  std::optional<double> softcap;
  // Sink logits: one for every head, or one per head.
  std::optional<std::vector<double>> sinks;

  // True when any of the settings above is given (they need scaled_dot or
  // dot): the settings table's "modern" column says which they are.
  bool any_modern() const;

  // Fields set in `over` replace those here.
  void merge(const RunSettings& over);
};

}  // namespace attn
