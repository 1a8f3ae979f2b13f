#include "core/health/comm_failure.h"

#include <chrono>
#include <thread>

#include "core/health/watchdog.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {
// How long a failed operation waits for the watchdog to name another rank as the cause.
constexpr int kVerdictWaitMs = 300;
}  // namespace

void markPeerLost(Comm* comm, const std::string& reason) {
  // Also while the init is still finishing (ncclInProgress: the watchdog starts before
  // init returns): the init's success must not hide it (CommHealth::finishInit).
  if (!comm->health.recordRemoteFailure(reason)) return;
  LogRankScope scope(comm->rank);
  // INFO, not WARN: ranks that exit without destroying their communicator are normal at the
  // end of a job. The call that fails because of it prints the WARN.
  BRAID_INFO(kLogInit, "comm %p: %s", static_cast<void*>(comm), reason.c_str());
}

std::string peerLostReason(Comm* comm) { return comm->health.remoteFailure(); }

std::string awaitPeerLostReason(Comm* comm) {
  std::string lost = peerLostReason(comm);
  for (int i = 0; i < kVerdictWaitMs && lost.empty() && comm->watchdog; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lost = peerLostReason(comm);
  }
  return lost;
}

bool markRevoked(Comm* comm, const std::string& reason, int byRank) {
  {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    if (!comm->revokeReason.empty()) return false;
    comm->revokeReason = reason;
    comm->revokedBy = byRank;
  }
  comm->revoked.store(true);
  comm->health.abort();  // the operations in flight stop
  LogRankScope scope(comm->rank);
  BRAID_INFO(kLogInit, "comm %p: %s", static_cast<void*>(comm), reason.c_str());
  return true;
}

Status revokedStatus(Comm* comm, const char* what) {
  std::lock_guard<std::mutex> lock(comm->errorMutex);
  ncclResult_t code = comm->revokedBy == comm->rank ? ncclInvalidUsage : ncclRemoteError;
  return Status(code, strFormat("%s was stopped: %s", what, comm->revokeReason.c_str()));
}

Status failOperation(Comm* comm, Status result) {
  if (result.ok()) return result;
  if (comm->revoked.load()) return revokedStatus(comm, "the operation");
  std::string lost = awaitPeerLostReason(comm);
  if (!lost.empty()) {
    // Another rank is gone: that is the cause, not the waits it ended.
    result = BRAID_ERROR(ncclRemoteError, "%s", lost.c_str());
  } else if (comm->watchdog) {
    // The cause is here (a timeout, a broken connection): tell the others now, so that
    // they fail at once instead of waiting for this rank.
    comm->watchdog->reportFailure(comm->bootstrap->peers()[static_cast<size_t>(comm->rank)].describe() +
                                  " failed: " + result.message());
  }
  (void)comm->health.recordFailure(result);  // the first failure wins
  comm->health.abort();                      // the peers' state is unknown now: fail fast from here on
  return result;
}

}  // namespace braid
