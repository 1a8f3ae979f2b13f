#include "braidrun/process_group.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "braidrun/signal_relay.h"

namespace braid::run {

namespace {

void closeFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// A pipe whose read end (kept by braidrun) is non-blocking and both ends close-on-exec; the
// child gets the write end through dup2, which clears the flag on the target descriptor.
int makeOutputPipe(int* readFd, int* writeFd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  int flags = fcntl(fds[0], F_GETFL);
  fcntl(fds[0], F_SETFL, flags | O_NONBLOCK);
  *readFd = fds[0];
  *writeFd = fds[1];
  return 0;
}

std::vector<char*> toCStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

ProcessGroup::ProcessGroup(ProcessGroup&& other) noexcept { *this = std::move(other); }

ProcessGroup& ProcessGroup::operator=(ProcessGroup&& other) noexcept {
  if (this != &other) {
    closeStdout();
    closeStderr();
    pid_ = std::exchange(other.pid_, -1);
    reaped_ = std::exchange(other.reaped_, false);
    exit_ = other.exit_;
    stdoutFd_ = std::exchange(other.stdoutFd_, -1);
    stderrFd_ = std::exchange(other.stderrFd_, -1);
  }
  return *this;
}

ProcessGroup::~ProcessGroup() {
  closeStdout();
  closeStderr();
}

int ProcessGroup::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int outWrite = -1;
  int errWrite = -1;
  int rc = makeOutputPipe(&stdoutFd_, &outWrite);
  if (rc == 0) rc = makeOutputPipe(&stderrFd_, &errWrite);
  if (rc != 0) {
    closeFd(&outWrite);
    closeStdout();
    return rc;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Ranks share no terminal input: several readers of one tty would race, and a rank reading
  // the terminal from its own (background) process group would be stopped by SIGTTIN.
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, outWrite, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, errWrite, STDERR_FILENO);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // Handled signals reset at exec anyway, but an ignored SIGPIPE would be inherited.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : relayedSignalSet()) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<char*> cArgv = toCStrings(argv);
  std::vector<char*> cEnv = toCStrings(env);
  pid_t pid = -1;
  rc = posix_spawnp(&pid, cArgv[0], &actions, &attr, cArgv.data(), cEnv.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  closeFd(&outWrite);
  closeFd(&errWrite);
  if (rc != 0) {
    closeStdout();
    closeStderr();
    return rc;
  }
  pid_ = pid;
  reaped_ = false;
  return 0;
}

void ProcessGroup::signalGroup(int sig) const {
  if (pid_ > 0) killpg(pid_, sig);
}

bool ProcessGroup::tryReap() {
  if (reaped_ || pid_ <= 0) return reaped_;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return false;
  reaped_ = true;
  if (WIFSIGNALED(status)) {
    exit_ = {0, WTERMSIG(status)};
  } else {
    exit_ = {WEXITSTATUS(status), 0};
  }
  return true;
}

void ProcessGroup::closeStdout() { closeFd(&stdoutFd_); }
void ProcessGroup::closeStderr() { closeFd(&stderrFd_); }

std::string signalName(int sig) {
  struct Named {
    int sig;
    const char* name;
  };
  static constexpr Named kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
      {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
  };
  for (const Named& n : kNames) {
    if (n.sig == sig) return n.name;
  }
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  return "unknown signal";
}

}  // namespace braid::run
