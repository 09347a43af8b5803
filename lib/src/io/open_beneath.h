// Opening a file named relative to a directory without leaving that
// directory, in one step the file system cannot change under: how attn run
// opens the files a document names. Checking a path (realpath) and then
// opening it are two steps, and another program can swap a file for a
// symbolic link between them; here the kernel resolves the path beneath the
// directory and the caller reads the descriptor it gets, never the path.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <string>

namespace attn::detail {

struct BeneathFile {
  int fd = -1;    // open for reading, or -1
  int error = 0;  // the errno when fd is -1
  // The open followed no symbolic link at all (the kernel lacks openat2):
  // ELOOP then means a link on the way, not a loop of them.
  bool no_links = false;
};

// Opens `relative` (a path below dir_fd's directory) for reading such that
// no step leaves that directory: a "..", an absolute path, or a symbolic
// link that leads out fails with EXDEV, a loop of links with ELOOP
// (openat2's RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS). Where the kernel
// has no openat2 (Linux before 5.6), open_without_links. The open never
// waits (O_NONBLOCK: a FIFO without a writer is opened, not waited for);
// the caller checks what it opened with fstat.
BeneathFile open_beneath(int dir_fd, const std::string& relative);

// The fallback: each component opened in turn with O_NOFOLLOW, so that no
// symbolic link is followed anywhere on the path (one fails with ELOOP);
// ".." fails with EXDEV.
BeneathFile open_without_links(int dir_fd, const std::string& relative);

}  // namespace attn::detail
