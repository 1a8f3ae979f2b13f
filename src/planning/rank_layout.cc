#include "planning/rank_layout.h"

#include <unordered_map>

namespace braid {

RankLayout RankLayout::fromHostHashes(const std::vector<uint64_t>& hostHashes, int myRank) {
  RankLayout layout;
  std::unordered_map<uint64_t, int> nodeOfHash;
  int n = static_cast<int>(hostHashes.size());
  layout.nodeOfRank.resize(n);
  layout.localRankOf.resize(n);
  for (int r = 0; r < n; ++r) {
    auto [it, inserted] = nodeOfHash.try_emplace(hostHashes[r], static_cast<int>(layout.ranksOfNode.size()));
    if (inserted) layout.ranksOfNode.emplace_back();
    int node = it->second;
    layout.nodeOfRank[r] = node;
    layout.localRankOf[r] = static_cast<int>(layout.ranksOfNode[node].size());
    layout.ranksOfNode[node].push_back(r);
  }
  layout.nNodes = static_cast<int>(layout.ranksOfNode.size());
  if (myRank >= 0 && myRank < n) {
    layout.localRank = layout.localRankOf[myRank];
    layout.localRanks = static_cast<int>(layout.ranksOfNode[layout.nodeOfRank[myRank]].size());
  }
  return layout;
}

int RankLayout::uniformLocalRanks() const {
  if (ranksOfNode.empty()) return 0;
  const size_t local = ranksOfNode[0].size();
  for (const std::vector<int>& ranks : ranksOfNode) {
    if (ranks.size() != local) return 0;
  }
  return static_cast<int>(local);
}

}  // namespace braid
