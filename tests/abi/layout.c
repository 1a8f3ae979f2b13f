/* Prints the ABI-relevant facts of whichever nccl.h it is compiled against, as they stand
   at NCCL level ABI_LEVEL (a -D of the build; default 22809): sizes, offsets, enum values,
   macro values and initializer contents. The tests compile it against NVIDIA's header of
   that level and against Braid's, and require identical output. Braid's header carries the
   newest layout, so a struct's size is printed as the bytes of the fields the level has
   (for NVIDIA's header that is its sizeof). The version macros, and the `version` the
   initializers store, differ on purpose and are not printed. */
#include <nccl.h>
#include <stddef.h>
#include <stdio.h>

#ifndef ABI_LEVEL
#define ABI_LEVEL 22809
#endif

#define SHOW(expr) printf("%-48s %lld\n", #expr, (long long)(expr))
/* The size of a struct at the level: its sizeof in NVIDIA's header, the end of its last
   field of that level (rounded to the struct's alignment) in Braid's. */
#define ROUND_UP(x, a) (((x) + (a)-1) / (a) * (a))
#ifdef BRAID_NCCL_LAYOUT_CODE
#define LEVEL_SIZE(type, last) ROUND_UP(offsetof(type, last) + sizeof(((type*)0)->last), _Alignof(type))
#else
#define LEVEL_SIZE(type, last) sizeof(type)
#endif
#define SHOW_SIZE(type, last) printf("%-48s %lld\n", "size of " #type, (long long)LEVEL_SIZE(type, last))

int main(void) {
  SHOW(sizeof(ncclUniqueId));
  SHOW(NCCL_UNIQUE_ID_BYTES);
  SHOW(sizeof(ncclComm_t));
  SHOW(sizeof(ncclResult_t));
  SHOW(sizeof(ncclRedOp_t));
  SHOW(sizeof(ncclDataType_t));
  SHOW(sizeof(ncclScalarResidence_t));
#if ABI_LEVEL >= 23200
  SHOW_SIZE(ncclConfig_t, nvlsHostMode);
#elif ABI_LEVEL >= 23005
  SHOW_SIZE(ncclConfig_t, graphStreamOrdering);
#elif ABI_LEVEL >= 23000
  SHOW_SIZE(ncclConfig_t, maxP2pPeers);
#elif ABI_LEVEL >= 22900
  SHOW_SIZE(ncclConfig_t, numRmaCtx);
#else
  SHOW_SIZE(ncclConfig_t, nvlinkCentricSched);
#endif
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
#if ABI_LEVEL >= 22900
  SHOW(offsetof(ncclConfig_t, graphUsageMode));
  SHOW(offsetof(ncclConfig_t, numRmaCtx));
#endif
#if ABI_LEVEL >= 23000
  SHOW(offsetof(ncclConfig_t, maxP2pPeers));
#endif
#if ABI_LEVEL >= 23005
  SHOW(offsetof(ncclConfig_t, graphStreamOrdering));
#endif
#if ABI_LEVEL >= 23200
  SHOW(offsetof(ncclConfig_t, launchOrderImplicit));
  SHOW(offsetof(ncclConfig_t, numRmaSig));
  SHOW(offsetof(ncclConfig_t, rmaEagerInit));
  SHOW(offsetof(ncclConfig_t, hostCftMode));
  SHOW(offsetof(ncclConfig_t, nvlsHostMode));
  SHOW(ncclHostCftDefault);
  SHOW(ncclHostCftEnable);
  SHOW(ncclHostCftDisable);
  SHOW(ncclHostCftFallback);
  SHOW(ncclNvlsHostModeDefault);
  SHOW(ncclNvlsHostModeEnable);
  SHOW(ncclNvlsHostModeDisableTransport);
  SHOW(ncclNvlsHostModeDisableSymmetricMultimem);
  SHOW(ncclNvlsHostModeDisable);
  SHOW(NCCL_API_MAGIC);
  SHOW(NCCL_WIN_STRICT_ORDERING);
  SHOW(NCCL_WIN_GIN_ONLY);
  SHOW(NCCL_WIN_CFT_COUNTED);
#endif
#if ABI_LEVEL >= 23000
  SHOW(sizeof(ncclParamHandle_t));
#endif
  /* Types of functions other parts of Braid add: checked once Braid's header has them
     (CMake sets ABI_HAVE_* by compiling against it, for both builds alike). */
#if ABI_LEVEL >= 22900 && defined(ABI_HAVE_ONE_SIDED)
  SHOW(sizeof(ncclWaitSignalDesc_t));
  SHOW(offsetof(ncclWaitSignalDesc_t, opCnt));
  SHOW(offsetof(ncclWaitSignalDesc_t, peer));
  SHOW(offsetof(ncclWaitSignalDesc_t, sigIdx));
  SHOW(offsetof(ncclWaitSignalDesc_t, ctx));
#endif
#if ABI_LEVEL >= 22907 && defined(ABI_HAVE_MEM_STATS)
  SHOW(NCCL_SUSPEND_MEM);
  SHOW(sizeof(ncclCommMemStat_t));
  SHOW(ncclStatGpuMemSuspend);
  SHOW(ncclStatGpuMemSuspended);
  SHOW(ncclStatGpuMemPersist);
  SHOW(ncclStatGpuMemTotal);
#endif
#if ABI_LEVEL >= 23200 && defined(ABI_HAVE_ENCRYPTION)
  SHOW(sizeof(ncclEncryptionConfig_t));
  SHOW(offsetof(ncclEncryptionConfig_t, mode));
  SHOW(offsetof(ncclEncryptionConfig_t, psk));
  SHOW(NCCL_ENCRYPTION_MODE_NONE);
  SHOW(NCCL_ENCRYPTION_MODE_PSK);
  {
    ncclEncryptionConfig_t encryption = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
    SHOW(encryption.size);
    SHOW(encryption.magic);
    SHOW(encryption.mode);
    SHOW(encryption.psk == NULL);
  }
#endif
#if ABI_LEVEL >= 23100
  /* ncclCollConfig_t: 2.31's struct ends at userProfilerTag, 2.32's at launchCompletionEvent. */
#if ABI_LEVEL >= 23200
  SHOW_SIZE(ncclCollConfig_t, launchCompletionEvent);
  SHOW(offsetof(ncclCollConfig_t, launchCompletionEvent));
#else
  SHOW_SIZE(ncclCollConfig_t, userProfilerTag);
#endif
  SHOW(offsetof(ncclCollConfig_t, size));
  SHOW(offsetof(ncclCollConfig_t, magic));
  SHOW(offsetof(ncclCollConfig_t, version));
  SHOW(offsetof(ncclCollConfig_t, ext));
  SHOW(offsetof(ncclCollConfig_t, minCTAs));
  SHOW(offsetof(ncclCollConfig_t, maxCTAs));
  SHOW(offsetof(ncclCollConfig_t, nvlsCTAs));
  SHOW(offsetof(ncclCollConfig_t, cgaClusterSize));
  SHOW(offsetof(ncclCollConfig_t, algSelection));
  SHOW(offsetof(ncclCollConfig_t, forceAlgSelection));
  SHOW(offsetof(ncclCollConfig_t, CTAPolicy));
  SHOW(offsetof(ncclCollConfig_t, userProfilerTag));
  SHOW(sizeof(ncclConfigExt_t));
  SHOW(offsetof(ncclConfigExt_t, key.vendorId));
  SHOW(offsetof(ncclConfigExt_t, key.optionId));
  SHOW(offsetof(ncclConfigExt_t, val));
  {
    ncclCollConfig_t coll = NCCL_COLLCONFIG_INITIALIZER;
    SHOW(coll.size);
    SHOW(coll.magic);
    SHOW(coll.ext == NULL);
    SHOW(coll.minCTAs);
    SHOW(coll.maxCTAs);
    SHOW(coll.nvlsCTAs);
    SHOW(coll.cgaClusterSize);
    SHOW(coll.algSelection == NULL);
    SHOW(coll.forceAlgSelection);
    SHOW(coll.CTAPolicy);
    SHOW(coll.userProfilerTag);
  }
#endif
  SHOW(sizeof(ncclSimInfo_t));
  SHOW(offsetof(ncclSimInfo_t, estimatedTime));
  {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    /* The size the initializer stores is the whole struct's: Braid's is the newest. */
    SHOW(config.size == sizeof(ncclConfig_t));
    SHOW(config.magic);
    SHOW(config.blocking);
    SHOW(config.nvlinkCentricSched);
    SHOW(config.netName == NULL);
#if ABI_LEVEL >= 22900
    SHOW(config.graphUsageMode);
    SHOW(config.numRmaCtx);
#endif
#if ABI_LEVEL >= 23000
    SHOW(config.maxP2pPeers);
#endif
#if ABI_LEVEL >= 23005
    SHOW(config.graphStreamOrdering);
#endif
#if ABI_LEVEL >= 23200
    SHOW(config.launchOrderImplicit);
    SHOW(config.nvlsHostMode);
#endif
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
#if ABI_LEVEL >= 23000
  /* Before 2.30 ncclNumResults was 8; Braid's header has 2.30's codes (see docs/errors.md). */
  SHOW(ncclTimeout);
  SHOW(ncclNumResults);
#endif
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
