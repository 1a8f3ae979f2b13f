// Group calls.
#include "api/api_guard.h"
#include "core/enqueue/group.h"

using braid::Status;
namespace api = braid::api;

BRAID_API(ncclResult_t, ncclGroupStart, void) {
  return api::apiCall("ncclGroupStart", nullptr, [&]() -> Status { return braid::groupStart(); });
}

BRAID_API(ncclResult_t, ncclGroupEnd, void) {
  return api::apiCall("ncclGroupEnd", nullptr, [&]() -> Status { return braid::groupEnd(); });
}

BRAID_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  return api::apiCall("ncclGroupSimulateEnd", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(simInfo, "ncclGroupSimulateEnd", "simInfo"));
    // The caller's struct must come from NCCL_SIM_INFO_INITIALIZER: its size and magic
    // say which fields it has (only estimatedTime so far).
    ncclSimInfo_t initializer = NCCL_SIM_INFO_INITIALIZER;
    if (simInfo->magic != initializer.magic || simInfo->size < sizeof(ncclSimInfo_t)) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "ncclGroupSimulateEnd: simInfo was not set with NCCL_SIM_INFO_INITIALIZER (size %zu, magic "
                         "0x%x)",
                         simInfo->size, simInfo->magic);
    }
    float estimatedUs = 0;
    BRAID_CHECK(braid::groupSimulateEnd(&estimatedUs));
    simInfo->estimatedTime = estimatedUs;
    return braid::okStatus();
  });
}
