#include "io/open_beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

namespace attn::detail {

namespace {

// O_NONBLOCK: opening a FIFO waits for a writer otherwise; the caller
// refuses what is not a regular file once it is open.
constexpr int kFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

#if !__has_include(<linux/openat2.h>)
struct open_how {
  uint64_t flags, mode, resolve;
};
constexpr uint64_t RESOLVE_NO_MAGICLINKS = 0x02;
constexpr uint64_t RESOLVE_BENEATH = 0x08;
#endif
#ifndef SYS_openat2
#define SYS_openat2 437  // the same number on every architecture
#endif

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= path.size()) {
    const size_t slash = std::min(path.find('/', from), path.size());
    std::string part = path.substr(from, slash - from);
    if (!part.empty() && part != ".") out.push_back(std::move(part));
    from = slash + 1;
  }
  return out;
}

BeneathFile failed(int error, bool no_links) {
  BeneathFile f;
  f.error = error;
  f.no_links = no_links;
  return f;
}

}  // namespace

BeneathFile open_beneath(int dir_fd, const std::string& relative) {
  open_how how{};
  how.flags = static_cast<uint64_t>(kFlags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  // EAGAIN: a rename elsewhere raced a ".." step; the kernel asks for a retry.
  for (int attempt = 0;; ++attempt) {
    const long fd = ::syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof how);
    if (fd >= 0) {
      BeneathFile f;
      f.fd = static_cast<int>(fd);
      return f;
    }
    const int err = errno;
    if (err == EAGAIN && attempt < 100) continue;
    // ENOSYS: a kernel before 5.6; EPERM: a seccomp filter (older container
    // runtimes) that refuses system calls it does not know.
    if (err == ENOSYS || err == EPERM) return open_without_links(dir_fd, relative);
    return failed(err, false);
  }
}

BeneathFile open_without_links(int dir_fd, const std::string& relative) {
  std::vector<std::string> parts = components(relative);
  if (parts.empty()) parts.emplace_back(".");
  int dir = dir_fd, owned = -1;
  auto give_up = [&](int error) {
    if (owned >= 0) ::close(owned);
    return failed(error, true);
  };
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == "..") return give_up(EXDEV);
    const int next = ::openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int err = errno;
      // O_NOFOLLOW with O_PATH takes a link as itself, which O_DIRECTORY
      // then refuses as not a directory: say it is a link.
      struct stat st {};
      if (err == ENOTDIR && ::fstatat(dir, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        err = ELOOP;
      }
      return give_up(err);
    }
    if (owned >= 0) ::close(owned);
    dir = owned = next;
  }
  if (parts.back() == "..") return give_up(EXDEV);
  const int fd = ::openat(dir, parts.back().c_str(), kFlags | O_NOFOLLOW);
  if (fd < 0) return give_up(errno);
  if (owned >= 0) ::close(owned);
  BeneathFile f;
  f.fd = fd;
  f.no_links = true;
  return f;
}

}  // namespace attn::detail
