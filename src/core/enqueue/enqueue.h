// From API calls to tasks: argument checks (NCCL's, with messages that say which argument
// and why), translation of AlltoAll, Gather and Scatter into point-to-point transfers, and
// either immediate execution or queueing into the calling thread's group.
#pragma once

#include "core/enqueue/coll_task.h"
#include "core/lifecycle/comm.h"

namespace braid {

struct CollCall {
  const char* fn;
  CollFunc func;
  const void* sendbuff;
  void* recvbuff;
  size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;                            // ignored by data-only functions
  int root;                                  // -1 when the function has none
  cudaStream_t stream;                       // GPU mode: where it runs
  const ncclCollConfig_t* config = nullptr;  // the nccl*Config calls' own configuration
};

Status enqueueCollective(Comm* comm, const CollCall& call);
Status enqueueSendRecv(Comm* comm, const char* fn, bool isSend, const void* sendbuff, void* recvbuff, size_t count,
                       ncclDataType_t type, int peer, cudaStream_t stream);
// AlltoAll, Gather, Scatter: grouped sends and receives.
// `config`: the nccl*Config forms' (checked; no algorithm applies to these, and their
// point-to-point transfers use the communicator's channels).
Status enqueueAlltoAll(Comm* comm, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t type,
                       cudaStream_t stream, const ncclCollConfig_t* config = nullptr);
Status enqueueGather(Comm* comm, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t type, int root,
                     cudaStream_t stream, const ncclCollConfig_t* config = nullptr);
Status enqueueScatter(Comm* comm, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t type, int root,
                      cudaStream_t stream, const ncclCollConfig_t* config = nullptr);

}  // namespace braid
