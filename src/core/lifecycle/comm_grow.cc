// ncclCommGetUniqueId and ncclCommGrow: adding ranks to a running communicator.
//
// NVIDIA's protocol: one existing rank (the coordinator) calls ncclCommGetUniqueId and
// hands the id to the new ranks; every existing rank calls ncclCommGrow(parent, nRanks,
// NULL or the id, -1) and keeps its rank; every new rank calls ncclCommGrow(NULL, nRanks,
// id, rank) with a rank from the parent's size up. The parent stays a communicator of its
// own (NVIDIA's documentation says to destroy it after the grow).
//
// Braid: the id names a fresh bootstrap root started by the coordinator, and carries the
// parent's hash and size. The existing ranks first agree over the parent's bootstrap
// (GrowVote: nRanks, the id passed, the id each has outstanding), so that a mistake on
// one rank (another communicator's id, an id already used, different nRanks) is the same
// named error on all of them instead of a wait; then all ranks, existing and new, join
// the root like an ordinary init of nRanks ranks.
#include <cstring>

#include "core/config/encryption.h"
#include "core/lifecycle/comm_init.h"
#include "core/lifecycle/comm_lifecycle.h"
#include "core/lifecycle/comm_state.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

static_assert(sizeof(GrowVote) == 8 + 2 * NCCL_UNIQUE_ID_BYTES, "GrowVote travels between ranks as bytes");

bool sameId(const ncclUniqueId& a, const ncclUniqueId& b) {
  return std::memcmp(a.internal, b.internal, NCCL_UNIQUE_ID_BYTES) == 0;
}

Status runGrowExisting(Comm* parent, Comm* child, GrowVote mine, CommConfig childConfig) {
  LogRankScope scope(parent->rank);
  const char* fn = "ncclCommGrow";
  std::vector<GrowVote> votes(static_cast<size_t>(parent->nranks));
  votes[static_cast<size_t>(parent->rank)] = mine;
  {
    // A revoked parent cannot get here; the parent's own flag still ends this exchange when
    // another rank is lost meanwhile.
    Status gathered = parent->bootstrap->allGather(votes.data(), sizeof(GrowVote));
    if (!gathered.ok()) return gathered.addContext(strFormat("%s: agreeing with the other existing ranks", fn));
  }
  GrowDecision decision;
  Status decided = decideGrow(votes, parent->commHash, parent->nranks, &decision);
  if (!decided.ok() || decision.coordinator == parent->rank) {
    // This rank's id is used up: by the join below, whatever becomes of it, or by this
    // failed grow, whose new ranks (waiting at this rank's root) then hear why at once.
    std::lock_guard<std::mutex> lock(parent->errorMutex);
    if (!decided.ok() && parent->pendingGrowRoot) {
      parent->pendingGrowRoot->cancel(
          decided.code(), "the existing ranks of the communicator being grown could not agree: " + decided.message());
    }
    parent->pendingGrowId.clear();
    parent->pendingGrowRoot.reset();
  }
  BRAID_CHECK(decided);
  InitRequest request;
  request.apiName = fn;
  request.nranks = mine.nRanks;
  request.rank = parent->rank;
  request.config = std::move(childConfig);
  request.ids.push_back(decision.id);
  request.security = parent->bootstrap->security();
  child->rank = parent->rank;
  child->nranks = request.nranks;
  BRAID_INFO(kLogInit, "%s: existing rank %d of %d joins the grown communicator of %d ranks (id from rank %d)", fn,
             parent->rank, parent->nranks, request.nranks, decision.coordinator);
  return runCommInit(child, request);
}

}  // namespace

Status decideGrow(const std::vector<GrowVote>& votes, uint64_t parentHash, int parentRanks, GrowDecision* out) {
  const char* fn = "ncclCommGrow";
  for (size_t r = 1; r < votes.size(); ++r) {
    if (votes[r].nRanks != votes[0].nRanks) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: the existing ranks disagree on nRanks: rank 0 passed %d, rank %zu %d", fn,
                         votes[0].nRanks, r, votes[r].nRanks);
    }
  }
  // The id: the one passed (all that pass one must pass the same), else the one a rank
  // has outstanding (a coordinator that passed NULL).
  int passedBy = -1, pendingOn = -1;
  for (size_t r = 0; r < votes.size(); ++r) {
    if (votes[r].passedId) {
      if (passedBy >= 0 && !sameId(votes[r].passed, votes[static_cast<size_t>(passedBy)].passed)) {
        return BRAID_ERROR(ncclInvalidArgument, "%s: existing ranks %d and %zu passed different ids", fn, passedBy, r);
      }
      if (passedBy < 0) passedBy = static_cast<int>(r);
    }
    if (votes[r].pendingId && pendingOn < 0) pendingOn = static_cast<int>(r);
  }
  ncclUniqueId chosen{};
  if (passedBy >= 0) {
    chosen = votes[static_cast<size_t>(passedBy)].passed;
  } else {
    int outstanding = 0;
    for (const GrowVote& v : votes) outstanding += v.pendingId;
    if (outstanding == 0) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "%s: no existing rank passed an id and none has one from ncclCommGetUniqueId outstanding: "
                         "the coordinator calls ncclCommGetUniqueId and passes its id to ncclCommGrow",
                         fn);
    }
    if (outstanding > 1) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "%s: no existing rank passed an id and %d ranks have one from ncclCommGetUniqueId "
                         "outstanding: the coordinator passes the id to use",
                         fn, outstanding);
    }
    chosen = votes[static_cast<size_t>(pendingOn)].pending;
  }
  UniqueIdContents contents;
  Status decoded = decodeUniqueId(chosen, &contents);
  if (!decoded.ok()) return decoded.addContext(fn);
  if (!contents.forGrow) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: the id was made by ncclGetUniqueId; a grow takes the id of ncclCommGetUniqueId called on "
                       "the communicator to grow",
                       fn);
  }
  if (contents.grow.parentHash != parentHash || contents.grow.parentRanks != parentRanks) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: the id was made by ncclCommGetUniqueId of another communicator (one of %d ranks, hash "
                       "0x%llx), not of this one (%d ranks, hash 0x%llx)",
                       fn, contents.grow.parentRanks, static_cast<unsigned long long>(contents.grow.parentHash),
                       parentRanks, static_cast<unsigned long long>(parentHash));
  }
  int coordinator = -1;
  for (size_t r = 0; r < votes.size(); ++r) {
    if (votes[r].pendingId && sameId(votes[r].pending, chosen)) coordinator = static_cast<int>(r);
  }
  if (coordinator < 0) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the id of ncclCommGetUniqueId was used by an earlier ncclCommGrow already (each id serves "
                       "one grow): call ncclCommGetUniqueId again",
                       fn);
  }
  if (votes[0].nRanks <= parentRanks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: nRanks=%d must be larger than the communicator's %d ranks", fn,
                       votes[0].nRanks, parentRanks);
  }
  out->id = contents;
  out->coordinator = coordinator;
  return okStatus();
}

Status makeGrowUniqueId(Comm* comm, ncclUniqueId* id) {
  const char* fn = "ncclCommGetUniqueId";
  BRAID_CHECK(checkManageable(comm, fn, SuspendState::kMustBeActive));
  {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    if (!comm->pendingGrowId.empty()) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "%s: this rank's previous id has not been used by an ncclCommGrow yet (one id at a time)", fn);
    }
  }
  UniqueIdContents contents;
  auto cancel = std::make_shared<RootCancel>();
  // The root's connections are the communicator's own kind (encrypted when it is).
  BRAID_CHECK(startBootstrapRoot(&contents, comm->bootstrap->security(), {}, cancel));
  contents.forGrow = true;
  contents.grow.parentHash = comm->commHash;
  contents.grow.parentRanks = comm->nranks;
  encodeUniqueId(contents, id);
  std::lock_guard<std::mutex> lock(comm->errorMutex);
  comm->pendingGrowId.assign(id->internal, NCCL_UNIQUE_ID_BYTES);
  comm->pendingGrowRoot = std::move(cancel);
  LogRankScope scope(comm->rank);
  BRAID_INFO(kLogInit, "%s: rank %d made an id to grow comm %p (%d ranks) at %s", fn, comm->rank,
             static_cast<void*>(comm), comm->nranks, contents.root.toString().c_str());
  return okStatus();
}

Status startCommGrowExisting(Comm* parent, int nRanks, const ncclUniqueId* id, const ncclConfig_t* config, Comm** out) {
  *out = nullptr;
  const char* fn = "ncclCommGrow";
  if (nRanks <= parent->nranks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: nRanks=%d must be larger than the communicator's %d ranks", fn, nRanks,
                       parent->nranks);
  }
  BRAID_CHECK(checkManageable(parent, fn, SuspendState::kMustBeActive));
  GrowVote mine;
  mine.nRanks = nRanks;
  if (id) {
    mine.passedId = 1;
    mine.passed = *id;
  }
  {
    std::lock_guard<std::mutex> lock(parent->errorMutex);
    if (!parent->pendingGrowId.empty()) {
      mine.pendingId = 1;
      std::memcpy(mine.pending.internal, parent->pendingGrowId.data(), NCCL_UNIQUE_ID_BYTES);
    }
  }
  CommConfig childConfig;
  BRAID_CHECK(resolveCommConfig(config, config ? nullptr : &parent->config, &childConfig));
  ExecutionMode mode;
  BRAID_CHECK(chooseExecutionMode(fn, childDeviceRequest(*parent), &mode));
  Comm* child = allocateComm(parent->rank, nRanks, childConfig, mode);
  *out = child;
  GroupJob job;
  job.comm = child;
  job.run = [parent, child, mine, childConfig]() { return runGrowExisting(parent, child, mine, childConfig); };
  return runOrDefer(std::move(job));
}

Status startCommGrowNew(int nRanks, const ncclUniqueId* id, int rank, const ncclConfig_t* config, Comm** out) {
  *out = nullptr;
  const char* fn = "ncclCommGrow";
  if (!id) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: a new rank (comm NULL) needs the uniqueId that ncclCommGetUniqueId gave the coordinator",
                       fn);
  }
  if (rank < 0 || rank >= nRanks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: a new rank's rank=%d is outside [0, %d) (nRanks=%d)", fn, rank, nRanks,
                       nRanks);
  }
  UniqueIdContents contents;
  Status decoded = decodeUniqueId(*id, &contents);
  if (!decoded.ok()) return decoded.addContext(fn);
  if (!contents.forGrow) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: the id was made by ncclGetUniqueId; new ranks join with the id of ncclCommGetUniqueId "
                       "called on the communicator they grow",
                       fn);
  }
  int parentRanks = contents.grow.parentRanks;
  if (nRanks <= parentRanks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: nRanks=%d must be larger than the grown communicator's %d ranks", fn,
                       nRanks, parentRanks);
  }
  if (rank < parentRanks) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: rank=%d belongs to the existing ranks (0..%d keep their numbers); new ranks take %d..%d",
                       fn, rank, parentRanks - 1, parentRanks, nRanks - 1);
  }
  InitRequest request;
  request.apiName = fn;
  request.nranks = nRanks;
  request.rank = rank;
  request.ids.push_back(contents);
  BRAID_CHECK(resolveCommConfig(config, nullptr, &request.config));
  BRAID_CHECK(currentSocketSecurity(&request.security));
  BRAID_CHECK(chooseExecutionMode(fn, DeviceRequest::currentDevice(), &request.mode));
  BRAID_INFO(kLogInit, "%s: new rank %d joins the grown communicator of %d ranks (from %d)", fn, rank, nRanks,
             parentRanks);
  return startCommInit(std::move(request), out);
}

}  // namespace braid
