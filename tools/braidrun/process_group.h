// One rank's process: started in a process group of its own (so a rank that forks helpers
// is stopped as a whole), with its stdout and stderr on pipes that braidrun reads.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace braid::run {

// How a rank ended, decoded from a wait status.
struct RankExit {
  int exitCode = 0;  // meaningful when signal == 0
  int signal = 0;    // non-zero when killed by a signal
  bool succeeded() const { return signal == 0 && exitCode == 0; }
  // The status braidrun itself exits with for this outcome: the code, or 128+signal.
  int shellStatus() const { return signal ? 128 + signal : exitCode; }
};

class ProcessGroup {
 public:
  ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;
  ProcessGroup(ProcessGroup&& other) noexcept;
  ProcessGroup& operator=(ProcessGroup&& other) noexcept;
  ~ProcessGroup();

  // Starts `argv[0]` (searched in PATH) with environment `env`, stdin on /dev/null.
  // Returns 0 or an errno value; an exec failure (ENOENT, EACCES, ...) is reported here
  // because posix_spawnp only returns once the child has exec'd or failed to.
  int spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env);

  // Sends `sig` to the whole group. Harmless once the group is gone.
  void signalGroup(int sig) const;

  // Collects the exit status if the leader has ended; true once it has been reaped.
  bool tryReap();
  bool reaped() const { return reaped_; }
  const RankExit& outcome() const { return exit_; }

  // Read ends of the output pipes (non-blocking); -1 once closed.
  int stdoutFd() const { return stdoutFd_; }
  int stderrFd() const { return stderrFd_; }
  void closeStdout();
  void closeStderr();
  bool outputOpen() const { return stdoutFd_ >= 0 || stderrFd_ >= 0; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  RankExit exit_;
  int stdoutFd_ = -1;
  int stderrFd_ = -1;
};

// "SIGTERM" for SIGTERM, "SIGRTMIN+3" for a real-time signal, "unknown signal" otherwise.
std::string signalName(int sig);

}  // namespace braid::run
