/* Built against NVIDIA's nccl.h and linked against Braid's libnccl.so: the proof that a
   program written for NVIDIA's NCCL links and runs on Braid unchanged. It references
   every host function of the 2.28 header and its pnccl* alias, then uses a few. */
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
  CHECK(version == NCCL_VERSION(2, 27, 0));
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
  CHECK(ncclCommDestroy(comm) == ncclSuccess);

  /* Errors arrive as NCCL's codes with a message. */
  CHECK(ncclCommInitRank(&comm, 0, id, 0) == ncclInvalidArgument);
  CHECK(strstr(ncclGetLastError(NULL), "nranks=0") != NULL);
  printf("drop-in ABI test passed (%zu functions linked)\n", sizeof(everyFunction) / sizeof(everyFunction[0]));
  return 0;
}
