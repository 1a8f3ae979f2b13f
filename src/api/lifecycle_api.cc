// The communicator lifecycle functions of NCCL 2.29 and 2.29.7: ncclCommGetUniqueId,
// ncclCommGrow, ncclCommSuspend, ncclCommResume, ncclCommMemStats.
#include <cstring>

#include "api/api_guard.h"
#include "core/lifecycle/comm_init.h"
#include "core/lifecycle/comm_lifecycle.h"

using braid::Status;
namespace api = braid::api;

BRAID_API(ncclResult_t, ncclCommGetUniqueId, ncclComm_t comm, ncclUniqueId* uniqueId) {
  return api::apiCall("ncclCommGetUniqueId", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommGetUniqueId"));
    BRAID_CHECK(api::checkPointer(uniqueId, "ncclCommGetUniqueId", "uniqueId"));
    return braid::makeGrowUniqueId(comm, uniqueId);
  });
}

BRAID_API(ncclResult_t, ncclCommGrow, ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
          ncclComm_t* newcomm, ncclConfig_t* config) {
  return api::apiCall("ncclCommGrow", comm, [&]() -> Status {
    const char* fn = "ncclCommGrow";
    BRAID_CHECK(api::checkPointer(newcomm, fn, "newcomm"));
    *newcomm = nullptr;
    if (nRanks < 1) return BRAID_ERROR(ncclInvalidArgument, "%s: nRanks=%d must be at least 1", fn, nRanks);
    braid::Comm* grown = nullptr;
    Status started;
    if (comm) {
      BRAID_CHECK(api::checkComm(comm, fn));
      if (rank != -1) {
        return BRAID_ERROR(ncclInvalidArgument,
                           "%s: an existing rank passes rank=-1 (it keeps its rank %d), not %d; new ranks pass comm "
                           "NULL",
                           fn, comm->rank, rank);
      }
      started = braid::startCommGrowExisting(comm, nRanks, uniqueId, config, &grown);
    } else {
      started = braid::startCommGrowNew(nRanks, uniqueId, rank, config, &grown);
    }
    *newcomm = grown;
    return braid::releaseIfFailed(std::move(started), grown, newcomm);
  });
}

BRAID_API(ncclResult_t, ncclCommSuspend, ncclComm_t comm, int flags) {
  return api::apiCall("ncclCommSuspend", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommSuspend"));
    return braid::suspendComm(comm, flags);
  });
}

BRAID_API(ncclResult_t, ncclCommResume, ncclComm_t comm) {
  return api::apiCall("ncclCommResume", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommResume"));
    return braid::resumeComm(comm);
  });
}

BRAID_API(ncclResult_t, ncclCommMemStats, ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  // A C caller may pass any int: read it as one, never as the enum (whose range it may leave).
  static_assert(sizeof(stat) == sizeof(int), "ncclCommMemStat_t is an int in C");
  int kind = 0;
  std::memcpy(&kind, &stat, sizeof(kind));
  return api::apiCall("ncclCommMemStats", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommMemStats"));
    return braid::commMemStat(comm, kind, value);
  });
}
