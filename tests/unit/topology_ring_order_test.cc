// GPU mode's ring order: where a rank's GPU sits in its host's searched ring, and each
// node's ranks sorted by those places — or kept in rank order, with a note, when a rank
// found no place or two ranks claim one.
#include "core/datapath/topology_ring_order.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "kernels/algorithms/schedule_args.h"
#include "topology/paths.h"
#include "topology/search.h"
#include "topology/topology_fixture.h"

namespace braid {
namespace {

RankLayout layoutOf(const std::vector<uint64_t>& hosts, int me) { return RankLayout::fromHostHashes(hosts, me); }

TEST(TopologyRingOrder, EveryGpuOfTheMachineHasADistinctPlace) {
  TopoGraph g = test::loadFixture("pcie_4gpu_1nic.xml");
  TopoSearchResult rings;
  ASSERT_TRUE(searchChannels(g, SearchSettings(), &rings).ok());
  ASSERT_FALSE(rings.channels.empty());
  std::set<int> places;
  for (int gpu : g.gpus()) {
    int p = gpuPositionInRing(g, rings.channels[0], g.nodes[static_cast<size_t>(gpu)].pci.busId);
    EXPECT_GE(p, 0);
    places.insert(p);
  }
  EXPECT_EQ(places.size(), g.gpus().size());
  // NVML's eight-digit domain and upper case name the same GPU.
  std::string bus = g.nodes[static_cast<size_t>(g.gpus().front())].pci.busId;
  std::string upper = "0000" + bus;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(gpuPositionInRing(g, rings.channels[0], upper), gpuPositionInRing(g, rings.channels[0], bus));
  EXPECT_EQ(gpuPositionInRing(g, rings.channels[0], "0000:99:00.0"), -1);
  EXPECT_EQ(gpuPositionInRing(g, rings.channels[0], "host"), -1);
}

TEST(TopologyRingOrder, EachNodesRanksFollowTheirPlaces) {
  // Two hosts of three ranks; host A's GPUs sit in the ring as 2, 0, 1; host B's as 1, 2, 0.
  RankLayout layout = layoutOf({7, 7, 7, 9, 9, 9}, 1);
  std::vector<std::string> notes;
  RankLayout ordered = orderRanksByTopology(layout, {2, 0, 1, 1, 2, 0}, 1, &notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(ordered.ranksOfNode[0], (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(ordered.ranksOfNode[1], (std::vector<int>{5, 3, 4}));
  // Local ranks are places in the chain (what trees index), consistent with ranksOfNode.
  for (const auto& ranks : ordered.ranksOfNode) {
    for (size_t i = 0; i < ranks.size(); ++i)
      EXPECT_EQ(ordered.localRankOf[static_cast<size_t>(ranks[i])], static_cast<int>(i));
  }
  EXPECT_EQ(ordered.localRank, 0);
  EXPECT_EQ(ordered.nodeOfRank, layout.nodeOfRank);
  EXPECT_EQ(ordered.nNodes, 2);
}

TEST(TopologyRingOrder, ANodeWithoutPlacesOrWithSharedPlacesKeepsRankOrder) {
  RankLayout layout = layoutOf({1, 1, 2, 2, 3}, 0);
  std::vector<std::string> notes;
  RankLayout ordered = orderRanksByTopology(layout, {1, -1, 5, 5, -1}, 0, &notes);
  EXPECT_EQ(ordered.ranksOfNode[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(ordered.ranksOfNode[1], (std::vector<int>{2, 3}));
  EXPECT_EQ(ordered.ranksOfNode[2], (std::vector<int>{4}));  // one rank: nothing to order, no note
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("rank 1 did not find its GPU"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("rank 3's GPU has the ring position of another rank's"), std::string::npos) << notes[1];
}

// Each channel its own ring: on the DGX-1's NVLink cube mesh (NVIDIA/nccl#671) NCCL's four
// rings 0 1 2 3, 0 3 2 1, 0 3 1 2, 0 2 1 3, each used twice.
TEST(TopologyRingOrder, EveryChannelHasItsOwnRing) {
  TopoGraph g = test::loadFixture("nccl/dgx1_v100_4gpu_nvlink_mesh_nccl671.xml");
  TopoSearchResult rings;
  ASSERT_TRUE(searchChannels(g, SearchSettings(), &rings).ok());
  ASSERT_EQ(rings.channels.size(), 8u);
  const int nChannels = 10;  // more than the search's: channel c repeats c modulo 8
  std::vector<int> positions;
  std::vector<int> gpus = g.gpus();
  for (int gpu : gpus) {
    std::vector<int> p = gpuPositionsInChannels(g, rings, g.nodes[static_cast<size_t>(gpu)].pci.busId, 0, nChannels);
    ASSERT_EQ(p.size(), static_cast<size_t>(nChannels));
    positions.insert(positions.end(), p.begin(), p.end());
  }
  // Four ranks on one host, rank r on GPU r.
  RankLayout layout = layoutOf({5, 5, 5, 5}, 2);
  std::vector<std::string> notes;
  std::vector<RankLayout> byChannel = orderRanksByChannel(layout, positions, nChannels, 2, &notes);
  EXPECT_TRUE(notes.empty());
  ASSERT_EQ(byChannel.size(), static_cast<size_t>(nChannels));
  const std::vector<std::vector<int>> want = {{0, 1, 2, 3}, {0, 3, 2, 1}, {0, 3, 1, 2}, {0, 2, 1, 3}};
  for (int c = 0; c < nChannels; ++c) {
    EXPECT_EQ(byChannel[static_cast<size_t>(c)].ranksOfNode[0], want[static_cast<size_t>(c % 4)]) << c;
  }
  // A Broadcast root's place differs from ring to ring.
  std::vector<int> ring1 = byChannel[1].ranksOfNode[0];
  EXPECT_EQ(ringIndexOf(ring1.data(), 4, 3), 1);
  EXPECT_EQ(ringIndexOf(want[0].data(), 4, 3), 3);
  EXPECT_EQ(ringIndexOf(want[0].data(), 4, 9), 0);  // not in the ring
}

TEST(TopologyRingOrder, AChannelWithoutPlacesKeepsRankOrderAndSaysSoOnce) {
  RankLayout layout = layoutOf({5, 5, 5}, 0);
  // Three ranks, two channels; rank 1 has no place in channel 1 of either search.
  std::vector<int> positions = {2, 0, 1, -1, 0, 1};
  std::vector<std::string> notes;
  std::vector<RankLayout> byChannel = orderRanksByChannel(layout, positions, 2, 0, &notes);
  ASSERT_EQ(byChannel.size(), 2u);
  EXPECT_EQ(byChannel[0].ranksOfNode[0], (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(byChannel[1].ranksOfNode[0], (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("rank 1 did not find its GPU"), std::string::npos) << notes[0];
  // Positions for fewer channels than asked: the missing ones count as none.
  notes.clear();
  byChannel = orderRanksByChannel(layout, {0, 1}, 2, 0, &notes);
  EXPECT_EQ(byChannel[1].ranksOfNode[0], (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace braid
