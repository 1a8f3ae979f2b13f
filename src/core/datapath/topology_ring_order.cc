#include "core/datapath/topology_ring_order.h"

#include <algorithm>
#include <set>

#include "core/datapath/p2p_policy.h"
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

std::vector<int> gpuPositionsInChannels(const TopoGraph& graph, const TopoSearchResult& result,
                                        const std::string& busId, int node, int nChannels) {
  std::vector<int> out(static_cast<size_t>(std::max(0, nChannels)), -1);
  if (result.channels.empty()) return out;
  int searched = static_cast<int>(result.channels.size());
  for (int c = 0; c < nChannels; ++c) {
    out[static_cast<size_t>(c)] = gpuPositionInRing(graph, ringChannelOnNode(result, c % searched, node), busId);
  }
  return out;
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

std::vector<RankLayout> orderRanksByChannel(const RankLayout& layout, const std::vector<int>& positions, int nChannels,
                                            int myRank, std::vector<std::string>* notes) {
  std::vector<RankLayout> out;
  std::set<std::string> said;
  int nranks = static_cast<int>(layout.nodeOfRank.size());
  for (int c = 0; c < nChannels; ++c) {
    std::vector<int> channel(static_cast<size_t>(nranks), -1);
    for (int r = 0; r < nranks; ++r) {
      size_t at = static_cast<size_t>(r) * static_cast<size_t>(nChannels) + static_cast<size_t>(c);
      if (at < positions.size()) channel[static_cast<size_t>(r)] = positions[at];
    }
    std::vector<std::string> why;
    out.push_back(orderRanksByTopology(layout, channel, myRank, &why));
    for (std::string& w : why) {
      if (said.insert(w).second) notes->push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace braid
