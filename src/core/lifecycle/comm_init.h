// Creating communicators: ncclGetUniqueId's root, ncclCommInitRank*, ncclCommInitAll,
// ncclCommSplit — and tearing them down.
#pragma once

#include <functional>
#include <vector>

#include "bootstrap/root.h"
#include "bootstrap/unique_id.h"
#include "core/config/execution_mode.h"
#include "core/enqueue/group.h"
#include "core/lifecycle/comm.h"
#include "util/stream_security.h"

namespace braid {

// ncclGetUniqueId: starts a root (or encodes NCCL_COMM_ID) and fills the id. `onRootDone`
// runs when the root has finished (every rank joined, or it gave up); it is not called
// under NCCL_COMM_ID, where no root runs yet. The root's connections use `security` (the
// process's current one for a new job, the parent's for a split).
Status createUniqueId(ncclUniqueId* id, const SecurityRef& security, std::function<void()> onRootDone = {});
// Starts a bootstrap root on this host (whatever NCCL_COMM_ID says) and fills `contents`
// with its address and secret; the caller encodes the id. `cancel` may end it early.
Status startBootstrapRoot(UniqueIdContents* contents, const SecurityRef& security,
                          std::function<void()> onRootDone = {}, std::shared_ptr<RootCancel> cancel = {});

// Fails as init would when NCCL_SOCKET_IFNAME / NCCL_SOCKET_FAMILY leave no interface.
// braidCommInitFromEnv checks this before the rendezvous, so that every rank with the bad
// setting says so at once instead of waiting for a unique id that rank 0 cannot make.
Status checkSocketInterfaces();

struct InitRequest {
  const char* apiName = "ncclCommInitRank";
  int nranks = 0;
  int rank = -1;
  std::vector<UniqueIdContents> ids;
  bool serveRootHere = false;  // NCCL_COMM_ID, rank 0
  // What protects its connections (core/config/encryption.h), fixed when init starts; split and
  // shrink children keep their parent's.
  SecurityRef security = plainSecurity();
  CommConfig config;
  // GPU mode on a device, or host mode: decided on the thread that called init (its current
  // device is the one bound), before any group or background thread runs the init.
  ExecutionMode mode;
};

// Validates the ids, decides the execution mode and builds the request (shared by every
// init entry point).
Status buildInitRequest(const char* apiName, int nranks, int rank, const ncclUniqueId* ids, int nIds,
                        const ncclConfig_t* config, const DeviceRequest& device, InitRequest* out);

// Allocates and registers the communicator, then runs (or, inside a group, queues) its
// init. Returns ncclInProgress for a non-blocking communicator.
Status startCommInit(InitRequest request, Comm** out);

// The pieces startCommInit and startCommSplit share. The communicator's device (or host
// mode) is set at allocation, so that ncclCommCuDevice answers during a non-blocking init.
Comm* allocateComm(int rank, int nranks, const CommConfig& config, const ExecutionMode& mode);
// The device request of a split or shrink child: its parent's device, or host mode when the
// parent runs in host mode (as NCCL gives a child its parent's device).
DeviceRequest childDeviceRequest(const Comm& parent);
Status runCommInit(Comm* comm, const InitRequest& request);
// Runs `job` now, or queues it when the calling thread is inside a group.
Status runOrDefer(GroupJob job);

// The whole of ncclCommInitRank*: checks the arguments, creates the communicator and
// runs (or queues) its init. `fn` names the API function in messages; `device` says which
// device (the calling thread's current one unless told) or host mode.
Status initCommunicator(const char* fn, ncclComm_t* out, int nranks, const ncclUniqueId* ids, int nIds, int rank,
                        const ncclConfig_t* config, const DeviceRequest& device = DeviceRequest::currentDevice());

// A blocking init that failed leaves nothing behind: the communicator is freed and *out
// set to NULL, as in NCCL. Non-blocking ones stay for ncclCommGetAsyncError and destroy.
Status releaseIfFailed(Status started, Comm* comm, ncclComm_t* out);

// ncclCommSplit. *out is null for NCCL_SPLIT_NOCOLOR.
Status startCommSplit(Comm* parent, int color, int key, const ncclConfig_t* config, Comm** out);

// ncclCommShrink: a new communicator of the parent's ranks less `exclude`, made by the
// survivors alone (the excluded ranks may be dead). NCCL_SHRINK_ABORT stops operations in
// flight on the parent first.
Status startCommShrink(Comm* parent, const int* exclude, int excludeCount, const ncclConfig_t* config, int flags,
                       Comm** out);
// ncclCommRevoke (comm_revoke.cc): stops operations in flight here and, through the
// watchdog, on the other ranks; the communicator then only accepts destroy, abort, split
// and shrink.
Status revokeComm(Comm* comm, int flags);
// Raises the abort flag and waits until the calls of other threads (the caller holds one
// use itself) have left the communicator.
Status stopOperationsInFlight(Comm* comm, const char* fn);

// Frees the communicator. `abort`: stop whatever is in flight first (ncclCommAbort).
Status destroyComm(Comm* comm, bool abort);

}  // namespace braid
