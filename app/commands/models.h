// `attn models`: the models on this machine, in Ollama's store and the
// Hugging Face hub's cache (model/model_store.h finds them), written as a
// table or as JSON.
#pragma once

#include <string>

#include "model/model_store.h"

namespace attn::detail {

// A line per model (name, architecture, whether attn reads it, parameters,
// quantization, size, path) under a header, then a line per model with a
// problem; for no models, one line saying where attn looked.
std::string models_table(const model::StoreListing& listing);

// An array of one object per model, a line each ([] for none).
std::string models_json(const model::StoreListing& listing);

// 1.24B, 494M, 27.5K, 999: three significant digits (parameters).
std::string count_text(int64_t n);
// 1.32 GB, 494 MB, 115 KB, 512 B: decimal units, as Ollama writes sizes.
std::string bytes_text(int64_t n);

}  // namespace attn::detail
