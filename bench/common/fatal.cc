#include "common/fatal.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>

namespace braid::bench {

namespace {

std::mutex& hookMutex() {
  static std::mutex mutex;
  return mutex;
}

std::function<void(const std::string&)>& hook() {
  static std::function<void(const std::string&)> instance;
  return instance;
}

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

void setFatalHook(std::function<void(const std::string&)> fn) {
  std::lock_guard<std::mutex> lock(hookMutex());
  hook() = std::move(fn);
}

void fatal(int status, const std::string& message) {
  // The first failure reports; any other thread that fails meanwhile waits here for the exit.
  static std::mutex once;
  once.lock();
  std::fflush(stdout);
  std::printf("%s: %s\n", hostName().c_str(), message.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", hostName().c_str(), message.c_str());
  {
    std::lock_guard<std::mutex> lock(hookMutex());
    if (hook()) hook()(message);
  }
  std::fflush(nullptr);
  _exit(status);
}

void checkNccl(ncclResult_t result, const char* call, const char* file, int line) {
  if (result == ncclSuccess) return;
  const char* detail = ncclGetLastError(nullptr);
  fatal(kExitNccl, std::string("Test NCCL failure ") + file + ":" + std::to_string(line) + " '" +
                       ncclGetErrorString(result) + " / " + (detail ? detail : "") + "' in " + call);
}

ProgressWatch::ProgressWatch(double seconds) : seconds_(seconds), lastNs_(nowNs()) {
  if (seconds_ <= 0) return;
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (static_cast<double>(nowNs() - lastNs_.load()) > seconds_ * 1e9) {
        fatal(kExitTimeout,
              "Test timeout: no operation completed for " + std::to_string(static_cast<int>(seconds_)) + " s (-T)");
      }
    }
  });
}

ProgressWatch::~ProgressWatch() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ProgressWatch::tick() { lastNs_.store(nowNs()); }

int64_t ProgressWatch::nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace braid::bench
