#include "attn/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "attn/error.h"
#include "base/path.h"
#include "io/temp_file.h"

namespace attn {

namespace {

[[noreturn]] void os_error(const std::string& path, const char* action, int err) {
  throw_file(display_name(path), std::string(action) + ": " + std::strerror(err));
}

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;

[[noreturn]] void too_large(const std::string& path, int64_t size, int64_t max_bytes) {
  const std::string limit = "more than --max-input-bytes " + std::to_string(max_bytes);
  throw_input(display_name(path),
              (size >= 0 ? std::to_string(size) + " bytes, " + limit : limit + " bytes") +
                  "; raise --max-input-bytes");
}

std::string read_fd(int fd, const std::string& path, const ProgressFn& progress, int64_t max_bytes,
                    bool binary = false) {
  std::string out;
  struct stat st {};
  int64_t total = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    total = static_cast<int64_t>(st.st_size);
    if (total > max_bytes) too_large(path, total, max_bytes);
    out.reserve(static_cast<size_t>(st.st_size));
  }
  // Whether the content is text (NUL ends it) or a .npy file: undecided
  // while the bytes read are a prefix of the magic.
  enum { kUndecided, kText, kBinary } kind = binary ? kBinary : kUndecided;
  size_t scanned = 0;  // text: bytes known to hold no NUL
  std::vector<char> buf(1 << 16);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      os_error(path, "cannot read", errno);
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
    if (kind == kUndecided) {
      const size_t k = std::min(out.size(), kNpyMagicSize);
      if (std::memcmp(out.data(), kNpyMagic, k) != 0) {
        kind = kText;
      } else if (k == kNpyMagicSize) {
        kind = kBinary;
      }
    }
    if (kind == kText) {
      const void* nul = std::memchr(out.data() + scanned, '\0', out.size() - scanned);
      if (nul) {
        out.resize(static_cast<size_t>(static_cast<const char*>(nul) - out.data()) + 1);
        break;
      }
      scanned = out.size();
    }
    if (static_cast<int64_t>(out.size()) > max_bytes) too_large(path, -1, max_bytes);
    if (progress) progress(static_cast<int64_t>(out.size()), total);
  }
  // The end, also for a pipe or a file that changed size while read.
  if (progress) progress(static_cast<int64_t>(out.size()), static_cast<int64_t>(out.size()));
  return out;
}

// "/dev/stdout", "/dev/fd/2", "/proc/self/fd/1": a descriptor of this
// process, whatever file it is open on; -1 for other paths.
int descriptor_path(const std::string& p) {
  if (p == "/dev/stdin") return 0;
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const std::string& prefix :
       {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
        std::string("/proc/thread-self/fd/"), "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
    if (p.size() <= prefix.size() || p.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string n = p.substr(prefix.size());
    if (n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(n);
  }
  return -1;
}

// Where a write to a path lands.
struct Destination {
  enum Kind { kReplace, kDirect, kDescriptor } kind = kReplace;
  std::string path;       // kReplace: the file replaced (it may not exist yet); kDirect: opened
  bool via_link = false;  // path is the target of a symbolic link
  int fd = -1;            // kDescriptor
};

// Follows symbolic links one at a time, as the kernel would, but stops at
// a name that does not exist (a dangling link's target is created, when
// its directory exists) and at a descriptor of this process (/dev/stdout
// -> /proc/self/fd/1, whose "target" may be "pipe:[1234]").
Destination destination(const std::string& path) {
  Destination d;
  d.path = path;
  for (int hops = 0;; ++hops) {
    if (const int fd = descriptor_path(d.path); fd >= 0) {
      d.kind = Destination::kDescriptor;
      d.fd = fd;
      return d;
    }
    struct stat st {};
    if (::lstat(d.path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (hops == 40) os_error(path, "cannot write", ELOOP);
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : PATH_MAX) + 1);
    const ssize_t n = ::readlink(d.path.c_str(), buf.data(), buf.size());
    if (n <= 0) os_error(path, "cannot write", n < 0 ? errno : ENOENT);
    const std::string target(buf.data(), static_cast<size_t>(n));
    // A relative target is relative to the link's directory.
    d.path = target[0] == '/' ? target : path::directory_prefix(d.path) + target;
    d.via_link = true;
  }
  const path::Kind kind = path::kind_of(d.path);
  if (kind == path::Kind::kDirectory) os_error(path, "cannot write", EISDIR);
  if (kind == path::Kind::kOther) d.kind = Destination::kDirect;
  return d;
}

void write_direct(const std::string& path, const std::string& target, std::string_view content) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) os_error(path, "cannot open for writing", errno);
  try {
    write_fd(fd, content, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) os_error(path, "cannot write", errno);
}

// Test hook (docs/errors.md): ATTN_DEBUG_PAUSE_BEFORE_RENAME=SECONDS waits
// with the temporary file complete and not yet renamed, so the suite can
// interrupt a write at its most exposed moment.
void debug_pause_before_rename() {
  const char* s = std::getenv("ATTN_DEBUG_PAUSE_BEFORE_RENAME");
  if (!s || !*s) return;
  const int seconds = std::atoi(s);
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::seconds(std::min(seconds, 60)));
}

}  // namespace

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string extension(const std::string& path) { return path::extension(path); }

std::string file_kind(unsigned int mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO (named pipe)";
    case S_IFSOCK:
      return "a socket";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

struct OpenedFile::Descriptor {
  explicit Descriptor(int f) : fd(f) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { ::close(fd); }
  int fd;
};

OpenedFile::OpenedFile(int fd, std::string path)
    : fd_(std::make_shared<const Descriptor>(fd)), path_(std::move(path)) {}

int OpenedFile::fd() const { return fd_->fd; }

namespace {

// Opens a path to read it whole. O_NONBLOCK keeps the open of a FIFO from
// waiting for a writer; check_input then refuses the FIFO.
int open_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) os_error(path, "cannot open", errno);
  return fd;
}

// A pipe with no name: a shell's | or <(...), reached through /dev/stdin
// or /dev/fd/N. Its writer exists (or has gone, and it reads as ended).
bool anonymous_pipe(int fd) {
  constexpr long kPipefsMagic = 0x50495045;
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && static_cast<long>(fs.f_type) == kPipefsMagic;
}

// Refuses what cannot be read whole from an open descriptor: a directory,
// and a FIFO with a name, whose reader waits for a writer that may never
// come (a FIFO this process was given as a descriptor, /dev/stdin or
// /dev/fd/N, was opened by whoever started it: it is read). Then makes
// reads wait for their data again.
void check_input(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) os_error(path, "cannot read", errno);
  if (S_ISDIR(st.st_mode)) os_error(path, "cannot read", EISDIR);
  if (S_ISFIFO(st.st_mode) && !anonymous_pipe(fd) && descriptor_path(path) < 0) {
    throw_input(display_name(path),
                "a FIFO (named pipe), not a regular file: reading it would wait for a writer "
                "that may never come; give it as stdin instead (- < " +
                    path + ")");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

struct Closer {
  int fd;
  ~Closer() { ::close(fd); }
};

}  // namespace

std::string read_file(const std::string& path, const ProgressFn& progress, int64_t max_bytes) {
  if (path == "-") return read_fd(0, path, progress, max_bytes);
  const int fd = open_input(path);
  const Closer closer{fd};
  check_input(fd, path);
  return read_fd(fd, path, progress, max_bytes);
}

std::string read_file(const OpenedFile& file, const ProgressFn& progress, int64_t max_bytes) {
  check_input(file.fd(), file.path());
  return read_fd(file.fd(), file.path(), progress, max_bytes);
}

namespace {

// A file that another program truncates while attn reads its mapping makes
// the pages past the new end fault with SIGBUS, which would kill attn. The
// mappings are listed in a fixed table the signal handler can read without
// locks; a fault inside one of them is answered by mapping a page of zeros
// over the faulting page (mmap is async-signal-safe in practice: one system
// call) and marking the mapping truncated, so the read finishes on zeros
// and check_intact() turns it into an input error naming the file before
// anything computed from it is used. A SIGBUS anywhere else goes to the
// handler that was there before (the default action, a sanitizer's report,
// a host program's handler).
struct MappedRange {
  std::atomic<uintptr_t> begin{0}, end{0};  // [begin, end); 0, 0 for a free slot
  std::atomic<bool> truncated{false};
};
static_assert(std::atomic<uintptr_t>::is_always_lock_free, "the signal handler reads the table");
constexpr int kMappedSlots = 4096;
MappedRange g_mapped[kMappedSlots];
std::mutex g_mapped_mutex;  // taken to fill or free a slot, never by the handler
uintptr_t g_page_size = 4096;
struct sigaction g_previous_sigbus {};

void on_sigbus(int sig, siginfo_t* info, void*) {
  // A fault has an address; a SIGBUS sent by kill (si_code <= 0) has none.
  const bool fault = info->si_code > 0;
  const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (MappedRange& r : g_mapped) {
    if (!fault) break;
    const uintptr_t b = r.begin.load(std::memory_order_acquire);
    if (b == 0 || at < b || at >= r.end.load(std::memory_order_acquire)) continue;
    void* page = reinterpret_cast<void*>(at & ~(g_page_size - 1));
    if (::mmap(page, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      r.truncated.store(true, std::memory_order_release);
      return;  // the faulting read runs again, on zeros
    }
    break;
  }
  // Not a mapping of ours: the handler before ours takes it (the
  // temporary files' cleanup, the default action, a sanitizer's report),
  // when the faulting instruction runs again on return, or, for a signal
  // that was sent, when it is raised again (it waits until this returns).
  ::sigaction(sig, &g_previous_sigbus, nullptr);
  if (!fault) ::raise(sig);
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The temporary files' handler first: a SIGBUS that is not ours goes on
    // to it, and it removes them before the process ends.
    detail::install_cleanup_handlers();
    g_page_size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
}

// A slot for [address, address + size), or -1 when the table is full (the
// mapping is then read as before, unguarded).
int list_mapping(const void* address, size_t size) {
  install_sigbus_handler();
  const std::lock_guard<std::mutex> lock(g_mapped_mutex);
  for (int i = 0; i < kMappedSlots; ++i) {
    MappedRange& r = g_mapped[i];
    if (r.begin.load(std::memory_order_relaxed) != 0) continue;
    r.truncated.store(false, std::memory_order_relaxed);
    r.end.store(reinterpret_cast<uintptr_t>(address) + size, std::memory_order_release);
    r.begin.store(reinterpret_cast<uintptr_t>(address), std::memory_order_release);
    return i;
  }
  return -1;
}

void unlist_mapping(int slot) {
  if (slot < 0) return;
  const std::lock_guard<std::mutex> lock(g_mapped_mutex);
  g_mapped[slot].begin.store(0, std::memory_order_release);
  g_mapped[slot].end.store(0, std::memory_order_release);
}

}  // namespace

// A read-only mapping of a whole file, unmapped when the last FileBytes
// holding it goes.
struct FileBytes::Mapping {
  void* address = nullptr;
  size_t size = 0;
  int slot = -1;     // in the SIGBUS handler's table
  std::string copy;  // the bytes of a stream, which cannot be mapped
  ~Mapping() {
    unlist_mapping(slot);
    if (!address) return;
    ::munmap(address, size);
  }
};

void FileBytes::check_intact(const std::string& name) const {
  if (!mapping_ || mapping_->slot < 0) return;
  if (g_mapped[mapping_->slot].truncated.load(std::memory_order_acquire)) {
    throw_input(name,
                "the file was cut short while attn read it (another program truncated or "
                "rewrote it); run again once the file is complete");
  }
}

std::string_view FileBytes::view() const {
  if (!mapping_) return {};
  const std::string_view all =
      mapping_->address
          ? std::string_view(static_cast<const char*>(mapping_->address), mapping_->size)
          : std::string_view(mapping_->copy);
  return size_ < 0 ? all.substr(offset_) : all.substr(offset_, static_cast<uint64_t>(size_));
}

void FileBytes::release(const void* begin, size_t length) const {
  if (!mapped() || length == 0) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(mapping_->address);
  const uintptr_t from = reinterpret_cast<uintptr_t>(begin);
  // Whole pages inside [begin, begin + length) only: a page shared with
  // bytes not yet read stays.
  const uintptr_t lo = (from + page - 1) / page * page;
  const uintptr_t hi = (from + length) / page * page;
  if (lo < base || hi <= lo || hi > base + mapping_->size + page) return;
  ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

FileBytes FileBytes::slice(const FileBytes& whole, uint64_t offset, uint64_t size) {
  FileBytes b = whole;
  b.offset_ = whole.offset_ + offset;
  b.size_ = static_cast<int64_t>(size);
  return b;
}

bool FileBytes::mapped() const { return mapping_ && mapping_->address; }

FileBytes FileBytes::from_string(std::string bytes) {
  auto m = std::make_shared<Mapping>();
  m->copy = std::move(bytes);
  FileBytes b;
  b.mapping_ = std::move(m);
  return b;
}

namespace {

// The bytes of an open file (checked by the caller): mapped when it is a
// regular file, read whole otherwise.
std::shared_ptr<FileBytes::Mapping> map_descriptor(int fd, const std::string& path,
                                                   const ProgressFn& progress,
                                                   int64_t max_stream_bytes) {
  auto m = std::make_shared<FileBytes::Mapping>();
  struct stat st {};
  if (fstat(fd, &st) != 0) os_error(path, "cannot read", errno);
  if (S_ISDIR(st.st_mode)) os_error(path, "cannot read", EISDIR);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* a = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (a != MAP_FAILED) {
      m->address = a;
      m->size = static_cast<size_t>(st.st_size);
      m->slot = list_mapping(a, m->size);
      return m;
    }
  }
  // A pipe, a device or an empty file: read what comes, within the budget.
  m->copy = read_fd(fd, path, progress, max_stream_bytes, /*binary=*/true);
  return m;
}

}  // namespace

FileBytes map_file(const std::string& path, const ProgressFn& progress, int64_t max_stream_bytes) {
  FileBytes b;
  if (path == "-") {
    b.mapping_ = map_descriptor(0, path, progress, max_stream_bytes);
    return b;
  }
  const int fd = open_input(path);
  const Closer closer{fd};
  check_input(fd, path);
  b.mapping_ = map_descriptor(fd, path, progress, max_stream_bytes);
  return b;
}

FileBytes map_file(const OpenedFile& file, const ProgressFn& progress, int64_t max_stream_bytes) {
  check_input(file.fd(), file.path());
  FileBytes b;
  b.mapping_ = map_descriptor(file.fd(), file.path(), progress, max_stream_bytes);
  return b;
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

namespace {

// A regular file's new content, complete in its temporary file and not yet
// renamed over the target.
struct Staged {
  std::unique_ptr<detail::TempFile> tmp;
  std::string path;    // as given, for messages
  std::string target;  // what the rename replaces
};

// A temporary file beside d's target, for `path`.
Staged open_staged(const std::string& path, const Destination& d) {
  Staged s;
  s.path = path;
  s.target = d.path;
  s.tmp = std::make_unique<detail::TempFile>(path::directory_of(d.path));
  if (s.tmp->fd() < 0) {
    if (d.via_link) {
      throw_file(path, "cannot create a temporary file next to the link's target " + d.path + ": " +
                           std::strerror(s.tmp->error()));
    }
    os_error(path, "cannot create a temporary file next to it", s.tmp->error());
  }
  return s;
}

// The staged content flushed to the disk, given the target's permissions
// and closed: ready to be renamed.
void seal(Staged& s) {
  detail::TempFile& tmp = *s.tmp;
  if (::fsync(tmp.fd()) != 0 && errno != EINVAL) os_error(s.path, "cannot write", errno);
  // Keep the permissions of a file being replaced; new files get 0644
  // (less the umask) instead of mkstemp's 0600.
  struct stat st {};
  mode_t mode = 0644;
  if (::stat(s.target.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  ::fchmod(tmp.fd(), mode);
  if (const int err = tmp.close(); err != 0) os_error(s.path, "cannot write", err);
}

Staged stage(const std::string& path, const Destination& d, std::string_view content) {
  Staged s = open_staged(path, d);
  write_fd(s.tmp->fd(), content, path);
  seal(s);
  return s;
}

void commit(Staged& s) {
  if (const int err = s.tmp->commit(s.target); err != 0) os_error(s.path, "cannot replace", err);
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) {
  write_files_atomic({{path, content}});
}

// The writer of a StreamedFile: its staged file, and a thread writing the
// parts queued for it.
struct StreamedFile::State {
  Staged staged;
  std::thread writer;
  std::mutex m;
  std::condition_variable wake;
  std::deque<std::string> parts;
  bool closing = false;
  bool sealed = false;
  std::exception_ptr error;  // the writer's first, thrown by finish()

  void write_parts() {
    off_t at = 0;
    for (;;) {
      std::string part;
      {
        std::unique_lock<std::mutex> lock(m);
        wake.wait(lock, [&] { return closing || !parts.empty(); });
        if (parts.empty()) return;
        part = std::move(parts.front());
        parts.pop_front();
      }
      if (error) continue;  // drain: nothing more is written after a failure
      try {
        write_fd(staged.tmp->fd(), part, staged.path);
#if defined(__linux__)
        // Start the writeback now, so that the final fsync finds little left.
        ::sync_file_range(staged.tmp->fd(), at, static_cast<off_t>(part.size()),
                          SYNC_FILE_RANGE_WRITE);
#endif
        at += static_cast<off_t>(part.size());
      } catch (...) {
        error = std::current_exception();
      }
    }
  }

  void stop() {
    {
      const std::lock_guard<std::mutex> lock(m);
      closing = true;
    }
    wake.notify_one();
    if (writer.joinable()) writer.join();
  }
};

bool can_stream(const std::string& path) {
  if (path.empty() || path == "-") return false;
  try {
    return destination(path).kind == Destination::kReplace;
  } catch (const Error&) {
    return false;
  }
}

StreamedFile::StreamedFile(const std::string& path) : state_(std::make_unique<State>()) {
  state_->staged = open_staged(path, destination(path));
  try {
    state_->writer = std::thread([s = state_.get()] { s->write_parts(); });
  } catch (const std::system_error&) {
    // No thread: append() writes on the caller's.
  }
}

StreamedFile::~StreamedFile() {
  if (state_) state_->stop();  // the temporary file goes with it unless committed
}

void StreamedFile::append(std::string part) {
  State& s = *state_;
  if (!s.writer.joinable()) {
    write_fd(s.staged.tmp->fd(), part, s.staged.path);
    return;
  }
  {
    const std::lock_guard<std::mutex> lock(s.m);
    s.parts.push_back(std::move(part));
  }
  s.wake.notify_one();
}

void StreamedFile::finish() {
  State& s = *state_;
  if (s.sealed) return;
  s.stop();
  if (s.error) std::rethrow_exception(s.error);
  seal(s.staged);
  s.sealed = true;
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string_view>>& files) {
  write_files_atomic(files, nullptr);
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string_view>>& files,
                        StreamedFile* streamed) {
  // 1. Every regular file's content into its temporary file; 2. devices,
  // pipes and descriptors, which cannot be staged; 3. the renames. A
  // failure before 3 leaves every target as it was (the temporary files go
  // with their TempFile).
  std::vector<Staged> staged;
  std::vector<std::pair<const std::string*, std::string_view>> direct;
  std::vector<Destination> destinations;
  destinations.reserve(files.size());
  for (const auto& [path, content] : files) destinations.push_back(destination(path));
  for (size_t i = 0; i < files.size(); ++i) {
    if (destinations[i].kind == Destination::kReplace) {
      staged.push_back(stage(files[i].first, destinations[i], files[i].second));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const Destination& d = destinations[i];
    const auto& [path, content] = files[i];
    if (d.kind == Destination::kDescriptor) write_fd(d.fd, content, path);
    if (d.kind == Destination::kDirect) write_direct(path, d.path, content);
  }
  if (streamed) streamed->finish();
  if (!staged.empty() || streamed) debug_pause_before_rename();
  for (Staged& s : staged) commit(s);
  if (streamed) commit(streamed->state_->staged);
}

bool is_special_file(const std::string& path) {
  if (path == "-" || path.empty()) return false;
  try {
    return destination(path).kind != Destination::kReplace;
  } catch (const Error&) {
    return false;  // a directory, a loop of links: the write reports it
  }
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return false;
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool is_stdout(const std::string& path) {
  if (path == "-") return true;
  if (path.empty()) return false;
  struct stat out {
  }, p{}, null{};
  if (::fstat(STDOUT_FILENO, &out) != 0 || ::stat(path.c_str(), &p) != 0) return false;
  if (out.st_dev != p.st_dev || out.st_ino != p.st_ino) return false;
  return !(::stat("/dev/null", &null) == 0 && null.st_dev == out.st_dev &&
           null.st_ino == out.st_ino);
}

}  // namespace attn
