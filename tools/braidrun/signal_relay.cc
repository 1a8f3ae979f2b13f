#include "braidrun/signal_relay.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace braid::run {

namespace {

int gReadFd = -1;
int gWriteFd = -1;

void onSignal(int sig) {
  int savedErrno = errno;
  auto byte = static_cast<unsigned char>(sig);
  // Non-blocking: if the pipe is full, enough wake-ups are already queued.
  [[maybe_unused]] ssize_t n = write(gWriteFd, &byte, 1);
  errno = savedErrno;
}

}  // namespace

bool installSignalRelay(std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return false;
  }
  gReadFd = fds[0];
  gWriteFd = fds[1];

  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART keeps blocking writes of forwarded output from failing with EINTR; poll()
  // still returns early, which is what wakes the loop.
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (int sig : relayedSignalSet()) {
    if (sig == SIGPIPE) continue;
    if (sigaction(sig, &sa, nullptr) != 0) {
      *error = std::string("cannot install a signal handler: ") + std::strerror(errno);
      return false;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  return true;
}

int signalRelayFd() { return gReadFd; }

std::vector<int> takeRelayedSignals() {
  std::vector<int> signals;
  unsigned char buf[64];
  for (;;) {
    ssize_t n = read(gReadFd, buf, sizeof(buf));
    if (n > 0) {
      signals.insert(signals.end(), buf, buf + n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  return signals;
}

std::vector<int> relayedSignalSet() {
  std::vector<int> set(std::begin(kForwardedSignals), std::end(kForwardedSignals));
  set.push_back(SIGCHLD);
  set.push_back(SIGPIPE);
  return set;
}

}  // namespace braid::run
