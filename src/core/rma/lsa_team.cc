#include "core/rma/lsa_team.h"

#include <cstddef>
#include <numeric>

namespace braid {

namespace {

int lsaSize(const std::vector<int>& nodeOfRank) {
  if (nodeOfRank.empty()) return 1;
  int size = 0;
  int run = 1;
  for (size_t r = 1; r < nodeOfRank.size(); ++r) {
    if (nodeOfRank[r] == nodeOfRank[r - 1]) {
      ++run;
    } else {
      size = std::gcd(size, run);
      run = 1;
    }
  }
  return std::gcd(size, run);
}

}  // namespace

Team worldTeam(int nranks, int rank) { return Team{nranks, rank, 1}; }

Team lsaTeam(const std::vector<int>& nodeOfRank, int rank) {
  int size = lsaSize(nodeOfRank);
  return Team{size, rank % size, 1};
}

Team railTeam(const std::vector<int>& nodeOfRank, int rank) {
  int size = lsaSize(nodeOfRank);
  return Team{static_cast<int>(nodeOfRank.size()) / size, rank / size, size};
}

int teamRankToWorld(const Team& team, int worldRank, int teamRank) {
  return worldRank + (teamRank - team.rank) * team.stride;
}

}  // namespace braid
