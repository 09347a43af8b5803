// How the files of a checkpoint directory are opened: by their paths, or,
// for a model in a store (model_store.h), beneath the store's folder, so
// that a symbolic link in it cannot lead the readers out. Private to the
// engine.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "attn/file_io.h"

namespace attn::detail {

// The file `name` of the directory, open; nullopt when it has none. Empty:
// the files are opened by their paths.
using OpenCheckpointFile = std::function<std::optional<OpenedFile>(const std::string& name)>;

}  // namespace attn::detail
