// Ollama's store and the Hugging Face hub's cache laid out as those
// programs lay them out, in a temporary directory, from the committed tiny
// models: manifests naming blobs by digest, snapshots whose files are
// symbolic links into the repository's blobs/, refs holding commits.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn::test {

// temp_dir()/name, empty and created.
inline std::string fresh_dir(const std::string& name) {
  const std::filesystem::path p = std::filesystem::path(temp_dir()) / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// 64 hex digits that stand for the bytes' sha256 (attn names a blob by its
// digest and checks its size, never its hash).
inline std::string digest_hex(const std::string& bytes) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016zx", std::hash<std::string>{}(bytes));
  return std::string(buf) + buf + buf + buf;
}

// A manifest of Ollama's (schema 2) with a config layer and `layers`.
inline std::string ollama_manifest_text(const std::string& layers) {
  return "{\"schemaVersion\":2,\"mediaType\":\"application/"
         "vnd.docker.distribution.manifest.v2+json\",\"config\":{\"mediaType\":\"application/"
         "vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
         std::string(64, '0') + "\",\"size\":2},\"layers\":[" + layers + "]}";
}

// The model layer of a blob of `size` bytes.
inline std::string ollama_model_layer(const std::string& hex, int64_t size) {
  return "{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:" + hex +
         "\",\"size\":" + std::to_string(size) + "}";
}

// `gguf` copied into the store as its blob, and the manifest
// manifests/`name_path` (HOST/NAMESPACE/MODEL/TAG) naming it; the blob's path.
inline std::string add_ollama_model(const std::string& store, const std::string& name_path,
                                    const std::string& gguf) {
  const std::string bytes = read_text(gguf);
  const std::string hex = digest_hex(bytes);
  const std::string blob = store + "/blobs/sha256-" + hex;
  write_file(blob, bytes);
  write_file(store + "/manifests/" + name_path,
             ollama_manifest_text(ollama_model_layer(hex, static_cast<int64_t>(bytes.size()))));
  return blob;
}

// A snapshot of `repo_id` ("ORG/NAME") at `commit` in the hub's cache
// `cache`: each of `files` (paths in the source tree) a blob, linked from
// snapshots/COMMIT/ by its base name; refs/`ref` holds the commit unless
// `ref` is "". The snapshot's path.
inline std::string add_hf_snapshot(const std::string& cache, const std::string& repo_id,
                                   const std::string& commit, const std::vector<std::string>& files,
                                   const std::string& ref = "main") {
  std::string folder = "models--" + repo_id;
  folder.replace(folder.find('/'), 1, "--");
  const std::string repo = cache + "/" + folder;
  const std::string snapshot = repo + "/snapshots/" + commit;
  std::filesystem::create_directories(snapshot);
  for (const std::string& f : files) {
    const std::string bytes = read_text(f);
    const std::string hex = digest_hex(bytes);
    write_file(repo + "/blobs/" + hex, bytes);
    const std::string link = snapshot + "/" + std::filesystem::path(f).filename().string();
    std::filesystem::remove(link);
    std::filesystem::create_symlink("../../blobs/" + hex, link);
  }
  if (!ref.empty()) write_file(repo + "/refs/" + ref, commit);
  return snapshot;
}

}  // namespace attn::test
