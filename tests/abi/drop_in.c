/* Built against NVIDIA's nccl.h (of any level from 2.28) and linked against Braid's
   libnccl.so: the proof that a program written for NVIDIA's NCCL links and runs on Braid
   unchanged. It references every host function of the 2.28 header and its pnccl* alias,
   and those of later levels that Braid has, then uses a few with NVIDIA's initializers.
   (tests/abi/exports.cmake checks every function of each level is exported.)
   BRAID_LIBRARY_CODE: what Braid's ncclGetVersion must report. */
#include <nccl.h>
#include <stdio.h>
#include <string.h>

#if NCCL_MAJOR != 2 || NCCL_MINOR < 28
#error "this test must be compiled against NVIDIA's nccl.h (2.28 or newer), not Braid's"
#endif

typedef void (*AnyFunction)(void);
#define REF(f) (AnyFunction)(f), (AnyFunction)(p##f)

static AnyFunction everyFunction[] = {
    REF(ncclMemAlloc),
    REF(ncclMemFree),
    REF(ncclGetVersion),
    REF(ncclGetUniqueId),
    REF(ncclCommInitRankConfig),
    REF(ncclCommInitRank),
    REF(ncclCommInitAll),
    REF(ncclCommFinalize),
    REF(ncclCommDestroy),
    REF(ncclCommAbort),
    REF(ncclCommRevoke),
    REF(ncclCommSplit),
    REF(ncclCommShrink),
    REF(ncclCommInitRankScalable),
    REF(ncclGetErrorString),
    REF(ncclGetLastError),
    REF(ncclCommGetAsyncError),
    REF(ncclCommCount),
    REF(ncclCommCuDevice),
    REF(ncclCommUserRank),
    REF(ncclCommRegister),
    REF(ncclCommDeregister),
    REF(ncclCommWindowRegister),
    REF(ncclCommWindowDeregister),
    REF(ncclRedOpCreatePreMulSum),
    REF(ncclRedOpDestroy),
    REF(ncclReduce),
    REF(ncclBcast),
    REF(ncclBroadcast),
    REF(ncclAllReduce),
    REF(ncclReduceScatter),
    REF(ncclAllGather),
    REF(ncclAlltoAll),
    REF(ncclGather),
    REF(ncclScatter),
    REF(ncclSend),
    REF(ncclRecv),
    REF(ncclGroupStart),
    REF(ncclGroupEnd),
    REF(ncclGroupSimulateEnd),
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 30, 0)
    REF(ncclParamBind),
    REF(ncclParamGetI8),
    REF(ncclParamGetI16),
    REF(ncclParamGetI32),
    REF(ncclParamGetI64),
    REF(ncclParamGetU8),
    REF(ncclParamGetU16),
    REF(ncclParamGetU32),
    REF(ncclParamGetU64),
    REF(ncclParamGetStr),
    REF(ncclParamGet),
    REF(ncclParamGetParameter),
    REF(ncclParamGetAllParameterKeys),
    REF(ncclParamDumpAll),
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 31, 0)
    REF(ncclAllReduceConfig),
    REF(ncclBroadcastConfig),
    REF(ncclReduceConfig),
    REF(ncclAllGatherConfig),
    REF(ncclReduceScatterConfig),
    REF(ncclAlltoAllConfig),
    REF(ncclGatherConfig),
    REF(ncclScatterConfig),
#endif
};

#define CHECK(cond)                                    \
  do {                                                 \
    if (!(cond)) {                                     \
      printf("FAILED line %d: %s\n", __LINE__, #cond); \
      return 1;                                        \
    }                                                  \
  } while (0)

int main(void) {
  for (size_t i = 0; i < sizeof(everyFunction) / sizeof(everyFunction[0]); ++i) CHECK(everyFunction[i] != NULL);

  int version = 0;
  CHECK(ncclGetVersion(&version) == ncclSuccess);
  CHECK(version == BRAID_LIBRARY_CODE);
  CHECK(strcmp(ncclGetErrorString(ncclInvalidArgument), "invalid argument (run with NCCL_DEBUG=WARN for details)") ==
        0);

  /* A one-rank communicator made with NVIDIA's config initializer (a 2.28 config). */
  ncclUniqueId id;
  CHECK(ncclGetUniqueId(&id) == ncclSuccess);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "drop-in";
  ncclComm_t comm = NULL;
  CHECK(ncclCommInitRankConfig(&comm, 1, id, 0, &config) == ncclSuccess);
  int count = 0, rank = -1;
  CHECK(ncclCommCount(comm, &count) == ncclSuccess && count == 1);
  CHECK(pncclCommUserRank(comm, &rank) == ncclSuccess && rank == 0);
  float x[4] = {1, 2, 3, 4};
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 31, 0)
  /* A per-call config from NVIDIA's initializer: forced ring/Simple runs, tree for an
     AllGather is refused naming the choice. */
  ncclCollConfig_t coll = NCCL_COLLCONFIG_INITIALIZER;
  coll.algSelection = "ring_simple";
  CHECK(ncclAllReduceConfig(x, x, 4, ncclFloat, ncclSum, comm, NULL, &coll) == ncclSuccess);
  coll.algSelection = "tree";
  CHECK(ncclAllGatherConfig(x, x, 1, ncclFloat, comm, NULL, &coll) == ncclInvalidArgument);
  CHECK(strstr(ncclGetLastError(NULL), "algSelection \"tree\"") != NULL);
#else
  CHECK(ncclAllReduce(x, x, 4, ncclFloat, ncclSum, comm, NULL) == ncclSuccess);
#endif
  CHECK(x[3] == 4.0f);
  CHECK(ncclCommDestroy(comm) == ncclSuccess);

  /* Errors arrive as NCCL's codes with a message. */
  CHECK(ncclCommInitRank(&comm, 0, id, 0) == ncclInvalidArgument);
  CHECK(strstr(ncclGetLastError(NULL), "nranks=0") != NULL);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 30, 0)
  /* 2.30: the result code and the parameter API. */
  CHECK(strcmp(ncclGetErrorString(ncclTimeout), "operation timed out (run with NCCL_DEBUG=WARN for details)") == 0);
  const char* value = NULL;
  int length = 0;
  CHECK(ncclParamGetParameter("NCCL_BUFFSIZE", &value, &length) == ncclSuccess && length > 0);
  ncclParamHandle_t handle = NULL;
  int64_t buffsize = 0;
  CHECK(ncclParamBind(&handle, "NCCL_BUFFSIZE") == ncclSuccess && ncclParamGetI64(handle, &buffsize) == ncclSuccess);
  CHECK(buffsize == 4 << 20);
#endif
  printf("drop-in ABI test passed (%zu functions linked)\n", sizeof(everyFunction) / sizeof(everyFunction[0]));
  return 0;
}
