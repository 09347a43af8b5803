// What the two stores' finders and the listing share: opening a store's
// folder and the files beneath it, listing a folder, and each store's
// names, manifests and snapshots as data. Private to model_store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/file_io.h"
#include "model/model_store.h"

namespace attn::model::store {

// A store's folder open for reading (and for opening beneath it), or
// nullopt when nothing is there; what cannot be opened otherwise
// (permissions) is a file error naming it.
std::optional<OpenedFile> open_folder(const std::string& path);

// "dir/rel", or rel when dir is "" or ".".
std::string join_path(const std::string& dir, const std::string& rel);

enum class Want { kFile, kDirectory };

// `rel` beneath `folder` (its path in messages: folder.path()/rel), opened
// in one step without leaving the folder, and checked to be what is
// wanted: nullopt when nothing is there (a missing file, or a file where a
// directory was on the way); an input error for a link out of the folder,
// a loop of links, or something else than wanted (a FIFO, a device, a
// directory for a file); a file error for other failures.
std::optional<OpenedFile> open_in(const OpenedFile& folder, const std::string& rel, Want want);

// The names in a folder (open_in's or open_folder's), sorted, without "."
// and ".."; none when it cannot be read.
std::vector<std::string> folder_names(const OpenedFile& folder);

// A regular file's size (fstat).
int64_t file_size(const OpenedFile& file);

// The names among `names` near `word` (closest_name's sense of near), at
// most three, the nearest first.
std::vector<std::string> near_names(const std::string& word, std::vector<std::string> names);

// "; did you mean 'a'?", "; did you mean 'a', 'b' or 'c'?", or "" for none.
std::string near_text(const std::vector<std::string>& near);

// Ollama: a name's four parts as Ollama's ParseName fills them
// (registry.ollama.ai, library, latest).
struct OllamaName {
  std::string host, ns, model, tag;
  // "manifests/HOST/NAMESPACE/MODEL/TAG", as Name.Filepath.
  std::string manifest() const;
  // "ollama:" and Ollama's DisplayShortest: MODEL:TAG, NAMESPACE/MODEL:TAG
  // or HOST/NAMESPACE/MODEL:TAG.
  std::string shortest() const;
};

// The name after "ollama:", parsed and checked as Ollama does; an input
// error at `place` naming the part that is not one Ollama accepts.
OllamaName parse_ollama_name(const std::string& name, const std::string& place);
// Whether a part is one Ollama accepts (`kind` 0 host, 1 namespace, 2
// model, 3 tag).
bool valid_ollama_part(int kind, const std::string& part);

// What a manifest gives for the model: the model layer's blob, opened and
// checked, or the reason it cannot. `manifest` is open beneath `store`.
struct OllamaModel {
  std::string blob_path;
  std::optional<OpenedFile> blob;
};
OllamaModel ollama_model_of(const OpenedFile& store, const OpenedFile& manifest,
                            const std::string& name);

// Every model name in an Ollama store's manifests (Ollama's
// manifests/*/*/*/*, its names checked as it checks them), with the
// manifest's path beneath the store.
struct OllamaManifest {
  OllamaName name;
  std::string rel;
};
std::vector<OllamaManifest> ollama_manifests(const OpenedFile& store);

// The hub: "models--ORG--NAME" and back (huggingface_hub's repo_folder_name).
std::string hf_folder_of(const std::string& repo_id);
// The repository id of a folder's name, or "" when it is not a model
// repository's folder with an id the hub accepts.
std::string hf_repo_of_folder(const std::string& folder);
// An input error at `place` when `repo_id` is not one the hub accepts
// (huggingface_hub's validate_repo_id).
void check_hf_repo_id(const std::string& repo_id, const std::string& place);

// The refs of a repository folder: (ref, commit) for each file under refs/
// ("main", "refs/pr/1") that holds a commit hash, sorted by ref.
std::vector<std::pair<std::string, std::string>> hf_refs(const OpenedFile& repo);
// Whether s is a commit hash as the hub writes one (40 lowercase hex digits).
bool is_commit_hash(const std::string& s);

}  // namespace attn::model::store
