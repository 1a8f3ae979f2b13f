// Whether a communicator can take a management call (ncclCommGetUniqueId, ncclCommGrow,
// ncclCommSuspend, ncclCommResume): each state that forbids it is a named error.
#pragma once

#include "core/lifecycle/comm.h"
#include "util/status.h"

namespace braid {

enum class SuspendState { kMustBeActive, kMustBeSuspended };

// ok when `comm` is initialized, has not failed, is neither revoked nor finalized, is
// suspended or not as `suspend` requires, and no call of another thread is inside it (the
// caller holds one use itself).
Status checkManageable(Comm* comm, const char* fn, SuspendState suspend);

}  // namespace braid
