// Creating, splitting and destroying communicators.
#include <vector>

#include "api/api_guard.h"
#include "braid/host_mode.h"
#include "core/config/encryption.h"
#include "core/config/execution_mode.h"
#include "core/datapath/data_path.h"
#include "core/lifecycle/comm_init.h"

using braid::Status;
namespace api = braid::api;

BRAID_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  return api::apiCall("ncclGetUniqueId", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(uniqueId, "ncclGetUniqueId", "uniqueId"));
    braid::SecurityRef security;
    BRAID_CHECK(braid::currentSocketSecurity(&security));
    return braid::createUniqueId(uniqueId, security);
  });
}

BRAID_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
          ncclConfig_t* config) {
  return api::apiCall("ncclCommInitRankConfig", nullptr, [&]() -> Status {
    return braid::initCommunicator("ncclCommInitRankConfig", comm, nranks, &commId, 1, rank, config);
  });
}

BRAID_API(ncclResult_t, braidCommInitRankHost, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
          ncclConfig_t* config) {
  return api::apiCall("braidCommInitRankHost", nullptr, [&]() -> Status {
    return braid::initCommunicator("braidCommInitRankHost", comm, nranks, &commId, 1, rank, config,
                                   braid::DeviceRequest::host("requested with braidCommInitRankHost"));
  });
}

BRAID_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return api::apiCall("ncclCommInitRank", nullptr, [&]() -> Status {
    return braid::initCommunicator("ncclCommInitRank", comm, nranks, &commId, 1, rank, nullptr);
  });
}

BRAID_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
          ncclUniqueId* commIds, ncclConfig_t* config) {
  return api::apiCall("ncclCommInitRankScalable", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(commIds, "ncclCommInitRankScalable", "commIds"));
    return braid::initCommunicator("ncclCommInitRankScalable", newcomm, nranks, commIds, nId, myrank, config);
  });
}

BRAID_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comms, int ndev, const int* devlist) {
  return api::apiCall("ncclCommInitAll", nullptr, [&]() -> Status {
    const char* fn = "ncclCommInitAll";
    BRAID_CHECK(api::checkPointer(comms, fn, "comm (array of ndev handles)"));
    if (ndev < 1) return BRAID_ERROR(ncclInvalidArgument, "%s: ndev=%d must be at least 1", fn, ndev);
    // Rank i runs on devlist[i] (device i without a list) in GPU mode. In host mode the list
    // is only checked, as NCCL checks it. Every device is checked before anything starts.
    BRAID_CHECK(braid::validateDevlist(fn, ndev, devlist));
    std::vector<braid::DeviceRequest> devices;
    for (int i = 0; i < ndev; ++i) {
      devices.push_back(braid::DeviceRequest::explicitDevice(
          devlist ? devlist[i] : i, devlist ? braid::strFormat("devlist[%d] of %s", i, fn)
                                            : braid::strFormat("rank %d of %s without a devlist", i, fn)));
      braid::ExecutionMode mode;
      BRAID_CHECK(braid::chooseExecutionMode(fn, devices.back(), &mode));
    }
    for (int i = 0; i < ndev; ++i) comms[i] = nullptr;
    ncclUniqueId id;
    braid::SecurityRef security;
    BRAID_CHECK(braid::currentSocketSecurity(&security));
    BRAID_CHECK(braid::createUniqueId(&id, security));
    BRAID_CHECK(braid::groupStart());
    Status firstError;
    for (int i = 0; i < ndev; ++i) {
      Status started =
          braid::initCommunicator(fn, &comms[i], ndev, &id, 1, i, nullptr, devices[static_cast<size_t>(i)]);
      if (!started.ok() && firstError.ok()) firstError = started;
    }
    Status ended = braid::groupEnd();
    if (firstError.ok()) firstError = ended;
    if (!firstError.ok()) {
      for (int i = 0; i < ndev; ++i) {
        if (comms[i]) (void)braid::destroyComm(comms[i], /*abort=*/true);
        comms[i] = nullptr;
      }
    }
    return firstError;
  });
}

BRAID_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  return api::apiCall("ncclCommSplit", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommSplit"));
    BRAID_CHECK(api::checkPointer(newcomm, "ncclCommSplit", "newcomm"));
    braid::Comm* child = nullptr;
    Status started = braid::startCommSplit(comm, color, key, config, &child);
    *newcomm = child;
    return braid::releaseIfFailed(std::move(started), child, newcomm);
  });
}

BRAID_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
          ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return api::apiCall("ncclCommShrink", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommShrink"));
    BRAID_CHECK(api::checkPointer(newcomm, "ncclCommShrink", "newcomm"));
    braid::Comm* child = nullptr;
    Status started = braid::startCommShrink(comm, excludeRanksList, excludeRanksCount, config, shrinkFlags, &child);
    *newcomm = child;
    return braid::releaseIfFailed(std::move(started), child, newcomm);
  });
}

BRAID_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  return api::apiCall("ncclCommRevoke", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommRevoke"));
    return braid::revokeComm(comm, revokeFlags);
  });
}

BRAID_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  return api::apiCall("ncclCommFinalize", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommFinalize"));
    ncclResult_t state = comm->health.asyncError();
    if (state == ncclInProgress) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "ncclCommFinalize: the communicator is still initializing (wait until "
                         "ncclCommGetAsyncError stops returning ncclInProgress)");
    }
    if (state != ncclSuccess) {
      return Status(state, "ncclCommFinalize: the communicator has failed: " + std::string(braid::lastErrorText(comm)));
    }
    if (comm->revoked.load()) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "ncclCommFinalize: the communicator was revoked (ncclCommRevoke); NCCL does not support "
                         "finalizing it: destroy or abort it");
    }
    if (comm->finalized.exchange(true)) {
      return BRAID_ERROR(ncclInvalidUsage, "ncclCommFinalize: the communicator is already finalized");
    }
    // No operation may be outstanding when this returns: host-mode calls complete before
    // returning; in GPU mode the operations enqueued on streams finish first.
    if (!comm->dataPath) return braid::okStatus();
    return comm->dataPath->finishEnqueuedWork();
  });
}

BRAID_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  if (!comm) return ncclSuccess;  // as NCCL: destroying NULL is a no-op
  return api::apiCall(
      "ncclCommDestroy", comm,
      [&]() -> Status {
        BRAID_CHECK(api::checkComm(comm, "ncclCommDestroy"));
        return braid::destroyComm(comm, /*abort=*/false);
      },
      api::CommHold::kNone);
}

BRAID_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  return api::apiCall(
      "ncclCommAbort", comm,
      [&]() -> Status {
        BRAID_CHECK(api::checkComm(comm, "ncclCommAbort"));
        return braid::destroyComm(comm, /*abort=*/true);
      },
      api::CommHold::kNone);
}
