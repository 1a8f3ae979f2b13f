// Collectives, point-to-point and reduction operators.
#include "api/api_guard.h"

using braid::Status;
namespace api = braid::api;

namespace {

constexpr const char* kNoDataPath = "collectives arrive with the data path";

}  // namespace

#define BRAID_COLLECTIVE_NOT_YET(name, ...)            \
  BRAID_API(ncclResult_t, name, __VA_ARGS__) {         \
    return api::apiCall(#name, comm, [&]() -> Status { \
      BRAID_CHECK(api::checkComm(comm, #name));        \
      return api::notImplemented(#name, kNoDataPath);  \
    });                                                \
  }

BRAID_COLLECTIVE_NOT_YET(ncclAllReduce, const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t comm,
                         cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclBroadcast, const void*, void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclBcast, void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclReduce, const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t comm,
                         cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclAllGather, const void*, void*, size_t, ncclDataType_t, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclReduceScatter, const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t comm,
                         cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclAlltoAll, const void*, void*, size_t, ncclDataType_t, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclGather, const void*, void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclScatter, const void*, void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclSend, const void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclRecv, void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t)
BRAID_COLLECTIVE_NOT_YET(ncclRedOpCreatePreMulSum, ncclRedOp_t*, void*, ncclDataType_t, ncclScalarResidence_t,
                         ncclComm_t comm)
BRAID_COLLECTIVE_NOT_YET(ncclRedOpDestroy, ncclRedOp_t, ncclComm_t comm)
