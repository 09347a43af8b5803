// Temporary files that never outlive the write they serve. Outputs are
// written to a temporary file in the target's directory and renamed over
// the target; if anything stops the write first — an error, an exception,
// or any signal whose default action ends the process (SIGINT, SIGTERM,
// SIGHUP, SIGUSR1, SIGALRM, SIGXCPU, the real-time signals, a crash's
// SIGSEGV, ...) — the temporary file is removed. Signal handlers cannot
// walk C++ objects, so every live temporary name is also kept in a fixed
// table of character buffers that the handler reads and unlinks before it
// re-raises the signal with its default action. The handlers are
// installed when the first temporary file is made (or a file is mapped,
// whose SIGBUS handler hands other faults on to this one), and only for
// signals whose disposition is still the default: an ignored signal
// (nohup's SIGHUP, attn's SIGPIPE and SIGXFSZ) stays ignored, a host
// program's or a sanitizer's own handler stays in place. SIGKILL cannot
// be caught; what it leaves behind is named .attn-XXXXXX, hidden, next to
// the target.
#pragma once

#include <string>

namespace attn::detail {

class TempFile {
 public:
  // Creates dir/.attn-XXXXXX (mode 0600, open for writing). The name is
  // short and fixed-length, so it fits where the target's name does (a
  // 255-byte name plus a suffix would not). On failure fd() is -1 and
  // error() the errno.
  explicit TempFile(const std::string& dir);
  ~TempFile();  // closes and removes the file unless it was committed
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  int error() const { return error_; }
  const std::string& path() const { return path_; }

  // Closes the file; returns 0 or the errno of close().
  int close();
  // Renames the (closed) file over target; returns 0 or the errno of
  // rename(). Once renamed, nothing is removed.
  int commit(const std::string& target);

 private:
  int fd_ = -1;
  int error_ = 0;
  int slot_ = -1;  // index in the signal handler's table; -1 when not listed
  bool committed_ = false;
  std::string path_;
};

// Installs the handler that removes the live temporary files, once, for
// every signal still at its default action. TempFile calls it; so does the
// SIGBUS handler of mapped files before its own, so that a SIGBUS not of
// its mappings reaches this one.
void install_cleanup_handlers();

// How many temporary files the signal handler knows of (for tests).
int live_temp_files();

}  // namespace attn::detail
