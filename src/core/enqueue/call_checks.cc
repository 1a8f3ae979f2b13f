#include "core/enqueue/call_checks.h"

#include "core/health/last_error.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

Status checkReady(Comm* comm, const char* fn) {
  ncclResult_t state = comm->health.asyncError();
  if (state == ncclInProgress) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the communicator is still initializing (wait until "
                       "ncclCommGetAsyncError stops returning ncclInProgress)",
                       fn);
  }
  if (state != ncclSuccess) {
    return Status(state, strFormat("%s: the communicator has failed earlier (%s); abort it with ncclCommAbort", fn,
                                   lastErrorText(comm)));
  }
  if (comm->finalized.load()) return BRAID_ERROR(ncclInvalidUsage, "%s: the communicator was finalized", fn);
  if (comm->revoked.load()) {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    return BRAID_ERROR(ncclInvalidUsage, "%s: %s; only shrink, split, destroy and abort remain", fn,
                       comm->revokeReason.c_str());
  }
  if (comm->suspended.load()) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the communicator is suspended (ncclCommSuspend): call ncclCommResume on every rank first",
                       fn);
  }
  return okStatus();
}

Status checkType(ncclDataType_t type, const char* fn) {
  if (static_cast<int>(type) < 0 || type >= ncclNumTypes) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: datatype=%d is not an ncclDataType_t", fn, static_cast<int>(type));
  }
  return okStatus();
}

Status checkRank(int value, int nranks, const char* fn, const char* what) {
  if (value < 0 || value >= nranks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: %s=%d is outside [0, %d)", fn, what, value, nranks);
  }
  return okStatus();
}

Status nullBufferError(size_t count, const char* fn, const char* what) {
  return BRAID_ERROR(ncclInvalidArgument, "%s: %s is NULL with count %zu", fn, what, count);
}

}  // namespace braid
