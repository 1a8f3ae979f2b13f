#include "core/datapath/rank_topology.h"

#include "core/config/params.h"
#include "core/datapath/topology_cache.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

RankTopology::RankTopology(const Comm& comm)
    : comm_(comm), affinity_(CpuSet::ofCallingThread()), topoFile_(params::kTopoFile.get()) {}

bool RankTopology::locate(std::string* why) {
  if (!located_) {
    located_ = true;
    loaded_ = cachedTopology(topoFile_, &graph_);
    if (loaded_.ok()) {
      paths_ = std::make_unique<TopoPaths>(*graph_, PathOptions{false});
      placement_ = placeRank(*graph_, affinity_);
    }
  }
  if (!loaded_.ok()) *why = "topology detection failed: " + loaded_.message();
  return loaded_.ok();
}

bool RankTopology::graphAndPaths(const TopoGraph** graph, const TopoPaths** paths, std::string* why) {
  if (!locate(why)) return false;
  *graph = graph_.get();
  *paths = paths_.get();
  return true;
}

Status RankTopology::decideWorkerCpus(CpuSet* out) {
  *out = CpuSet();
  std::string cpus = affinity_.toList();
  if (params::kThreadAffinity.get() == 0) {
    BRAID_INFO(kLogInit, "Thread affinity: off (BRAID_THREAD_AFFINITY=0); worker threads keep CPUs %s", cpus.c_str());
    return okStatus();
  }
  // One NUMA node (sysfs says so without hwloc): nothing to choose, no graph to load.
  if (topoFile_.empty() && liveNumaNodeCount() <= 1) {
    BRAID_INFO(kLogInit, "Thread affinity: worker threads keep CPUs %s (this machine has one NUMA node)", cpus.c_str());
    return okStatus();
  }
  std::string why;
  if (!locate(&why)) {
    if (!topoFile_.empty()) return Status(loaded_).addContext("NCCL_TOPO_FILE");
    BRAID_WARN("Thread affinity: worker threads keep CPUs %s (%s)", cpus.c_str(), why.c_str());
    return okStatus();
  }
  const RankPlacement& at = placement_;
  if (!at.single()) {
    BRAID_INFO(kLogInit,
               "Thread affinity: worker threads keep CPUs %s: the rank is on %s; bind the rank to one node "
               "(taskset, numactl, the launcher's CPU binding) to place them",
               cpus.c_str(), at.describe.c_str());
    return okStatus();
  }
  // Bound even when the node's CPUs are all the rank has: threads otherwise inherit the
  // affinity of whichever thread starts them, which the application may have narrowed
  // (one core for its main thread) after init.
  *out = at.nodeCpus;
  BRAID_INFO(kLogInit, "Thread affinity: worker threads bound to CPUs %s, the rank's %s%s%s", out->toList().c_str(),
             at.describe.c_str(), at.nodeCpus == affinity_ ? ", all its CPUs" : " within its CPUs ",
             at.nodeCpus == affinity_ ? "" : cpus.c_str());
  return okStatus();
}

NicOrder RankTopology::chooseNics(const std::vector<NicCandidate>& candidates, const NicSelection& how) {
  const std::string& pinnedBy = how.pinnedBy;
  const bool single = how.single;
  const bool inTurn = how.inTurn && single && candidates.size() > 1;
  auto label = [&](size_t i) {
    const NicCandidate& c = candidates[i];
    return c.port >= 0 ? strFormat("%s:%d", c.name.c_str(), c.port) : c.name;
  };
  NicOrder order;
  std::string why;
  if (candidates.size() <= 1) {
    order = nicsInGivenOrder(candidates.size(), "the only usable device");
  } else if (inTurn) {
    // Named rails, one device per rank (sockets): the host's ranks take them in turn. A
    // socket connection runs on the listener's network whichever interface the connecting
    // rank has, so no connection crosses rails.
    order = namedNicsInTurn(candidates.size(), comm_.layout.localRank, "chosen by " + pinnedBy);
  } else if (!pinnedBy.empty()) {
    // Kept in the setting's order. With several devices per rank (IB), channel c uses the
    // c-th at both ends of every connection, which keeps each connection on one rail where
    // rails do not reach each other.
    order = nicsInGivenOrder(candidates.size(), "chosen by " + pinnedBy);
  } else if (!locate(&why)) {
    order = nicsInGivenOrder(candidates.size(), why);
  } else {
    order = orderNicsByDistance(*graph_, *paths_, placement_, candidates, comm_.layout.localRank);
  }
  // A single-device backend takes the first; the others of an equally close tier are the
  // other local ranks' first choices.
  std::string others;
  if (single && order.use.size() > 1) {
    for (size_t k = 1; k < order.use.size(); ++k) {
      others += (others.empty() ? "" : ", ") + label(static_cast<size_t>(order.use[k]));
    }
    order.use.resize(1);
  }
  std::string names;
  for (int i : order.use) names += (names.empty() ? "" : ", ") + label(static_cast<size_t>(i));
  if (!order.ranked) {
    // What the other candidates are to this rank: the other local ranks' (named rails), or
    // spares that every rank keeps as fallbacks (a prefix or an exclusion matched several).
    std::string rest;
    if (inTurn) {
      rest = "; the host's ranks start at different ones; the others: " + others;
    } else if (!single && order.use.size() > 1) {
      // The same list for every local rank: Hier's cross rings add the local index
      // (NetTransport's netDeviceFor, hierCrossRail).
      rest = "; channels take them in turn, and Hier's cross-host ring of local rank j starts at the j-th";
    } else if (single && !pinnedBy.empty() && !others.empty()) {
      rest = "; every rank of the host uses it, the others (" + others +
             ") stay fallbacks: name the interfaces one by one (eth0,eth1) for the ranks to take them in turn";
    }
    BRAID_INFO(kLogInit | kLogNet, "NIC for rank %d: %s (%s%s)", comm_.rank, names.c_str(),
               order.why.empty() ? "in the backend's order" : order.why.c_str(), rest.c_str());
    return order;
  }
  const NicDistance& first = order.distance[static_cast<size_t>(order.use.front())];
  std::string unused;
  for (size_t i = 0; i < candidates.size(); ++i) {
    bool used = false;
    for (int u : order.use) used |= u == static_cast<int>(i);
    if (used) continue;
    const NicDistance& d = order.distance[i];
    if (others.find(label(i)) != std::string::npos) continue;
    unused += strFormat("%s%s (%s)", unused.empty() ? "" : ", ", label(i).c_str(),
                        d.net < 0 ? "not in the topology" : pathTypeName(d.type));
  }
  std::string tier;
  if (order.use.size() > 1) tier = "; equally close, channels take them in turn";
  if (!others.empty()) tier = "; equally close, for other local ranks: " + others;
  BRAID_INFO(kLogInit | kLogNet, "NIC for rank %d: %s (path %s to NUMA %d%s%s%s)", comm_.rank, names.c_str(),
             pathTypeName(first.type), first.numaId, tier.c_str(),
             unused.empty() ? "" : "; farther, not used: ", unused.c_str());
  return order;
}

}  // namespace braid
