// Files: reading whole inputs (with "-" for stdin) and writing outputs
// atomically: a temporary file in the same directory, renamed over the
// target once complete, so a failed run never leaves a half-written file.
// Failures are attn::Error (kFile) with the path and the OS reason.
#pragma once

#include <string>
#include <string_view>

#include "attn/progress.h"

namespace attn {

// "<stdin>" for "-", the path otherwise: how a file is named in messages.
std::string display_name(const std::string& path);

// Reads a whole file ("-" reads stdin), reporting the bytes read so far
// (of the file's size; of -1 for a pipe) to `progress` when given.
std::string read_file(const std::string& path, const ProgressFn& progress = {});

// Writes content to path atomically (temp file + rename). Paths that exist
// and are not regular files (/dev/null, a FIFO) are written directly.
void write_file_atomic(const std::string& path, std::string_view content);

// True when both paths name the same existing file.
bool same_file(const std::string& a, const std::string& b);

// True when path names an existing file that is not a regular file or a
// directory (/dev/null, a FIFO): writes go straight to it, no rename.
bool is_special_file(const std::string& path);

// Lower-case extension without the dot: "csv" for "a/b.CSV", "" if none.
std::string extension(const std::string& path);

// Writes all of data to a file descriptor. Throws BrokenPipe when the reader
// went away (EPIPE), attn::Error (kFile) on other failures.
struct BrokenPipe {};
void write_fd(int fd, std::string_view data, const std::string& name);

}  // namespace attn
