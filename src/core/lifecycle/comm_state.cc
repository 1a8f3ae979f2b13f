#include "core/lifecycle/comm_state.h"

#include "core/health/last_error.h"
#include "util/format.h"

namespace braid {

Status checkManageable(Comm* comm, const char* fn, SuspendState suspend) {
  ncclResult_t state = comm->health.asyncError();
  if (state == ncclInProgress || !comm->bootstrap) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the communicator is still initializing (wait until ncclCommGetAsyncError stops returning "
                       "ncclInProgress)",
                       fn);
  }
  if (state != ncclSuccess) {
    return Status(state, strFormat("%s: the communicator has failed (%s); abort it with ncclCommAbort, or shrink it",
                                   fn, lastErrorText(comm)));
  }
  if (comm->revoked.load()) {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    return BRAID_ERROR(ncclInvalidUsage, "%s: %s; only shrink, split, destroy and abort remain", fn,
                       comm->revokeReason.c_str());
  }
  if (comm->finalized.load()) {
    return BRAID_ERROR(ncclInvalidUsage, "%s: the communicator was finalized (ncclCommFinalize)", fn);
  }
  bool suspended = comm->suspended.load();
  if (suspended && suspend == SuspendState::kMustBeActive) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the communicator is suspended (ncclCommSuspend): call ncclCommResume first", fn);
  }
  if (!suspended && suspend == SuspendState::kMustBeSuspended) {
    return BRAID_ERROR(ncclInvalidUsage, "%s: the communicator is not suspended (ncclCommSuspend comes first)", fn);
  }
  if (comm->activeCalls.load() > 1) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: operations of other threads are in flight on the communicator; they must end first", fn);
  }
  return okStatus();
}

}  // namespace braid
