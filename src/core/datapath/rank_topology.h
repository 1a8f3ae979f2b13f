// What host mode takes from the topology, for one rank: the NUMA node it runs on (its CPU
// affinity laid over the graph), the CPUs its worker threads are bound to, and the network
// devices it prefers. The graph is taken from the process's cache (core/datapath/topology_cache.h)
// only when a decision needs it; every decision is logged at INFO with its reason.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/lifecycle/comm.h"
#include "topology/nic_choice.h"
#include "topology/paths.h"
#include "topology/placement.h"
#include "util/cpu_set.h"

namespace braid {

class RankTopology {
 public:
  // Reads the rank's affinity now, before any of its threads is bound.
  explicit RankTopology(const Comm& comm);

  // The CPUs Braid's worker threads of this rank are bound to (BRAID_THREAD_AFFINITY):
  // those of its NUMA node that its affinity allows; empty to leave them as they are
  // (disabled, a machine with one NUMA node, a rank across several nodes or on none the
  // graph knows). Fails only on an NCCL_TOPO_FILE that cannot be read.
  Status decideWorkerCpus(CpuSet* out);

  // Orders the devices a backend could use (`candidates`, in the backend's order) so that
  // the closest to the rank come first, keeping only those (NicOrder::use). When a setting
  // chose the candidates (`how.pinnedBy`), or with one candidate, the order is kept, but
  // named rails (`how.inTurn`) start at the local rank's own. `how.single`: the backend
  // uses one device (the first of `use`, which is then all `use` holds). Logs "NIC for
  // rank r: ...".
  NicOrder chooseNics(const std::vector<NicCandidate>& candidates, const NicSelection& how);

  // GPU mode's choice between P2P and shared memory: the graph and its paths (loaded on
  // first need); false, with *why, when detection failed.
  bool graphAndPaths(const TopoGraph** graph, const TopoPaths** paths, std::string* why);

 private:
  // The graph, paths and placement, loaded on first need; false (with *why) when not.
  bool locate(std::string* why);

  const Comm& comm_;
  CpuSet affinity_;
  std::string topoFile_;
  bool located_ = false;
  Status loaded_;
  std::shared_ptr<const TopoGraph> graph_;
  std::unique_ptr<TopoPaths> paths_;
  RankPlacement placement_;
};

}  // namespace braid
