// The NIC a rank prefers: the closest to its NUMA node on the fixture machines, equally
// close ones spread over the local ranks.
#include <gtest/gtest.h>

#include "topology/hwloc_source.h"
#include "topology/nic_choice.h"
#include "topology_fixture.h"

namespace braid {
namespace {

using test::cpus;
using test::fixturePath;
using test::loadFixture;

std::vector<NicCandidate> named(std::initializer_list<const char*> names, int port = -1) {
  std::vector<NicCandidate> out;
  for (const char* n : names) out.push_back({n, port});
  return out;
}

// The names of the devices to use, in order.
std::vector<std::string> chosen(const NicOrder& order, const std::vector<NicCandidate>& candidates) {
  std::vector<std::string> out;
  for (int i : order.use) out.push_back(candidates[static_cast<size_t>(i)].name);
  return out;
}

using Names = std::vector<std::string>;

TEST(TopologyNicChoice, TwoSocketRankOnSocket1GetsTheSocket1Nic) {
  TopoGraph g;
  ASSERT_TRUE(loadHwlocXmlTopology(fixturePath("hwloc_2socket.xml"), &g).ok());  // mlx5_0 socket 0, mlx5_1 socket 1
  TopoPaths paths(g);
  auto candidates = named({"mlx5_0", "mlx5_1"});
  NicOrder onSocket1 = orderNicsByDistance(g, paths, placeRank(g, cpus({2, 3})), candidates, 0);
  ASSERT_TRUE(onSocket1.ranked) << onSocket1.why;
  EXPECT_EQ(chosen(onSocket1, candidates), Names({"mlx5_1"}));
  EXPECT_EQ(onSocket1.distance[1].type, PathType::PHB);
  EXPECT_EQ(onSocket1.distance[1].numaId, 1);
  EXPECT_EQ(onSocket1.distance[0].type, PathType::SYS);
  // Whatever its local rank: the other socket's NIC is farther.
  NicOrder onSocket0 = orderNicsByDistance(g, paths, placeRank(g, cpus({1})), candidates, 1);
  EXPECT_EQ(chosen(onSocket0, candidates), Names({"mlx5_0"}));
}

TEST(TopologyNicChoice, OnlyNicOnTheOtherSocketIsStillUsed) {
  TopoGraph g = loadFixture("two_socket.xml");  // one NIC, eth0, on socket 0
  TopoPaths paths(g);
  auto candidates = named({"eth0"});
  NicOrder order = orderNicsByDistance(g, paths, placeRank(g, cpus({20})), candidates, 0);
  ASSERT_TRUE(order.ranked);
  EXPECT_EQ(chosen(order, candidates), Names({"eth0"}));
  EXPECT_EQ(order.distance[0].type, PathType::SYS);
}

TEST(TopologyNicChoice, DgxRanksSpreadOverTheirSocketsNics) {
  TopoGraph g = loadFixture("dgx_a100.xml");  // mlx5_0-3 under socket 0, mlx5_4-7 under socket 1
  TopoPaths paths(g);
  auto candidates = named({"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"}, 1);
  RankPlacement socket0 = placeRank(g, cpus({0}));
  RankPlacement socket1 = placeRank(g, cpus({50}));
  NicOrder first = orderNicsByDistance(g, paths, socket0, candidates, 0);
  EXPECT_EQ(chosen(first, candidates), Names({"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  EXPECT_EQ(first.distance[0].type, PathType::PHB);
  // Local rank 1 starts one further, so that the ranks' first channels use different NICs.
  EXPECT_EQ(chosen(orderNicsByDistance(g, paths, socket0, candidates, 1), candidates),
            Names({"mlx5_1", "mlx5_2", "mlx5_3", "mlx5_0"}));
  EXPECT_EQ(chosen(orderNicsByDistance(g, paths, socket1, candidates, 6), candidates),
            Names({"mlx5_6", "mlx5_7", "mlx5_4", "mlx5_5"}));
}

TEST(TopologyNicChoice, H100RankAcrossBothSocketsUsesEveryNic) {
  TopoGraph g = loadFixture("h100_nvlink4.xml");
  TopoPaths paths(g);
  auto candidates = named({"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"});
  NicOrder onOne = orderNicsByDistance(g, paths, placeRank(g, cpus({40})), candidates, 0);
  EXPECT_EQ(chosen(onOne, candidates), Names({"mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"}));
  // An unbound rank is as close to every NIC as its closest socket.
  NicOrder across = orderNicsByDistance(g, paths, placeRank(g, cpus({0, 40})), candidates, 0);
  EXPECT_EQ(across.use.size(), 8u);
}

TEST(TopologyNicChoice, EquallyFastNicsOfTheSocketAreBothUsed) {
  TopoGraph g = loadFixture("host_only.xml");  // enp65s0f0 (PCIe) and eth0 (virtual) on socket 0
  TopoPaths paths(g);
  auto candidates = named({"eth0", "enp65s0f0"});
  NicOrder order = orderNicsByDistance(g, paths, placeRank(g, cpus({1})), candidates, 0);
  ASSERT_TRUE(order.ranked);
  EXPECT_EQ(order.distance[0].type, PathType::PHB);
  EXPECT_EQ(order.distance[1].type, PathType::PHB);
  // Both are 10 Gb/s: equally close, so both are used, from the local rank's own.
  EXPECT_EQ(order.use.size(), 2u);
  EXPECT_TRUE(order.startsAtLocalRank);
}

TEST(TopologyNicChoice, CandidatesTheGraphDoesNotKnow) {
  TopoGraph g = loadFixture("two_socket.xml");
  TopoPaths paths(g);
  // A device the graph lacks is left out when another is located ...
  auto some = named({"lo9", "eth0"});
  NicOrder order = orderNicsByDistance(g, paths, placeRank(g, cpus({0})), some, 0);
  EXPECT_EQ(chosen(order, some), Names({"eth0"}));
  EXPECT_EQ(order.distance[0].net, -1);
  // ... and with none located, every candidate is kept in its order, with the reason.
  auto none = named({"wlan0", "wlan1"});
  NicOrder kept = orderNicsByDistance(g, paths, placeRank(g, cpus({0})), none, 1);
  EXPECT_FALSE(kept.ranked);
  EXPECT_FALSE(kept.startsAtLocalRank);
  EXPECT_EQ(chosen(kept, none), Names({"wlan0", "wlan1"}));
  EXPECT_NE(kept.why.find("none of the 2 device(s)"), std::string::npos) << kept.why;
}

TEST(TopologyNicChoice, UnplacedRankKeepsTheBackendsOrder) {
  TopoGraph g = loadFixture("dgx_a100.xml");
  TopoPaths paths(g);
  auto candidates = named({"mlx5_5", "mlx5_0"});
  NicOrder order = orderNicsByDistance(g, paths, placeRank(g, cpus({500})), candidates, 0);
  EXPECT_FALSE(order.ranked);
  EXPECT_EQ(chosen(order, candidates), Names({"mlx5_5", "mlx5_0"}));
  EXPECT_NE(order.why.find("no CPU node"), std::string::npos) << order.why;
}

TEST(TopologyNicChoice, PortNumbersMustMatch) {
  TopoGraph g = loadFixture("dgx_a100.xml");
  TopoPaths paths(g);
  auto candidates = std::vector<NicCandidate>{{"mlx5_0", 2}, {"mlx5_4", 1}};
  NicOrder order = orderNicsByDistance(g, paths, placeRank(g, cpus({0})), candidates, 0);
  EXPECT_EQ(order.distance[0].net, -1);  // the fixture's mlx5_0 has port 1 only
  EXPECT_EQ(chosen(order, candidates), Names({"mlx5_4"}));
}

TEST(TopologyNicChoice, NamedDevicesAreTakenInTurnByLocalRank) {
  // NCCL_SOCKET_IFNAME=eth0,eth1 on every host: local rank j starts at the j-th, so the
  // local ranks j of all hosts (a hierarchical cross-host ring) share one rail.
  auto named2 = named({"eth0", "eth1"});
  for (int localRank = 0; localRank < 4; ++localRank) {
    NicOrder order = namedNicsInTurn(named2.size(), localRank, "chosen by NCCL_SOCKET_IFNAME=eth0,eth1");
    EXPECT_FALSE(order.ranked);
    EXPECT_TRUE(order.startsAtLocalRank);
    EXPECT_EQ(order.why, "chosen by NCCL_SOCKET_IFNAME=eth0,eth1");
    EXPECT_EQ(chosen(order, named2), localRank % 2 == 0 ? Names({"eth0", "eth1"}) : Names({"eth1", "eth0"}))
        << "local rank " << localRank;
  }
  // Three named, local rank 4: starts at the second and keeps the user's order after it.
  auto named3 = named({"a", "b", "c"});
  EXPECT_EQ(chosen(namedNicsInTurn(3, 4, ""), named3), Names({"b", "c", "a"}));
  // One named: every rank takes it; a rank outside any host order (-1) starts at the first.
  EXPECT_EQ(chosen(namedNicsInTurn(1, 3, ""), named({"ib0"})), Names({"ib0"}));
  EXPECT_EQ(chosen(namedNicsInTurn(2, -1, ""), named2), Names({"eth0", "eth1"}));
}

}  // namespace
}  // namespace braid
