// Rank layouts for the algorithm tests, built the way communicators build them: from the
// host of every rank.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "planning/rank_layout.h"

namespace braid::algo_test {

// hostOfRank[r]: an arbitrary host label of rank r.
inline RankLayout layoutFromHosts(const std::vector<int>& hostOfRank) {
  std::vector<uint64_t> hashes;
  // Labels become unrelated-looking hashes so nothing can depend on their values.
  for (int host : hostOfRank) hashes.push_back(0x9e3779b97f4a7c15ull * static_cast<uint64_t>(host + 1));
  return RankLayout::fromHostHashes(hashes, 0);
}

// `hosts` hosts of `perHost` ranks each, host by host (block placement).
inline RankLayout blockLayout(int hosts, int perHost) {
  std::vector<int> hostOfRank;
  for (int h = 0; h < hosts; ++h) hostOfRank.insert(hostOfRank.end(), perHost, h);
  return layoutFromHosts(hostOfRank);
}

// Rank r on host r % hosts (round-robin placement): every host's ranks interleave.
inline RankLayout roundRobinLayout(int hosts, int perHost) {
  std::vector<int> hostOfRank;
  for (int r = 0; r < hosts * perHost; ++r) hostOfRank.push_back(r % hosts);
  return layoutFromHosts(hostOfRank);
}

// Hosts of 1..maxPerHost ranks, ranks shuffled across them.
inline RankLayout unevenLayout(int hosts, int maxPerHost, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int> hostOfRank;
  for (int h = 0; h < hosts; ++h) {
    int count = std::uniform_int_distribution<int>(1, maxPerHost)(rng);
    hostOfRank.insert(hostOfRank.end(), count, h);
  }
  std::shuffle(hostOfRank.begin(), hostOfRank.end(), rng);
  return layoutFromHosts(hostOfRank);
}

}  // namespace braid::algo_test
