#include "io/temp_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <mutex>
#include <vector>

namespace attn::detail {

namespace {

// The handler's view of the live temporary files. A slot is claimed
// (kFilling) before its buffer is written and published (kLive) only once
// the buffer holds the name of a file that exists; the handler unlinks
// kLive slots only. attn has one temporary file at a time; a program using
// the library from several threads gets up to kSlots, then unlisted ones
// (still removed on errors, not on signals).
enum : int { kFree = 0, kFilling = 1, kLive = 2 };
constexpr int kSlots = 16;
struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the states");

// Every signal whose default action ends the process, but SIGKILL, which
// no handler sees: first those sent to it (by kill, a terminal, a timer, a
// limit such as SIGXCPU or SIGXFSZ; the real-time ones are added at run
// time), then the faults.
const int kSentSignals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,   SIGPIPE,
                            SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
                            SIGXCPU, SIGXFSZ, SIGIO,   SIGPWR,    SIGSTKFLT};
// Faults of the running code: a crash leaves no file either. They are
// never blocked (a fault while blocked kills at once); SIGBUS from a cut
// mapped input is answered by file_io.cc's handler, which hands others on.
const int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT};

// The sent signals with the real-time ones (SIGRTMIN is a function call
// in glibc, which keeps the first few for itself).
sigset_t sent_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kSentSignals) sigaddset(&set, sig);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigaddset(&set, sig);
  return set;
}

extern "C" void remove_temp_files_and_die(int sig) {
  const int saved = errno;
  for (Slot& s : g_slots) {
    // A slot being filled belongs to a thread that blocks these signals
    // between creating its file and listing it (BlockSignals): the signal
    // came to another thread of the process, such as a worker of the
    // kernels' pool, and the file may exist already. That thread lists it
    // within microseconds unless descheduled; wait for it (at most a
    // second), or the file would outlive the process.
    for (int i = 0; i < 10000 && s.state.load() == kFilling; ++i) {
      struct timespec pause {
        0, 100000
      };
      ::nanosleep(&pause, nullptr);
    }
    if (s.state.load() == kLive) ::unlink(s.path);
  }
  // The default action, as if no handler had been installed: the signal is
  // blocked while its handler runs, so it is delivered on return.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
  errno = saved;
}

}  // namespace

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    const sigset_t sent = sent_signals();
    std::vector<int> all(std::begin(kFaultSignals), std::end(kFaultSignals));
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sigismember(&sent, sig) == 1) all.push_back(sig);
    }
    for (int sig : all) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_temp_files_and_die;
      // The sent signals wait while one removes the files.
      sa.sa_mask = sent;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

namespace {

int claim_slot() {
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (g_slots[i].state.compare_exchange_strong(expected, kFilling)) return i;
  }
  return -1;
}

// Blocks the handled signals in this thread between creating a file and
// listing it, so a signal cannot fall between the two.
class BlockSignals {
 public:
  BlockSignals() {
    const sigset_t set = sent_signals();
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

}  // namespace

TempFile::TempFile(const std::string& dir) {
  install_cleanup_handlers();
  std::string pattern = (dir.empty() ? std::string(".") : dir) + "/.attn-XXXXXX";
  if (pattern.size() >= PATH_MAX) {
    error_ = ENAMETOOLONG;
    return;
  }
  BlockSignals block;
  slot_ = claim_slot();
  // mkostemp fills in the name in place: in the slot, so the handler's copy
  // is the real name; in a local buffer when the table is full.
  std::vector<char> local;
  char* name = nullptr;
  if (slot_ >= 0) {
    name = g_slots[slot_].path;
  } else {
    local.resize(pattern.size() + 1);
    name = local.data();
  }
  std::memcpy(name, pattern.c_str(), pattern.size() + 1);
  fd_ = ::mkostemp(name, O_CLOEXEC);
  if (fd_ < 0) {
    error_ = errno;
    if (slot_ >= 0) g_slots[slot_].state.store(kFree);
    slot_ = -1;
    return;
  }
  path_ = name;
  if (slot_ >= 0) g_slots[slot_].state.store(kLive);
}

TempFile::~TempFile() {
  close();
  if (!committed_ && !path_.empty()) ::unlink(path_.c_str());
  // Unlisted only once removed: a signal in between finds it listed.
  if (slot_ >= 0) g_slots[slot_].state.store(kFree);
}

int TempFile::close() {
  if (fd_ < 0) return 0;
  const int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0 ? 0 : errno;
}

int TempFile::commit(const std::string& target) {
  close();
  if (::rename(path_.c_str(), target.c_str()) != 0) return errno;
  committed_ = true;
  // The name is gone (it is the target's now): the handler must not remove
  // it. A signal just before this line finds no file under the old name.
  if (slot_ >= 0) g_slots[slot_].state.store(kFree);
  slot_ = -1;
  return 0;
}

int live_temp_files() {
  int n = 0;
  for (const Slot& s : g_slots) n += s.state.load() == kLive;
  return n;
}

}  // namespace attn::detail
