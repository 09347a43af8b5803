// Files: reading whole inputs (with "-" for stdin) within a size budget,
// and writing outputs atomically: a temporary file in the target's
// directory, renamed over the target once complete, so a failed or
// interrupted run never leaves a half-written file or a stray temporary
// one. Writes go through symbolic links to their targets, as cp's do, and
// straight into devices and pipes, which are never replaced by a file.
// Failures are attn::Error (kFile) with the path and the OS reason; an
// input over its budget is kInput.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/limits.h"
#include "attn/progress.h"

namespace attn {

// kDefaultMaxInputBytes and kDefaultMaxElements, the defaults of
// --max-input-bytes and --max-elements, are in attn/limits.h.

// "<stdin>" for "-", the path otherwise: how a file is named in messages.
std::string display_name(const std::string& path);

// What a file is by its mode (stat's st_mode), for messages: "a regular
// file", "a directory", "a FIFO (named pipe)", "a socket", "a character
// device", "a block device", "a symbolic link".
std::string file_kind(unsigned int mode);

// A file open for reading, held by its descriptor. A reader given one
// reads the file that was opened (and checked), never its path again:
// another program may have pointed the path elsewhere since. Copies share
// the descriptor, which the last one closes. `path` names the file in
// messages, as the user wrote it.
class OpenedFile {
 public:
  // Takes over fd (an open descriptor, which it closes).
  OpenedFile(int fd, std::string path);
  int fd() const;
  const std::string& path() const { return path_; }

 private:
  struct Descriptor;
  std::shared_ptr<const Descriptor> fd_;
  std::string path_;
};

// Reads a whole file ("-" reads stdin), reporting the bytes read so far
// (of the file's size; of -1 for a pipe) to `progress` when given.
// More than max_bytes is an input error naming --max-input-bytes; a
// regular file is measured before it is read, a stream stops being read
// as soon as it passes the limit. Text stops at its first NUL byte (the
// NUL is kept): no text format attn reads takes one, so the parser
// reports it, or an earlier error, at its place, and an endless stream of
// zeros (/dev/zero) ends at once. Content that starts with the .npy magic
// is binary and read whole. A FIFO (named pipe) is an input error, never
// waited for: nothing may ever write to it. Stdin, /dev/stdin and the
// pipes of a shell (<(...), /dev/fd/N) are read as they come.
std::string read_file(const std::string& path, const ProgressFn& progress = {},
                      int64_t max_bytes = kDefaultMaxInputBytes);
// The same for a file already open, read from its start.
std::string read_file(const OpenedFile& file, const ProgressFn& progress = {},
                      int64_t max_bytes = kDefaultMaxInputBytes);

// The bytes of a binary file (a .safetensors checkpoint, an .npz archive),
// shared by copies and released with the last one.
class FileBytes {
 public:
  std::string_view view() const;
  // True when the bytes are memory-mapped: pages are read from disk only
  // when touched, so a tensor at the end of a multi-GB file costs its own
  // bytes.
  bool mapped() const;
  // Bytes held in memory (a decompressed archive member, a test's bytes).
  static FileBytes from_string(std::string bytes);
  // Gives back the memory of bytes already read, when they are mapped (the
  // pages are read again from the file if touched again); a no-op for
  // bytes held in memory. For reading a large file once, front to back.
  void release(const void* begin, size_t length) const;
  // `size` bytes of `whole` from `offset` (within it), keeping all of it alive.
  static FileBytes slice(const FileBytes& whole, uint64_t offset, uint64_t size);
  // An input error naming `name` when the mapped file was cut short while
  // it was read: the pages past its new end read as zeros (instead of
  // killing the process with SIGBUS), and whatever was read from them must
  // not be used. Call it after reading, before using what was read.
  void check_intact(const std::string& name) const;

  struct Mapping;

 private:
  friend FileBytes map_file(const std::string&, const ProgressFn&, int64_t);
  friend FileBytes map_file(const OpenedFile&, const ProgressFn&, int64_t);
  std::shared_ptr<const Mapping> mapping_;
  uint64_t offset_ = 0;
  int64_t size_ = -1;  // -1: to the end
};

// A regular file is memory-mapped whatever its size (nothing is read yet);
// stdin ("-"), a pipe or a device is read whole, NUL bytes included, and
// more than max_stream_bytes is an input error naming --max-input-bytes.
// A FIFO is refused as read_file refuses it.
FileBytes map_file(const std::string& path, const ProgressFn& progress = {},
                   int64_t max_stream_bytes = kDefaultMaxInputBytes);
FileBytes map_file(const OpenedFile& file, const ProgressFn& progress = {},
                   int64_t max_stream_bytes = kDefaultMaxInputBytes);

// Writes content to path atomically: a temporary file .attn-XXXXXX in the
// target's directory, renamed over the target. A symbolic link is
// followed to its final target (which may not exist yet, when its
// directory does) and the target is replaced; the link stays. A target
// that is not a regular file — a device such as /dev/null, a FIFO, a
// socket — is opened and written directly. /dev/stdout, /dev/stderr,
// /dev/fd/N and /proc/self/fd/N write to that descriptor of this process.
// A directory is an error (EISDIR).
void write_file_atomic(const std::string& path, std::string_view content);

// Several files written all or none: each regular file's content goes to
// its temporary file first, then devices, pipes and descriptors are written,
// and only when all of that succeeded are the temporary files renamed over
// their targets. A failure (a full disk, /dev/full, a directory) leaves
// every regular target as it was. The renames themselves cannot fail half
// way but for a file system that fails a rename it allowed a moment before.
void write_files_atomic(const std::vector<std::pair<std::string, std::string_view>>& files);

// A regular file written while its content is still being made (a model's
// stack of weights, layer by layer): the parts given to append() go, in
// order, to a temporary file beside the target, written on a thread of its
// own with their writeback to the disk started as they go; write_files_atomic
// then finishes it and renames it over its target together with the other
// files, all or none. A StreamedFile never committed takes its temporary
// file with it. For paths where can_stream() is true: a regular file, or
// none yet (through symbolic links as write_file_atomic).
class StreamedFile {
 public:
  explicit StreamedFile(const std::string& path);
  ~StreamedFile();
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;

  void append(std::string part);
  // Waits for every part, flushes the file (fsync) and closes it; throws
  // the first error of a write (a full disk) as write_file_atomic would.
  void finish();

 private:
  friend void write_files_atomic(const std::vector<std::pair<std::string, std::string_view>>&,
                                 StreamedFile*);
  struct State;
  std::unique_ptr<State> state_;
};

bool can_stream(const std::string& path);

// write_files_atomic, with `streamed` (when not null) finished and renamed
// over its target with the others.
void write_files_atomic(const std::vector<std::pair<std::string, std::string_view>>& files,
                        StreamedFile* streamed);

// True when both paths name the same existing file.
bool same_file(const std::string& a, const std::string& b);

// True when path is "-" or names the file this process's stdout is
// (/dev/stdout, /dev/fd/1, the terminal's /dev/pts/N), unless stdout is
// /dev/null, where anything may go.
bool is_stdout(const std::string& path);

// True when writing to path goes straight to an existing file that is not
// a regular file or a directory (/dev/null, a FIFO, /dev/stdout), with no
// rename.
bool is_special_file(const std::string& path);

// Lower-case extension without the dot: "csv" for "a/b.CSV", "" if none.
std::string extension(const std::string& path);

// Writes all of data to a file descriptor. Throws BrokenPipe when the reader
// went away (EPIPE), attn::Error (kFile) on other failures.
struct BrokenPipe {};
void write_fd(int fd, std::string_view data, const std::string& name);

}  // namespace attn
