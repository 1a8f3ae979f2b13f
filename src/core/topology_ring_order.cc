#include "core/topology_ring_order.h"

#include <algorithm>
#include <set>

#include "core/p2p_policy.h"
#include "util/format.h"

namespace braid {

int gpuPositionInRing(const TopoGraph& graph, const TopoChannel& channel, const std::string& busId) {
  const std::string wanted = normalizeBusId(busId);
  for (size_t i = 0; i < channel.gpus.size(); ++i) {
    const TopoNode& node = graph.nodes[static_cast<size_t>(channel.gpus[i])];
    if (normalizeBusId(node.pci.busId) == wanted) return static_cast<int>(i);
  }
  return -1;
}

RankLayout orderRanksByTopology(const RankLayout& layout, const std::vector<int>& positions, int myRank,
                                std::vector<std::string>* notes) {
  RankLayout ordered = layout;
  for (size_t node = 0; node < ordered.ranksOfNode.size(); ++node) {
    std::vector<int>& ranks = ordered.ranksOfNode[node];
    if (ranks.size() < 2) continue;
    std::set<int> seen;
    int missing = -1, shared = -1;
    for (int r : ranks) {
      int p = positions[static_cast<size_t>(r)];
      if (p < 0 && missing < 0) missing = r;
      if (p >= 0 && !seen.insert(p).second && shared < 0) shared = r;
    }
    if (missing >= 0) {
      notes->push_back(
          strFormat("node %zu keeps rank order: rank %d did not find its GPU in its topology's rings", node, missing));
      continue;
    }
    if (shared >= 0) {
      notes->push_back(
          strFormat("node %zu keeps rank order: rank %d's GPU has the ring position of another rank's "
                    "(the processes see the machine differently)",
                    node, shared));
      continue;
    }
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
      return positions[static_cast<size_t>(a)] < positions[static_cast<size_t>(b)];
    });
    for (size_t i = 0; i < ranks.size(); ++i) ordered.localRankOf[static_cast<size_t>(ranks[i])] = static_cast<int>(i);
  }
  if (myRank >= 0 && myRank < static_cast<int>(ordered.localRankOf.size())) {
    ordered.localRank = ordered.localRankOf[static_cast<size_t>(myRank)];
  }
  return ordered;
}

}  // namespace braid
