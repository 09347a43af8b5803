// The Hugging Face hub's cache: a repository's folder (models--ORG--NAME),
// the commit a revision names (refs/REVISION holds it, or the revision is
// a commit hash) and its snapshot (snapshots/COMMIT, whose files link to
// the folder's blobs/), found as huggingface_hub finds them offline
// (file_download.py: repo_folder_name, try_to_load_from_cache;
// utils/_validators.py: validate_repo_id).
#include <sys/stat.h>

#include <algorithm>

#include "attn/error.h"
#include "model/model_store.h"
#include "model/store_internal.h"

namespace attn::model {

namespace store {

namespace {

// A ref holds a commit hash and nothing else (huggingface_hub writes the
// 40 characters alone).
constexpr int64_t kMaxRefBytes = 4096;

bool id_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One part of an id, as REPO_ID_REGEX's [\w\-.] between word boundaries.
bool id_part(const std::string& p, size_t max) {
  if (p.empty() || p.size() > max) return false;
  if (!id_byte(static_cast<unsigned char>(p.front())) ||
      !id_byte(static_cast<unsigned char>(p.back()))) {
    return false;
  }
  return std::all_of(p.begin(), p.end(), [](char c) {
    return id_byte(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  });
}

// The commit a ref file holds, or "" when it holds something else.
std::string ref_commit(const OpenedFile& ref) {
  if (file_size(ref) > kMaxRefBytes) return "";
  std::string s = read_file(ref, {}, kMaxRefBytes);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return is_commit_hash(s) ? s : "";
}

// A revision names a file under refs/: no empty, "." or ".." part.
void check_revision(const std::string& revision, const std::string& place) {
  size_t from = 0;
  while (from <= revision.size()) {
    const size_t slash = std::min(revision.find('/', from), revision.size());
    const std::string part = revision.substr(from, slash - from);
    if (part.empty() || part == "." || part == "..") {
      throw_input(place, "the revision \"" + message_text(revision) +
                             "\" is not a branch, a tag or a commit: it has an empty, \".\" or "
                             "\"..\" part");
    }
    from = slash + 1;
  }
}

}  // namespace

bool is_commit_hash(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

void check_hf_repo_id(const std::string& id, const std::string& place) {
  const std::string quoted = "the repository id \"" + message_text(id) + "\"";
  const size_t slash = id.find('/');
  if (slash != std::string::npos && id.find('/', slash + 1) != std::string::npos) {
    throw_input(place, quoted + " has more than one '/'; the hub's ids are NAME or ORG/NAME");
  }
  const bool parts_ok = slash == std::string::npos ? id_part(id, 96)
                                                   : id_part(id.substr(0, slash), id.size()) &&
                                                         id_part(id.substr(slash + 1), 96);
  if (!parts_ok) {
    throw_input(place, quoted +
                           " is not one the hub accepts (letters, digits, '_', '-' and '.', "
                           "neither first nor last '-' or '.'; a name of 1 to 96)");
  }
  if (id.find("--") != std::string::npos || id.find("..") != std::string::npos) {
    throw_input(place, quoted + " holds \"--\" or \"..\", which the hub's ids never do");
  }
  if (id.size() >= 4 && id.compare(id.size() - 4, 4, ".git") == 0) {
    throw_input(place, quoted + " ends in \".git\", which the hub's ids never do");
  }
}

std::string hf_folder_of(const std::string& repo_id) {
  std::string f = "models--" + repo_id;
  if (const size_t slash = f.find('/'); slash != std::string::npos) f.replace(slash, 1, "--");
  return f;
}

std::string hf_repo_of_folder(const std::string& folder) {
  if (folder.rfind("models--", 0) != 0) return "";
  std::string id = folder.substr(8);
  if (const size_t sep = id.find("--"); sep != std::string::npos) id.replace(sep, 2, "/");
  try {
    check_hf_repo_id(id, "");
  } catch (const Error&) {
    return "";
  }
  return id;
}

std::vector<std::pair<std::string, std::string>> hf_refs(const OpenedFile& repo) {
  std::vector<std::pair<std::string, std::string>> out;
  // refs/main, refs/v1.0, and a pull request's refs/refs/pr/1: three deep
  // at most. A ref that cannot be read is not listed.
  auto walk = [&](auto&& self, const std::string& rel, const std::string& ref, int depth) -> void {
    std::optional<OpenedFile> dir;
    try {
      dir = open_in(repo, rel, Want::kDirectory);
    } catch (const Error&) {
      return;
    }
    if (!dir) return;
    for (const std::string& name : folder_names(*dir)) {
      const std::string r = ref.empty() ? name : ref + "/" + name;
      struct stat st {};
      if (::fstatat(dir->fd(), name.c_str(), &st, 0) == 0 && S_ISDIR(st.st_mode)) {
        if (depth < 3) self(self, rel + "/" + name, r, depth + 1);
        continue;
      }
      try {
        if (std::optional<OpenedFile> f = open_in(repo, rel + "/" + name, Want::kFile)) {
          if (std::string c = ref_commit(*f); !c.empty()) out.emplace_back(r, c);
        }
      } catch (const Error&) {
      }
    }
  };
  walk(walk, "refs", "", 1);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace store

StoreModel find_hf_model(const std::string& name, const StoreRoots& roots) {
  const std::string place = message_text(name);
  const std::string rest = name.substr(3);
  const size_t at = rest.find('@');
  const std::string repo_id = rest.substr(0, at);
  const std::string revision = at == std::string::npos ? "main" : rest.substr(at + 1);
  if (repo_id.empty()) {
    throw_input(place, "names no repository; write hf:ORG/NAME or hf:ORG/NAME@REVISION");
  }
  if (revision.empty()) {
    throw_input(place,
                "names no revision after '@'; write hf:ORG/NAME@REVISION (a branch, a tag "
                "or a commit)");
  }
  store::check_hf_repo_id(repo_id, place);
  store::check_revision(revision, place);
  if (roots.hf.empty()) {
    throw_file(place, "no Hugging Face cache: neither HF_HUB_CACHE, HF_HOME nor HOME is set");
  }
  const std::string from = roots.hf_from.empty() ? "" : " (" + roots.hf_from + ")";
  const std::optional<OpenedFile> hub = store::open_folder(roots.hf);
  if (!hub) throw_file(place, "no Hugging Face cache at " + roots.hf + from);
  const std::optional<OpenedFile> repo =
      store::open_in(*hub, store::hf_folder_of(repo_id), store::Want::kDirectory);
  if (!repo) {
    std::vector<std::string> names;
    for (const std::string& f : store::folder_names(*hub)) {
      if (const std::string id = store::hf_repo_of_folder(f); !id.empty())
        names.push_back("hf:" + id);
    }
    throw_file(place, "not in the Hugging Face cache " + roots.hf +
                          " (attn models lists its models)" +
                          store::near_text(store::near_names("hf:" + repo_id, names)));
  }
  // As try_to_load_from_cache: a ref of that name first, else the
  // revision itself as a commit.
  std::string commit;
  if (const std::optional<OpenedFile> ref =
          store::open_in(*repo, "refs/" + revision, store::Want::kFile)) {
    commit = store::ref_commit(*ref);
    if (commit.empty()) throw_input(ref->path(), "does not hold a commit hash (40 hex digits)");
  } else if (store::is_commit_hash(revision)) {
    commit = revision;
  } else {
    std::string refs;
    for (const auto& [r, c] : store::hf_refs(*repo)) refs += (refs.empty() ? "" : ", ") + r;
    throw_file(place, "the cache holds no revision \"" + message_text(revision) + "\" of " +
                          repo_id + " (" + (refs.empty() ? "no refs" : "its refs: " + refs) +
                          "; attn models lists its snapshots)");
  }
  const std::string snapshot = "snapshots/" + commit;
  const std::optional<OpenedFile> dir = store::open_in(*repo, snapshot, store::Want::kDirectory);
  if (!dir) {
    throw_file(store::join_path(repo->path(), snapshot),
               "cannot open: No such file or directory (" +
                   (commit == revision ? std::string("the commit's snapshot")
                                       : "refs/" + message_text(revision) + " names this commit") +
                   "; a download that did not finish?)");
  }
  StoreModel s(name, dir->path());
  s.folder_ = *repo;
  s.snapshot_ = snapshot;
  return s;
}

}  // namespace attn::model
