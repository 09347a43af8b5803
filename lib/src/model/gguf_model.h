// A model in a GGUF file (llama.cpp, Ollama, LM Studio) read through the
// architecture table: the file's `general.architecture` names a row (as
// llama.cpp's converter names them: llama, qwen2, gemma2, command-r,
// deepseek2, ...), its metadata ({arch}.block_count, .embedding_length,
// .attention.head_count_kv, .rope.freq_base, ...) becomes the config.json
// fields the row reads, with llama.cpp's defaults where a key is absent,
// and its tensors (token_embd, blk.N.attn_q, blk.N.ffn_up_exps, ...) are
// presented under the names the row gives them, the converter's changes
// undone where attn must see the original (experts stacked in one tensor,
// GPT-2's transposed matrices, DeepSeek's split kv_b) or kept and followed
// where they change nothing but the layout (llama's Q/K rows permuted for
// interleaved RoPE, Gemma's norms stored as 1 + w).
#pragma once

#include <memory>
#include <string>

#include "attn/file_io.h"
#include "attn/json.h"
#include "model/model_config.h"
#include "model/tensor_source.h"

namespace attn {
class GgufFile;
}

namespace attn::model {

// Whether `path` is a GGUF file: its extension, or its magic.
bool is_gguf(const std::string& path);

struct GgufModel {
  std::string model_type;  // the row
  json::Value config;      // config.json's fields, from the metadata
  std::string place;       // "m.gguf (metadata)", for messages
  // After the row has read `config`: what the file's layout changes (the
  // RoPE layout of permuted rows, norms stored whole, ...), and the
  // tensors under the row's names.
  void (*adjust)(ModelConfig& config) = nullptr;
  std::shared_ptr<const void> file;  // the open file, for the source
};

// Opens the file and reads its metadata (an input error naming the key for
// an architecture attn does not read, or a key out of range).
GgufModel open_gguf_model(const std::string& path, int64_t max_stream_bytes);
// The same for a file already open (a blob of a store), named by its path.
GgufModel open_gguf_model(const OpenedFile& file, int64_t max_stream_bytes);

// The row (model_type) that reads a GGUF file's general.architecture, or ""
// when attn reads none.
std::string gguf_model_type(const GgufFile& file);

// The tensors of an open GGUF model under the names `config` gives them.
std::unique_ptr<detail::TensorSource> gguf_source(const GgufModel& g, const ModelConfig& config,
                                                  int64_t max_bytes, int64_t max_elements);

}  // namespace attn::model
