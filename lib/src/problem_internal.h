// Private steps of build_problem(), split by topic.
#pragma once

#include <string>

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

}  // namespace attn::detail
