// The ring order and ring neighbours.
#include <gtest/gtest.h>

#include <algorithm>

#include "layouts.h"
#include "planning/ring.h"

namespace braid {
namespace {

using algo_test::blockLayout;
using algo_test::layoutFromHosts;
using algo_test::roundRobinLayout;
using algo_test::unevenLayout;

// Links of the ring that join two hosts.
int interHostLinks(const RankLayout& layout, const std::vector<int>& order) {
  int n = static_cast<int>(order.size());
  int count = 0;
  for (int i = 0; i < n; ++i) {
    if (layout.nodeOfRank[order[i]] != layout.nodeOfRank[order[(i + 1) % n]]) ++count;
  }
  return count;
}

void expectValidRing(const RankLayout& layout) {
  std::vector<int> order = buildRingOrder(layout);
  int n = static_cast<int>(layout.nodeOfRank.size());
  ASSERT_EQ(static_cast<int>(order.size()), n);
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int r = 0; r < n; ++r) ASSERT_EQ(sorted[r], r) << "not a permutation";
  // Each host contiguous, in rank order, hosts by their lowest rank.
  int previousNode = -1;
  for (int i = 0; i < n; ++i) {
    int node = layout.nodeOfRank[order[i]];
    if (i > 0 && node == previousNode) {
      EXPECT_LT(order[i - 1], order[i]) << "ranks of a host out of order";
    } else {
      EXPECT_EQ(node, previousNode + 1) << "host revisited or skipped";
      EXPECT_EQ(order[i], layout.ranksOfNode[node].front());
    }
    previousNode = node;
  }
  EXPECT_EQ(interHostLinks(layout, order), layout.nNodes > 1 ? layout.nNodes : 0);
  for (int i = 0; i < n; ++i) {
    RingPosition pos = ringPosition(order, order[i]);
    EXPECT_EQ(pos.index, i);
    EXPECT_EQ(pos.next, order[(i + 1) % n]);
    EXPECT_EQ(pos.prev, order[(i + n - 1) % n]);
    EXPECT_EQ(ringPosition(order, pos.next).prev, order[i]);
  }
}

TEST(Ring, BlockPlacementIsRankOrder) {
  std::vector<int> order = buildRingOrder(blockLayout(3, 4));
  std::vector<int> expected(12);
  for (int r = 0; r < 12; ++r) expected[r] = r;
  EXPECT_EQ(order, expected);
}

TEST(Ring, RoundRobinPlacementGroupsHosts) {
  EXPECT_EQ(buildRingOrder(roundRobinLayout(2, 4)), (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(buildRingOrder(roundRobinLayout(3, 2)), (std::vector<int>{0, 3, 1, 4, 2, 5}));
}

TEST(Ring, HostsOrderedByLowestRank) {
  // Host "7" owns rank 0, host "3" ranks 1 and 3, host "5" rank 2.
  EXPECT_EQ(buildRingOrder(layoutFromHosts({7, 3, 5, 3, 7})), (std::vector<int>{0, 4, 1, 3, 2}));
}

TEST(Ring, Neighbours) {
  std::vector<int> order = {0, 2, 4, 6, 1, 3, 5, 7};
  RingPosition pos = ringPosition(order, 6);
  EXPECT_EQ(pos.index, 3);
  EXPECT_EQ(pos.prev, 4);
  EXPECT_EQ(pos.next, 1);
  pos = ringPosition(order, 0);
  EXPECT_EQ(pos.prev, 7);
  EXPECT_EQ(pos.next, 2);
  pos = ringPosition(order, 7);
  EXPECT_EQ(pos.index, 7);
  EXPECT_EQ(pos.next, 0);
}

TEST(Ring, DegenerateRings) {
  std::vector<int> one = buildRingOrder(blockLayout(1, 1));
  ASSERT_EQ(one, std::vector<int>{0});
  RingPosition self = ringPosition(one, 0);
  EXPECT_EQ(self.index, 0);
  EXPECT_EQ(self.prev, 0);
  EXPECT_EQ(self.next, 0);
  RingPosition absent = ringPosition(one, 5);
  EXPECT_EQ(absent.index, -1);
  EXPECT_EQ(absent.prev, -1);
  EXPECT_EQ(absent.next, -1);
  EXPECT_TRUE(buildRingOrder(RankLayout{}).empty());
  EXPECT_EQ(ringPosition({}, 0).index, -1);
}

TEST(Ring, ManyLayouts) {
  for (int hosts = 1; hosts <= 16; ++hosts) {
    for (int perHost = 1; perHost <= 8; ++perHost) {
      SCOPED_TRACE(::testing::Message() << hosts << " hosts x " << perHost);
      expectValidRing(blockLayout(hosts, perHost));
      expectValidRing(roundRobinLayout(hosts, perHost));
      expectValidRing(unevenLayout(hosts, perHost, hosts * 131 + perHost));
    }
  }
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// Hier's cross-host ring: the rank of one local index on every host, in node order; only
// where every host has as many ranks.
TEST(Ring, HierCrossOrderTakesOneLocalIndexPerHost) {
  const RankLayout roundRobin = algo_test::roundRobinLayout(3, 2);  // hosts {0,3}, {1,4}, {2,5}
  EXPECT_EQ(roundRobin.uniformLocalRanks(), 2);
  EXPECT_EQ(buildHierCrossOrder(roundRobin, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(buildHierCrossOrder(roundRobin, 1), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(buildHierCrossOrder(algo_test::blockLayout(2, 4), 3), (std::vector<int>{3, 7}));
  EXPECT_EQ(algo_test::layoutFromHosts({7, 3, 5, 3, 7}).uniformLocalRanks(), 0) << "hosts of 2, 2 and 1 ranks";
  EXPECT_EQ(RankLayout().uniformLocalRanks(), 0);
}

}  // namespace
}  // namespace braid
