// Ollama's store: a name's manifest (manifests/HOST/NAMESPACE/MODEL/TAG, a
// JSON object whose "layers" name blobs by digest) and its model layer's
// blob (blobs/sha256-HEX, a GGUF file), found as Ollama finds them: the
// name parsed and checked as types/model/name.go does (ParseName,
// IsFullyQualified, Filepath, DisplayShortest), the manifest read as
// manifest/manifest.go writes it, the blob named as manifest/paths.go
// names it, the last model layer taken as server/images.go's GetModel
// takes it.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "attn/error.h"
#include "attn/json.h"
#include "model/model_store.h"
#include "model/store_internal.h"

namespace attn::model {

namespace store {

namespace {

constexpr const char* kDefaultHost = "registry.ollama.ai";
constexpr const char* kDefaultNamespace = "library";
constexpr const char* kDefaultTag = "latest";
constexpr const char* kModelLayer = "application/vnd.ollama.image.model";
// Ollama's manifests are a few kilobytes (a safetensors model's, with a
// layer per tensor, some hundreds).
constexpr int64_t kMaxManifestBytes = int64_t{1} << 24;

enum Kind { kHost, kNamespace, kModel, kTag };
const char* const kKindNames[] = {"host", "namespace", "model", "tag"};
const char* const kKindRules[] = {
    "1 to 350 letters, digits, '_', '-', '.' and ':', the first a letter, a digit or '_'",
    "1 to 80 letters, digits, '_' and '-', the first a letter, a digit or '_'",
    "1 to 80 letters, digits, '_', '-' and '.', the first a letter, a digit or '_'",
    "1 to 80 letters, digits, '_', '-' and '.', the first a letter, a digit or '_'"};

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "sha256:" (or "sha256-", the blob's own spelling) and 64 hex digits,
// as manifest/paths.go's BlobsPath accepts.
bool sha256_digest(const std::string& d) {
  if (d.size() != 71 || d.compare(0, 6, "sha256") != 0 || (d[6] != ':' && d[6] != '-')) {
    return false;
  }
  for (size_t i = 7; i < d.size(); ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(d[i]))) return false;
  }
  return true;
}

}  // namespace

bool valid_ollama_part(int kind, const std::string& s) {
  const size_t max = kind == kHost ? 350 : 80;
  if (s.empty() || s.size() > max || !word_byte(static_cast<unsigned char>(s[0]))) return false;
  for (size_t i = 1; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool ok =
        word_byte(c) || c == '-' || (c == '.' && kind != kNamespace) || (c == ':' && kind == kHost);
    if (!ok) return false;
  }
  return true;
}

std::string OllamaName::manifest() const {
  return "manifests/" + host + "/" + ns + "/" + model + "/" + tag;
}

std::string OllamaName::shortest() const {
  auto same = [](const std::string& a, const char* b) {
    const std::string s(b);
    if (a.size() != s.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != s[i]) return false;
    }
    return true;
  };
  std::string s = "ollama:";
  if (!same(host, kDefaultHost)) {
    s += host + "/" + ns + "/";
  } else if (!same(ns, kDefaultNamespace)) {
    s += ns + "/";
  }
  return s + model + ":" + tag;
}

OllamaName parse_ollama_name(const std::string& given, const std::string& place) {
  if (given.empty()) {
    throw_input(place,
                "names no model; write ollama:NAME or ollama:NAME:TAG (attn models lists them)");
  }
  // As ParseNameBare: the tag after the last ':' past the last '/', then
  // the model, the namespace and the host before the last '/' each. A part
  // a separator promised but left empty ("a//b", ":tag") stays empty and
  // is refused; a part not given takes Ollama's default.
  std::string parts[4];
  bool promised[4] = {};
  std::string s = given;
  auto cut = [&](char sep, Kind kind) {
    const size_t at = s.rfind(sep);
    if (at == std::string::npos) return false;
    parts[kind] = s.substr(at + 1);
    promised[kind] = true;
    s = s.substr(0, at);
    return true;
  };
  const size_t colon = s.rfind(':'), slash = s.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) cut(':', kTag);
  // What is left before the last cut is the next part (empty after "/b").
  auto rest = [&](Kind kind) {
    parts[kind] = s;
    promised[kind] = true;
  };
  if (!cut('/', kModel)) {
    rest(kModel);
  } else if (!cut('/', kNamespace)) {
    rest(kNamespace);
  } else {
    rest(kHost);
    // A scheme (https://) is not part of the host, as ParseNameBare cuts it.
    if (const size_t sep = parts[kHost].find("://"); sep != std::string::npos) {
      parts[kHost] = parts[kHost].substr(sep + 3);
    }
  }
  const char* defaults[] = {kDefaultHost, kDefaultNamespace, nullptr, kDefaultTag};
  for (int k = kHost; k <= kTag; ++k) {
    if (parts[k].empty() && !promised[k] && defaults[k]) parts[k] = defaults[k];
  }
  if (parts[kHost].find('/') != std::string::npos) {
    throw_input(place, "has more parts than Ollama's names (HOST/NAMESPACE/MODEL:TAG)");
  }
  for (int k = kHost; k <= kTag; ++k) {
    if (parts[k].empty()) throw_input(place, std::string("the ") + kKindNames[k] + " is empty");
    if (!valid_ollama_part(k, parts[k])) {
      throw_input(place, std::string("the ") + kKindNames[k] + " \"" + message_text(parts[k]) +
                             "\" is not one Ollama accepts (" + kKindRules[k] + ")");
    }
  }
  return OllamaName{parts[kHost], parts[kNamespace], parts[kModel], parts[kTag]};
}

OllamaModel ollama_model_of(const OpenedFile& store, const OpenedFile& manifest,
                            const std::string& name) {
  const std::string& where = manifest.path();
  const int64_t size = file_size(manifest);
  if (size > kMaxManifestBytes) {
    throw_input(where, std::to_string(size) + " bytes, more than attn reads of a manifest (" +
                           std::to_string(kMaxManifestBytes) + ")");
  }
  const json::Value m = json::parse(read_file(manifest, {}, kMaxManifestBytes), where);
  const json::Value* layers = m.is_object() ? m.find("layers") : nullptr;
  if (!layers || !layers->is_array()) throw_input(where, "has no \"layers\" array");
  if (layers->packed() && layers->size() > 0) {
    throw_input(where, "layers[0]: expected an object, got " + json::describe(layers->element(0)));
  }
  // The last model layer, as GetModel takes it.
  const json::Value* model = nullptr;
  size_t model_at = 0;
  for (size_t i = 0; i < layers->items().size(); ++i) {
    const json::Value& layer = layers->items()[i];
    if (!layer.is_object()) {
      throw_input(where, "layers[" + std::to_string(i) + "]: expected an object, got " +
                             json::describe(layer));
    }
    const json::Value* type = layer.find("mediaType");
    if (type && type->is_string() && type->as_string() == kModelLayer) {
      model = &layer;
      model_at = i;
    }
  }
  if (!model) {
    throw_input(where, std::string("has no model layer (mediaType ") + kModelLayer +
                           "), so no GGUF file for attn to read");
  }
  const std::string at = "layers[" + std::to_string(model_at) + "]";
  const json::Value* digest = model->find("digest");
  if (!digest || !digest->is_string() || !sha256_digest(digest->as_string())) {
    throw_input(where, at + ".digest: " + (digest ? json::describe(*digest) : "none") +
                           " is not sha256: and 64 hex digits");
  }
  const json::Value* bytes = model->find("size");
  const double want = bytes && bytes->is_number() ? bytes->as_number() : -1;
  if (!(want >= 0 && want <= 9007199254740992.0 && std::floor(want) == want)) {
    throw_input(where, at + ".size: expected the layer's size in bytes, got " +
                           (bytes ? json::describe(*bytes) : "none"));
  }
  const std::string rel = "blobs/sha256-" + digest->as_string().substr(7);
  OllamaModel out;
  out.blob_path = join_path(store.path(), rel);
  out.blob = open_in(store, rel, Want::kFile);
  if (!out.blob) {
    throw_file(out.blob_path, "cannot open: No such file or directory (the model layer of " +
                                  message_text(name) + "'s manifest " + where + ")");
  }
  const int64_t got = file_size(*out.blob);
  if (got != static_cast<int64_t>(want)) {
    throw_input(out.blob_path, "holds " + std::to_string(got) + " bytes, but the manifest " +
                                   where + " gives the model layer " +
                                   std::to_string(static_cast<int64_t>(want)) +
                                   " (a pull or copy that did not finish?)");
  }
  return out;
}

std::vector<OllamaManifest> ollama_manifests(const OpenedFile& store) {
  std::vector<OllamaManifest> out;
  // Ollama's Glob of manifests/*/*/*/*: a folder per host, namespace and
  // model, a file per tag. What cannot be opened, or is named as Ollama
  // never names, is skipped as Ollama skips it.
  auto folder = [&store](const std::string& rel) -> std::optional<OpenedFile> {
    try {
      return open_in(store, rel, Want::kDirectory);
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  const std::optional<OpenedFile> root = folder("manifests");
  if (!root) return out;
  for (const std::string& host : folder_names(*root)) {
    if (!valid_ollama_part(kHost, host)) continue;
    const std::string h = "manifests/" + host;
    const std::optional<OpenedFile> hd = folder(h);
    if (!hd) continue;
    for (const std::string& ns : folder_names(*hd)) {
      if (!valid_ollama_part(kNamespace, ns)) continue;
      const std::optional<OpenedFile> nd = folder(h + "/" + ns);
      if (!nd) continue;
      for (const std::string& model : folder_names(*nd)) {
        if (!valid_ollama_part(kModel, model)) continue;
        const std::string md = h + "/" + ns + "/" + model;
        const std::optional<OpenedFile> mdir = folder(md);
        if (!mdir) continue;
        for (const std::string& tag : folder_names(*mdir)) {
          struct stat st {};
          if (!valid_ollama_part(kTag, tag)) continue;
          if (::fstatat(mdir->fd(), tag.c_str(), &st, 0) == 0 && S_ISDIR(st.st_mode)) continue;
          out.push_back({OllamaName{host, ns, model, tag}, md + "/" + tag});
        }
      }
    }
  }
  return out;
}

}  // namespace store

namespace {

bool same_model(const store::OllamaName& a, const store::OllamaName& b) {
  auto eq = [](const std::string& x, const std::string& y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](char p, char q) {
             return std::tolower(static_cast<unsigned char>(p)) ==
                    std::tolower(static_cast<unsigned char>(q));
           });
  };
  return eq(a.host, b.host) && eq(a.ns, b.ns) && eq(a.model, b.model);
}

}  // namespace

StoreModel find_ollama_model(const std::string& name, const StoreRoots& roots) {
  const std::string place = message_text(name);
  const store::OllamaName n = store::parse_ollama_name(name.substr(7), place);
  std::vector<std::string> there, names, other_tags;
  for (const std::string& root : roots.ollama) {
    const std::optional<OpenedFile> folder = store::open_folder(root);
    if (!folder) continue;
    there.push_back(root);
    if (const std::optional<OpenedFile> m =
            store::open_in(*folder, n.manifest(), store::Want::kFile)) {
      store::OllamaModel found = store::ollama_model_of(*folder, *m, name);
      StoreModel s(name, found.blob_path);
      s.blob_ = std::move(found.blob);
      return s;
    }
    for (const store::OllamaManifest& e : store::ollama_manifests(*folder)) {
      names.push_back(e.name.shortest());
      // The same model under another tag is the likeliest meaning
      // ("llama3.2" for the llama3.2:1b pulled).
      if (same_model(e.name, n)) other_tags.push_back(names.back());
    }
  }
  auto joined = [](const std::vector<std::string>& paths) {
    std::string s;
    for (size_t i = 0; i < paths.size(); ++i) s += (i ? " or " : "") + paths[i];
    return s;
  };
  if (there.empty()) {
    if (roots.ollama_from_env) {
      throw_file(place, "no Ollama store at " + roots.ollama.front() + " (OLLAMA_MODELS)");
    }
    throw_file(place, "no Ollama store at " + joined(roots.ollama) +
                          "; set OLLAMA_MODELS to the folder Ollama keeps its models in");
  }
  std::vector<std::string> near = other_tags;
  if (near.size() > 3) near.resize(3);
  for (const std::string& s : store::near_names(n.shortest(), names)) {
    if (near.size() < 3 && std::find(near.begin(), near.end(), s) == near.end()) near.push_back(s);
  }
  throw_file(place, "not in the Ollama store " + joined(there) + " (attn models lists its models)" +
                        store::near_text(near));
}

}  // namespace attn::model
