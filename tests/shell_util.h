// Helpers for tests that drive shells and other programs: running a shell
// command, finding a program on PATH, and reading the flags and commands
// that `attn ... --help` shows.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn::test {

using Shell = Run;  // a shell command's exit code, stdout and stderr

// Runs `command` with /bin/sh, stdin from /dev/null.
Shell sh(const std::string& command);

// The program's path when it is on PATH, else "".
std::string find_program(const std::string& name);

// Whether this machine can open a pseudo-terminal (script(1) and zsh's
// zpty need one; a chroot or container without /dev/pts cannot).
bool have_pty();

// The flags `attn <command...> --help` lists ("-f", "--format", ...).
std::set<std::string> help_flags(const std::vector<std::string>& command);

// The subcommands `attn <command...> --help` lists.
std::vector<std::string> help_subcommands(const std::vector<std::string>& command);

// Starts attn with extra environment assignments ("NAME=value") before
// this process's own, its standard streams on /dev/null, every signal at
// its default action and unblocked (a shell that starts the suite in the
// background ignores SIGINT), and no core files (SIGQUIT, SIGSEGV, SIGXCPU,
// ... would write them). Returns its pid (-1 when it could not start), for
// the caller to signal and waitpid.
pid_t start_attn(const std::vector<std::string>& args, const std::vector<std::string>& env);

// Words of a string split at spaces, as a set.
std::set<std::string> word_set(const std::string& s);

}  // namespace attn::test
