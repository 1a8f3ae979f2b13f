// The host-callable part of NCCL's device API (nccl_device.h, NCCL 2.28-2.32). Braid has
// no device API: what has a meaning without one answers for real (teams of ranks, peer
// pointers into windows in host mode, the communicator's properties); device
// communicators and multimem are ncclInvalidUsage with a message that says why. See
// docs/windows.md.
#include <cstddef>
#include <cstring>

#include "api/api_guard.h"
#include "api/device_api_types.h"
#include "core/rma/lsa_team.h"
#include "core/rma/rma_calls.h"

using braid::Status;
namespace api = braid::api;

namespace {

constexpr unsigned kApiMagic = 0xcafebeef;  // NCCL_API_MAGIC

const char* kNoDeviceApi =
    "device communicators serve CUDA kernels written against NCCL's device API (nccl_device.h), which Braid does "
    "not have; in host mode, reach other ranks' windows with ncclGetPeerDevicePointer and ncclPutSignal/"
    "ncclWaitSignal";

Status checkLaidOut(const ncclComm* comm, const char* fn) {
  BRAID_CHECK(api::checkComm(comm, fn));
  if (comm->layout.nodeOfRank.size() != static_cast<size_t>(comm->nranks)) {
    return BRAID_ERROR(ncclInvalidUsage, "%s: the communicator is still initializing", fn);
  }
  return braid::okStatus();
}

// Writes `value` into the caller's struct when the field lies inside the caller's size
// (an older NVIDIA header has a shorter struct).
template <typename T>
void setField(ncclCommProperties* props, T ncclCommProperties::*field, const T& value) {
  size_t at =
      static_cast<size_t>(reinterpret_cast<const char*>(&(props->*field)) - reinterpret_cast<const char*>(props));
  if (at + sizeof(T) <= props->size) props->*field = value;
}

}  // namespace

BRAID_API(ncclResult_t, ncclCommQueryProperties, ncclComm_t comm, ncclCommProperties* props) {
  return api::apiCall("ncclCommQueryProperties", comm, [&]() -> Status {
    const char* fn = "ncclCommQueryProperties";
    BRAID_CHECK(checkLaidOut(comm, fn));
    BRAID_CHECK(api::checkPointer(props, fn, "props"));
    if (props->magic != kApiMagic) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: props->magic is 0x%x, not NCCL_API_MAGIC: start from NCCL_COMM_PROPERTIES_INITIALIZER",
                         fn, props->magic);
    }
    if (props->size < offsetof(ncclCommProperties, rank)) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: props->size %zu is too small", fn, props->size);
    }
    braid::Team lsa = braid::lsaTeam(comm->layout.nodeOfRank, comm->rank);
    setField(props, &ncclCommProperties::rank, comm->rank);
    setField(props, &ncclCommProperties::nRanks, comm->nranks);
    setField(props, &ncclCommProperties::cudaDev, comm->cudaDev);
    setField(props, &ncclCommProperties::nvmlDev, -1);
    setField(props, &ncclCommProperties::deviceApiSupport, false);
    setField(props, &ncclCommProperties::multimemSupport, false);
    setField(props, &ncclCommProperties::ginType, 0);
    setField(props, &ncclCommProperties::nLsaTeams, comm->nranks / lsa.nRanks);
    setField(props, &ncclCommProperties::hostRmaSupport, comm->cudaDev < 0);
    setField(props, &ncclCommProperties::railedGinType, 0);
    setField(props, &ncclCommProperties::commHash, comm->commHash);
    setField(props, &ncclCommProperties::ginMinStride, 0);
    setField(props, &ncclCommProperties::ginConnectionType, 0);
    if (offsetof(ncclCommProperties, ginSupport) + sizeof(props->ginSupport) <= props->size) {
      std::memset(props->ginSupport, 0, sizeof(props->ginSupport));
    }
    setField(props, &ncclCommProperties::devCommRuntimeVersionSize, size_t{0});
    setField(props, &ncclCommProperties::cftSupport, false);
    setField(props, &ncclCommProperties::cftMulticastSupport, false);
    setField(props, &ncclCommProperties::cftCountedSupport, false);
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm, const ncclDevCommRequirements* reqs,
          ncclDevComm* outDevComm) {
  return api::apiCall("ncclDevCommCreate", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclDevCommCreate"));
    BRAID_CHECK(api::checkPointer(reqs, "ncclDevCommCreate", "reqs"));
    BRAID_CHECK(api::checkPointer(outDevComm, "ncclDevCommCreate", "outDevComm"));
    return BRAID_ERROR(ncclInvalidUsage, "ncclDevCommCreate: %s", kNoDeviceApi);
  });
}

BRAID_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm, const ncclDevComm* devComm) {
  return api::apiCall("ncclDevCommDestroy", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclDevCommDestroy"));
    BRAID_CHECK(api::checkPointer(devComm, "ncclDevCommDestroy", "devComm"));
    return BRAID_ERROR(ncclInvalidUsage,
                       "ncclDevCommDestroy: no device communicator can exist (ncclDevCommCreate always fails: %s)",
                       kNoDeviceApi);
  });
}

BRAID_API(ncclResult_t, ncclGetLsaMultimemDevicePointer, ncclWindow_t window, size_t offset, void** outPtr) {
  (void)offset;
  return api::apiCall("ncclGetLsaMultimemDevicePointer", nullptr, [&]() -> Status {
    return braid::windowMultimemPointer("ncclGetLsaMultimemDevicePointer", window, outPtr);
  });
}

BRAID_API(ncclResult_t, ncclGetLsaDevicePointer, ncclWindow_t window, size_t offset, int lsaRank, void** outPtr) {
  return api::apiCall("ncclGetLsaDevicePointer", nullptr, [&]() -> Status {
    return braid::windowPeerPointer("ncclGetLsaDevicePointer", window, offset, lsaRank, true, outPtr);
  });
}

BRAID_API(ncclResult_t, ncclGetPeerDevicePointer, ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  return api::apiCall("ncclGetPeerDevicePointer", nullptr, [&]() -> Status {
    return braid::windowPeerPointer("ncclGetPeerDevicePointer", window, offset, peer, false, outPtr);
  });
}

namespace {

// The team functions return a value, not a result code: a bad communicator gives an empty
// team (or -1) and says why in ncclGetLastError.
template <typename Compute>
ncclTeam teamCall(const char* fn, ncclComm_t comm, Compute compute) {
  ncclTeam team{0, 0, 0};
  (void)api::apiCall(fn, comm, [&]() -> Status {
    BRAID_CHECK(checkLaidOut(comm, fn));
    braid::Team t = compute();
    team = ncclTeam{t.nRanks, t.rank, t.stride};
    return braid::okStatus();
  });
  return team;
}

}  // namespace

BRAID_API(ncclTeam, ncclTeamWorld, ncclComm_t comm) {
  return teamCall("ncclTeamWorld", comm, [&] { return braid::worldTeam(comm->nranks, comm->rank); });
}

BRAID_API(ncclTeam, ncclTeamLsa, ncclComm_t comm) {
  return teamCall("ncclTeamLsa", comm, [&] { return braid::lsaTeam(comm->layout.nodeOfRank, comm->rank); });
}

BRAID_API(ncclTeam, ncclTeamRail, ncclComm_t comm) {
  return teamCall("ncclTeamRail", comm, [&] { return braid::railTeam(comm->layout.nodeOfRank, comm->rank); });
}

BRAID_API(int, ncclTeamRankToWorld, ncclComm_t comm, ncclTeam team, int rank) {
  int world = -1;
  (void)api::apiCall("ncclTeamRankToWorld", comm, [&]() -> Status {
    BRAID_CHECK(checkLaidOut(comm, "ncclTeamRankToWorld"));
    if (rank < 0 || rank >= team.nRanks) {
      return BRAID_ERROR(ncclInvalidArgument, "ncclTeamRankToWorld: rank %d is outside the team [0, %d)", rank,
                         team.nRanks);
    }
    world = braid::teamRankToWorld(braid::Team{team.nRanks, team.rank, team.stride}, comm->rank, rank);
    return braid::okStatus();
  });
  return world;
}

BRAID_API(int, ncclTeamRankToLsa, ncclComm_t comm, ncclTeam team, int rank) {
  int lsaRank = -1;
  (void)api::apiCall("ncclTeamRankToLsa", comm, [&]() -> Status {
    BRAID_CHECK(checkLaidOut(comm, "ncclTeamRankToLsa"));
    if (rank < 0 || rank >= team.nRanks) {
      return BRAID_ERROR(ncclInvalidArgument, "ncclTeamRankToLsa: rank %d is outside the team [0, %d)", rank,
                         team.nRanks);
    }
    // NCCL's arithmetic: the answer may lie outside the LSA team (the rank is not in it).
    braid::Team lsa = braid::lsaTeam(comm->layout.nodeOfRank, comm->rank);
    lsaRank = lsa.rank + (rank - team.rank) * team.stride;
    return braid::okStatus();
  });
  return lsaRank;
}
