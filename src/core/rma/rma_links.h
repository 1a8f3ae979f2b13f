// The sending side of one-sided operations that travel through the network backend: one
// connection to each peer that needs one, made at the first operation for it (the peer's
// RMA service thread accepts it, so the peer takes no part). Each operation is a record
// (rma_wire.h), with a put's data as the next message; a call returns when the backend
// has sent both (the caller's buffer may be reused then), and the records of one
// connection arrive in order.
//
// Where the backend writes into remote memory (net_rdma.h) and the communicator's signals
// fit an immediate value, every connection is made for writes instead: a put is one RDMA
// write with immediate straight into the target's window (`write`), a signal a zero-length
// one, and Hello and Goodbye are immediates too; the call returns once the target's NIC has
// acknowledged the write.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/rma/rma_wire.h"
#include "transport/net/net_backend.h"
#include "util/deadline.h"

namespace braid {

// What ends a wait besides success: the abort flag, and a deadline (BRAID_TIMEOUT) with
// the words that say what timed out.
struct RmaWaitBounds {
  const AbortFlag* abort = nullptr;
  Deadline deadline = Deadline::never();
  double timeoutSec = 0;  // for the message
  // A wait whose expiry is expected and harmless (the goodbye to a peer that may be gone
  // already): its error is returned for an INFO line, not logged as a WARN.
  bool quiet = false;
};

class RmaLinks {
 public:
  // `handles`: every rank's listener (from the exchange at the network's setup). `poke`
  // runs when an operation for a peer has been posted: it wakes that peer's service thread
  // where this rank can (a rank of its host).
  // `writes`: connect for RDMA writes with immediate (backend->rdma() must be set).
  RmaLinks(NetBackend* backend, bool writes, std::vector<NetHandle> handles, int rank, uint64_t commHash,
           std::vector<std::string> peerNames, std::function<void(int peer)> poke)
      : backend_(backend),
        writes_(writes),
        handles_(std::move(handles)),
        rank_(rank),
        commHash_(commHash),
        peerNames_(std::move(peerNames)),
        poke_(std::move(poke)),
        links_(handles_.size()) {}
  ~RmaLinks();
  RmaLinks(const RmaLinks&) = delete;
  RmaLinks& operator=(const RmaLinks&) = delete;

  // Sends `record` to `peer`, then `bytes` of `data` when it is a put. `connectDeadline`
  // bounds making the connection (the bootstrap timeout), `bounds` the transfer.
  Status send(int peer, RmaRecord record, const void* data, Deadline connectDeadline, const RmaWaitBounds& bounds);
  // Connections made for writes: one RDMA write with immediate of `bytes` of `data` (none
  // for a signal alone) to `remoteAddr` under `rkey` in `peer`'s memory.
  Status write(int peer, uint32_t immediate, const void* data, size_t bytes, uint64_t remoteAddr, uint32_t rkey,
               Deadline connectDeadline, const RmaWaitBounds& bounds);
  bool writes() const { return writes_; }
  // Before the communicator goes: a Goodbye record on every working connection, so that the
  // receiving sides take the close that follows as the end, not as a death. Best effort
  // within `deadline` (a peer that is gone already cannot be told).
  void sayGoodbye(Deadline deadline);

 private:
  struct Link {
    std::unique_ptr<NetSendComm> comm;
    alignas(64) uint8_t record[kRmaRecordBytes] = {};
    void* recordHandle = nullptr;
    std::string broken;  // why the link cannot be used any more
  };
  Status connect(int peer, Link& link, Deadline deadline, const AbortFlag* abort);
  // Connects (at the first operation for `peer`) and introduces this rank.
  Status ensureConnected(int peer, Link& link, Deadline deadline, const RmaWaitBounds& bounds);
  // The link to `peer` (made on first use), or why it cannot be used.
  Status usableLink(int peer, Link** out);
  // One write with immediate, waited for.
  Status postWrite(Link& link, int peer, uint32_t immediate, const void* data, size_t bytes, void* handle,
                   uint64_t remoteAddr, uint32_t rkey, const RmaWaitBounds& bounds, const char* what, bool poke);
  Status post(Link& link, int peer, const void* data, size_t bytes, uint32_t tag, void* handle,
              const RmaWaitBounds& bounds, const char* what, bool poke = false);
  Status wait(NetRequest* request, int peer, const RmaWaitBounds& bounds, const char* what);

  NetBackend* backend_;
  bool writes_;
  std::vector<NetHandle> handles_;  // connect() resumes by handle object: these stay put
  int rank_;
  uint64_t commHash_;
  std::vector<std::string> peerNames_;
  std::function<void(int peer)> poke_;
  std::mutex mutex_;  // one operation at a time (NCCL's communicators are not for concurrent calls)
  std::vector<std::unique_ptr<Link>> links_;
};

}  // namespace braid
