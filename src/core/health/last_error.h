// ncclGetLastError's memory: the message of the last failed API call, process-wide and
// per communicator. The returned pointer stays valid in the calling thread until its next
// ncclGetLastError call.
#pragma once

#include "core/lifecycle/comm.h"
#include "util/status.h"

namespace braid {

void recordLastError(Comm* comm, const std::string& message);
const char* lastErrorText(Comm* comm);

}  // namespace braid
