/*
 * Braid extension: a communicator in host mode, whatever devices the process has.
 *
 * Braid runs a communicator in GPU mode when the CUDA runtime reports a usable device
 * (BRAID_DEVICE=auto), and then expects device memory. A program that uses Braid for host
 * buffers in a process that also has GPUs (PyTorch's CPU backend "braid" next to the "nccl"
 * backend on GPU tensors, for example) asks for host mode per communicator with this call
 * instead of setting BRAID_DEVICE=cpu for the whole process.
 *
 * braidCommInitRankHost is ncclCommInitRankConfig with host mode: buffers are host memory
 * (pageable, pinned or managed), the stream argument is not used, and a call returns when it
 * is complete. CUDA is not asked anything for this communicator. Every rank of the
 * communicator must call it (a communicator whose ranks run in different modes is
 * ncclInvalidUsage at init). Communicators split or shrunk from it run in host mode too.
 * ncclCommCuDevice returns -1. `config` may be NULL; a non-blocking config works as with
 * ncclCommInitRankConfig (poll ncclCommGetAsyncError). Inside ncclGroupStart/End it is
 * queued like ncclCommInitRank.
 *
 * NVIDIA's ncclConfig_t is left unchanged: this call is Braid's, exported from
 * libnccl.so.2 as braidCommInitRankHost. See docs/environment.md (BRAID_DEVICE).
 */
#ifndef BRAID_HOST_MODE_H_
#define BRAID_HOST_MODE_H_

#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

ncclResult_t braidCommInitRankHost(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config);

#ifdef __cplusplus
}
#endif

#endif /* BRAID_HOST_MODE_H_ */
