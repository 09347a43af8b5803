// Where the stores are, the opening of their files beneath them, and the
// tokenizer of a --checkpoint that may name a store's model.
#include "model/model_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "attn/error.h"
#include "base/names.h"
#include "base/path.h"
#include "io/gguf.h"
#include "io/open_beneath.h"
#include "model/gguf_model.h"
#include "model/store_internal.h"

namespace attn::model {

namespace store {

std::string join_path(const std::string& dir, const std::string& rel) {
  return dir == "." ? rel : path::join(dir, rel);
}

std::optional<OpenedFile> open_folder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return std::nullopt;
    throw_file(path, std::string("cannot open: ") + std::strerror(err));
  }
  return OpenedFile(fd, path);
}

std::optional<OpenedFile> open_in(const OpenedFile& folder, const std::string& rel, Want want) {
  const std::string full = join_path(folder.path(), rel);
  const detail::BeneathFile f = detail::open_beneath(folder.fd(), rel);
  if (f.fd < 0) {
    switch (f.error) {
      case ENOENT:
      case ENOTDIR:
        return std::nullopt;
      case EXDEV:
        throw_input(full, "leads out of " + folder.path() +
                              " through a symbolic link; attn reads a store's files inside it");
      case ELOOP:
        if (f.no_links) {
          throw_input(full,
                      "passes through a symbolic link, which attn follows in a store only where "
                      "the kernel has openat2 (Linux 5.6)");
        }
        throw_input(full, "is a loop of symbolic links");
      default:
        throw_file(full, std::string("cannot open: ") + std::strerror(f.error));
    }
  }
  OpenedFile file(f.fd, full);
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) {
    throw_file(full, std::string("cannot read: ") + std::strerror(errno));
  }
  if (want == Want::kFile && !S_ISREG(st.st_mode)) {
    throw_input(full, "is " + file_kind(st.st_mode) + ", not a regular file");
  }
  if (want == Want::kDirectory && !S_ISDIR(st.st_mode)) {
    throw_input(full, "is " + file_kind(st.st_mode) + ", not a directory");
  }
  return file;
}

std::vector<std::string> folder_names(const OpenedFile& folder) {
  std::vector<std::string> names;
  // A descriptor of its own: readdir moves the one it reads.
  const int fd = ::openat(folder.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::fdopendir(fd), ::closedir);
  if (!dir) {
    ::close(fd);
    return names;
  }
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

int64_t file_size(const OpenedFile& file) {
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) {
    throw_file(file.path(), std::string("cannot read: ") + std::strerror(errno));
  }
  return static_cast<int64_t>(st.st_size);
}

std::vector<std::string> near_names(const std::string& word, std::vector<std::string> names) {
  std::vector<std::string> near;
  while (near.size() < 3) {
    const std::string n = closest_name(word, names);
    if (n.empty()) break;
    near.push_back(n);
    names.erase(std::find(names.begin(), names.end(), n));
  }
  return near;
}

std::string near_text(const std::vector<std::string>& near) {
  if (near.empty()) return "";
  std::string s = "; did you mean ";
  for (size_t i = 0; i < near.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == near.size() ? " or " : ", ") + ("'" + message_text(near[i]) + "'");
  }
  return s + "?";
}

}  // namespace store

namespace {

// Ollama's envconfig.Var: spaces, then quotes, trimmed from both ends.
std::string ollama_var(std::string v) {
  auto trim = [&v](const char* chars) {
    const size_t b = v.find_first_not_of(chars);
    v = b == std::string::npos ? std::string() : v.substr(b, v.find_last_not_of(chars) - b + 1);
  };
  trim(" \t\n\r\v\f");
  trim("\"'");
  return v;
}

}  // namespace

StoreRoots store_roots(const GetEnv& getenv, const std::string& service_store) {
  auto var = [&getenv](const char* key) {
    const char* v = getenv(key);
    return std::string(v ? v : "");
  };
  const std::string home = var("HOME");
  // Python's os.path.expanduser, for the hub's variables.
  auto expand = [&home](const std::string& p) {
    if (!home.empty() && (p == "~" || p.rfind("~/", 0) == 0)) return home + p.substr(1);
    return p;
  };
  StoreRoots r;
  if (const std::string m = ollama_var(var("OLLAMA_MODELS")); !m.empty()) {
    r.ollama = {m};
    r.ollama_from_env = true;
  } else {
    if (!home.empty()) r.ollama.push_back(store::join_path(home, ".ollama/models"));
    r.ollama.push_back(service_store);
  }
  for (const char* key : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    if (const std::string v = var(key); !v.empty()) {
      r.hf = expand(v);
      r.hf_from = key;
      return r;
    }
  }
  if (const std::string v = var("HF_HOME"); !v.empty()) {
    r.hf = store::join_path(expand(v), "hub");
    r.hf_from = "HF_HOME";
  } else if (const std::string x = var("XDG_CACHE_HOME"); !x.empty()) {
    r.hf = store::join_path(expand(x), "huggingface/hub");
    r.hf_from = "XDG_CACHE_HOME";
  } else if (!home.empty()) {
    r.hf = store::join_path(home, ".cache/huggingface/hub");
  }
  return r;
}

StoreRoots store_roots() {
  return store_roots([](const char* key) { return static_cast<const char*>(std::getenv(key)); });
}

bool is_store_name(std::string_view checkpoint) {
  return checkpoint.rfind("ollama:", 0) == 0 || checkpoint.rfind("hf:", 0) == 0;
}

const OpenedFile& StoreModel::blob() const {
  if (!blob_) throw_internal("model store: " + name_ + " is a snapshot, not a GGUF blob");
  return *blob_;
}

std::optional<OpenedFile> StoreModel::open(const std::string& file) const {
  if (!folder_) throw_internal("model store: " + name_ + " is a GGUF blob, not a snapshot");
  // Named folder/snapshots/COMMIT/FILE: the snapshot's file, where a user
  // looks for it.
  return store::open_in(*folder_, snapshot_ + "/" + file, store::Want::kFile);
}

StoreModel find_store_model(const std::string& name, const StoreRoots& roots) {
  if (name.rfind("ollama:", 0) == 0) return find_ollama_model(name, roots);
  if (name.rfind("hf:", 0) == 0) return find_hf_model(name, roots);
  throw_internal("model store: " + name + " names no store");
}

namespace {

std::optional<Tokenizer> snapshot_tokenizer(const StoreModel& m) {
  const std::optional<OpenedFile> f = m.open("tokenizer.json");
  if (!f) return std::nullopt;
  const TokenizerLimits limits;
  const int64_t size = store::file_size(*f);
  // Tokenizer::load's limit, told from the size before anything is read.
  if (size > limits.max_file_bytes) {
    throw_input(f->path(), std::to_string(size) + " bytes, more than attn reads of a " +
                               "tokenizer.json (" + std::to_string(limits.max_file_bytes) + ")");
  }
  return Tokenizer::from_json(read_file(*f, {}, limits.max_file_bytes), f->path(), limits);
}

}  // namespace

bool checkpoint_is_gguf(const std::string& checkpoint) {
  return checkpoint.rfind("ollama:", 0) == 0 || is_gguf(checkpoint);
}

Tokenizer checkpoint_tokenizer(const std::string& checkpoint) {
  if (!is_store_name(checkpoint)) return Tokenizer::load(checkpoint);
  const StoreModel m = find_store_model(checkpoint);
  if (m.gguf()) return Tokenizer::load(m.path());
  std::optional<Tokenizer> t = snapshot_tokenizer(m);
  if (!t) throw_file(m.path(), "no tokenizer.json in this directory");
  return std::move(*t);
}

std::optional<Tokenizer> checkpoint_tokenizer_if_any(const std::string& checkpoint) {
  if (is_store_name(checkpoint)) {
    const StoreModel m = find_store_model(checkpoint);
    if (m.gguf()) return Tokenizer::load_if_any(m.path());
    return snapshot_tokenizer(m);
  }
  // A GGUF converted without tokenizer files has none ("none"): its rows
  // are labelled by id.
  if (is_gguf(checkpoint)) return Tokenizer::load_if_any(checkpoint);
  const std::string tj = store::join_path(checkpoint, "tokenizer.json");
  if (path::is_regular_file(tj)) return Tokenizer::load(tj);
  return std::nullopt;
}

}  // namespace attn::model
