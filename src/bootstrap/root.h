// The bootstrap root: the thread that ncclGetUniqueId starts (or rank 0 under
// NCCL_COMM_ID). It collects every rank's PeerInfo and answers each with the whole table,
// or — when ranks disagree on the communicator size, claim the same rank, or do not all
// arrive within the bootstrap timeout — with a message that says so and names the ranks.
//
// With several unique ids (ncclCommInitRankScalable) root k serves the ranks r with
// r * nIds / nranks == k, and forwards its slice to root 0, which assembles the table
// and hands it back down.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "bootstrap/listener.h"
#include "bootstrap/unique_id.h"

namespace braid {

// Ends a root before its ranks have all joined, with a reason that the ranks already
// there, and those that come later, receive as their error (ncclCommGrow: when the
// existing ranks cannot agree, the new ranks waiting at the coordinator's root hear why at
// once instead of after BRAID_BOOTSTRAP_TIMEOUT). No effect once the table was delivered.
class RootCancel {
 public:
  void cancel(ncclResult_t code, const std::string& reason) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (requested_.load()) return;
    code_ = code;
    reason_ = reason;
    requested_.store(true);
  }
  bool requested() const { return requested_.load(); }
  Status why() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return Status(code_, reason_);
  }

 private:
  mutable std::mutex mutex_;
  std::atomic<bool> requested_{false};
  ncclResult_t code_ = ncclSuccess;
  std::string reason_;
};

// Which root serves rank `rank`.
int rootIndexOfRank(int rank, int nranks, int nIds);

// Serves on `listener` in a background thread until the table is delivered, the
// communicator fails, or `timeoutSec` passes without it completing; then calls `onDone`
// (may be empty). After a failure it keeps answering late joins with the reason for
// another `timeoutSec` (or until the process exits). Threads are joined at process exit.
// `cancel` (may be null) ends it early (see RootCancel).
void launchRootThread(BootstrapListener listener, const UniqueIdContents& id, double timeoutSec,
                      std::function<void()> onDone = {}, std::shared_ptr<RootCancel> cancel = {});

// Serves in the calling thread (launchRootThread); `onDone` runs when the outcome is
// decided, before the late-arrival answers.
Status serveRoot(BootstrapListener& listener, const UniqueIdContents& id, double timeoutSec, const AbortFlag* stop,
                 const std::function<void()>& onDone = {}, const RootCancel* cancel = nullptr);

}  // namespace braid
