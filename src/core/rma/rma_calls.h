// The API's windows and one-sided operations, from arguments to RmaState: NCCL's checks
// (with messages that name the argument), GPU mode's answers, and the group: inside
// ncclGroupStart/End the calls are queued and run at ncclGroupEnd (coll_task.h's RmaTask).
//
// GPU mode: windows are registered (collectively, so ncclWinGetUserPtr and deregistration
// work) but not mapped; peer pointers and one-sided operations are ncclInvalidUsage,
// because they would need NCCL's device runtime, which Braid does not have.
#pragma once

#include <cstddef>

#include "core/lifecycle/comm.h"
#include "core/rma/window.h"
#include "nccl.h"
#include "util/status.h"

namespace braid {

// The window flags Braid knows (NCCL's NCCL_WIN_* up to 2.32); others are
// ncclInvalidArgument.
constexpr int kKnownWindowFlags =
    NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_STRICT_ORDERING | NCCL_WIN_GIN_ONLY | NCCL_WIN_CFT_COUNTED;

Status windowRegister(Comm* comm, void* buffer, size_t bytes, ncclWindow_t* out, int flags);
Status windowDeregister(Comm* comm, ncclWindow_t window);
Status windowUserPointer(Comm* comm, ncclWindow_t window, void** out);

Status putSignal(Comm* comm, const void* local, size_t count, ncclDataType_t type, int peer, ncclWindow_t window,
                 size_t offset, int signal, int context, unsigned int flags);
Status signalPeer(Comm* comm, int peer, int signal, int context, unsigned int flags);
Status waitSignal(Comm* comm, int nDesc, const ncclWaitSignalDesc_t* descs);

// Device-API queries that take only a window (its communicator is held for the call).
// `lsaRank` < 0: `peer` is a world rank (ncclGetPeerDevicePointer); otherwise an LSA rank
// (ncclGetLsaDevicePointer).
Status windowPeerPointer(const char* fn, ncclWindow_t window, size_t offset, int peer, bool lsaRank, void** out);
// ncclGet*MultimemDevicePointer: checks the window, then says why there is no multimem.
Status windowMultimemPointer(const char* fn, ncclWindow_t window, void** out);

}  // namespace braid
