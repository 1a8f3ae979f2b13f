#include "planning/ring.h"

namespace braid {

std::vector<int> buildRingOrder(const RankLayout& layout) {
  std::vector<int> order;
  order.reserve(layout.nodeOfRank.size());
  // ranksOfNode lists each host's ranks in rank order, and hosts are numbered by their
  // first rank, so concatenating them is exactly the documented order.
  for (const std::vector<int>& ranks : layout.ranksOfNode) order.insert(order.end(), ranks.begin(), ranks.end());
  return order;
}

RingPosition ringPosition(const std::vector<int>& order, int rank) {
  RingPosition pos;
  int n = static_cast<int>(order.size());
  for (int i = 0; i < n; ++i) {
    if (order[i] != rank) continue;
    pos.index = i;
    pos.prev = order[(i + n - 1) % n];
    pos.next = order[(i + 1) % n];
    break;
  }
  return pos;
}

std::vector<int> buildHierCrossOrder(const RankLayout& layout, int localRank) {
  std::vector<int> order;
  for (const std::vector<int>& ranks : layout.ranksOfNode) order.push_back(ranks[static_cast<size_t>(localRank)]);
  return order;
}

}  // namespace braid
