// Where the ranks of a communicator run: which share a host (same host hash), the local
// rank of each, and the number of hosts ("nodes").
#pragma once

#include <cstdint>
#include <vector>

namespace braid {

struct RankLayout {
  int nNodes = 0;
  int localRank = -1;            // this rank's index among the ranks of its host
  int localRanks = 0;            // ranks on this rank's host
  std::vector<int> nodeOfRank;   // node index of every rank (nodes numbered by first rank)
  std::vector<int> localRankOf;  // local rank of every rank
  std::vector<std::vector<int>> ranksOfNode;

  // Pure: from the host hash of every rank.
  static RankLayout fromHostHashes(const std::vector<uint64_t>& hostHashes, int myRank);
  // The ranks on each host when every host has as many; 0 when they differ (or none).
  int uniformLocalRanks() const;
};

}  // namespace braid
