// Point-to-point transfers on the host: a channel's sends and receives of one group,
// progressed side by side (never one after the other), so that any pattern — pairs in any
// order, all-to-all, a ring of sends — completes with bounded FIFOs. Transfers on one
// connection complete in the order they were posted, as NCCL matches them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/host/host_exec.h"
#include "transport/connector.h"
#include "util/status.h"

namespace braid {

// Every step of a transfer starts with this header, so that a receive that does not match
// its send (a different size) is an error naming both sizes, never a silent misreading of
// the next transfer's data. A transfer always sends at least one step (an empty one for 0
// bytes) and marks its last.
// A single-copy step carries no payload: it tells the receiver where the sender's buffer
// is; the receiver copies it with process_vm_readv and hands the step back, and only then
// is the send complete (the buffer must stay untouched until read).
struct P2pStepHeader {
  uint64_t totalBytes;
  uint32_t payloadBytes;
  uint16_t last;
  uint16_t singleCopy;
  uint64_t address;  // single copy: the sender's buffer
};
static_assert(sizeof(P2pStepHeader) == 24, "P2pStepHeader is part of the wire format");

struct P2pTransfer {
  bool isSend = true;
  const uint8_t* src = nullptr;  // sends
  uint8_t* dst = nullptr;        // receives
  size_t bytes = 0;
  Connector* connector = nullptr;
  size_t moved = 0;  // bytes published (send) or consumed (receive) so far
  bool finished = false;
  // Sends at least this large go by single copy when the receiver allows it (0: never).
  size_t singleCopyThreshold = 0;
  bool awaitingRead = false;  // a single-copy send waits for the receiver to finish
  uint64_t readStep = 0;
};

// Fails when aborted, or when a peer's transfer does not match the posted one.
Status runP2pOnHost(HostExec& exec, std::vector<P2pTransfer>& transfers);

}  // namespace braid
