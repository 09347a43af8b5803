#include "attn/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "attn/error.h"

namespace attn {

namespace {

[[noreturn]] void os_error(const std::string& path, const char* action, int err) {
  throw_file(display_name(path), std::string(action) + ": " + std::strerror(err));
}

std::string read_fd(int fd, const std::string& path, const ProgressFn& progress) {
  std::string out;
  struct stat st {};
  int64_t total = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    out.reserve(static_cast<size_t>(st.st_size));
    total = static_cast<int64_t>(st.st_size);
  }
  std::vector<char> buf(1 << 16);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      os_error(path, "cannot read", errno);
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
    if (progress) progress(static_cast<int64_t>(out.size()), total);
  }
  // The end, also for a pipe or a file that changed size while read.
  if (progress) progress(static_cast<int64_t>(out.size()), static_cast<int64_t>(out.size()));
  return out;
}

}  // namespace

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot + 1);
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

std::string read_file(const std::string& path, const ProgressFn& progress) {
  if (path == "-") return read_fd(0, path, progress);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) os_error(path, "cannot open", errno);
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    os_error(path, "cannot read", EISDIR);
  }
  try {
    std::string s = read_fd(fd, path, progress);
    ::close(fd);
    return s;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

void write_fd(int fd, std::string_view data, const std::string& name) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) throw BrokenPipe{};
      os_error(name, "cannot write", errno);
    }
    done += static_cast<size_t>(n);
  }
}

void write_file_atomic(const std::string& path, std::string_view content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) os_error(path, "cannot write", EISDIR);
    if (!S_ISREG(st.st_mode)) {
      // Devices and pipes cannot be replaced by a rename; write in place.
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) os_error(path, "cannot open for writing", errno);
      try {
        write_fd(fd, content, path);
      } catch (...) {
        ::close(fd);
        throw;
      }
      if (::close(fd) != 0) os_error(path, "cannot write", errno);
      return;
    }
  }
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) os_error(path, "cannot create a temporary file next to it", errno);
  tmp = name.data();
  auto fail = [&](const char* action, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    os_error(path, action, err);
  };
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) fail("cannot write", errno);
  // Keep the permissions of a file being replaced; new files get 0644
  // (less the umask) instead of mkstemp's 0600.
  mode_t mode = 0644;
  if (::stat(path.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  ::fchmod(fd, mode);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    os_error(path, "cannot write", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    os_error(path, "cannot replace", err);
  }
}

bool is_special_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return false;
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace attn
