// The communicator lifecycle calls of NCCL 2.29 and 2.29.7: growing a communicator
// (comm_grow.cc), suspending and resuming it (comm_suspend.cc), and its memory statistics
// (comm_mem_stats.cc). Revoke, split and shrink are in comm_init.h.
#pragma once

#include <cstdint>
#include <vector>

#include "bootstrap/unique_id.h"
#include "core/lifecycle/comm.h"
#include "util/status.h"

namespace braid {

// ncclCommGetUniqueId: starts the bootstrap root of a grown communicator on this rank and
// fills `id` with it, marked as an id for growing `comm` (its hash and size). One id may be
// outstanding per rank and communicator.
Status makeGrowUniqueId(Comm* comm, ncclUniqueId* id);

// ncclCommGrow on a rank of the existing communicator: agrees with the other existing
// ranks on the id and nRanks (over the parent's bootstrap), then joins the new
// communicator under its old rank. *out is the new communicator (as for split).
Status startCommGrowExisting(Comm* parent, int nRanks, const ncclUniqueId* id, const ncclConfig_t* config, Comm** out);
// ncclCommGrow on a new rank: joins the communicator the id names as `rank`.
Status startCommGrowNew(int nRanks, const ncclUniqueId* id, int rank, const ncclConfig_t* config, Comm** out);

// What each existing rank tells the others in ncclCommGrow, and the decision every rank
// derives from all of them (the same on every rank, so that all fail or go on together).
struct GrowVote {
  int32_t nRanks = 0;
  uint8_t passedId = 0;   // the caller passed an id
  uint8_t pendingId = 0;  // this rank's ncclCommGetUniqueId made an id no grow has used
  uint8_t reserved[2] = {};
  ncclUniqueId passed{};
  ncclUniqueId pending{};
};
struct GrowDecision {
  UniqueIdContents id;
  int coordinator = -1;  // the rank whose ncclCommGetUniqueId made the id
};
Status decideGrow(const std::vector<GrowVote>& votes, uint64_t parentHash, int parentRanks, GrowDecision* out);

// ncclCommSuspend / ncclCommResume: collective over the communicator's ranks.
Status suspendComm(Comm* comm, int flags);
Status resumeComm(Comm* comm);

// ncclCommMemStats; `stat` is the caller's ncclCommMemStat_t as an int (it may be none).
Status commMemStat(Comm* comm, int stat, uint64_t* value);

}  // namespace braid
