/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.29 added to the
 * host API: ncclCommGrow and ncclCommGetUniqueId; ncclCommSuspend, ncclCommResume and
 * ncclCommMemStats (2.29.7); one-sided ncclPutSignal, ncclSignal, ncclWaitSignal and
 * ncclWinGetUserPtr, with the types they use.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif

/* ---- Communicator lifecycle (2.29: grow; 2.29.7: suspend, resume, memory statistics) ---- */

/* An id for growing this communicator with ncclCommGrow. One rank (the coordinator) calls
 * it and hands the id to the new ranks; it makes no new id while its previous one is
 * unused, and each id serves one grow. */
ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId);
ncclResult_t pncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId);

/* A new communicator of nRanks ranks: the existing ranks keep their numbers (comm = parent,
 * rank = -1, uniqueId = NULL except on the coordinator), the new ranks take the others
 * (comm = NULL, uniqueId = the coordinator's id, rank >= the parent's size). config NULL:
 * the parent's configuration (existing ranks) or the default one (new ranks). */
ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                          ncclConfig_t* config);
ncclResult_t pncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                           ncclConfig_t* config);

/* Flags of ncclCommSuspend. */
#define NCCL_SUSPEND_MEM 0x01 /* release the communicator's dynamic memory */

/* Every rank releases the communicator's buffers; the membership stays. No operation may
 * run on a suspended communicator. */
ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags);
ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags);

/* Makes a suspended communicator usable again. */
ncclResult_t ncclCommResume(ncclComm_t comm);
ncclResult_t pncclCommResume(ncclComm_t comm);

/* What ncclCommMemStats reports. */
typedef enum {
  ncclStatGpuMemSuspend = 0,   /* memory held that ncclCommSuspend releases (bytes) */
  ncclStatGpuMemSuspended = 1, /* 1 while suspended, else 0 */
  ncclStatGpuMemPersist = 2,   /* memory held that ncclCommSuspend keeps (bytes) */
  ncclStatGpuMemTotal = 3      /* all memory the communicator tracks (bytes) */
} ncclCommMemStat_t;

/* One of the communicator's memory statistics. */
ncclResult_t ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value);
ncclResult_t pncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value);

/* ---- Windows and one-sided operations (2.29) ---- */

/* The buffer this rank registered as its part of the window. */
ncclResult_t ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr);
ncclResult_t pncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr);

/*
 * One-sided operations over windows (ncclCommWindowRegister). The target takes no part: a
 * put writes count elements at peerWinOffset bytes into the peer's part of the window, then
 * counts one signal (sigIdx, ctx) there; a signal only counts. A signal is seen only after
 * the data of the puts that preceded it from the same rank. Host mode: the call returns
 * when done (stream ignored).
 */
ncclResult_t ncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer, ncclWindow_t peerWin,
                           size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t pncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
                            ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,
                            ncclComm_t comm, cudaStream_t stream);

ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream);

/* How many signals to wait for from one peer on one (signal index, context). */
typedef struct {
  int opCnt;
  int peer;
  int sigIdx;
  int ctx;
} ncclWaitSignalDesc_t;

/* Waits until every descriptor's signals have arrived, and consumes them. */
ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream);

/* Device API, host side (see nccl_2_28.h): the communicator's properties, and where an
 * offset of a peer's part of a window is reachable by loads and stores here. */
struct ncclCommProperties;
ncclResult_t ncclCommQueryProperties(ncclComm_t comm, struct ncclCommProperties* props);
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr);
ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank, void** outPtr);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr);
