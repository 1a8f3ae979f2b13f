// Point-to-point transfers on the host: a channel's sends and receives of one group,
// progressed side by side (never one after the other), so that any pattern — pairs in any
// order, all-to-all, a ring of sends — completes with bounded FIFOs. Transfers on one
// connection complete in the order they were posted, as NCCL matches them. The steps
// themselves (headers, sizes, copies) are kernels/p2p/p2p_steps.h's, shared with the GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/host/host_exec.h"
#include "kernels/p2p/p2p_steps.h"
#include "transport/connector.h"
#include "util/status.h"

namespace braid {

struct P2pTransfer {
  bool isSend = true;
  const uint8_t* src = nullptr;  // sends
  uint8_t* dst = nullptr;        // receives
  size_t bytes = 0;
  Connector* connector = nullptr;
  uint64_t stepsDone = 0;  // steps published (send) or consumed (receive) so far
  bool finished = false;
  // Sends at least this large go by single copy when the receiver allows it (0: never).
  size_t singleCopyThreshold = 0;
  bool awaitingRead = false;  // a single-copy send waits for the receiver to finish
  uint64_t readStep = 0;
};

// Fails when aborted, or when a peer's transfer does not match the posted one.
Status runP2pOnHost(HostExec& exec, std::vector<P2pTransfer>& transfers);

}  // namespace braid
