#include "core/rma/rma_links.h"

#include <sched.h>

#include <chrono>
#include <thread>

#include "transport/net/net_rdma.h"
#include "util/log.h"

namespace braid {

namespace {

// Between polls of a request that is not done: yield first (the peer may need this core),
// then sleep briefly so that a stuck transfer does not burn a core until its deadline.
void pause(int turn) {
  if (turn < 1000) {
    sched_yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

RmaLinks::~RmaLinks() {
  for (auto& link : links_) {
    if (link && link->comm && link->recordHandle) (void)backend_->deregisterMemory(*link->comm, link->recordHandle);
  }
}

Status RmaLinks::connect(int peer, Link& link, Deadline deadline, const AbortFlag* abort) {
  for (int turn = 0; !link.comm; ++turn) {
    const NetHandle& handle = handles_[static_cast<size_t>(peer)];
    Status connected =
        writes_ ? backend_->rdma()->connectForWrites(0, handle, &link.comm) : backend_->connect(0, handle, &link.comm);
    if (!connected.ok()) return connected.addContext("connecting for one-sided operations to " + peerNames_[peer]);
    if (link.comm) break;
    if (aborted(abort)) return Status(ncclRemoteError, "aborted while connecting to " + peerNames_[peer]);
    if (deadline.expired()) {
      return BRAID_ERROR(ncclRemoteError, "no connection for one-sided operations to %s within the bootstrap timeout",
                         peerNames_[peer].c_str());
    }
    pause(turn);
  }
  if (!writes_) {
    BRAID_CHECK(backend_->registerMemory(*link.comm, link.record, sizeof(link.record), &link.recordHandle));
  }
  BRAID_INFO(kLogNet, "one-sided operations to %s go through %s%s", peerNames_[peer].c_str(),
             link.comm->peerDescription().c_str(), writes_ ? " as RDMA writes with immediate" : "");
  return okStatus();
}

Status RmaLinks::wait(NetRequest* request, int peer, const RmaWaitBounds& bounds, const char* what) {
  for (int turn = 0;; ++turn) {
    bool done = false;
    size_t bytes = 0;
    BRAID_CHECK(backend_->test(request, &done, &bytes));
    if (done) return okStatus();
    if (aborted(bounds.abort))
      return Status(ncclRemoteError, std::string(what) + " to " + peerNames_[peer] + " aborted");
    if (bounds.deadline.expired()) {
      if (bounds.quiet) return Status(ncclRemoteError, std::string(what) + " to " + peerNames_[peer] + " timed out");
      return BRAID_ERROR(ncclRemoteError,
                         "%s to %s did not complete within BRAID_TIMEOUT=%g s: that rank is stuck, stopped or much "
                         "slower than this one",
                         what, peerNames_[peer].c_str(), bounds.timeoutSec);
    }
    pause(turn);
  }
}

Status RmaLinks::post(Link& link, int peer, const void* data, size_t bytes, uint32_t tag, void* handle,
                      const RmaWaitBounds& bounds, const char* what, bool poke) {
  NetRequest* request = nullptr;
  for (int turn = 0; !request; ++turn) {
    BRAID_CHECK(backend_->isend(*link.comm, data, bytes, tag, handle, &request));
    if (request) break;
    if (aborted(bounds.abort)) return Status(ncclRemoteError, std::string(what) + " aborted");
    if (bounds.deadline.expired()) {
      if (bounds.quiet) return Status(ncclRemoteError, std::string(what) + " to " + peerNames_[peer] + " timed out");
      return BRAID_ERROR(ncclRemoteError, "%s to %s could not start within BRAID_TIMEOUT=%g s", what,
                         peerNames_[peer].c_str(), bounds.timeoutSec);
    }
    pause(turn);
  }
  if (poke && poke_) poke_(peer);
  return wait(request, peer, bounds, what);
}

void RmaLinks::sayGoodbye(Deadline deadline) {
  std::lock_guard<std::mutex> lock(mutex_);
  RmaWaitBounds bounds;
  bounds.deadline = deadline;
  // The peer may have destroyed its communicator already (the end of a job): a goodbye
  // that does not go through in time is normal, and says so at INFO level only.
  bounds.quiet = true;
  for (size_t peer = 0; peer < links_.size(); ++peer) {
    Link* link = links_[peer].get();
    if (!link || !link->comm || !link->broken.empty()) continue;
    Status said;
    if (writes_) {
      RmaImmediate goodbye;
      goodbye.kind = RmaImmediateKind::Goodbye;
      said = postWrite(*link, static_cast<int>(peer), encodeRmaImmediate(goodbye), nullptr, 0, nullptr, 0, 0, bounds,
                       "saying goodbye", false);
    } else {
      RmaRecord goodbye;
      goodbye.kind = RmaRecordKind::Goodbye;
      goodbye.source = rank_;
      goodbye.commHash = commHash_;
      encodeRmaRecord(goodbye, link->record);
      said = post(*link, static_cast<int>(peer), link->record, sizeof(link->record), kRmaRecordTag, link->recordHandle,
                  bounds, "saying goodbye");
    }
    if (!said.ok())
      BRAID_INFO(kLogNet, "one-sided connection to %s: %s", peerNames_[peer].c_str(), said.message().c_str());
  }
}

Status RmaLinks::postWrite(Link& link, int peer, uint32_t immediate, const void* data, size_t bytes, void* handle,
                           uint64_t remoteAddr, uint32_t rkey, const RmaWaitBounds& bounds, const char* what,
                           bool poke) {
  NetRequest* request = nullptr;
  for (int turn = 0; !request; ++turn) {
    BRAID_CHECK(backend_->rdma()->iwrite(*link.comm, data, bytes, handle, remoteAddr, rkey, immediate, &request));
    if (request) break;
    if (aborted(bounds.abort)) return Status(ncclRemoteError, std::string(what) + " aborted");
    if (bounds.deadline.expired()) {
      if (bounds.quiet) return Status(ncclRemoteError, std::string(what) + " to " + peerNames_[peer] + " timed out");
      return BRAID_ERROR(ncclRemoteError, "%s to %s could not start within BRAID_TIMEOUT=%g s", what,
                         peerNames_[peer].c_str(), bounds.timeoutSec);
    }
    pause(turn);
  }
  if (poke && poke_) poke_(peer);
  return wait(request, peer, bounds, what);
}

Status RmaLinks::ensureConnected(int peer, Link& link, Deadline deadline, const RmaWaitBounds& bounds) {
  if (link.comm) return okStatus();
  BRAID_CHECK(connect(peer, link, deadline, bounds.abort));
  if (writes_) {
    RmaImmediate hello;
    hello.kind = RmaImmediateKind::Hello;
    hello.source = rank_;
    return postWrite(link, peer, encodeRmaImmediate(hello), nullptr, 0, nullptr, 0, 0, bounds, "introducing this rank",
                     false);
  }
  RmaRecord hello;
  hello.kind = RmaRecordKind::Hello;
  hello.source = rank_;
  hello.commHash = commHash_;
  encodeRmaRecord(hello, link.record);
  return post(link, peer, link.record, sizeof(link.record), kRmaRecordTag, link.recordHandle, bounds,
              "introducing this rank");
}

Status RmaLinks::usableLink(int peer, Link** out) {
  auto& slot = links_[static_cast<size_t>(peer)];
  if (!slot) slot = std::make_unique<Link>();
  if (!slot->broken.empty()) {
    return Status(ncclRemoteError,
                  "the one-sided connection to " + peerNames_[peer] + " failed earlier: " + slot->broken);
  }
  *out = slot.get();
  return okStatus();
}

Status RmaLinks::send(int peer, RmaRecord record, const void* data, Deadline connectDeadline,
                      const RmaWaitBounds& bounds) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (writes_) return BRAID_ERROR(ncclInternalError, "a one-sided record on a connection made for writes");
  Link* found = nullptr;
  BRAID_CHECK(usableLink(peer, &found));
  Link& link = *found;
  Status sent = [&]() -> Status {
    BRAID_CHECK(ensureConnected(peer, link, connectDeadline, bounds));
    record.source = rank_;
    record.commHash = commHash_;
    encodeRmaRecord(record, link.record);
    const char* what = record.kind == RmaRecordKind::Put ? "ncclPutSignal" : "ncclSignal";
    BRAID_CHECK(
        post(link, peer, link.record, sizeof(link.record), kRmaRecordTag, link.recordHandle, bounds, what, true));
    if (record.kind != RmaRecordKind::Put || record.bytes == 0) return okStatus();
    void* handle = nullptr;
    BRAID_CHECK(backend_->registerMemory(*link.comm, const_cast<void*>(data), record.bytes, &handle));
    Status moved = post(link, peer, data, record.bytes, kRmaDataTag, handle, bounds, what);
    (void)backend_->deregisterMemory(*link.comm, handle);
    return moved;
  }();
  // A request left behind by an abort or a timeout may still complete: the link is not
  // used again (the communicator fails with the operation anyway).
  if (!sent.ok()) link.broken = sent.message();
  return sent;
}

Status RmaLinks::write(int peer, uint32_t immediate, const void* data, size_t bytes, uint64_t remoteAddr, uint32_t rkey,
                       Deadline connectDeadline, const RmaWaitBounds& bounds) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!writes_) return BRAID_ERROR(ncclInternalError, "a one-sided write on a connection made for records");
  Link* found = nullptr;
  BRAID_CHECK(usableLink(peer, &found));
  Link& link = *found;
  Status sent = [&]() -> Status {
    BRAID_CHECK(ensureConnected(peer, link, connectDeadline, bounds));
    const char* what = bytes > 0 ? "ncclPutSignal" : "ncclSignal";
    void* handle = nullptr;
    if (bytes > 0) BRAID_CHECK(backend_->registerMemory(*link.comm, const_cast<void*>(data), bytes, &handle));
    Status moved = postWrite(link, peer, immediate, data, bytes, handle, remoteAddr, rkey, bounds, what, true);
    if (handle) (void)backend_->deregisterMemory(*link.comm, handle);
    return moved;
  }();
  if (!sent.ok()) link.broken = sent.message();
  return sent;
}

}  // namespace braid
