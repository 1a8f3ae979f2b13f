// Collectives, point-to-point and reduction operators.
#include "api/api_guard.h"
#include "core/enqueue/buffer_check.h"
#include "core/enqueue/enqueue.h"
#include "kernels/reduce/numeric_types.h"

using braid::Status;
namespace api = braid::api;

namespace {

ncclResult_t collective(const char* fn, braid::CollFunc func, const void* sendbuff, void* recvbuff, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return api::apiCall(
      fn, comm,
      [&]() -> Status {
        return braid::enqueueCollective(comm, {fn, func, sendbuff, recvbuff, count, type, op, root, stream});
      },
      api::CommHold::kHoldLive);
}

}  // namespace

// In GPU mode a call enqueues its work on `stream` and returns; in host mode the stream is
// not used and a call returns when the operation is complete.
BRAID_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclAllReduce", braid::CollFunc::AllReduce, sendbuff, recvbuff, count, datatype, op, -1, comm,
                    stream);
}

BRAID_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclBroadcast", braid::CollFunc::Broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root,
                    comm, stream);
}

BRAID_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
          cudaStream_t stream) {
  return collective("ncclBcast", braid::CollFunc::Broadcast, buff, buff, count, datatype, ncclSum, root, comm, stream);
}

BRAID_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclReduce", braid::CollFunc::Reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

BRAID_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
          ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclAllGather", braid::CollFunc::AllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1,
                    comm, stream);
}

BRAID_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclReduceScatter", braid::CollFunc::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op,
                    -1, comm, stream);
}

BRAID_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          ncclComm_t comm, cudaStream_t stream) {
  return api::apiCall("ncclAlltoAll", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclAlltoAll"));
    return braid::enqueueAlltoAll(comm, sendbuff, recvbuff, count, datatype, stream);
  });
}

BRAID_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          int root, ncclComm_t comm, cudaStream_t stream) {
  return api::apiCall("ncclGather", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclGather"));
    return braid::enqueueGather(comm, sendbuff, recvbuff, count, datatype, root, stream);
  });
}

BRAID_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
          int root, ncclComm_t comm, cudaStream_t stream) {
  return api::apiCall("ncclScatter", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclScatter"));
    return braid::enqueueScatter(comm, sendbuff, recvbuff, count, datatype, root, stream);
  });
}

BRAID_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
          ncclComm_t comm, cudaStream_t stream) {
  return api::apiCall("ncclSend", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclSend"));
    return braid::enqueueSendRecv(comm, "ncclSend", true, sendbuff, nullptr, count, datatype, peer, stream);
  });
}

BRAID_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
          cudaStream_t stream) {
  return api::apiCall("ncclRecv", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclRecv"));
    return braid::enqueueSendRecv(comm, "ncclRecv", false, nullptr, recvbuff, count, datatype, peer, stream);
  });
}

BRAID_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
          ncclScalarResidence_t residence, ncclComm_t comm) {
  return api::apiCall("ncclRedOpCreatePreMulSum", comm, [&]() -> Status {
    const char* fn = "ncclRedOpCreatePreMulSum";
    BRAID_CHECK(api::checkComm(comm, fn));
    BRAID_CHECK(api::checkPointer(op, fn, "op"));
    BRAID_CHECK(api::checkPointer(scalar, fn, "scalar"));
    if (static_cast<int>(datatype) < 0 || datatype >= ncclNumTypes) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: datatype=%d is not an ncclDataType_t", fn,
                         static_cast<int>(datatype));
    }
    if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: residence=%d is neither ncclScalarDevice nor "
                         "ncclScalarHostImmediate",
                         fn, static_cast<int>(residence));
    }
    // A device scalar is read when the collective runs: by the kernels of the communicator's
    // device in GPU mode, by the CPU in host mode.
    if (residence == ncclScalarDevice) BRAID_CHECK(braid::checkCommDeviceScalar(*comm, scalar, fn));
    return comm->redOps.create(scalar, datatype, residence, op);
  });
}

BRAID_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  return api::apiCall("ncclRedOpDestroy", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclRedOpDestroy"));
    return comm->redOps.destroy(op);
  });
}
