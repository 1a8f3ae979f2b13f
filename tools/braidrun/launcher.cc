#include "braidrun/launcher.h"

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "braidrun/output_forwarder.h"
#include "braidrun/process_group.h"
#include "braidrun/rank_environment.h"
#include "braidrun/signal_relay.h"

namespace braid::run {

namespace {

using Clock = std::chrono::steady_clock;

// How long stopped ranks get to exit on their own before SIGKILL.
constexpr auto kKillGrace = std::chrono::seconds(3);
// Once every rank has exited, output pipes still held open by something a rank left behind
// (outside its process group) are waited on this long, then abandoned rather than hanging.
constexpr auto kDrainGrace = std::chrono::seconds(1);
// Enough reads to empty a full pipe (at most 1 MiB on Linux) when a rank ends.
constexpr int kMaxDrainReads = 32;

void report(const std::string& message) { writeAll(STDERR_FILENO, "braidrun: " + message + "\n"); }

std::string formatSeconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", seconds);
  return buf;
}

// Two pipe ends stay open in braidrun per rank; the default soft limit of 1024 descriptors
// would not cover 1024 ranks.
void raiseDescriptorLimit(int ranks) {
  rlimit limit = {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t needed = static_cast<rlim_t>(ranks) * 2 + 32;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed) {
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? needed : std::min(needed, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

struct Rank {
  ProcessGroup process;
  OutputForwarder out;
  OutputForwarder err;
};

class Job {
 public:
  explicit Job(const Options& options) : options_(options) {}

  int run() {
    if (start()) loop();
    for (Rank& r : ranks_) {
      r.out.finish();
      r.err.finish();
    }
    if (status_) return *status_;
    return receivedSignal_ ? 128 + receivedSignal_ : 0;
  }

 private:
  bool start();
  void loop();
  void onExternalSignal(int sig);
  void onRankEnded(size_t rank);
  void beginStop(int sig);
  void signalLiveGroups(int sig);
  // One read from one of a rank's pipes; closes it at end of file. False when nothing was read.
  bool pump(Rank& r, bool fromStdout);
  int pollTimeoutMs(Clock::time_point now) const;

  const Options& options_;
  std::vector<Rank> ranks_;
  std::optional<int> status_;  // braidrun's exit status, once the first failure decides it
  int receivedSignal_ = 0;
  bool stopping_ = false;
  bool killed_ = false;
  std::optional<Clock::time_point> timeoutAt_;
  std::optional<Clock::time_point> killAt_;
  std::optional<Clock::time_point> drainUntil_;
};

bool Job::start() {
  std::string error;
  if (!installSignalRelay(&error)) {
    report(error);
    status_ = kExitInternal;
    return false;
  }
  raiseDescriptorLimit(options_.np);

  JobInfo job;
  job.worldSize = options_.np;
  job.jobId = makeJobId();
  bool portGiven = std::any_of(options_.env.begin(), options_.env.end(),
                               [](const EnvAssignment& e) { return e.name == "MASTER_PORT"; });
  if (!portGiven) {
    std::optional<int> port = findFreePort(&error);
    if (!port) {
      report(error);
      status_ = kExitInternal;
      return false;
    }
    job.masterPort = std::to_string(*port);
  }

  ranks_.reserve(static_cast<size_t>(options_.np));
  for (int i = 0; i < options_.np; ++i) {
    std::string prefix;
    if (options_.prefixOutput) prefix.append("[").append(std::to_string(i)).append("] ");
    Rank& r = ranks_.emplace_back(
        Rank{ProcessGroup(), OutputForwarder(STDOUT_FILENO, prefix), OutputForwarder(STDERR_FILENO, prefix)});
    int rc = r.process.spawn(options_.command, rankEnvironment(environ, i, job, options_.env));
    if (rc != 0) {
      std::string where = i == 0 ? "" : " (rank " + std::to_string(i) + ")";
      report("cannot run " + options_.command[0] + ": " + std::strerror(rc) + where);
      ranks_.pop_back();
      status_ = kExitCannotRun;
      // Ranks already started are useless without this one; the loop reaps them.
      stopping_ = killed_ = true;
      signalLiveGroups(SIGKILL);
      return !ranks_.empty();
    }
  }
  if (options_.timeoutSec) {
    timeoutAt_ =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*options_.timeoutSec));
  }
  return true;
}

void Job::loop() {
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, bool>> owners;  // for fds[k + 1]: rank and whether it is stdout
  for (;;) {
    for (size_t i = 0; i < ranks_.size(); ++i) {
      if (!ranks_[i].process.reaped() && ranks_[i].process.tryReap()) onRankEnded(i);
    }

    Clock::time_point now = Clock::now();
    if (timeoutAt_ && now >= *timeoutAt_ && !stopping_) {
      report("timed out after " + formatSeconds(*options_.timeoutSec) + " s; stopping all ranks");
      status_ = kExitTimeout;
      beginStop(SIGTERM);
    }
    if (killAt_ && now >= *killAt_ && !killed_) {
      killed_ = true;
      signalLiveGroups(SIGKILL);
    }
    bool allReaped = std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.process.reaped(); });
    if (allReaped) {
      bool outputOpen = std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.process.outputOpen(); });
      if (!outputOpen) return;
      if (!drainUntil_) drainUntil_ = now + kDrainGrace;
      if (now >= *drainUntil_) return;
    }

    fds.assign(1, pollfd{signalRelayFd(), POLLIN, 0});
    owners.clear();
    for (size_t i = 0; i < ranks_.size(); ++i) {
      if (int fd = ranks_[i].process.stdoutFd(); fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
        owners.emplace_back(i, true);
      }
      if (int fd = ranks_[i].process.stderrFd(); fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
        owners.emplace_back(i, false);
      }
    }
    int ready = poll(fds.data(), fds.size(), pollTimeoutMs(now));
    if (ready < 0) {
      if (errno == EINTR) continue;
      report(std::string("poll failed: ") + std::strerror(errno));
      if (!status_) status_ = kExitInternal;
      signalLiveGroups(SIGKILL);
      return;
    }
    if (fds[0].revents) {
      for (int sig : takeRelayedSignals()) {
        if (sig != SIGCHLD) onExternalSignal(sig);
      }
    }
    for (size_t k = 1; k < fds.size(); ++k) {
      if (fds[k].revents) pump(ranks_[owners[k - 1].first], owners[k - 1].second);
    }
  }
}

bool Job::pump(Rank& r, bool fromStdout) {
  int fd = fromStdout ? r.process.stdoutFd() : r.process.stderrFd();
  if (fd < 0) return false;
  OutputForwarder& forwarder = fromStdout ? r.out : r.err;
  OutputForwarder::Pump result = forwarder.pumpFrom(fd);
  if (result == OutputForwarder::Pump::kClosed) {
    forwarder.finish();
    if (fromStdout) {
      r.process.closeStdout();
    } else {
      r.process.closeStderr();
    }
  }
  return result == OutputForwarder::Pump::kData;
}

void Job::onRankEnded(size_t rank) {
  Rank& r = ranks_[rank];
  // The rank's last words are already in its pipes; print them before saying it failed.
  // Bounded, because something the rank left running may still be writing.
  for (int k = 0; k < kMaxDrainReads && pump(r, true); ++k) {
  }
  for (int k = 0; k < kMaxDrainReads && pump(r, false); ++k) {
  }
  const RankExit& outcome = r.process.outcome();
  if (outcome.succeeded() || status_) return;
  status_ = outcome.shellStatus();
  if (stopping_) return;  // braidrun was signalled; the rank most likely died of that

  std::string message = "rank " + std::to_string(rank);
  if (outcome.signal) {
    message += " was killed by signal " + std::to_string(outcome.signal) + " (" + signalName(outcome.signal) + ")";
  } else {
    message += " exited with status " + std::to_string(outcome.exitCode);
  }
  if (ranks_.size() > 1) message += "; stopping the other ranks";
  report(message);
  beginStop(SIGTERM);
}

void Job::onExternalSignal(int sig) {
  if (stopping_) {
    // Asked again while stopping: the user does not want to wait out the grace period.
    if (!killed_) {
      killed_ = true;
      signalLiveGroups(SIGKILL);
    }
    return;
  }
  receivedSignal_ = sig;
  report("received " + signalName(sig) + "; stopping all ranks");
  beginStop(sig);
}

void Job::beginStop(int sig) {
  stopping_ = true;
  killAt_ = Clock::now() + kKillGrace;
  signalLiveGroups(sig);
}

void Job::signalLiveGroups(int sig) {
  for (Rank& r : ranks_) {
    // A reaped leader whose pipes are closed leaves nothing to signal, and its number may
    // since belong to an unrelated process group.
    if (!r.process.reaped() || r.process.outputOpen()) r.process.signalGroup(sig);
  }
}

int Job::pollTimeoutMs(Clock::time_point now) const {
  std::optional<Clock::time_point> next;
  auto consider = [&next](const std::optional<Clock::time_point>& t) {
    if (t && (!next || *t < *next)) next = t;
  };
  if (!stopping_) consider(timeoutAt_);
  if (!killed_) consider(killAt_);
  consider(drainUntil_);
  if (!next) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 60'000));
}

}  // namespace

int runJob(const Options& options) { return Job(options).run(); }

}  // namespace braid::run
