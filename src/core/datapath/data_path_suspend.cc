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

void DataPath::noteMemoryUse() {
  const bool gpuMode = comm_.cudaDev >= 0;
  uint64_t bytes = 0;
  auto add = [&](const std::unique_ptr<Connector>& c) {
    if (!c) return;
    Connector::Footprint f = c->footprint();
    bytes += gpuMode ? f.deviceBytes : f.hostBytes;
  };
  for (const Channel& ch : channels_) {
    add(ch.ringSend);
    add(ch.ringRecv);
    add(ch.treeUpSend);
    add(ch.treeUpRecv);
    for (int k = 0; k < kMaxTreeChildren; ++k) {
      add(ch.treeDownSend[k]);
      add(ch.treeDownRecv[k]);
    }
    for (const auto& [peer, c] : ch.p2pSend) add(c);
    for (const auto& [peer, c] : ch.p2pRecv) add(c);
  }
  releasableBytes_.store(bytes);
}

Status DataPath::releaseForSuspend() {
  uint64_t released = releasableBytes_.load();
  // GPU mode's work was drained by the caller (ncclCommSuspend waits for enqueued work
  // before its barrier). The GPU executor's monitor ends the proxy's activity brackets
  // before the proxy goes; the host executor's workers end.
  proxyForExecutor_.store(nullptr);
  executor_.reset();
  // Data of completed operations may still be leaving through the network: let it, then
  // stop the proxy before the connectors it reads go (as destroy does).
  if (proxy_) proxy_->drain(Deadline::afterSeconds(kSuspendDrainSeconds));
  proxy_.reset();
  channels_.clear();
  channels_.resize(static_cast<size_t>(settings_.maxChannels));
  net_.reset();  // the connectors used the backend: it goes after them
  netBackend_.reset();
  releasableBytes_.store(0);
  BRAID_INFO(kLogInit, "comm %p rank %d: released %llu bytes of connection buffers, the connections and their threads",
             static_cast<void*>(&comm_), comm_.rank, static_cast<unsigned long long>(released));
  return okStatus();
}

Status DataPath::restoreAfterResume() {
  if (!executor_) BRAID_CHECK(createExecutor());
  return okStatus();
}

}  // namespace braid
