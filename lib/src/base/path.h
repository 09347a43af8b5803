// Paths as text, and what a path names, in one place: the joins, parents
// and extensions that readers, writers and the program's commands make,
// and whether a path is a regular file or a directory (following links,
// as opening it would).
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <string>

namespace attn::path {

// What stat(2) of the path finds, links followed: nothing it can reach, a
// regular file, a directory, or something else (a FIFO, a device, a
// socket).
enum class Kind { kNone, kRegularFile, kDirectory, kOther };
Kind kind_of(const std::string& p);

// kind_of(p) is kRegularFile, kDirectory, anything but kNone.
bool is_regular_file(const std::string& p);
bool is_directory(const std::string& p);
bool exists(const std::string& p);

// dir/name, with one '/' between them; name alone when dir is empty.
std::string join(const std::string& dir, const std::string& name);

// The directory a path is in: "." for a bare name, "/" for one in the root.
std::string directory_of(const std::string& p);

// The path up to and with its last '/', to put a name after: "a/b/" of
// "a/b/c.npy", "/" of "/c.npy", "" of a bare name.
std::string directory_prefix(const std::string& p);

// The last component: "c.npy" of "a/b/c.npy".
std::string file_name_of(const std::string& p);

// The extension of the last component, lowercased, without its dot; ""
// when it has none.
std::string extension(const std::string& p);

// The path without the extension of its last component and its dot:
// "out/check" of "out/check.py"; the path itself when that component has
// no dot.
std::string without_extension(const std::string& p);

}  // namespace attn::path
