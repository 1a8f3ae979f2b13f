// What a communicator knows about why it failed when the cause is elsewhere: another rank
// died, aborted or failed (learned from the watchdog). Once set, the communicator's async
// error is ncclRemoteError, its abort flag is up (every wait ends), and every later call
// reports this reason instead of a vague "aborted".
//
// Also how a failed operation ends (failOperation) and how a revoke is recorded
// (markRevoked): a revoke stops operations on purpose and is not a failure.
#pragma once

#include <string>

#include "core/lifecycle/comm.h"

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

// Records that rank `byRank` revoked the communicator (ncclCommRevoke here, or another
// rank's through the watchdog) and raises the abort flag, which stops the operations in
// flight. The async error is left as it is. False when it was revoked already (the first
// reason stays).
bool markRevoked(Comm* comm, const std::string& reason, int byRank);
// Why an operation stopped by a revoke did not complete: ncclInvalidUsage when this rank
// revoked, ncclRemoteError when another did.
Status revokedStatus(Comm* comm, const char* what);

// The end of an operation (collectives, one-sided operations) that failed on this rank
// (`result`; an ok result is returned as it is):
//  - the communicator was revoked: the revoke stopped it; nothing else changes;
//  - another rank is known lost (awaitPeerLostReason): ncclRemoteError with that reason;
//  - otherwise the cause is here: the other ranks are told at once, so that they fail
//    instead of waiting for this one.
// In the last two cases the communicator fails: async error set, abort flag up.
Status failOperation(Comm* comm, Status result);

}  // namespace braid
