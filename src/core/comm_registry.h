// The set of live communicators of this process. The API layer checks every ncclComm_t
// against it before touching the object, so a destroyed, never-created or garbage handle
// is ncclInvalidArgument with a message instead of a crash.
#pragma once

#include <vector>

#include "core/comm.h"

namespace braid {

void registerComm(Comm* comm);
void unregisterComm(Comm* comm);
bool isLiveComm(const Comm* comm);
size_t liveCommCount();

}  // namespace braid
