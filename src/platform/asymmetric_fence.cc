#include "platform/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>

namespace braid {

namespace asymmetric_fence_detail {
std::atomic<bool> lightPublish{false};
}

namespace {

long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

// Whether this kernel (and any seccomp filter) lets a process run GLOBAL_EXPEDITED.
bool sleepersCanFence() {
  static const bool can = [] {
    long commands = membarrier(MEMBARRIER_CMD_QUERY);
    return commands > 0 && (commands & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0;
  }();
  return can;
}

std::mutex registrationMutex;
bool forkHandlerInstalled = false;

void forgetRegistrationInChild() { asymmetric_fence_detail::lightPublish.store(false, std::memory_order_relaxed); }

}  // namespace

void enableLightPublish() {
  if (lightPublishEnabled()) return;
  std::lock_guard<std::mutex> lock(registrationMutex);
  if (lightPublishEnabled()) return;
  if (!forkHandlerInstalled) {
    forkHandlerInstalled = pthread_atfork(nullptr, nullptr, forgetRegistrationInChild) == 0;
    if (!forkHandlerInstalled) return;  // a child could not tell that it is unregistered
  }
  if (!sleepersCanFence() || membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) return;
  asymmetric_fence_detail::lightPublish.store(true, std::memory_order_relaxed);
}

void fenceBeforeSleep() {
  if (sleepersCanFence()) (void)membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
}

}  // namespace braid
