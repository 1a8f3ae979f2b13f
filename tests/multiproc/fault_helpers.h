// What the fault tests share: timing in seconds (and reading it back from a child's
// output), and a rank that stops itself without leaving a stopped process behind.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace braid::test {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The number a child printed after `key` ("ERROR_AFTER 0.42"); -1 when it did not.
inline double valueAfter(const std::string& output, const std::string& key) {
  size_t at = output.find(key);
  return at == std::string::npos ? -1 : std::atof(output.c_str() + at + key.size());
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
