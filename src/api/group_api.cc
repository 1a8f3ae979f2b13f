// Group calls.
#include "api/api_guard.h"
#include "core/group.h"

using braid::Status;
namespace api = braid::api;

BRAID_API(ncclResult_t, ncclGroupStart, void) {
  return api::apiCall("ncclGroupStart", nullptr, [&]() -> Status { return braid::groupStart(); });
}

BRAID_API(ncclResult_t, ncclGroupEnd, void) {
  return api::apiCall("ncclGroupEnd", nullptr, [&]() -> Status { return braid::groupEnd(); });
}

BRAID_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  (void)simInfo;
  return api::apiCall("ncclGroupSimulateEnd", nullptr, [&]() -> Status {
    return api::notImplemented("ncclGroupSimulateEnd", "the tuning model cannot be queried yet");
  });
}
