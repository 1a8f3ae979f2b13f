// Teams as NCCL's device API describes them: {nRanks, rank, stride}, the world ranks
// worldRank - rank*stride + i*stride for i in [0, nRanks). Pure functions of the rank
// layout, so every rank computes the same teams.
//
// The LSA team ("load/store accessible") follows NCCL's rule: its size is the greatest
// common divisor of the lengths of the runs of consecutive ranks that share a host, and it
// is the aligned block of that many consecutive ranks around this rank. Two hosts of four
// ranks numbered host by host give teams of four; ranks interleaved between hosts give
// teams of one. Braid maps windows between every pair of ranks of a host whatever the
// numbering (ncclGetPeerDevicePointer answers for all of them); the LSA team is what
// ncclTeamLsa and ncclGetLsaDevicePointer speak of.
#pragma once

#include <vector>

namespace braid {

struct Team {
  int nRanks = 0;
  int rank = 0;
  int stride = 0;
};

Team worldTeam(int nranks, int rank);
// `nodeOfRank`: the host index of every rank (RankLayout::nodeOfRank).
Team lsaTeam(const std::vector<int>& nodeOfRank, int rank);
// The ranks of other LSA teams at this rank's position in its own (NCCL: the outer factor
// of the LSA team).
Team railTeam(const std::vector<int>& nodeOfRank, int rank);

// The world rank of `teamRank` in `team`, as seen from `worldRank` (a member at team.rank).
int teamRankToWorld(const Team& team, int worldRank, int teamRank);

}  // namespace braid
