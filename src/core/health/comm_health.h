// The one owner of a communicator's health: its asynchronous error (what
// ncclCommGetAsyncError returns), its abort flag (every wait of the communicator watches
// it), the text of ncclGetLastError(comm), and why another rank is known lost. Nothing
// else writes them; everything else reads them here.
//
// The rules, in one place:
//  - The first failure wins: once the async error holds a failure, a later failure changes
//    neither it nor the text recorded with it (later failures are usually the echo of the
//    first: waits that the first one's abort ended).
//  - The first lost rank wins the remote failure; it also becomes the last error (it says
//    why every later call fails) and raises the abort flag.
//  - A call that fails records its own message as the last error: that text is the *last*
//    error, by NCCL's definition, and does not change the async error.
//  - The abort flag only ever goes up.
// All members may be called from any thread at any time (the watchdog, the GPU monitor,
// group-init threads, the proxy and API calls race).
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "nccl.h"
#include "util/deadline.h"
#include "util/status.h"

namespace braid {

class CommHealth {
 public:
  CommHealth() = default;
  CommHealth(const CommHealth&) = delete;
  CommHealth& operator=(const CommHealth&) = delete;

  // A creation or non-blocking init is under way: ncclInProgress (a failure stays).
  void beginInit();
  // The init succeeded: ncclInProgress becomes ncclSuccess. A failure recorded meanwhile (a
  // rank that died just after joining) stays.
  void finishInit();

  // Records a failure of this communicator: the async error becomes failure.code() and the
  // last error its message. False, changing nothing, when a failure was recorded before
  // (or `failure` is ok).
  bool recordFailure(const Status& failure);
  // Another rank is lost (the watchdog's `reason`): see the rules above. False when a lost
  // rank was recorded before (nothing changes then).
  bool recordRemoteFailure(const std::string& reason);
  // Raises the abort flag: every wait of the communicator ends.
  void abort();
  // The message of a call that failed (ncclGetLastError(comm)).
  void recordCallError(const std::string& message);

  ncclResult_t asyncError() const { return asyncError_.load(); }
  bool initializing() const { return asyncError() == ncclInProgress; }
  // The async error holds a failure (neither success nor in progress).
  bool failed() const;
  bool aborted() const { return abort_.load(); }
  // What waits watch (bootstraps, executors, connections); read-only for them.
  const AbortFlag* abortFlag() const { return &abort_; }
  std::string lastError() const;
  std::string remoteFailure() const;  // empty while no other rank is known lost

 private:
  // Moves the async error from success or in progress to `code`; false when it holds a
  // failure already. Called with mutex_ held, so that the text matches the code.
  bool setFailureCode(ncclResult_t code);

  std::atomic<ncclResult_t> asyncError_{ncclSuccess};
  AbortFlag abort_{false};
  mutable std::mutex mutex_;  // guards the texts
  std::string lastError_;
  std::string remoteFailure_;
};

}  // namespace braid
