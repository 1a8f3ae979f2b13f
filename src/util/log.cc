#include "util/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "util/env.h"
#include "util/format.h"
#include "util/param.h"

namespace braid {

namespace {

struct SubsysName {
  const char* name;
  uint64_t bit;
};
constexpr SubsysName kSubsysNames[] = {
    {"INIT", kLogInit},
    {"COLL", kLogColl},
    {"P2P", kLogP2p},
    {"SHM", kLogShm},
    {"NET", kLogNet},
    {"GRAPH", kLogGraph},
    {"TUNING", kLogTuning},
    {"ENV", kLogEnv},
    {"ALLOC", kLogAlloc},
    {"CALL", kLogCall},
    {"PROXY", kLogProxy},
    {"NVLS", kLogNvls},
    {"BOOTSTRAP", kLogBootstrap},
    {"REG", kLogReg},
    {"PROFILE", kLogProfile},
    {"RAS", kLogRas},
    {"ALL", kLogAll},
};

// The logger's state. Level and mask are atomics read on every log macro; the rest is
// guarded by `mutex`. Initialised on first use and again by logReset().
struct Logger {
  // The level (-1: not initialised yet) and mask are log_detail's (log.h), which the
  // macros' inline check reads.
  std::atomic<int>& level = log_detail::gLevel;
  std::atomic<uint64_t>& mask = log_detail::gMask;
  std::mutex mutex;
  FILE* out = stdout;
  bool ownsFile = false;
  char host[64] = {};
  std::vector<std::string> pendingWarnings;  // settings problems, printed once initialised
};

Logger& logger() {
  static Logger* instance = new Logger();  // never destroyed: threads may log during exit
  return *instance;
}

thread_local int tlsRank = -1;

// Read when logging starts (the first message) and again by ncclResetDebugInit.
const StringParam kDebug("NCCL_DEBUG", "", "log level: VERSION, WARN, INFO, ABORT or TRACE (unset: silent)");
const StringParam kDebugSubsys("NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,ENV",
                               "subsystems printed at INFO (comma-separated, ^ inverts)");
const StringParam kDebugFile("NCCL_DEBUG_FILE", "", "file to log to (%h: host name, %p: pid; unset: stdout)");

void initLocked(Logger& log) {
  const EnvSource& env = EnvSource::process();
  LogSettings settings;
  if (auto levelText = kDebug.getIfSet(env)) {
    bool valid = true;
    settings.level = parseLogLevel(*levelText, &valid);
    if (!valid) {
      settings.level = LogLevel::Warn;
      log.pendingWarnings.push_back(
          strFormat("NCCL_DEBUG=%s is not one of VERSION, WARN, INFO, ABORT, TRACE; using WARN", levelText->c_str()));
    }
  }
  if (auto subsysText = kDebugSubsys.getIfSet(env)) {
    std::string unknown;
    settings.subsysMask = parseLogSubsys(*subsysText, &unknown);
    if (!unknown.empty()) {
      log.pendingWarnings.push_back(strFormat("NCCL_DEBUG_SUBSYS: ignoring unknown subsystem(s) %s", unknown.c_str()));
    }
  }
  if (auto fileText = kDebugFile.getIfSet(env)) settings.filePattern = *fileText;
  for (const std::string& where : env.malformedLines()) {
    log.pendingWarnings.push_back("configuration file line ignored (expected NAME=value): " + where);
  }

  gethostname(log.host, sizeof(log.host) - 1);
  if (char* dot = std::strchr(log.host, '.')) *dot = '\0';

  if (log.ownsFile && log.out) std::fclose(log.out);
  log.out = stdout;
  log.ownsFile = false;
  if (!settings.filePattern.empty() && settings.level > LogLevel::None) {
    std::string path = expandLogFilePattern(settings.filePattern, log.host, static_cast<int>(getpid()));
    if (FILE* file = std::fopen(path.c_str(), "w")) {
      log.out = file;
      log.ownsFile = true;
    } else {
      log.pendingWarnings.push_back(
          strFormat("NCCL_DEBUG_FILE: cannot open %s (%s); logging to stdout", path.c_str(), std::strerror(errno)));
    }
  }
  log.mask.store(settings.subsysMask, std::memory_order_relaxed);
  log.level.store(static_cast<int>(settings.level), std::memory_order_release);
}

int currentLevel() {
  Logger& log = logger();
  int level = log.level.load(std::memory_order_acquire);
  if (level >= 0) return level;
  std::vector<std::string> warnings;
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    if (log.level.load(std::memory_order_relaxed) < 0) initLocked(log);
    warnings.swap(log.pendingWarnings);
  }
  for (const std::string& warning : warnings) BRAID_WARN("%s", warning.c_str());
  return log.level.load(std::memory_order_acquire);
}

}  // namespace

LogLevel parseLogLevel(const std::string& text, bool* valid) {
  *valid = true;
  if (equalsIgnoreCase(text, "VERSION")) return LogLevel::Version;
  if (equalsIgnoreCase(text, "WARN")) return LogLevel::Warn;
  if (equalsIgnoreCase(text, "INFO")) return LogLevel::Info;
  if (equalsIgnoreCase(text, "ABORT")) return LogLevel::Abort;
  if (equalsIgnoreCase(text, "TRACE")) return LogLevel::Trace;
  if (equalsIgnoreCase(text, "NONE")) return LogLevel::None;
  *valid = false;
  return LogLevel::Warn;
}

uint64_t parseLogSubsys(const std::string& text, std::string* unknown) {
  std::string_view spec = trim(text);
  bool invert = !spec.empty() && spec.front() == '^';
  if (invert) spec.remove_prefix(1);
  uint64_t mask = 0;
  for (const std::string& word : splitList(spec, ',')) {
    bool found = false;
    for (const SubsysName& entry : kSubsysNames) {
      if (equalsIgnoreCase(word, entry.name)) {
        mask |= entry.bit;
        found = true;
      }
    }
    if (!found) {
      if (!unknown->empty()) *unknown += ",";
      *unknown += word;
    }
  }
  return invert ? ~mask : mask;
}

std::string expandLogFilePattern(const std::string& pattern, const std::string& host, int pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char code = pattern[i + 1];
      if (code == 'h') {
        out += host;
        ++i;
        continue;
      }
      if (code == 'p') {
        out += std::to_string(pid);
        ++i;
        continue;
      }
      if (code == '%') {
        out += '%';
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

namespace log_detail {

constinit std::atomic<int> gLevel{-1};
constinit std::atomic<uint64_t> gMask{0};

bool enabledSlow(LogLevel level, uint64_t subsys) {
  currentLevel();  // reads NCCL_DEBUG* once
  return logEnabled(level, subsys);
}

}  // namespace log_detail

void logMessage(LogLevel level, uint64_t /*subsys*/, const char* file, int line, const char* fmt, ...) {
  Logger& log = logger();
  va_list args;
  va_start(args, fmt);
  std::string text = strFormatV(fmt, args);
  va_end(args);

  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  std::string rankText = tlsRank >= 0 ? strFormat(" [%d]", tlsRank) : std::string();
  long tid = static_cast<long>(syscall(SYS_gettid));
  std::string lineText;
  switch (level) {
    case LogLevel::Warn:
      lineText = strFormat("%s:%d:%ld%s %s:%d NCCL WARN %s\n", log.host, static_cast<int>(getpid()), tid,
                           rankText.c_str(), base, line, text.c_str());
      break;
    case LogLevel::Trace:
      lineText = strFormat("%s:%d:%ld%s %s:%d NCCL TRACE %s\n", log.host, static_cast<int>(getpid()), tid,
                           rankText.c_str(), base, line, text.c_str());
      break;
    default:
      // The version line is INFO-labelled too, as NCCL prints it ("NCCL INFO NCCL version ...").
      lineText = strFormat("%s:%d:%ld%s NCCL INFO %s\n", log.host, static_cast<int>(getpid()), tid, rankText.c_str(),
                           text.c_str());
      break;
  }
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    std::fputs(lineText.c_str(), log.out);
    std::fflush(log.out);
  }
  // NCCL_DEBUG=ABORT: stop at the first warning, with a core dump to inspect.
  if (level == LogLevel::Warn && log.level.load() == static_cast<int>(LogLevel::Abort)) std::abort();
}

void logReset() {
  Logger& log = logger();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.level.store(-1, std::memory_order_release);
}

LogRankScope::LogRankScope(int rank) : previous_(tlsRank) { tlsRank = rank; }
LogRankScope::~LogRankScope() { tlsRank = previous_; }

}  // namespace braid
