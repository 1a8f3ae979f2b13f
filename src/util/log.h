// NCCL-compatible logging: NCCL_DEBUG (VERSION, WARN, INFO, ABORT, TRACE), NCCL_DEBUG_SUBSYS
// (INIT,COLL,...; a leading ^ inverts), NCCL_DEBUG_FILE (%h host, %p pid). Lines read
//   host:pid:tid [rank] NCCL INFO message
//   host:pid:tid [rank] file.cc:123 NCCL WARN message
// so that scripts written for NCCL's logs keep working. The rank comes from the calling
// thread's LogRankScope (set at API entry and in every thread a communicator owns).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace braid {

enum class LogLevel : int { None = 0, Version = 1, Warn = 2, Info = 3, Abort = 4, Trace = 5 };

// Subsystems, NCCL's names and bits.
enum LogSubsys : uint64_t {
  kLogInit = 1ull << 0,
  kLogColl = 1ull << 1,
  kLogP2p = 1ull << 2,
  kLogShm = 1ull << 3,
  kLogNet = 1ull << 4,
  kLogGraph = 1ull << 5,
  kLogTuning = 1ull << 6,
  kLogEnv = 1ull << 7,
  kLogAlloc = 1ull << 8,
  kLogCall = 1ull << 9,
  kLogProxy = 1ull << 10,
  kLogNvls = 1ull << 11,
  kLogBootstrap = 1ull << 12,
  kLogReg = 1ull << 13,
  kLogProfile = 1ull << 14,
  kLogRas = 1ull << 15,
  kLogAll = ~0ull,
};

struct LogSettings {
  LogLevel level = LogLevel::None;
  uint64_t subsysMask = kLogInit | kLogBootstrap | kLogEnv;
  std::string filePattern;  // NCCL_DEBUG_FILE, empty = stdout
};

// Pure parsers, exposed for tests. Unknown words are collected in `unknown`.
LogLevel parseLogLevel(const std::string& text, bool* valid);
uint64_t parseLogSubsys(const std::string& text, std::string* unknown);
// Expands %h (host name) and %p (pid) in an NCCL_DEBUG_FILE pattern.
std::string expandLogFilePattern(const std::string& pattern, const std::string& host, int pid);

namespace log_detail {
// The current level (-1 until NCCL_DEBUG* was read) and subsystem mask (log.cc).
extern std::atomic<int> gLevel;
extern std::atomic<uint64_t> gMask;
// The first check: reads the settings, then answers.
bool enabledSlow(LogLevel level, uint64_t subsys);
}  // namespace log_detail

// The check the macros make, inline, so that a disabled log line costs a load and a
// compare (a small operation passes several).
inline bool logEnabled(LogLevel level, uint64_t subsys) {
  const int current = log_detail::gLevel.load(std::memory_order_acquire);
  if (current < 0) return log_detail::enabledSlow(level, subsys);
  if (current < static_cast<int>(level)) return false;
  // WARN and VERSION lines ignore the subsystem mask, as in NCCL.
  if (level <= LogLevel::Warn) return true;
  return (log_detail::gMask.load(std::memory_order_relaxed) & subsys) != 0;
}
void logMessage(LogLevel level, uint64_t subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
// Re-reads NCCL_DEBUG* (ncclResetDebugInit).
void logReset();

// Sets the rank printed in this thread's log lines for its lifetime.
class LogRankScope {
 public:
  explicit LogRankScope(int rank);
  ~LogRankScope();
  LogRankScope(const LogRankScope&) = delete;
  LogRankScope& operator=(const LogRankScope&) = delete;

 private:
  int previous_;
};

}  // namespace braid

#define BRAID_LOG(level, subsys, ...)                                      \
  do {                                                                     \
    if (::braid::logEnabled(level, subsys)) {                              \
      ::braid::logMessage(level, subsys, __FILE__, __LINE__, __VA_ARGS__); \
    }                                                                      \
  } while (0)
#define BRAID_WARN(...) BRAID_LOG(::braid::LogLevel::Warn, ::braid::kLogAll, __VA_ARGS__)
#define BRAID_INFO(subsys, ...) BRAID_LOG(::braid::LogLevel::Info, subsys, __VA_ARGS__)
#define BRAID_TRACE(subsys, ...) BRAID_LOG(::braid::LogLevel::Trace, subsys, __VA_ARGS__)
