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

#include "bootstrap/listener.h"
#include "bootstrap/unique_id.h"

namespace braid {

// Which root serves rank `rank`.
int rootIndexOfRank(int rank, int nranks, int nIds);

// Serves on `listener` in a background thread until the table is delivered, the
// communicator fails, or `timeoutSec` passes without it completing; then calls `onDone`
// (may be empty). After a failure it keeps answering late joins with the reason for
// another `timeoutSec` (or until the process exits). Threads are joined at process exit.
void launchRootThread(BootstrapListener listener, const UniqueIdContents& id, double timeoutSec,
                      std::function<void()> onDone = {});

// Serves in the calling thread (launchRootThread); `onDone` runs when the outcome is
// decided, before the late-arrival answers.
Status serveRoot(BootstrapListener& listener, const UniqueIdContents& id, double timeoutSec, const AbortFlag* stop,
                 const std::function<void()>& onDone = {});

}  // namespace braid
