/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.29 added to the
 * host API: ncclCommGrow and ncclCommGetUniqueId; ncclCommSuspend, ncclCommResume and
 * ncclCommMemStats (2.29.7); one-sided ncclPutSignal, ncclSignal, ncclWaitSignal and
 * ncclWinGetUserPtr, with the types they use.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif

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
