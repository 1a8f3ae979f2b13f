// Failures the benchmark cannot recover from. Other ranks may be waiting in a collective for
// this one, so a failing rank does not unwind: it prints why, lets the report finish (the JSON
// file is completed even when the run fails) and exits the process at once. Launchers then
// stop the other processes.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "nccl.h"

namespace braid::bench {

// nccl-tests' exit statuses.
constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNccl = 3;
constexpr int kExitTimeout = 4;
constexpr int kExitWrong = 7;

// Prints `message` (one line, on stdout like nccl-tests, and on stderr), runs the hook and
// exits with `status`. Only the first failure of a process reports.
[[noreturn]] void fatal(int status, const std::string& message);

// Called by fatal() before exiting, with the message (finishes the JSON report).
void setFatalHook(std::function<void(const std::string&)> hook);

// Fails with the library's own explanation when an NCCL call does not succeed.
void checkNccl(ncclResult_t result, const char* call, const char* file, int line);

#define BENCH_NCCL(call) ::braid::bench::checkNccl((call), #call, __FILE__, __LINE__)

// -T: fails the run when no operation completes for `seconds`.
class ProgressWatch {
 public:
  explicit ProgressWatch(double seconds);
  ~ProgressWatch();
  ProgressWatch(const ProgressWatch&) = delete;
  ProgressWatch& operator=(const ProgressWatch&) = delete;

  void tick();

 private:
  static int64_t nowNs();

  double seconds_;
  std::atomic<int64_t> lastNs_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace braid::bench
