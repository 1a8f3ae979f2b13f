// Establishes a batch of connections with the transports' three-step handshake, carried
// by bootstrap messages: every rank first creates all its receiving ends and sends their
// handles, then attaches all its sending ends (and acknowledges), then finishes its
// receiving ends. Doing each phase for the whole batch before the next means no rank waits
// for a handle its peer has not yet had a chance to send, whatever the order of requests.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transport/transport.h"

namespace braid {

struct ConnectionJob {
  ConnRequest request;
  Transport* transport = nullptr;
  std::unique_ptr<Connector>* target = nullptr;  // filled on success
};

Status establishConnections(Bootstrap& bootstrap, std::vector<ConnectionJob>& jobs);

// The bootstrap tag of a handshake message (exposed for tests).
uint32_t connectionTag(const ConnRequest& request, bool ack);

}  // namespace braid
