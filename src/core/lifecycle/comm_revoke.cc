// ncclCommRevoke: stops a communicator's operations so that its ranks can shrink, split or
// destroy it without waiting for one another.
//
// What NVIDIA documents, and how Braid does it:
//  - in-flight operations stop: the abort flag ends every wait of the data path (host
//    threads, and in GPU mode the kernels, through the executor's monitor); the call
//    returns once the operations of other threads have left and, in GPU mode, the
//    enqueued work has ended;
//  - future operations are refused with ncclInvalidUsage; destroy, abort, split and
//    shrink still work (their exchanges use their own abort flag);
//  - the communicator is not failed: ncclCommGetAsyncError keeps reporting what it did
//    (ncclSuccess unless something failed before), and an operation the revoke stopped
//    returns a "stopped" error without failing the communicator or telling the others
//    that this rank failed.
// Braid also tells the other ranks (through the watchdog): their operations stop and
// their communicators are revoked too, so that a rank waiting for this one in a
// collective does not hang until it revokes by itself (NVIDIA leaves that to each rank).
#include <chrono>
#include <thread>

#include "core/datapath/data_path.h"
#include "core/health/comm_failure.h"
#include "core/health/watchdog.h"
#include "core/lifecycle/comm_init.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

constexpr double kInFlightWaitSeconds = 30;

std::string revokerDescription(const Comm& comm) {
  if (comm.bootstrap) return comm.bootstrap->peers()[static_cast<size_t>(comm.rank)].describe();
  return strFormat("rank %d", comm.rank);
}

}  // namespace

Status stopOperationsInFlight(Comm* comm, const char* fn) {
  comm->health.abort();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kInFlightWaitSeconds);
  while (comm->activeCalls.load() > 1) {
    if (std::chrono::steady_clock::now() > deadline) {
      return BRAID_ERROR(ncclInternalError, "%s: operations of other threads did not stop", fn);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return okStatus();
}

Status revokeComm(Comm* comm, int flags) {
  const char* fn = "ncclCommRevoke";
  if (flags != NCCL_REVOKE_DEFAULT) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: revokeFlags=%d must be NCCL_REVOKE_DEFAULT (0)", fn, flags);
  }
  if (comm->health.initializing() || !comm->bootstrap) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the communicator is still initializing (wait until ncclCommGetAsyncError stops returning "
                       "ncclInProgress)",
                       fn);
  }
  LogRankScope scope(comm->rank);
  std::string reason = revokerDescription(*comm) + " revoked the communicator (ncclCommRevoke)";
  // A second revoke, or one after another rank's, changes nothing (as MPI's revoke).
  bool first = markRevoked(comm, reason, comm->rank);
  if (first && comm->watchdog) comm->watchdog->reportRevoke(reason);
  BRAID_CHECK(stopOperationsInFlight(comm, fn));
  // GPU mode: the kernels see the abort flag through the executor's monitor and end; wait
  // for them, so that the communicator is quiescent when this returns.
  if (comm->dataPath) (void)comm->dataPath->finishEnqueuedWork();
  BRAID_INFO(kLogInit, "comm %p rank %d revoked: operations stopped; only shrink, split, destroy and abort remain",
             static_cast<void*>(comm), comm->rank);
  return okStatus();
}

}  // namespace braid
