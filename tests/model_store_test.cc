// Models by name in Ollama's store and the Hugging Face hub's cache
// (model/model_store.h): where the stores are, the names parsed as Ollama
// and huggingface_hub parse them, the files found beneath the stores and
// nothing outside them, and the listing of both stores. Each store is built
// in a temporary directory from the committed tiny models (store_util.h).
#include "model/model_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "attn/error.h"
#include "model/store_internal.h"
#include "store_util.h"
#include "test_util.h"

namespace attn {
namespace {

using model::StoreRoots;
using test::error_of;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kOther = "fedcba9876543210fedcba9876543210fedcba98";

StoreRoots roots_of(const std::map<std::string, std::string>& env,
                    const std::string& service = "/nonexistent/service") {
  return model::store_roots(
      [&env](const char* key) -> const char* {
        const auto it = env.find(key);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      service);
}

// Roots with the Ollama store `ollama` alone and the hub's cache `hf`.
StoreRoots roots(const std::string& ollama, const std::string& hf) {
  StoreRoots r;
  r.ollama = {ollama};
  r.ollama_from_env = true;
  r.hf = hf;
  r.hf_from = "HF_HUB_CACHE";
  return r;
}

std::string tiny(const std::string& rel) { return test::model(rel); }

std::string error_kind(ErrorKind k) {
  switch (k) {
    case ErrorKind::kInput:
      return "input";
    case ErrorKind::kFile:
      return "file";
    case ErrorKind::kUsage:
      return "usage";
    default:
      return "other";
  }
}

// "kind: message" of what finding `name` throws.
std::string failure(const std::string& name, const StoreRoots& r) {
  try {
    model::find_store_model(name, r);
  } catch (const Error& e) {
    return error_kind(e.kind()) + ": " + e.what();
  }
  return "";
}

TEST(StoreRoots, OllamaModelsAloneWhenSetElseHomeThenTheService) {
  StoreRoots r = roots_of({{"OLLAMA_MODELS", "/m"}, {"HOME", "/h"}});
  EXPECT_EQ(r.ollama, std::vector<std::string>{"/m"});
  EXPECT_TRUE(r.ollama_from_env);
  r = roots_of({{"HOME", "/h"}}, "/usr/share/ollama/.ollama/models");
  EXPECT_EQ(r.ollama,
            (std::vector<std::string>{"/h/.ollama/models", "/usr/share/ollama/.ollama/models"}));
  EXPECT_FALSE(r.ollama_from_env);
  // Ollama trims spaces and quotes (envconfig.Var); an empty one is unset.
  EXPECT_EQ(roots_of({{"OLLAMA_MODELS", " \"/q\" "}}).ollama, std::vector<std::string>{"/q"});
  EXPECT_EQ(roots_of({{"OLLAMA_MODELS", ""}, {"HOME", "/h"}}).ollama.front(), "/h/.ollama/models");
  EXPECT_EQ(model::kOllamaServiceStore, std::string("/usr/share/ollama/.ollama/models"));
}

TEST(StoreRoots, HubCacheFollowsHuggingfaceHubsPrecedence) {
  std::map<std::string, std::string> env = {{"HF_HUB_CACHE", "/a"},
                                            {"HUGGINGFACE_HUB_CACHE", "/b"},
                                            {"HF_HOME", "/c"},
                                            {"XDG_CACHE_HOME", "/d"},
                                            {"HOME", "/h"}};
  auto hf = [&env] {
    const StoreRoots r = roots_of(env);
    return r.hf + " " + r.hf_from;
  };
  EXPECT_EQ(hf(), "/a HF_HUB_CACHE");
  env.erase("HF_HUB_CACHE");
  EXPECT_EQ(hf(), "/b HUGGINGFACE_HUB_CACHE");
  env.erase("HUGGINGFACE_HUB_CACHE");
  EXPECT_EQ(hf(), "/c/hub HF_HOME");
  env.erase("HF_HOME");
  EXPECT_EQ(hf(), "/d/huggingface/hub XDG_CACHE_HOME");
  env.erase("XDG_CACHE_HOME");
  EXPECT_EQ(hf(), "/h/.cache/huggingface/hub ");
  env.erase("HOME");
  EXPECT_EQ(hf(), " ");
  // "~" is the home directory, as Python's expanduser makes it.
  EXPECT_EQ(roots_of({{"HF_HOME", "~/hf"}, {"HOME", "/h"}}).hf, "/h/hf/hub");
}

TEST(StoreNames, OnlyOllamaAndHfPrefixesNameStores) {
  EXPECT_TRUE(model::is_store_name("ollama:llama3.2"));
  EXPECT_TRUE(model::is_store_name("hf:Qwen/Qwen2.5-0.5B"));
  EXPECT_FALSE(model::is_store_name("data/models/tiny-llama"));
  EXPECT_FALSE(model::is_store_name("Ollama:x"));
  EXPECT_FALSE(model::is_store_name("./ollama:x"));
}

std::string manifest_of(const std::string& name) {
  return model::store::parse_ollama_name(name, "ollama:" + name).manifest();
}

TEST(OllamaNames, PartsAndDefaultsAsOllamaParsesThem) {
  EXPECT_EQ(manifest_of("llama3.2"), "manifests/registry.ollama.ai/library/llama3.2/latest");
  EXPECT_EQ(manifest_of("llama3.2:1b"), "manifests/registry.ollama.ai/library/llama3.2/1b");
  EXPECT_EQ(manifest_of("me/mine:v1"), "manifests/registry.ollama.ai/me/mine/v1");
  EXPECT_EQ(manifest_of("hf.co/org/repo:Q4_K_M"), "manifests/hf.co/org/repo/Q4_K_M");
  EXPECT_EQ(manifest_of("https://example.com:5000/ns/m"), "manifests/example.com:5000/ns/m/latest");
  // The tag is the part after a ':' past the last '/'.
  EXPECT_EQ(manifest_of("localhost:5000/ns/m"), "manifests/localhost:5000/ns/m/latest");
}

TEST(OllamaNames, ShortestDropsTheDefaultsAsOllamaDisplaysThem) {
  auto shortest = [](const std::string& n) {
    return model::store::parse_ollama_name(n, n).shortest();
  };
  EXPECT_EQ(shortest("llama3.2"), "ollama:llama3.2:latest");
  EXPECT_EQ(shortest("registry.ollama.ai/library/llama3.2:1b"), "ollama:llama3.2:1b");
  EXPECT_EQ(shortest("me/mine"), "ollama:me/mine:latest");
  EXPECT_EQ(shortest("hf.co/org/repo:Q8_0"), "ollama:hf.co/org/repo:Q8_0");
}

TEST(OllamaNames, NamesOllamaRefusesAreInputErrorsNamingThePart) {
  auto refused = [](const std::string& n) {
    return error_of([&] { model::store::parse_ollama_name(n, "ollama:" + n); });
  };
  EXPECT_EQ(refused("../x"),
            "ollama:../x: the namespace \"..\" is not one Ollama accepts (1 to 80 letters, "
            "digits, '_' and '-', the first a letter, a digit or '_')");
  EXPECT_EQ(refused("x/.."),
            "ollama:x/..: the model \"..\" is not one Ollama accepts (1 to 80 letters, digits, "
            "'_', '-' and '.', the first a letter, a digit or '_')");
  EXPECT_EQ(refused("/etc/passwd"), "ollama:/etc/passwd: the host is empty");
  EXPECT_EQ(refused("a//b"), "ollama:a//b: the namespace is empty");
  EXPECT_EQ(refused("m:"), "ollama:m:: the tag is empty");
  EXPECT_EQ(refused(":t"), "ollama::t: the model is empty");
  EXPECT_EQ(refused("a/b/c/d"),
            "ollama:a/b/c/d: has more parts than Ollama's names (HOST/NAMESPACE/MODEL:TAG)");
  EXPECT_EQ(refused("m:a.b/c"),
            "ollama:m:a.b/c: the namespace \"m:a.b\" is not one Ollama accepts (1 to 80 letters, "
            "digits, '_' and '-', the first a letter, a digit or '_')");
  EXPECT_EQ(refused(""),
            "ollama:: names no model; write ollama:NAME or ollama:NAME:TAG (attn models lists "
            "them)");
}

// Every string of up to 5 characters over the characters that matter for
// paths: the names Ollama and the hub accept never make a path part that
// is empty, "." or "..", or a manifest path of another depth; the others
// are input errors.
TEST(StoreNames, NoAcceptedNameMakesAPathOutOfItsStore) {
  const std::string alphabet = "a./:-_@";
  std::vector<std::string> words = {""};
  for (size_t from = 0, len = 1; len <= 5; ++len) {
    const size_t to = words.size();
    for (size_t i = from; i < to; ++i) {
      for (char c : alphabet) words.push_back(words[i] + c);
    }
    from = to;
  }
  auto parts_of = [](const std::string& path) {
    std::vector<std::string> parts;
    size_t from = 0;
    while (true) {
      const size_t slash = path.find('/', from);
      parts.push_back(path.substr(from, slash - from));
      if (slash == std::string::npos) return parts;
      from = slash + 1;
    }
  };
  auto safe = [](const std::string& part) {
    return !part.empty() && part != "." && part != ".." && part[0] != '.';
  };
  int accepted = 0;
  for (const std::string& w : words) {
    try {
      const std::string path = model::store::parse_ollama_name(w, w).manifest();
      const std::vector<std::string> parts = parts_of(path);
      ASSERT_EQ(parts.size(), 5u) << w << " -> " << path;
      for (const std::string& p : parts) ASSERT_TRUE(safe(p)) << w << " -> " << path;
      ++accepted;
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::kInput) << w;
    }
    const size_t at = w.find('@');
    const std::string id = w.substr(0, at);
    const std::string revision = at == std::string::npos ? "main" : w.substr(at + 1);
    try {
      model::store::check_hf_repo_id(id, w);
      const std::string folder = model::store::hf_folder_of(id);
      ASSERT_EQ(folder.find('/'), std::string::npos) << w;
      ASSERT_TRUE(safe(folder)) << w;
      ASSERT_EQ(model::store::hf_repo_of_folder(folder), id) << w;
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::kInput) << w;
    }
    const StoreRoots none = roots("/nonexistent/o", "/nonexistent/h");
    try {
      model::find_store_model("hf:a@" + revision, none);
    } catch (const Error& e) {
      // Refused as a name, or looked for (and not found) where it is safe.
      if (e.kind() == ErrorKind::kFile) {
        for (const std::string& p : parts_of(revision)) {
          ASSERT_TRUE(!p.empty() && p != "." && p != "..") << w;
        }
      } else {
        ASSERT_EQ(e.kind(), ErrorKind::kInput) << w;
      }
    }
  }
  EXPECT_GT(accepted, 100);
}

TEST(OllamaStore, FindsTheManifestsModelLayerBlob) {
  const std::string store = test::fresh_dir("ollama-find");
  const std::string blob = test::add_ollama_model(store, "registry.ollama.ai/library/tiny/latest",
                                                  tiny("tiny-llama/model.gguf"));
  const std::string other =
      test::add_ollama_model(store, "registry.ollama.ai/me/qwen/q8", tiny("tiny-qwen2/model.gguf"));
  const std::string far =
      test::add_ollama_model(store, "hf.co/org/repo/Q4_0", tiny("tiny-gemma/model.gguf"));
  const StoreRoots r = roots(store, "");
  for (const std::string name : {"ollama:tiny", "ollama:tiny:latest", "ollama:library/tiny",
                                 "ollama:registry.ollama.ai/library/tiny:latest"}) {
    const model::StoreModel m = model::find_store_model(name, r);
    EXPECT_TRUE(m.gguf()) << name;
    EXPECT_EQ(m.path(), blob) << name;
    EXPECT_EQ(m.name(), name);
  }
  EXPECT_EQ(model::find_store_model("ollama:me/qwen:q8", r).path(), other);
  EXPECT_EQ(model::find_store_model("ollama:hf.co/org/repo:Q4_0", r).path(), far);
  // A digest spelt as the blob's name, as Ollama's BlobsPath accepts it.
  const std::string hex = blob.substr(blob.size() - 64);
  std::string layer =
      test::ollama_model_layer(hex, static_cast<int64_t>(std::filesystem::file_size(blob)));
  layer.replace(layer.find("sha256:"), 7, "sha256-");
  test::write_file(store + "/manifests/registry.ollama.ai/library/dash/latest",
                   test::ollama_manifest_text(layer));
  EXPECT_EQ(model::find_store_model("ollama:dash", r).path(), blob);
}

TEST(OllamaStore, TheFirstStoreHoldingTheNameIsTaken) {
  const std::string home = test::fresh_dir("ollama-home");
  const std::string service = test::fresh_dir("ollama-service");
  const std::string in_service = test::add_ollama_model(
      service, "registry.ollama.ai/library/tiny/latest", tiny("tiny-llama/model.gguf"));
  test::add_ollama_model(service, "registry.ollama.ai/library/qwen/latest",
                         tiny("tiny-qwen2/model.gguf"));
  const std::string in_home =
      test::add_ollama_model(home + "/.ollama/models", "registry.ollama.ai/library/qwen/latest",
                             tiny("tiny-qwen2/model.gguf"));
  const StoreRoots r = roots_of({{"HOME", home}}, service);
  EXPECT_EQ(model::find_store_model("ollama:tiny", r).path(), in_service);
  EXPECT_EQ(model::find_store_model("ollama:qwen", r).path(), in_home);
  // OLLAMA_MODELS set: that store alone.
  const StoreRoots env = roots_of({{"HOME", home}, {"OLLAMA_MODELS", home + "/.ollama/models"}});
  EXPECT_EQ(failure("ollama:tiny", env), "file: ollama:tiny: not in the Ollama store " + home +
                                             "/.ollama/models (attn models lists its models)");
}

TEST(OllamaStore, AMissingNameNamesTheNearOnes) {
  const std::string store = test::fresh_dir("ollama-near");
  for (const char* tag : {"1b", "3b"}) {
    test::add_ollama_model(store, std::string("registry.ollama.ai/library/llama3.2/") + tag,
                           tiny("tiny-llama/model.gguf"));
  }
  test::add_ollama_model(store, "registry.ollama.ai/library/tiny-llama/latest",
                         tiny("tiny-llama/model.gguf"));
  const StoreRoots r = roots(store, "");
  EXPECT_EQ(failure("ollama:llama3.2", r),
            "file: ollama:llama3.2: not in the Ollama store " + store +
                " (attn models lists its models); did you mean 'ollama:llama3.2:1b' or "
                "'ollama:llama3.2:3b'?");
  EXPECT_EQ(failure("ollama:tiny-lama", r),
            "file: ollama:tiny-lama: not in the Ollama store " + store +
                " (attn models lists its models); did you mean 'ollama:tiny-llama:latest'?");
  EXPECT_EQ(failure("ollama:qwen", r), "file: ollama:qwen: not in the Ollama store " + store +
                                           " (attn models lists its models)");
  EXPECT_EQ(failure("ollama:x", roots("/nonexistent/o", "")),
            "file: ollama:x: no Ollama store at /nonexistent/o (OLLAMA_MODELS)");
  EXPECT_EQ(failure("ollama:x", roots_of({{"HOME", "/nonexistent/h"}}, "/nonexistent/s")),
            "file: ollama:x: no Ollama store at /nonexistent/h/.ollama/models or /nonexistent/s; "
            "set OLLAMA_MODELS to the folder Ollama keeps its models in");
}

TEST(OllamaStore, AManifestThatDoesNotHoldTogetherSaysWhy) {
  const std::string store = test::fresh_dir("ollama-bad");
  const std::string gguf = tiny("tiny-llama/model.gguf");
  const std::string blob =
      test::add_ollama_model(store, "registry.ollama.ai/library/tiny/latest", gguf);
  const std::string hex = blob.substr(blob.size() - 64);
  const int64_t size = static_cast<int64_t>(std::filesystem::file_size(gguf));
  const std::string dir = store + "/manifests/registry.ollama.ai/library/";
  const StoreRoots r = roots(store, "");
  auto with = [&](const std::string& name, const std::string& text) {
    test::write_file(dir + name + "/latest", text);
    return failure("ollama:" + name, r);
  };
  EXPECT_EQ(with("nolayer", test::ollama_manifest_text(
                                "{\"mediaType\":\"application/vnd.ollama.image.template\","
                                "\"digest\":\"sha256:" +
                                hex + "\",\"size\":3}")),
            "input: " + dir +
                "nolayer/latest: has no model layer (mediaType "
                "application/vnd.ollama.image.model), so no GGUF file for attn to read");
  EXPECT_EQ(with("short", test::ollama_manifest_text(test::ollama_model_layer(hex, size + 1))),
            "input: " + blob + ": holds " + std::to_string(size) + " bytes, but the manifest " +
                dir + "short/latest gives the model layer " + std::to_string(size + 1) +
                " (a pull or copy that did not finish?)");
  EXPECT_EQ(with("gone",
                 test::ollama_manifest_text(test::ollama_model_layer(std::string(64, 'a'), size))),
            "file: " + store + "/blobs/sha256-" + std::string(64, 'a') +
                ": cannot open: No such file or directory (the model layer of ollama:gone's "
                "manifest " +
                dir + "gone/latest)");
  EXPECT_EQ(with("digest", test::ollama_manifest_text(test::ollama_model_layer("../../x", size))),
            "input: " + dir +
                "digest/latest: layers[0].digest: \"sha256:../../x\" is not sha256: and 64 hex "
                "digits");
  EXPECT_EQ(with("nolayers", "{\"schemaVersion\":2}"),
            "input: " + dir + "nolayers/latest: has no \"layers\" array");
  EXPECT_EQ(with("notjson", "GGUF"),
            "input: " + dir +
                "notjson/latest:1:1: expected a value, got 'GGUF' (strings need double quotes; "
                "literals are true, false, null)");
}

TEST(OllamaStore, AManifestIsSizedBeforeItIsRead) {
  const std::string store = test::fresh_dir("ollama-big");
  const std::string path = store + "/manifests/registry.ollama.ai/library/big/latest";
  test::write_file(path, "");
  std::filesystem::resize_file(path, (int64_t{1} << 24) + 1);
  EXPECT_EQ(failure("ollama:big", roots(store, "")),
            "input: " + path + ": 16777217 bytes, more than attn reads of a manifest (16777216)");
}

TEST(OllamaStore, LinksOutOfTheStoreAreRefused) {
  const std::string store = test::fresh_dir("ollama-links");
  const std::string outside = test::fresh_dir("ollama-outside");
  const std::string blob = test::add_ollama_model(outside, "registry.ollama.ai/library/tiny/latest",
                                                  tiny("tiny-llama/model.gguf"));
  const std::string hex = blob.substr(blob.size() - 64);
  std::filesystem::create_directories(store + "/blobs");
  std::filesystem::create_directories(store + "/manifests/registry.ollama.ai/library");
  // A manifest, then a blob, that lead out of the store.
  std::filesystem::create_symlink(outside + "/manifests/registry.ollama.ai/library/tiny",
                                  store + "/manifests/registry.ollama.ai/library/out");
  EXPECT_EQ(failure("ollama:out", roots(store, "")),
            "input: " + store + "/manifests/registry.ollama.ai/library/out/latest: leads out of " +
                store + " through a symbolic link; attn reads a store's files inside it");
  std::filesystem::copy(outside + "/manifests/registry.ollama.ai/library/tiny",
                        store + "/manifests/registry.ollama.ai/library/tiny");
  std::filesystem::create_symlink(blob, store + "/blobs/sha256-" + hex);
  EXPECT_EQ(failure("ollama:tiny", roots(store, "")),
            "input: " + store + "/blobs/sha256-" + hex + ": leads out of " + store +
                " through a symbolic link; attn reads a store's files inside it");
}

TEST(HfCache, FindsTheSnapshotARevisionNames) {
  const std::string cache = test::fresh_dir("hf-find");
  const std::vector<std::string> files = {tiny("tiny-llama/config.json"),
                                          tiny("tiny-llama/model.safetensors")};
  const std::string main = test::add_hf_snapshot(cache, "org/tiny", kCommit, files);
  const std::string v1 = test::add_hf_snapshot(cache, "org/tiny", kOther, files, "v1.0");
  const std::string pr = test::add_hf_snapshot(cache, "org/tiny", kOther, files, "refs/pr/1");
  const StoreRoots r = roots("", cache);
  EXPECT_EQ(model::find_store_model("hf:org/tiny", r).path(), main);
  EXPECT_EQ(model::find_store_model("hf:org/tiny@main", r).path(), main);
  EXPECT_EQ(model::find_store_model("hf:org/tiny@v1.0", r).path(), v1);
  EXPECT_EQ(model::find_store_model("hf:org/tiny@refs/pr/1", r).path(), pr);
  EXPECT_EQ(model::find_store_model("hf:org/tiny@" + kOther, r).path(), v1);
  const model::StoreModel m = model::find_store_model("hf:org/tiny", r);
  EXPECT_FALSE(m.gguf());
  // The snapshot's files are links into blobs/, inside the repository.
  const std::optional<OpenedFile> config = m.open("config.json");
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->path(), main + "/config.json");
  EXPECT_EQ(read_file(*config), test::read_text(files[0]));
  EXPECT_FALSE(m.open("tokenizer.json").has_value());
}

TEST(HfCache, NamesTheHubRefusesAreInputErrors) {
  const StoreRoots r = roots("", test::fresh_dir("hf-names"));
  EXPECT_EQ(failure("hf:../../etc", r),
            "input: hf:../../etc: the repository id \"../../etc\" has more than one '/'; the "
            "hub's ids are NAME or ORG/NAME");
  EXPECT_EQ(failure("hf:../etc", r),
            "input: hf:../etc: the repository id \"../etc\" is not one the hub accepts (letters, "
            "digits, '_', '-' and '.', neither first nor last '-' or '.'; a name of 1 to 96)");
  EXPECT_EQ(failure("hf:/etc", r),
            "input: hf:/etc: the repository id \"/etc\" is not one the hub accepts (letters, "
            "digits, '_', '-' and '.', neither first nor last '-' or '.'; a name of 1 to 96)");
  EXPECT_EQ(failure("hf:a--b/c", r),
            "input: hf:a--b/c: the repository id \"a--b/c\" holds \"--\" or \"..\", which the "
            "hub's ids never do");
  EXPECT_EQ(failure("hf:org/tiny@../../x", r),
            "input: hf:org/tiny@../../x: the revision \"../../x\" is not a branch, a tag or a "
            "commit: it has an empty, \".\" or \"..\" part");
  EXPECT_EQ(failure("hf:org/tiny@", r),
            "input: hf:org/tiny@: names no revision after '@'; write hf:ORG/NAME@REVISION (a "
            "branch, a tag or a commit)");
  EXPECT_EQ(failure("hf:", r),
            "input: hf:: names no repository; write hf:ORG/NAME or hf:ORG/NAME@REVISION");
}

TEST(HfCache, MissingRepositoriesAndRevisionsNameWhatIsThere) {
  const std::string cache = test::fresh_dir("hf-missing");
  test::add_hf_snapshot(cache, "org/tiny-llama", kCommit, {tiny("tiny-llama/config.json")});
  test::add_hf_snapshot(cache, "org/tiny-llama", kCommit, {}, "v1.0");
  const StoreRoots r = roots("", cache);
  EXPECT_EQ(failure("hf:org/tiny-lama", r),
            "file: hf:org/tiny-lama: not in the Hugging Face cache " + cache +
                " (attn models lists its models); did you mean 'hf:org/tiny-llama'?");
  EXPECT_EQ(failure("hf:org/tiny-llama@dev", r),
            "file: hf:org/tiny-llama@dev: the cache holds no revision \"dev\" of org/tiny-llama "
            "(its refs: main, v1.0; attn models lists its snapshots)");
  EXPECT_EQ(failure("hf:org/tiny-llama@" + kOther, r),
            "file: " + cache + "/models--org--tiny-llama/snapshots/" + kOther +
                ": cannot open: No such file or directory (the commit's snapshot; a download "
                "that did not finish?)");
  EXPECT_EQ(failure("hf:x/y", roots("", "/nonexistent/hub")),
            "file: hf:x/y: no Hugging Face cache at /nonexistent/hub (HF_HUB_CACHE)");
  test::write_file(cache + "/models--org--tiny-llama/refs/bad", "not a commit\n");
  EXPECT_EQ(failure("hf:org/tiny-llama@bad", r),
            "input: " + cache +
                "/models--org--tiny-llama/refs/bad: does not hold a commit hash (40 hex digits)");
}

TEST(HfCache, ASnapshotLinkOutOfTheRepositoryIsRefused) {
  const std::string cache = test::fresh_dir("hf-links");
  const std::string snapshot =
      test::add_hf_snapshot(cache, "org/tiny", kCommit, {tiny("tiny-llama/model.safetensors")});
  std::filesystem::create_symlink(tiny("tiny-llama/config.json"), snapshot + "/config.json");
  std::filesystem::create_symlink("../../../../outside", snapshot + "/tokenizer.json");
  const model::StoreModel m = model::find_store_model("hf:org/tiny", roots("", cache));
  const std::string repo = cache + "/models--org--tiny";
  EXPECT_EQ(error_of([&] { m.open("config.json"); }),
            snapshot + "/config.json: leads out of " + repo +
                " through a symbolic link; attn reads a store's files inside it");
  EXPECT_EQ(error_of([&] { m.open("tokenizer.json"); }),
            snapshot + "/tokenizer.json: leads out of " + repo +
                " through a symbolic link; attn reads a store's files inside it");
}

TEST(StoreListing, ListsBothStoresFromTheirHeaders) {
  const std::string store = test::fresh_dir("list-ollama");
  const std::string cache = test::fresh_dir("list-hf");
  const std::string blob = test::add_ollama_model(store, "registry.ollama.ai/library/tiny/latest",
                                                  tiny("tiny-llama-wide-quant/model-Q4_K_M.gguf"));
  test::write_file(store + "/manifests/registry.ollama.ai/library/broken/latest",
                   test::ollama_manifest_text(""));
  const std::string snapshot =
      test::add_hf_snapshot(cache, "org/tiny", kCommit,
                            {tiny("tiny-llama/config.json"), tiny("tiny-llama/model.safetensors")});
  // A snapshot without config.json (a GGUF repository's) is not listed.
  test::add_hf_snapshot(cache, "org/gguf", kCommit, {tiny("tiny-llama/model.gguf")});
  const model::StoreListing l = model::list_store_models(roots(store, cache));
  ASSERT_EQ(l.models.size(), 3u);
  const model::StoreEntry& broken = l.models[0];
  EXPECT_EQ(broken.name, "ollama:broken:latest");
  EXPECT_FALSE(broken.reads);
  EXPECT_EQ(broken.path, store + "/manifests/registry.ollama.ai/library/broken/latest");
  EXPECT_EQ(broken.problem, broken.path +
                                ": has no model layer (mediaType "
                                "application/vnd.ollama.image.model), so no GGUF file for attn "
                                "to read");
  const model::StoreEntry& q = l.models[1];
  EXPECT_EQ(q.name, "ollama:tiny:latest");
  EXPECT_EQ(q.store, "ollama");
  EXPECT_EQ(q.architecture, "llama");
  EXPECT_TRUE(q.reads);
  EXPECT_EQ(q.quantization, "Q4_K_M");
  EXPECT_EQ(q.bytes, static_cast<int64_t>(std::filesystem::file_size(blob)));
  EXPECT_EQ(q.path, blob);
  EXPECT_EQ(q.problem, "");
  const model::StoreEntry& h = l.models[2];
  EXPECT_EQ(h.name, "hf:org/tiny");
  EXPECT_EQ(h.store, "hf");
  EXPECT_EQ(h.architecture, "llama");
  EXPECT_TRUE(h.reads);
  EXPECT_EQ(h.parameters, 21152);
  EXPECT_EQ(h.quantization, "F32");
  EXPECT_EQ(h.bytes,
            static_cast<int64_t>(std::filesystem::file_size(tiny("tiny-llama/model.safetensors"))));
  EXPECT_EQ(h.path, snapshot);
  EXPECT_EQ(l.searched.size(), 2u);
}

}  // namespace
}  // namespace attn
