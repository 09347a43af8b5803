// Private steps of build_problem(), split by topic.
#pragma once

#include <string>
#include <vector>

#include "attn/document.h"
#include "attn/problem.h"

namespace attn::detail {

// "X has shape [3][4]"
std::string with_shape(const std::string& name, const Shape& shape);

// "1 query", "3 queries"
std::string count(int64_t n, const char* one, const char* many);

// Parameters: layout, per-head form, which variant uses which; sets the
// widths d_q, d_k, d_v, d_out of the problem.
void resolve_params(const InputDocument& doc, Problem& p);

// Masks: shapes against [batch][heads][len_q][len_k], broadcasting, the keep
// convention, d2l valid_lens forms.
void resolve_masks(const InputDocument& doc, Problem& p);

// The settings of current models' attention (kv_heads, rope, alibi,
// window, softcap, sinks): checked against the variant and the head count.
// Runs after the inputs (which fix heads) and before the parameters (which
// need kv_heads).
void resolve_modern(const InputDocument& doc, Problem& p);

// q_offset and k_offset (or rope's older names), and causal bottom_right:
// where the queries and keys sit; sets the masks' diagonal. Before
// resolve_modern, whose RoPE takes the same positions.
void resolve_positions(const InputDocument& doc, Problem& p);

// RoPE's rotated width against the head width (known once the parameters
// are resolved).
void resolve_rope_width(const InputDocument& doc, Problem& p);

// The ALiBi paper's slopes for n heads.
std::vector<double> alibi_paper_slopes(int64_t n);

}  // namespace attn::detail
