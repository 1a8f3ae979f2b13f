// The set of live communicators of this process. The API layer checks every ncclComm_t
// against it before touching the object, so a destroyed, never-created or garbage handle
// is ncclInvalidArgument with a message instead of a crash.
#pragma once

#include <vector>

#include "core/lifecycle/comm.h"

namespace braid {

void registerComm(Comm* comm);
// False when the communicator was not (or no longer) live: another thread got there first.
bool unregisterComm(Comm* comm);
bool isLiveComm(const Comm* comm);
size_t liveCommCount();

// Holds a live communicator for the length of an API call, so that ncclCommDestroy or
// ncclCommAbort from another thread waits for the call to leave (abort first makes it
// leave) instead of freeing the object under it. Not held when the handle is not live.
class CommUse {
 public:
  explicit CommUse(Comm* comm);
  ~CommUse();
  CommUse(const CommUse&) = delete;
  CommUse& operator=(const CommUse&) = delete;
  bool held() const { return comm_ != nullptr; }

 private:
  Comm* comm_ = nullptr;
};

}  // namespace braid
