// What a communicator knows about why it failed when the cause is elsewhere: another rank
// died, aborted or failed (learned from the watchdog). Once set, the communicator's async
// error is ncclRemoteError, its abort flag is up (every wait ends), and every later call
// reports this reason instead of a vague "aborted".
#pragma once

#include <string>

#include "core/comm.h"

namespace braid {

// Records `reason` (the first one wins), sets the async error and the abort flag.
void markPeerLost(Comm* comm, const std::string& reason);
// The recorded reason, empty while no other rank is known lost.
std::string peerLostReason(Comm* comm);
// The recorded reason, waiting up to kVerdictWait for one when there is none yet: a broken
// connection is usually a rank that died, and the watchdog's verdict ("rank 3 is gone")
// arrives within moments and says more than "connection reset". Returns at once when the
// communicator has no watchdog. Empty when no verdict came.
std::string awaitPeerLostReason(Comm* comm);

}  // namespace braid
