#include "core/comm_registry.h"

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

void unregisterComm(Comm* comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().live.erase(comm);
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
