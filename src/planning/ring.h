// The ring every ring-algorithm channel follows. Ranks of one host are adjacent so that a
// ring crosses each host boundary once in each direction: a ring over H hosts uses exactly
// H inter-host links however the launcher placed the ranks.
#pragma once

#include <vector>

#include "planning/rank_layout.h"

namespace braid {

// Hosts in RankLayout's node order (ordered by their lowest rank), and inside a host its
// ranks in rank order. Until topology-aware rings exist, every channel uses this order.
std::vector<int> buildRingOrder(const RankLayout& layout);

struct RingPosition {
  int prev = -1;   // the rank this rank receives from
  int next = -1;   // the rank this rank sends to
  int index = -1;  // the position of the rank in the order
};

// Hier's ring across hosts for local index `localRank` (planning/algo_proto.h): the rank of
// that local index on every host, in node order. Needs uniformLocalRanks() > localRank.
std::vector<int> buildHierCrossOrder(const RankLayout& layout, int localRank);

// The neighbours of `rank` in `order`; all -1 when `rank` is not in `order`. A one-rank
// ring is its own neighbour.
RingPosition ringPosition(const std::vector<int>& order, int rank);

}  // namespace braid
