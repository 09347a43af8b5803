// The names of the trace steps: one row per StepId, in the enumeration's
// order. JSON traces write these names, and tests and tools find steps by
// them; the engine and the renderers compare the enumeration.
#include <iterator>

#include "attn/observer.h"

namespace attn {

namespace {

struct StepName {
  StepId id;
  std::string_view name;
};

constexpr StepName kStepNames[] = {
    {StepId::kInputX, "input_X"},
    {StepId::kInputY, "input_Y"},
    {StepId::kInputQ, "input_Q"},
    {StepId::kInputK, "input_K"},
    {StepId::kInputV, "input_V"},
    {StepId::kSources, "sources"},
    {StepId::kProjectionQ, "projection_Q"},
    {StepId::kProjectionK, "projection_K"},
    {StepId::kProjectionV, "projection_V"},
    {StepId::kHeadQ, "head_q"},
    {StepId::kHeadK, "head_k"},
    {StepId::kHeadV, "head_v"},
    {StepId::kQkNormQ, "qk_norm_q"},
    {StepId::kQkNormK, "qk_norm_k"},
    {StepId::kRopeAngles, "rope_angles"},
    {StepId::kRopeCos, "rope_cos"},
    {StepId::kRopeSin, "rope_sin"},
    {StepId::kRopeQ, "rope_q"},
    {StepId::kRopeK, "rope_k"},
    {StepId::kCosineQ, "cosine_q"},
    {StepId::kCosineK, "cosine_k"},
    {StepId::kAdditiveQ, "additive_q"},
    {StepId::kAdditiveK, "additive_k"},
    {StepId::kSingleLayerPre, "single_layer_pre"},
    {StepId::kBiInputDot, "bi_input_dot"},
    {StepId::kBiMemoryDot, "bi_memory_dot"},
    {StepId::kBiCrossDot, "bi_cross_dot"},
    {StepId::kScores, "scores"},
    {StepId::kScaled, "scaled"},
    {StepId::kSoftcapRaw, "softcap_raw"},
    {StepId::kSoftcap, "softcap"},
    {StepId::kBiased, "biased"},
    {StepId::kAlibiBias, "alibi_bias"},
    {StepId::kAlibi, "alibi"},
    {StepId::kMasked, "masked"},
    {StepId::kRowMax, "row_max"},
    {StepId::kExp, "exp"},
    {StepId::kRowSum, "row_sum"},
    {StepId::kSinkShare, "sink_share"},
    {StepId::kWeights, "weights"},
    {StepId::kDropout, "dropout"},
    {StepId::kWeightedSum, "weighted_sum"},
    {StepId::kOutputScaled, "output_scaled"},
    {StepId::kHeadOutput, "head_output"},
    {StepId::kConcat, "concat"},
    {StepId::kOutputProjection, "output_projection"},
    {StepId::kOutput, "output"},
    {StepId::kBiO1, "bi_o1"},
    {StepId::kBiRowMax, "bi_row_max"},
    {StepId::kBiW2, "bi_w2"},
    {StepId::kBiO2, "bi_o2"},
    {StepId::kSimilarityInput, "similarity_input"},
    {StepId::kSimilarityOutput, "similarity_output"},
    {StepId::kExpected, "expected"},
    {StepId::kExpectedReading, "expected_reading"},
    {StepId::kTokenIds, "token_ids"},
    {StepId::kEmbeddings, "embeddings"},
    {StepId::kHiddenIn, "hidden_in"},
    {StepId::kInputNorm, "input_norm"},
    {StepId::kCustom, "custom"},
};

// The table is indexed by the enumeration: a row out of place is a build error.
constexpr bool in_order() {
  for (size_t i = 0; i < std::size(kStepNames); ++i) {
    if (static_cast<size_t>(kStepNames[i].id) != i) return false;
  }
  return true;
}
static_assert(in_order(), "kStepNames must list every StepId in the enumeration's order");
static_assert(std::size(kStepNames) == static_cast<size_t>(StepId::kCustom) + 1,
              "kStepNames must list every StepId");

}  // namespace

std::string_view name(StepId id) { return kStepNames[static_cast<size_t>(id)].name; }

std::string_view name(const TraceStep& s) {
  return s.id == StepId::kCustom ? std::string_view(s.custom_name) : name(s.id);
}

const std::vector<StepId>& step_ids() {
  static const std::vector<StepId> ids = [] {
    std::vector<StepId> v;
    for (const StepName& s : kStepNames) v.push_back(s.id);
    return v;
  }();
  return ids;
}

std::optional<StepId> parse_step_id(std::string_view name) {
  for (const StepName& s : kStepNames) {
    if (s.name == name) return s.id;
  }
  return std::nullopt;
}

}  // namespace attn
