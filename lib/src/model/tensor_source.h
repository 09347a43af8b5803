// Where a model's tensors come from: one interface over a checkpoint's
// files, whatever their format (safetensors files, one or sharded by an
// index; a GGUF file), so the architecture table and the forward pass ask
// for a tensor by name and get its shape, its cell type, its cells where
// they lie in the mapped file, or its values, without knowing the format.
// Private to the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/binary_array.h"
#include "attn/tensor.h"
#include "model/checkpoint_files.h"

namespace attn::detail {

class TensorSource {
 public:
  virtual ~TensorSource() = default;

  // Every tensor's name.
  virtual const std::vector<std::string>& names() const = 0;
  virtual bool contains(const std::string& name) const = 0;
  // The tensor whose name is `suffix` or ends in "." + suffix; nullopt
  // when none. Two candidates (a model holding two stacks) is an error.
  std::optional<std::string> find_suffix(const std::string& suffix) const;

  // Of a tensor that exists (contains()):
  virtual const Shape& shape(const std::string& name) const = 0;
  virtual ElementType type(const std::string& name) const = 0;
  // Its cells where they lie in the mapped file; with `whole` (all of it
  // is to be decoded) checked against the limits first.
  virtual BinaryArray view(const std::string& name, bool whole = true) const = 0;
  // Its values, checked finite.
  virtual Tensor<double> read(const std::string& name) const = 0;
  // Where it is, for --emit-pytorch.
  virtual TensorOrigin origin(const std::string& name) const = 0;
  // "model.safetensors:model.norm.weight", for messages.
  virtual std::string place(const std::string& name) const = 0;
  // The files, for descriptions.
  virtual std::string files() const = 0;
};

// The safetensors files of a checkpoint: a directory (model.safetensors,
// or shards named by model.safetensors.index.json) or one file. Each
// tensor read is held to max_bytes and max_elements. With `open`, `path`
// is a directory whose files it opens (a model in a store).
std::unique_ptr<TensorSource> open_safetensors(const std::string& path, int64_t max_bytes,
                                               int64_t max_elements,
                                               const OpenCheckpointFile& open = {});

// The shards model.safetensors.index.json (its text; `index` names it)
// names in its weight_map, each once, in the order first named: file names
// beside the index, never paths elsewhere or names with a NUL byte.
std::vector<std::string> shard_names(std::string_view text, const std::string& index);

}  // namespace attn::detail
