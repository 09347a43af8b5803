#include "shell_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "test_util.h"

extern char** environ;

namespace attn::test {

Shell sh(const std::string& command) {
  static int counter = 0;
  const std::string base =
      temp_dir() + "/sh" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string script = base + ".sh", out = base + ".out", err = base + ".err";
  write_temp(script.substr(temp_dir().size() + 1), command);
  return run_redirected("/bin/sh " + quote(script) + " </dev/null", out, err);
}

bool have_pty() {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0) return false;
  bool ok = false;
  if (::grantpt(master) == 0 && ::unlockpt(master) == 0) {
    if (const char* name = ::ptsname(master)) {
      const int slave = ::open(name, O_RDWR | O_NOCTTY);
      ok = slave >= 0;
      if (ok) ::close(slave);
    }
  }
  ::close(master);
  return ok;
}

std::string find_program(const std::string& name) {
  const Shell r = sh("command -v " + quote(name));
  if (r.code != 0 || r.out.empty()) return "";
  std::string p = r.out;
  while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
  return p;
}

namespace {

std::string help_text(const std::vector<std::string>& command) {
  std::vector<std::string> args = command;
  args.push_back("--help");
  const Run r = run_attn(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

}  // namespace

std::set<std::string> help_flags(const std::vector<std::string>& command) {
  std::set<std::string> flags;
  std::istringstream in(help_text(command));
  std::string line;
  while (std::getline(in, line)) {
    // "  -f,--format FORMAT   table|json|csv": the first word lists the names.
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] != '-') continue;
    const std::string names = line.substr(2, line.find(' ', 2) - 2);
    std::istringstream parts(names);
    std::string name;
    while (std::getline(parts, name, ',')) flags.insert(name);
  }
  return flags;
}

std::vector<std::string> help_subcommands(const std::vector<std::string>& command) {
  std::vector<std::string> subs;
  std::istringstream in(help_text(command));
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "Subcommands:") {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0) break;
    subs.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return subs;
}

std::set<std::string> word_set(const std::string& s) {
  std::set<std::string> words;
  std::istringstream in(s);
  std::string w;
  while (in >> w) words.insert(w);
  return words;
}

pid_t start_attn(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> words = {ATTN_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<std::string> vars(env);
  for (char** e = environ; *e; ++e) vars.push_back(*e);
  std::vector<char*> envp;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The child: async-signal-safe calls only, then exec.
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
  const struct rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(ATTN_BINARY, argv.data(), envp.data());
  ::_exit(127);
}

}  // namespace attn::test
