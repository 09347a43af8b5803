// Models where Ollama and the Hugging Face hub keep them on this machine,
// found offline as those programs find them: `ollama:NAME[:TAG]` is a
// manifest in Ollama's store whose model layer is a GGUF blob;
// `hf:ORG/NAME[@REVISION]` is a snapshot of the hub's cache, a
// transformers directory. Also every model the two stores hold, with what
// its headers say (attn models).
//
// A name never leads out of its store: its parts are checked as Ollama and
// huggingface_hub check them, a manifest's digest must be sha256, and every
// file is opened beneath the store's folder in one step (io/open_beneath.h:
// a "..", an absolute path or a symbolic link out is refused by the kernel)
// and read from the descriptor that was opened, never by its path again.
// Symbolic links inside the store (the hub's snapshots link to its blobs)
// are followed.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/file_io.h"
#include "attn/tokenizer.h"

namespace attn::model {

// Where Ollama's service keeps its store on Linux (its user's home).
constexpr const char* kOllamaServiceStore = "/usr/share/ollama/.ollama/models";

// Where the stores are.
struct StoreRoots {
  // Ollama's stores, searched in order: $OLLAMA_MODELS alone when it is
  // set, else ~/.ollama/models and then the service's store (Ollama itself
  // looks in one; the second is where the Linux service puts the models it
  // pulls).
  std::vector<std::string> ollama;
  bool ollama_from_env = false;
  // The hub's cache: $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else
  // $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
  // ~/.cache/huggingface/hub (huggingface_hub's constants.py). "" when
  // none can be found (no HOME).
  std::string hf;
  std::string hf_from;  // the variable it came from, "" for the default
};

// The roots from the environment as `getenv` gives it (an empty variable
// is an unset one; "~/" starts the home directory, as Python's expanduser),
// with `service_store` as the service's store (tests replace both).
using GetEnv = std::function<const char*(const char*)>;
StoreRoots store_roots(const GetEnv& getenv,
                       const std::string& service_store = kOllamaServiceStore);
// From this process's environment.
StoreRoots store_roots();

// Whether a --checkpoint names a model in a store ("ollama:..." or
// "hf:...") rather than a path.
bool is_store_name(std::string_view checkpoint);

// A model found in a store.
class StoreModel {
 public:
  const std::string& name() const { return name_; }  // as given: "ollama:llama3.2"
  // The GGUF blob, or the snapshot directory, as found (for messages and
  // for --emit-pytorch's program).
  const std::string& path() const { return path_; }
  bool gguf() const { return blob_.has_value(); }
  // The GGUF blob (gguf() only): a regular file of the manifest's size.
  const OpenedFile& blob() const;
  // A file of the snapshot (not gguf()), opened beneath the repository's
  // folder; nullopt when the snapshot has none. One that leads out of the
  // folder or is not a regular file is an input error naming it.
  std::optional<OpenedFile> open(const std::string& file) const;

 private:
  friend StoreModel find_ollama_model(const std::string&, const StoreRoots&);
  friend StoreModel find_hf_model(const std::string&, const StoreRoots&);
  StoreModel(std::string name, std::string path) : name_(std::move(name)), path_(std::move(path)) {}

  std::string name_, path_;
  std::optional<OpenedFile> blob_;    // Ollama's
  std::optional<OpenedFile> folder_;  // the hub's repository folder
  std::string snapshot_;              // "snapshots/COMMIT", in folder_
};

// The model a store name names. Throws attn::Error: kInput for a name
// Ollama or the hub would refuse, or a store whose files do not hold
// together (a manifest without a model layer, a digest that is not sha256,
// a blob of another size than the manifest's, a link out of the store);
// kFile for a store or a model that is not there (naming the near ones) or
// a file that cannot be opened.
StoreModel find_store_model(const std::string& name, const StoreRoots& roots = store_roots());
StoreModel find_ollama_model(const std::string& name, const StoreRoots& roots);
StoreModel find_hf_model(const std::string& name, const StoreRoots& roots);

// The tokenizer of a --checkpoint: for a path, Tokenizer::load of it; for a
// snapshot, its tokenizer.json (a file error when it has none); for a GGUF
// blob, what Tokenizer::load makes of the file.
Tokenizer checkpoint_tokenizer(const std::string& checkpoint);
// The same when there is one: nullopt for a directory or a snapshot without
// tokenizer.json, or a GGUF file (a path or a blob) that carries none
// (tokenizer.ggml.model absent, "none" or "no_vocab").
std::optional<Tokenizer> checkpoint_tokenizer_if_any(const std::string& checkpoint);

// Whether a --checkpoint is one GGUF file: a path that is one, or an
// Ollama name (whose model layer is one).
bool checkpoint_is_gguf(const std::string& checkpoint);

// One model of a store, as its headers describe it (nothing but headers is
// read: a GGUF file is mapped and its header parsed, a safetensors file's
// header is read).
struct StoreEntry {
  std::string name;   // as --checkpoint takes it: "ollama:llama3.2:1b", "hf:Qwen/Qwen2.5-0.5B"
  std::string store;  // "ollama" or "hf"
  std::string architecture;  // general.architecture, or config.json's model_type; "" unknown
  // attn has a row for the architecture and reads the tensors' types (a
  // run may still find something to refuse in the config).
  bool reads = false;
  int64_t parameters = -1;   // the tensors' cells; -1 unknown
  std::string size_label;    // general.size_label ("1B"), when the file has one
  std::string quantization;  // "Q4_K_M", "BF16", "fp8"; "" unknown
  int64_t bytes = -1;        // the weights' files on disk; -1 unknown
  std::string path;          // the blob or the snapshot (the manifest when no blob was found)
  std::string problem;       // why it cannot be read as it is, "" when nothing was found wrong
};

struct StoreListing {
  std::vector<StoreEntry> models;  // Ollama's by name, then the hub's by name
  // The folders looked in: which store, where, and whether it is there.
  struct Searched {
    std::string store, path;
    bool exists = false;
  };
  std::vector<Searched> searched;
};

StoreListing list_store_models(const StoreRoots& roots = store_roots());

}  // namespace attn::model
