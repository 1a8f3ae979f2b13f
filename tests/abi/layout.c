/* Prints the ABI-relevant facts of whichever nccl.h it is compiled against: sizes,
   offsets, enum values and macro values. The test compiles it against NVIDIA's header
   and against Braid's and requires identical output. (The version macros differ on
   purpose and are not printed.) */
#include <nccl.h>
#include <stddef.h>
#include <stdio.h>

#define SHOW(expr) printf("%-48s %lld\n", #expr, (long long)(expr))

int main(void) {
  SHOW(sizeof(ncclUniqueId));
  SHOW(NCCL_UNIQUE_ID_BYTES);
  SHOW(sizeof(ncclComm_t));
  SHOW(sizeof(ncclResult_t));
  SHOW(sizeof(ncclRedOp_t));
  SHOW(sizeof(ncclDataType_t));
  SHOW(sizeof(ncclScalarResidence_t));
  SHOW(sizeof(ncclConfig_t));
  SHOW(offsetof(ncclConfig_t, size));
  SHOW(offsetof(ncclConfig_t, magic));
  SHOW(offsetof(ncclConfig_t, version));
  SHOW(offsetof(ncclConfig_t, blocking));
  SHOW(offsetof(ncclConfig_t, cgaClusterSize));
  SHOW(offsetof(ncclConfig_t, minCTAs));
  SHOW(offsetof(ncclConfig_t, maxCTAs));
  SHOW(offsetof(ncclConfig_t, netName));
  SHOW(offsetof(ncclConfig_t, splitShare));
  SHOW(offsetof(ncclConfig_t, trafficClass));
  SHOW(offsetof(ncclConfig_t, commName));
  SHOW(offsetof(ncclConfig_t, collnetEnable));
  SHOW(offsetof(ncclConfig_t, CTAPolicy));
  SHOW(offsetof(ncclConfig_t, shrinkShare));
  SHOW(offsetof(ncclConfig_t, nvlsCTAs));
  SHOW(offsetof(ncclConfig_t, nChannelsPerNetPeer));
  SHOW(offsetof(ncclConfig_t, nvlinkCentricSched));
  SHOW(sizeof(ncclSimInfo_t));
  SHOW(offsetof(ncclSimInfo_t, estimatedTime));
  {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    SHOW(config.size);
    SHOW(config.magic);
    SHOW(config.blocking);
    SHOW(config.nvlinkCentricSched);
    SHOW(config.netName == NULL);
  }
  {
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    SHOW(sim.magic);
    SHOW(sim.estimatedTime == NCCL_UNDEF_FLOAT);
  }
  SHOW(ncclSuccess);
  SHOW(ncclUnhandledCudaError);
  SHOW(ncclSystemError);
  SHOW(ncclInternalError);
  SHOW(ncclInvalidArgument);
  SHOW(ncclInvalidUsage);
  SHOW(ncclRemoteError);
  SHOW(ncclInProgress);
  SHOW(ncclNumResults);
  SHOW(ncclSum);
  SHOW(ncclProd);
  SHOW(ncclMax);
  SHOW(ncclMin);
  SHOW(ncclAvg);
  SHOW(ncclNumOps);
  SHOW(ncclMaxRedOp);
  SHOW(ncclInt8);
  SHOW(ncclChar);
  SHOW(ncclUint8);
  SHOW(ncclInt32);
  SHOW(ncclInt);
  SHOW(ncclUint32);
  SHOW(ncclInt64);
  SHOW(ncclUint64);
  SHOW(ncclFloat16);
  SHOW(ncclHalf);
  SHOW(ncclFloat32);
  SHOW(ncclFloat);
  SHOW(ncclFloat64);
  SHOW(ncclDouble);
  SHOW(ncclBfloat16);
  SHOW(ncclFloat8e4m3);
  SHOW(ncclFloat8e5m2);
  SHOW(ncclNumTypes);
  SHOW(ncclScalarDevice);
  SHOW(ncclScalarHostImmediate);
  SHOW(NCCL_CONFIG_UNDEF_INT);
  SHOW(NCCL_CONFIG_UNDEF_PTR == NULL);
  SHOW(NCCL_SPLIT_NOCOLOR);
  SHOW(NCCL_UNDEF_FLOAT == -1.0f);
  SHOW(NCCL_WIN_DEFAULT);
  SHOW(NCCL_WIN_COLL_SYMMETRIC);
  SHOW(NCCL_WIN_REQUIRED_ALIGNMENT);
  SHOW(NCCL_CTA_POLICY_DEFAULT);
  SHOW(NCCL_CTA_POLICY_EFFICIENCY);
  SHOW(NCCL_CTA_POLICY_ZERO);
  SHOW(NCCL_SHRINK_DEFAULT);
  SHOW(NCCL_SHRINK_ABORT);
  SHOW(NCCL_REVOKE_DEFAULT);
  SHOW(NCCL_COMM_NULL == NULL);
  SHOW(NCCL_VERSION(2, 8, 4));
  SHOW(NCCL_VERSION(2, 27, 7));
  SHOW(NCCL_VERSION(3, 0, 1));
  return 0;
}
