// ncclCommShrink: how a job drops dead ranks and goes on.
//
// Shrink cannot use the parent's bootstrap ring (it passes through the dead ranks) nor its
// allGather. The survivors number themselves in parent-rank order; the first survivor
// creates a unique id and sends it to each of the others directly (the bootstrap's tagged
// point-to-point messages open fresh connections to each survivor's listener), and the new
// communicator forms from that id like any other.
#include <algorithm>
#include <cstring>

#include "core/lifecycle/comm_init.h"
#include "core/lifecycle/comm_registry.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// Tag of the new id's message; far from the transports' tags.
constexpr uint32_t kShrinkTag = 0x5348524bu;  // "SHRK"

Status runShrink(Comm* parent, Comm* child, std::vector<int> survivors, CommConfig childConfig) {
  LogRankScope scope(parent->rank);
  Bootstrap& boot = *parent->bootstrap;
  int newRank = static_cast<int>(std::find(survivors.begin(), survivors.end(), parent->rank) - survivors.begin());
  ncclUniqueId id{};
  // The parent's abort flag may be up (that is why we shrink): this exchange has its own,
  // bounded by the bootstrap timeout.
  Status exchanged = [&]() -> Status {
    BootstrapAbortOverride ownAbort(boot);
    if (newRank == 0) {
      BRAID_CHECK(createUniqueId(&id, boot.security()));
      for (size_t i = 1; i < survivors.size(); ++i) BRAID_CHECK(boot.send(survivors[i], kShrinkTag, &id, sizeof(id)));
      return okStatus();
    }
    return boot.recvExact(survivors[0], kShrinkTag, &id, sizeof(id));
  }();
  if (!exchanged.ok()) return exchanged.addContext("ncclCommShrink: handing out the new communicator's id");

  InitRequest request;
  request.apiName = "ncclCommShrink";
  request.nranks = static_cast<int>(survivors.size());
  request.rank = newRank;
  request.config = std::move(childConfig);
  request.security = boot.security();
  UniqueIdContents contents;
  Status decoded = decodeUniqueId(id, &contents);
  if (!decoded.ok()) return decoded.addContext("ncclCommShrink: id from the new rank 0");
  request.ids.push_back(contents);
  child->rank = newRank;
  child->nranks = request.nranks;
  BRAID_INFO(kLogInit, "ncclCommShrink: parent rank %d -> rank %d of %d", parent->rank, newRank, request.nranks);
  return runCommInit(child, request);
}

}  // namespace

Status startCommShrink(Comm* parent, const int* exclude, int excludeCount, const ncclConfig_t* config, int flags,
                       Comm** out) {
  *out = nullptr;
  const char* fn = "ncclCommShrink";
  if (flags != NCCL_SHRINK_DEFAULT && flags != NCCL_SHRINK_ABORT) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: shrinkFlags=%d is neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT",
                       fn, flags);
  }
  if (excludeCount < 0 || excludeCount >= parent->nranks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: excludeRanksCount=%d must be in [0, %d) (nranks=%d)", fn, excludeCount,
                       parent->nranks, parent->nranks);
  }
  if (excludeCount > 0 && !exclude) return BRAID_ERROR(ncclInvalidArgument, "%s: excludeRanksList is NULL", fn);
  std::vector<bool> excluded(static_cast<size_t>(parent->nranks), false);
  for (int i = 0; i < excludeCount; ++i) {
    int r = exclude[i];
    if (r < 0 || r >= parent->nranks) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: excludeRanksList[%d]=%d is outside [0, %d)", fn, i, r,
                         parent->nranks);
    }
    if (excluded[static_cast<size_t>(r)]) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: rank %d appears twice in excludeRanksList", fn, r);
    }
    excluded[static_cast<size_t>(r)] = true;
  }
  if (excluded[static_cast<size_t>(parent->rank)]) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: this rank (%d) is in excludeRanksList; excluded ranks do not call it",
                       fn, parent->rank);
  }
  if (parent->health.initializing() || !parent->bootstrap) {
    return BRAID_ERROR(ncclInvalidUsage, "%s: the parent communicator is still initializing", fn);
  }
  if (flags == NCCL_SHRINK_ABORT) {
    BRAID_CHECK(stopOperationsInFlight(parent, fn));
  } else if (parent->activeCalls.load() > 1) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: operations of other threads are in flight on the parent; use NCCL_SHRINK_ABORT to stop "
                       "them",
                       fn);
  }
  std::vector<int> survivors;
  for (int r = 0; r < parent->nranks; ++r) {
    if (!excluded[static_cast<size_t>(r)]) survivors.push_back(r);
  }
  CommConfig childConfig;
  BRAID_CHECK(resolveCommConfig(config, config ? nullptr : &parent->config, &childConfig));
  ExecutionMode mode;
  BRAID_CHECK(chooseExecutionMode(fn, childDeviceRequest(*parent), &mode));
  Comm* child = allocateComm(-1, 0, childConfig, mode);
  *out = child;
  GroupJob job;
  job.comm = child;
  job.run = [parent, child, survivors, childConfig]() { return runShrink(parent, child, survivors, childConfig); };
  return runOrDefer(std::move(job));
}

}  // namespace braid
