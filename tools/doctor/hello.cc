#include "hello.h"

#include <unistd.h>

#include "core/lifecycle/comm.h"
#include "util/host_identity.h"

namespace braid::doctor {

void collectIdentity(ncclComm_t comm, const braidLaunchInfo& launch, RankInfo* info) {
  ncclCommUserRank(comm, &info->rank);
  ncclCommCount(comm, &info->nranks);
  info->launcherRank = launch.rank;
  info->launcherSize = launch.nranks;
  info->localRank = launch.localRank;
  info->localSize = launch.localSize;
  info->launcher = launch.launcher;
  info->rendezvous = launch.rendezvous;
  info->host = hostName();
  info->pid = std::to_string(getpid());
  // The doctor links Braid's internals: the layout is what the library derived from host
  // hashes, which the launcher's local rank is checked against.
  const Comm& internal = *comm;
  info->braidLocalRank = internal.layout.localRank;
  info->braidLocalSize = internal.layout.localRanks;
  if (info->rank >= 0 && static_cast<size_t>(info->rank) < internal.layout.nodeOfRank.size()) {
    info->node = internal.layout.nodeOfRank[static_cast<size_t>(info->rank)];
  }
  const auto& peers = internal.bootstrap->peers();
  if (info->rank >= 0 && static_cast<size_t>(info->rank) < peers.size()) {
    const std::string& busId = peers[static_cast<size_t>(info->rank)].busId;
    info->device = internal.cudaDev < 0 ? "host" : "GPU " + std::to_string(internal.cudaDev) + " (" + busId + ")";
  } else {
    info->device = internal.cudaDev < 0 ? "host" : "GPU " + std::to_string(internal.cudaDev);
  }
}

std::string helloLine(const RankInfo& info) {
  std::string local = info.localRank >= 0 ? std::to_string(info.localRank) : "?";
  std::string localSize = info.localSize > 0 ? std::to_string(info.localSize) : "?";
  return "hello from rank " + std::to_string(info.rank) + "/" + std::to_string(info.nranks) + " (local rank " + local +
         "/" + localSize + ") on " + info.host + ", device " + info.device + ", launcher " + info.launcher;
}

}  // namespace braid::doctor
