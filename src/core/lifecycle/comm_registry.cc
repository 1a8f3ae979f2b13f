#include "core/lifecycle/comm_registry.h"

#include <mutex>
#include <unordered_set>

namespace braid {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_set<const Comm*> live;
};

Registry& registry() {
  static Registry* instance = new Registry();  // outlives every communicator, even at exit
  return *instance;
}

}  // namespace

void registerComm(Comm* comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().live.insert(comm);
}

bool unregisterComm(Comm* comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().live.erase(comm) > 0;
}

CommUse::CommUse(Comm* comm) {
  if (!comm) return;
  std::lock_guard<std::mutex> lock(registry().mutex);
  if (registry().live.count(comm) == 0) return;
  comm->activeCalls.fetch_add(1);
  comm_ = comm;
}

CommUse::~CommUse() {
  if (comm_) comm_->activeCalls.fetch_sub(1);
}

bool isLiveComm(const Comm* comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().live.count(comm) > 0;
}

size_t liveCommCount() {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().live.size();
}

}  // namespace braid
