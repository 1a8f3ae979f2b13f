// ncclCommSuspend and ncclCommResume.
//
// NVIDIA documents suspend as releasing the communicator's dynamic memory while keeping
// it (its ranks, its configuration) for a later resume, with no operation outstanding and
// none allowed until then; its implementation is collective (barriers over the bootstrap
// in both calls). Braid does the same in both modes:
//  - suspend: the work enqueued on the GPU ends, every rank meets at a barrier (so no rank
//    is inside an operation of this communicator, and no peer still uses a buffer about
//    to go), then each rank releases its connections: SHM segments, network FIFOs and
//    sockets, CUDA IPC blocks, the proxy thread, the network backend, the host worker
//    threads and the GPU executor. The bootstrap and the watchdog stay: the membership,
//    and the news of a rank that dies meanwhile.
//  - resume: a barrier (a dead peer is an error here, not at the next collective), then
//    the GPU executor is made again; connections are made lazily, at first use.
// A barrier that fails (a rank died, or one that never comes because it is inside an
// operation) fails the communicator and tells the other ranks, whose own calls then end
// with that reason: an error everywhere, never a hang.
#include "core/datapath/data_path.h"
#include "core/health/comm_failure.h"
#include "core/lifecycle/comm_init.h"
#include "core/lifecycle/comm_lifecycle.h"
#include "core/lifecycle/comm_state.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// Every rank comes to the barrier or the communicator fails (see above).
Status meetEveryRank(Comm* comm, const char* fn) {
  Status met = comm->bootstrap->barrier();
  if (met.ok()) return met;
  return failOperation(comm, met.addContext(strFormat("%s: waiting for every rank (all call it; none may be inside an "
                                                      "operation of this communicator)",
                                                      fn)));
}

Status runSuspend(Comm* comm) {
  const char* fn = "ncclCommSuspend";
  LogRankScope scope(comm->rank);
  // GPU mode: the enqueued work uses the connections; it finishes first (NVIDIA
  // synchronizes the device). Host mode has nothing in flight.
  Status drained = comm->dataPath->finishEnqueuedWork();
  if (!drained.ok()) return drained.addContext(fn);
  BRAID_CHECK(meetEveryRank(comm, fn));
  BRAID_CHECK(comm->dataPath->releaseForSuspend());
  comm->suspended.store(true);
  BRAID_INFO(kLogInit, "%s: comm %p rank %d suspended", fn, static_cast<void*>(comm), comm->rank);
  return okStatus();
}

Status runResume(Comm* comm) {
  const char* fn = "ncclCommResume";
  LogRankScope scope(comm->rank);
  BRAID_CHECK(meetEveryRank(comm, fn));
  Status restored = comm->dataPath->restoreAfterResume();
  if (!restored.ok()) return failOperation(comm, restored.addContext(fn));
  comm->suspended.store(false);
  BRAID_INFO(kLogInit, "%s: comm %p rank %d resumed; connections are made again at first use", fn,
             static_cast<void*>(comm), comm->rank);
  return okStatus();
}

// Outside a group at once; inside one at its end, side by side with the group's other
// suspends (one thread may drive several communicators of a process).
Status runOrDeferManagement(std::function<Status()> body) {
  GroupJob job;
  job.run = std::move(body);
  return runOrDefer(std::move(job));
}

}  // namespace

Status suspendComm(Comm* comm, int flags) {
  const char* fn = "ncclCommSuspend";
  if (flags == 0) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: flags=0 suspends nothing: pass NCCL_SUSPEND_MEM", fn);
  }
  if (flags != NCCL_SUSPEND_MEM) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: flags=0x%x has bits NCCL does not define (NCCL_SUSPEND_MEM = 0x1 is the only flag)", fn,
                       static_cast<unsigned>(flags));
  }
  BRAID_CHECK(checkManageable(comm, fn, SuspendState::kMustBeActive));
  return runOrDeferManagement([comm]() { return runSuspend(comm); });
}

Status resumeComm(Comm* comm) {
  BRAID_CHECK(checkManageable(comm, "ncclCommResume", SuspendState::kMustBeSuspended));
  return runOrDeferManagement([comm]() { return runResume(comm); });
}

}  // namespace braid
