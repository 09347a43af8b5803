#include "commands/input_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <memory>

#include "attn/error.h"
#include "attn/heatmap.h"
#include "attn/matrix_file.h"
#include "base/path.h"
#include "model/model_store.h"

namespace attn {

namespace {

using path::join;
std::string parent(const std::string& p) { return path::directory_of(p); }

}  // namespace

void InputFiles::add_file(const std::string& path) {
  if (path.empty() || path == "-") return;
  File f;
  f.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    f.exists = true;
    f.dev = st.st_dev;
    f.ino = st.st_ino;
  }
  files_.push_back(std::move(f));
}

void InputFiles::add(const std::string& spec) {
  if (spec.empty() || spec == "-") return;
  const TensorReference ref = split_tensor_reference(spec);
  add_file(ref.path);
}

void InputFiles::add_checkpoint(const std::string& path) {
  if (path.empty()) return;
  if (model::is_store_name(path)) {
    // The files the name stands for, by their paths in the store: an output
    // onto one of them is refused as onto any input.
    try {
      const model::StoreModel m = model::find_store_model(path);
      if (m.gguf()) {
        add_file(m.path());
      } else {
        add_checkpoint(m.path());
      }
    } catch (const Error&) {
      // Reading the model reports it.
    }
    return;
  }
  const path::Kind kind = path::kind_of(path);
  if (kind == path::Kind::kNone) return;  // reading it reports that
  if (kind != path::Kind::kDirectory) {
    add_file(path);
    add_file(join(parent(path), "config.json"));
    return;
  }
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(path.c_str()), ::closedir);
  if (!dir) return;
  // Only regular files: a FIFO or device in the directory is not opened.
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string p = join(path, name);
    if (path::is_regular_file(p)) add_file(p);
  }
}

void InputFiles::add_font(const std::shared_ptr<const Font>& font) {
  if (font && font != builtin_font()) add_file(font_name(*font));
}

void InputFiles::refuse_output(const std::string& out, const std::string& flag) const {
  if (out.empty() || out == "-") return;
  struct stat st {};
  const bool exists = ::stat(out.c_str(), &st) == 0;
  for (const File& f : files_) {
    if (f.path == out || (exists && f.exists && f.dev == st.st_dev && f.ino == st.st_ino)) {
      throw_usage(flag + " " + out + ": refusing to overwrite the input file " + f.path);
    }
  }
}

}  // namespace attn
