// The nccl*Config collectives (NCCL 2.31): the plain collectives with a per-call
// ncclCollConfig_t (core/enqueue/coll_config.h); config == NULL is the plain call.
#include "api/api_guard.h"
#include "core/enqueue/enqueue.h"

using braid::Status;
namespace api = braid::api;

namespace {

ncclResult_t configured(const char* fn, braid::CollFunc func, const void* sendbuff, void* recvbuff, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,
                        const ncclCollConfig_t* config) {
  return api::apiCall(fn, comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, fn));
    return braid::enqueueCollective(comm, {fn, func, sendbuff, recvbuff, count, type, op, root, stream, config});
  });
}

}  // namespace

BRAID_API(ncclResult_t, ncclAllReduceConfig, const void* sendbuff, void* recvbuff, size_t count,
          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
          const ncclCollConfig_t* config) {
  return configured("ncclAllReduceConfig", braid::CollFunc::AllReduce, sendbuff, recvbuff, count, datatype, op, -1,
                    comm, stream, config);
}

BRAID_API(ncclResult_t, ncclBroadcastConfig, const void* sendbuff, void* recvbuff, size_t count,
          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return configured("ncclBroadcastConfig", braid::CollFunc::Broadcast, sendbuff, recvbuff, count, datatype, ncclSum,
                    root, comm, stream, config);
}

BRAID_API(ncclResult_t, ncclReduceConfig, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return configured("ncclReduceConfig", braid::CollFunc::Reduce, sendbuff, recvbuff, count, datatype, op, root, comm,
                    stream, config);
}

BRAID_API(ncclResult_t, ncclAllGatherConfig, const void* sendbuff, void* recvbuff, size_t sendcount,
          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return configured("ncclAllGatherConfig", braid::CollFunc::AllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum,
                    -1, comm, stream, config);
}

BRAID_API(ncclResult_t, ncclReduceScatterConfig, const void* sendbuff, void* recvbuff, size_t recvcount,
          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
          const ncclCollConfig_t* config) {
  return configured("ncclReduceScatterConfig", braid::CollFunc::ReduceScatter, sendbuff, recvbuff, recvcount, datatype,
                    op, -1, comm, stream, config);
}

BRAID_API(ncclResult_t, ncclAlltoAllConfig, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return api::apiCall("ncclAlltoAllConfig", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclAlltoAllConfig"));
    return braid::enqueueAlltoAll(comm, sendbuff, recvbuff, count, datatype, stream, config);
  });
}

BRAID_API(ncclResult_t, ncclGatherConfig, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return api::apiCall("ncclGatherConfig", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclGatherConfig"));
    return braid::enqueueGather(comm, sendbuff, recvbuff, count, datatype, root, stream, config);
  });
}

BRAID_API(ncclResult_t, ncclScatterConfig, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return api::apiCall("ncclScatterConfig", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclScatterConfig"));
    return braid::enqueueScatter(comm, sendbuff, recvbuff, count, datatype, root, stream, config);
  });
}
