// Where a rank runs on its machine's topology: its CPU affinity (sched_getaffinity) laid
// over the graph's CPU nodes (NUMA domains), whose CPUs come from NCCL's `affinity`
// attribute or hwloc's cpuset. Pure, so that tests place ranks on fixture machines.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"
#include "util/cpu_set.h"

namespace braid {

struct RankPlacement {
  CpuSet affinity;            // the rank's CPUs as the launcher gave them
  std::vector<int> cpuNodes;  // graph nodes (TopoNodeType::Cpu) whose CPUs it touches
  // The CPUs of the rank's one NUMA node that it may use (node ∩ affinity); empty when
  // the rank is not on exactly one node, or the graph does not say which CPUs the node
  // has.
  CpuSet nodeCpus;
  // "NUMA 1 (CPUs 16-31)", "NUMA 0 and 1", "no NUMA node of <source> (CPUs 64-127)".
  std::string describe;

  bool single() const { return cpuNodes.size() == 1; }
};

// A CPU node's CPUs, from its affinity attribute; false when absent or malformed.
bool cpuNodeCpus(const TopoNode& cpu, CpuSet* out);

// Lays `affinity` over the graph. A graph with one CPU node and no masks places every rank
// on it (a single-socket machine, or a file that leaves the masks out).
RankPlacement placeRank(const TopoGraph& graph, const CpuSet& affinity);

}  // namespace braid
