// The types of NCCL's device API that nccl.h leaves incomplete, completed with NVIDIA's
// layouts (nccl_device/core.h and host.h of NCCL 2.32.3): the ABI of the device API's host
// functions depends on them, hence the checks. Also the team functions, which nccl.h does
// not declare (they pass ncclTeam by value; NVIDIA's nccl_device.h declares them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nccl.h"

struct ncclTeam {
  int nRanks, rank, stride;
};

struct ncclCommProperties {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  int ginType;  // ncclGinType_t: NCCL_GIN_TYPE_NONE = 0
  int nLsaTeams;
  bool hostRmaSupport;
  int railedGinType;
  // NCCL 2.32 from here on.
  uint64_t commHash;
  int ginMinStride;
  int ginConnectionType;  // ncclGinConnectionType_t: NCCL_GIN_CONNECTION_NONE = 0
  bool ginSupport[64];
  size_t devCommRuntimeVersionSize;
  bool cftSupport;
  bool cftMulticastSupport;
  bool cftCountedSupport;
};

static_assert(sizeof(ncclTeam) == 12);
static_assert(offsetof(ncclCommProperties, rank) == 16 && offsetof(ncclCommProperties, deviceApiSupport) == 32 &&
                  offsetof(ncclCommProperties, ginType) == 36 && offsetof(ncclCommProperties, hostRmaSupport) == 44 &&
                  offsetof(ncclCommProperties, railedGinType) == 48 && offsetof(ncclCommProperties, commHash) == 56 &&
                  offsetof(ncclCommProperties, ginSupport) == 72 &&
                  offsetof(ncclCommProperties, devCommRuntimeVersionSize) == 136 &&
                  offsetof(ncclCommProperties, cftCountedSupport) == 146 && sizeof(ncclCommProperties) == 152,
              "ncclCommProperties must keep NVIDIA's layout");

extern "C" {
ncclTeam ncclTeamWorld(ncclComm_t comm);
ncclTeam ncclTeamLsa(ncclComm_t comm);
ncclTeam ncclTeamRail(ncclComm_t comm);
int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam team, int rank);
int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam team, int rank);
}
