// How a wait that gave up is reported, in the same words by both executors: what it was
// waiting for (named by the connection whose counter it watched) and the error a
// BRAID_TIMEOUT expiry becomes.
#pragma once

#include <string>

#include "nccl.h"
#include "transport/connector.h"
#include "util/status.h"

namespace braid {

// "for data from rank 3 (host b, pid 42) (SHM)" for a receive, "for rank 3 (...) to take
// the data sent to it (NET/Socket)" for a send. `peer` describes the connector's peer.
std::string waitingFor(const Connector& connector, const std::string& peer);

// "<subject> did not complete within BRAID_TIMEOUT=<s> s: channel <c> was waiting <what>;
// that rank is stuck, stopped or much slower than this one", as `result`.
Status timedOut(ncclResult_t result, const std::string& subject, double timeoutSec, int channel,
                const std::string& waiting);

}  // namespace braid
