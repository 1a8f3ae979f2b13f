#include "topology/placement.h"

#include "util/format.h"

namespace braid {

bool cpuNodeCpus(const TopoNode& cpu, CpuSet* out) {
  if (cpu.type != TopoNodeType::Cpu || cpu.cpu.affinity.empty()) return false;
  return CpuSet::parseMask(cpu.cpu.affinity, out) && !out->empty();
}

RankPlacement placeRank(const TopoGraph& graph, const CpuSet& affinity) {
  RankPlacement placed;
  placed.affinity = affinity;
  std::vector<int> cpus = graph.nodesOfType(TopoNodeType::Cpu);
  bool anyMask = false;
  CpuSet onlyMask;
  for (int node : cpus) {
    CpuSet mask;
    if (!cpuNodeCpus(graph.nodes[static_cast<size_t>(node)], &mask)) continue;
    anyMask = true;
    if (mask.intersects(affinity)) {
      placed.cpuNodes.push_back(node);
      onlyMask = mask;
    }
  }
  if (!anyMask && cpus.size() == 1) {
    placed.cpuNodes = cpus;
    placed.nodeCpus = affinity;
    placed.describe =
        strFormat("NUMA %d (the only CPU node of %s; CPUs %s)", graph.nodes[static_cast<size_t>(cpus[0])].cpu.numaId,
                  graph.source.c_str(), affinity.toList().c_str());
    return placed;
  }
  if (placed.cpuNodes.empty()) {
    placed.describe = strFormat("no CPU node of %s (its CPUs %s are in none of the graph's CPU masks)",
                                graph.source.c_str(), affinity.toList().c_str());
    return placed;
  }
  std::string ids;
  for (size_t i = 0; i < placed.cpuNodes.size(); ++i) {
    if (i > 0) ids += i + 1 == placed.cpuNodes.size() ? " and " : ", ";
    ids += std::to_string(graph.nodes[static_cast<size_t>(placed.cpuNodes[i])].cpu.numaId);
  }
  if (placed.single()) {
    placed.nodeCpus = onlyMask.intersect(affinity);
    placed.describe = strFormat("NUMA %s (CPUs %s)", ids.c_str(), placed.nodeCpus.toList().c_str());
  } else {
    placed.describe = strFormat("NUMA %s (its CPUs %s span %zu nodes)", ids.c_str(), affinity.toList().c_str(),
                                placed.cpuNodes.size());
  }
  return placed;
}

}  // namespace braid
