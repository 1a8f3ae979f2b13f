// Windows and one-sided operations (core/rma/rma_calls.h).
#include "api/api_guard.h"
#include "core/rma/rma_calls.h"

using braid::Status;
namespace api = braid::api;

BRAID_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
          int winFlags) {
  return api::apiCall("ncclCommWindowRegister", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommWindowRegister"));
    return braid::windowRegister(comm, buff, size, win, winFlags);
  });
}

BRAID_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  return api::apiCall("ncclCommWindowDeregister", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommWindowDeregister"));
    return braid::windowDeregister(comm, win);
  });
}

BRAID_API(ncclResult_t, ncclWinGetUserPtr, ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  return api::apiCall("ncclWinGetUserPtr", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclWinGetUserPtr"));
    return braid::windowUserPointer(comm, win, outUserPtr);
  });
}

BRAID_API(ncclResult_t, ncclPutSignal, const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
          ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
          cudaStream_t stream) {
  (void)stream;  // host mode completes the call before it returns; GPU mode refuses it
  return api::apiCall("ncclPutSignal", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclPutSignal"));
    return braid::putSignal(comm, localbuff, count, datatype, peer, peerWin, peerWinOffset, sigIdx, ctx, flags);
  });
}

BRAID_API(ncclResult_t, ncclSignal, int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
          cudaStream_t stream) {
  (void)stream;
  return api::apiCall("ncclSignal", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclSignal"));
    return braid::signalPeer(comm, peer, sigIdx, ctx, flags);
  });
}

BRAID_API(ncclResult_t, ncclWaitSignal, int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,
          cudaStream_t stream) {
  (void)stream;
  return api::apiCall("ncclWaitSignal", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclWaitSignal"));
    return braid::waitSignal(comm, nDesc, signalDescs);
  });
}
