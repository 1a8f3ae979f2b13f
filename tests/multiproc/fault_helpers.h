// What the fault tests share: timing in seconds, and a rank that stops itself without
// leaving a stopped process behind.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>

namespace braid::test {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A stopped process cannot end itself: a forked helper kills it after `seconds`, so that no
// test leaves a stopped rank behind. (The helper only sleeps and calls kill: safe after fork.)
inline void stopSelfUntilKilled(int seconds) {
  pid_t self = getpid();
  if (fork() == 0) {
    sleep(static_cast<unsigned>(seconds));
    kill(self, SIGKILL);
    _exit(0);
  }
  raise(SIGSTOP);
}

}  // namespace braid::test
