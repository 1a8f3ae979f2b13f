// Questions about a communicator.
#include "api/api_guard.h"

using braid::Status;
namespace api = braid::api;

namespace {

Status checkKnown(const ncclComm* comm, const char* fn) {
  if (comm->nranks <= 0) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the communicator is still being created (ncclCommGetAsyncError "
                       "returns ncclInProgress until it is)",
                       fn);
  }
  return braid::okStatus();
}

}  // namespace

BRAID_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  return api::apiCall("ncclCommCount", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommCount"));
    BRAID_CHECK(api::checkPointer(count, "ncclCommCount", "count"));
    BRAID_CHECK(checkKnown(comm, "ncclCommCount"));
    *count = comm->nranks;
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  return api::apiCall("ncclCommCuDevice", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommCuDevice"));
    BRAID_CHECK(api::checkPointer(device, "ncclCommCuDevice", "device"));
    *device = comm->cudaDev;
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  return api::apiCall("ncclCommUserRank", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommUserRank"));
    BRAID_CHECK(api::checkPointer(rank, "ncclCommUserRank", "rank"));
    BRAID_CHECK(checkKnown(comm, "ncclCommUserRank"));
    *rank = comm->rank;
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  return api::apiCall("ncclCommGetAsyncError", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommGetAsyncError"));
    BRAID_CHECK(api::checkPointer(asyncError, "ncclCommGetAsyncError", "asyncError"));
    *asyncError = comm->health.asyncError();
    return braid::okStatus();
  });
}
