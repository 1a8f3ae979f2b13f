#include "core/health/last_error.h"

#include <mutex>

#include "core/lifecycle/comm_registry.h"

namespace braid {

namespace {

std::mutex& globalMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

std::string& globalLastError() {
  static std::string* text = new std::string();
  return *text;
}

}  // namespace

void recordLastError(Comm* comm, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(globalMutex());
    globalLastError() = message;
  }
  if (comm) comm->health.recordCallError(message);
}

const char* lastErrorText(Comm* comm) {
  thread_local std::string copy;
  if (comm && isLiveComm(comm)) {
    copy = comm->health.lastError();
    if (!copy.empty()) return copy.c_str();
  }
  std::lock_guard<std::mutex> lock(globalMutex());
  copy = globalLastError();
  return copy.c_str();
}

}  // namespace braid
