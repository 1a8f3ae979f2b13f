#include "core/comm_failure.h"

#include <chrono>
#include <thread>

#include "util/log.h"

namespace braid {

namespace {
// How long a failed operation waits for the watchdog to name another rank as the cause.
constexpr int kVerdictWaitMs = 300;
}  // namespace

void markPeerLost(Comm* comm, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    if (!comm->remoteFailure.empty()) return;
    comm->remoteFailure = reason;
    // ncclGetLastError(comm) says why, for callers that only poll ncclCommGetAsyncError.
    comm->lastError = reason;
  }
  ncclResult_t expected = ncclSuccess;
  comm->asyncError.compare_exchange_strong(expected, ncclRemoteError);
  comm->abortFlag.store(true);
  LogRankScope scope(comm->rank);
  // INFO, not WARN: ranks that exit without destroying their communicator are normal at the
  // end of a job. The call that fails because of it prints the WARN.
  BRAID_INFO(kLogInit, "comm %p: %s", static_cast<void*>(comm), reason.c_str());
}

std::string peerLostReason(Comm* comm) {
  std::lock_guard<std::mutex> lock(comm->errorMutex);
  return comm->remoteFailure;
}

std::string awaitPeerLostReason(Comm* comm) {
  std::string lost = peerLostReason(comm);
  for (int i = 0; i < kVerdictWaitMs && lost.empty() && comm->watchdog; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lost = peerLostReason(comm);
  }
  return lost;
}

}  // namespace braid
