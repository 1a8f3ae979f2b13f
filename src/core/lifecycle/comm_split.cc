// ncclCommSplit: every rank of the parent contributes (color, key) through the parent's
// bootstrap; ranks of one color, ordered by key then parent rank, form a new
// communicator whose rank 0 creates its unique id and hands it to the others through a
// second exchange. NCCL_SPLIT_NOCOLOR ranks take part in both exchanges and get NULL.
#include <algorithm>
#include <cstring>
#include <optional>

#include "core/lifecycle/comm_init.h"
#include "core/lifecycle/comm_registry.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

struct SplitEntry {
  int32_t color;
  int32_t key;
  int32_t parentRank;
};

// Runs on the parent's bootstrap; `child` is null for NCCL_SPLIT_NOCOLOR.
Status runSplit(Comm* parent, Comm* child, int color, int key, CommConfig childConfig) {
  LogRankScope scope(parent->rank);
  Bootstrap& boot = *parent->bootstrap;
  // A revoked parent's abort flag is up (it stopped the operations); the exchange still runs.
  std::optional<BootstrapAbortOverride> ownAbort;
  if (parent->revoked.load()) ownAbort.emplace(boot);
  int n = parent->nranks;
  std::vector<SplitEntry> entries(n);
  entries[parent->rank] = {color, key, parent->rank};
  BRAID_CHECK(boot.allGather(entries.data(), sizeof(SplitEntry)));

  std::vector<SplitEntry> members;
  for (const SplitEntry& e : entries) {
    if (e.parentRank < 0 || e.parentRank >= n) {
      return BRAID_ERROR(ncclInternalError, "ncclCommSplit: corrupted exchange (parent rank %d)", e.parentRank);
    }
    if (e.color == color && color != NCCL_SPLIT_NOCOLOR) members.push_back(e);
  }
  std::stable_sort(members.begin(), members.end(), [](const SplitEntry& a, const SplitEntry& b) {
    return a.key != b.key ? a.key < b.key : a.parentRank < b.parentRank;
  });
  int newRank = -1;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].parentRank == parent->rank) newRank = static_cast<int>(i);
  }

  // The first member of each color creates the new communicator's id.
  std::vector<ncclUniqueId> ids(n);
  std::memset(ids.data(), 0, sizeof(ncclUniqueId) * n);
  if (newRank == 0) BRAID_CHECK(createUniqueId(&ids[parent->rank], boot.security()));
  BRAID_CHECK(boot.allGather(ids.data(), sizeof(ncclUniqueId)));
  if (!child) return okStatus();

  InitRequest request;
  request.apiName = "ncclCommSplit";
  request.nranks = static_cast<int>(members.size());
  request.rank = newRank;
  request.config = std::move(childConfig);
  request.security = boot.security();
  UniqueIdContents contents;
  Status decoded = decodeUniqueId(ids[members[0].parentRank], &contents);
  if (!decoded.ok()) return decoded.addContext("ncclCommSplit: id from the new rank 0");
  request.ids.push_back(contents);
  child->rank = newRank;
  child->nranks = request.nranks;
  BRAID_INFO(kLogInit, "ncclCommSplit: parent rank %d color %d key %d -> rank %d of %d", parent->rank, color, key,
             newRank, request.nranks);
  return runCommInit(child, request);
}

}  // namespace

Status startCommSplit(Comm* parent, int color, int key, const ncclConfig_t* config, Comm** out) {
  *out = nullptr;
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclCommSplit: color=%d must be >= 0 or NCCL_SPLIT_NOCOLOR (-1)", color);
  }
  if (parent->health.asyncError() != ncclSuccess) {
    return BRAID_ERROR(
        ncclInvalidUsage, "ncclCommSplit: the parent communicator is %s",
        parent->health.initializing() ? "still initializing" : "in an error state (see ncclGetLastError)");
  }
  CommConfig childConfig;
  BRAID_CHECK(resolveCommConfig(config, config ? nullptr : &parent->config, &childConfig));
  ExecutionMode mode;
  BRAID_CHECK(chooseExecutionMode("ncclCommSplit", childDeviceRequest(*parent), &mode));
  Comm* child = nullptr;
  if (color != NCCL_SPLIT_NOCOLOR) child = allocateComm(-1, 0, childConfig, mode);
  *out = child;
  GroupJob job;
  job.comm = child;
  job.run = [parent, child, color, key, childConfig]() { return runSplit(parent, child, color, key, childConfig); };
  return runOrDefer(std::move(job));
}

}  // namespace braid
