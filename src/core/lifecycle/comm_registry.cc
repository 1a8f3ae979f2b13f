#include "core/lifecycle/comm_registry.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace braid {

namespace {

// Every API call takes this lock once, for a lookup of a few dozen instructions; a
// pthread mutex's lock and unlock cost more than that. Holders never block inside, so a
// waiter spins, yielding its core between looks.
class RegistryLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

struct Registry {
  RegistryLock lock;
  std::unordered_set<const Comm*> live;
};

Registry& registry() {
  static Registry* instance = new Registry();  // outlives every communicator, even at exit
  return *instance;
}

}  // namespace

void registerComm(Comm* comm) {
  std::lock_guard<RegistryLock> lock(registry().lock);
  registry().live.insert(comm);
}

bool unregisterComm(Comm* comm) {
  std::lock_guard<RegistryLock> lock(registry().lock);
  return registry().live.erase(comm) > 0;
}

CommUse::CommUse(Comm* comm) {
  if (!comm) return;
  std::lock_guard<RegistryLock> lock(registry().lock);
  if (registry().live.count(comm) == 0) return;
  comm->activeCalls.fetch_add(1);
  comm_ = comm;
}

CommUse::~CommUse() {
  if (comm_) comm_->activeCalls.fetch_sub(1);
}

bool isLiveComm(const Comm* comm) {
  std::lock_guard<RegistryLock> lock(registry().lock);
  return registry().live.count(comm) > 0;
}

size_t liveCommCount() {
  std::lock_guard<RegistryLock> lock(registry().lock);
  return registry().live.size();
}

}  // namespace braid
