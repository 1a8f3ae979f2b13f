// DataPath's part of ncclCommSuspend and ncclCommResume, and the bytes ncclCommMemStats
// reports as releasable.
//
// Suspend releases what the data path made for its connections and the threads that serve
// them; resume only makes the executor again. The connections come back the way they
// came at init: each at its first use, by every rank at the same point of the same
// operation (so resume needs no connection exchange of its own).
#include "core/datapath/data_path.h"
#include "util/log.h"

namespace braid {

namespace {

// How long suspend lets data of completed operations leave through the network.
constexpr double kSuspendDrainSeconds = 10;

}  // namespace

Status DataPath::releaseForSuspend() {
  uint64_t released = connections_->releasableBytes();
  // GPU mode's work was drained by the caller (ncclCommSuspend waits for enqueued work
  // before its barrier). The GPU executor's monitor ends the proxy's activity brackets
  // before the proxy goes; the host executor's workers end.
  executor_.reset();
  connections_->close(true, kSuspendDrainSeconds);
  BRAID_INFO(kLogInit, "comm %p rank %d: released %llu bytes of connection buffers, the connections and their threads",
             static_cast<void*>(&comm_), comm_.rank, static_cast<unsigned long long>(released));
  return okStatus();
}

Status DataPath::restoreAfterResume() {
  if (!executor_) BRAID_CHECK(createExecutor());
  return okStatus();
}

}  // namespace braid
