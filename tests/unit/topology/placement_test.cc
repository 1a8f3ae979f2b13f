// A rank's CPU affinity laid over the fixtures' CPU nodes (NCCL `affinity` masks and
// hwloc cpusets).
#include <gtest/gtest.h>

#include "topology/hwloc_source.h"
#include "topology/placement.h"
#include "topology_fixture.h"

namespace braid {
namespace {

using test::cpus;
using test::fixturePath;
using test::loadFixture;

int numaOf(const TopoGraph& g, const RankPlacement& p, size_t i = 0) {
  return g.nodes[static_cast<size_t>(p.cpuNodes.at(i))].cpu.numaId;
}

TEST(TopologyPlacement, TwoSocketRankOnEachSocket) {
  TopoGraph g = loadFixture("two_socket.xml");  // socket 0: CPUs 0-15, socket 1: 16-31
  RankPlacement p0 = placeRank(g, cpus({0, 1, 2, 3}));
  ASSERT_TRUE(p0.single());
  EXPECT_EQ(numaOf(g, p0), 0);
  EXPECT_EQ(p0.nodeCpus.toList(), "0-3");  // never wider than the rank's own CPUs
  RankPlacement p1 = placeRank(g, cpus({20}));
  ASSERT_TRUE(p1.single());
  EXPECT_EQ(numaOf(g, p1), 1);
  EXPECT_EQ(p1.nodeCpus.toList(), "20");
  EXPECT_EQ(p1.describe, "NUMA 1 (CPUs 20)");
}

TEST(TopologyPlacement, RankAcrossSocketsIsNotOnOneNode) {
  TopoGraph g = loadFixture("two_socket.xml");
  RankPlacement p = placeRank(g, cpus({15, 16}));
  EXPECT_FALSE(p.single());
  ASSERT_EQ(p.cpuNodes.size(), 2u);
  EXPECT_TRUE(p.nodeCpus.empty());
  EXPECT_NE(p.describe.find("NUMA 0 and 1"), std::string::npos) << p.describe;
}

TEST(TopologyPlacement, CpusTheGraphDoesNotHave) {
  TopoGraph g = loadFixture("two_socket.xml");
  RankPlacement p = placeRank(g, cpus({64, 65}));
  EXPECT_TRUE(p.cpuNodes.empty());
  EXPECT_NE(p.describe.find("64-65"), std::string::npos) << p.describe;
}

TEST(TopologyPlacement, WideMasksOfTheDgx) {
  TopoGraph g = loadFixture("dgx_a100.xml");  // socket 0: 0-47 and 64-111
  RankPlacement p = placeRank(g, cpus({70, 71}));
  ASSERT_TRUE(p.single());
  EXPECT_EQ(numaOf(g, p), 0);
  RankPlacement q = placeRank(g, cpus({48}));
  ASSERT_TRUE(q.single());
  EXPECT_EQ(numaOf(g, q), 1);
}

TEST(TopologyPlacement, HwlocCpusets) {
  TopoGraph g;
  Status s = loadHwlocXmlTopology(fixturePath("hwloc_2socket.xml"), &g);  // NUMA 0: 0-1, NUMA 1: 2-3
  ASSERT_TRUE(s.ok()) << s.message();
  RankPlacement p = placeRank(g, cpus({0, 2, 3}));
  EXPECT_EQ(p.cpuNodes.size(), 2u);
  RankPlacement q = placeRank(g, cpus({3}));
  ASSERT_TRUE(q.single());
  EXPECT_EQ(numaOf(g, q), 1);
}

TEST(TopologyPlacement, OneCpuNodeWithoutMaskTakesEveryRank) {
  TopoBuilder b("one socket, no masks");
  CpuInfo cpu;
  cpu.numaId = 0;
  int node = -1;
  ASSERT_TRUE(b.addCpu(cpu, 0, &node).ok());
  TopoGraph g;
  ASSERT_TRUE(b.finish(&g).ok());
  RankPlacement p = placeRank(g, cpus({5, 6}));
  ASSERT_TRUE(p.single());
  EXPECT_EQ(p.nodeCpus.toList(), "5-6");
}

}  // namespace
}  // namespace braid
