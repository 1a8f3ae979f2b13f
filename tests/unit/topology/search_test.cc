// Ring and tree search, and the bandwidth model, on the fixtures: every ring visits every
// GPU once, multi-node channels use the rails evenly, and the predicted AllReduce bus
// bandwidth lies in a stated range (what such a machine measures with nccl-tests, give or
// take the model's simplicity).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "topology/report.h"
#include "topology_fixture.h"

namespace braid {
namespace {

struct SearchCase {
  const char* file;
  int nodes;
  double minBusBw, maxBusBw;  // GB/s, AllReduce of 1 GiB
  PathType typeIntra;
};

std::string caseName(const SearchCase& c) {
  std::string name = c.file;
  return name.substr(0, name.find('.')) + "_" + std::to_string(c.nodes) + "nodes";
}

class FixtureSearch : public ::testing::TestWithParam<SearchCase> {
 protected:
  // Each case's search runs once for the tests that look at it (a multi-node DGX search
  // takes a quarter of a second, more under the sanitizers).
  void SetUp() override {
    static std::map<std::string, TopoReport> searched;
    std::string name = caseName(GetParam());
    auto it = searched.find(name);
    if (it == searched.end()) {
      SearchSettings s;
      s.nNodes = GetParam().nodes;
      TopoReport r;
      Status st = analyzeTopology(test::loadFixture(GetParam().file), s, PathOptions(), AlgoProtoPolicy(), &r);
      ASSERT_TRUE(st.ok()) << st.message();
      it = searched.emplace(name, std::move(r)).first;
    }
    report_ = it->second;
  }
  TopoReport report_;
};

TEST_P(FixtureSearch, EveryRingVisitsEveryGpuOnce) {
  const TopoSearchResult& r = report_.rings;
  ASSERT_FALSE(r.channels.empty()) << r.explanation;
  std::vector<int> gpus = report_.graph.gpus();
  for (const TopoChannel& ch : r.channels) {
    EXPECT_EQ(std::set<int>(ch.gpus.begin(), ch.gpus.end()), std::set<int>(gpus.begin(), gpus.end()));
    EXPECT_EQ(ch.gpus.size(), gpus.size());
  }
  int nranks = static_cast<int>(gpus.size()) * GetParam().nodes;
  for (int c = 0; c < static_cast<int>(r.channels.size()); ++c) {
    std::vector<int> ranks = ringRanks(report_.graph, r, c);
    ASSERT_EQ(static_cast<int>(ranks.size()), nranks);
    EXPECT_EQ(static_cast<int>(std::set<int>(ranks.begin(), ranks.end()).size()), nranks);
    // Every rank has a tree parent but the root, and every link is mirrored by its child.
    std::vector<TopoTreeLinks> tree = treeLinks(report_.graph, r, c);
    int roots = 0;
    std::map<int, int> up;
    for (const TopoTreeLinks& t : tree) {
      roots += t.up < 0;
      up[t.rank] = t.up;
    }
    EXPECT_EQ(roots, 1);
    for (const TopoTreeLinks& t : tree) {
      for (int d : t.down) EXPECT_EQ(up[d], t.rank);
    }
  }
  EXPECT_EQ(r.typeIntra, GetParam().typeIntra);
}

TEST_P(FixtureSearch, RailsAreUsedEvenly) {
  const TopoSearchResult& r = report_.rings;
  if (GetParam().nodes == 1) {
    for (const TopoChannel& ch : r.channels) EXPECT_LT(ch.netIn, 0);
    return;
  }
  std::map<int, int> use;
  for (int net : report_.graph.nets()) use[net] = 0;
  for (const TopoChannel& ch : r.ring.channels) {
    ASSERT_GE(ch.netIn, 0);
    ASSERT_GE(ch.netOut, 0);
    ++use[ch.netIn];
    // Cross-NIC channels (NCCL_CROSS_NIC=2 when it finds more bandwidth) come in pairs
    // that leave by each other's port.
    if (ch.netOut != ch.netIn) {
      EXPECT_EQ(r.ring.crossNic, 2);
    }
  }
  int lo = 1 << 30, hi = 0;
  for (auto [net, n] : use) {
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  if (r.ring.channels.size() >= use.size()) {
    EXPECT_LE(hi - lo, 1) << "rails used unevenly";
  }
  // Rail-aligned: each channel enters at the GPU nearest its port.
  for (const TopoChannel& ch : r.ring.channels) {
    PathType enter = report_.paths.path(ch.netIn, ch.gpus.front()).type;
    for (int gpu : ch.gpus) EXPECT_LE(enter, report_.paths.path(ch.netIn, gpu).type);
  }
}

TEST(TopologySearch, CrossNicZeroLeavesByTheEntryPort) {
  SearchSettings s;
  s.nNodes = 2;
  s.crossNic = 0;
  TopoReport r;
  ASSERT_TRUE(analyzeTopology(test::loadFixture("h100_nvlink4.xml"), s, PathOptions(), AlgoProtoPolicy(), &r).ok());
  ASSERT_FALSE(r.rings.ring.channels.empty());
  EXPECT_EQ(r.rings.ring.crossNic, 0);
  for (const TopoChannel& ch : r.rings.ring.channels) EXPECT_EQ(ch.netIn, ch.netOut);
}

TEST_P(FixtureSearch, PredictedBusBandwidthIsInRange) {
  ASSERT_FALSE(report_.predictions.empty());
  const BusBwPrediction& big = report_.predictions.back();
  EXPECT_EQ(big.bytes, size_t{1} << 30);
  EXPECT_GE(big.busBwGBs, GetParam().minBusBw) << predictionLines(report_).back();
  EXPECT_LE(big.busBwGBs, GetParam().maxBusBw) << predictionLines(report_).back();
  // Larger messages never predict a lower bus bandwidth.
  for (size_t i = 1; i < report_.predictions.size(); ++i) {
    EXPECT_GE(report_.predictions[i].busBwGBs, report_.predictions[i - 1].busBwGBs * 0.999);
  }
}

INSTANTIATE_TEST_SUITE_P(Topology, FixtureSearch,
                         ::testing::Values(SearchCase{"dgx_a100.xml", 1, 180, 245, PathType::NVL},
                                           SearchCase{"dgx_a100.xml", 2, 140, 200, PathType::NVL},
                                           SearchCase{"dgx_a100.xml", 4, 140, 200, PathType::NVL},
                                           SearchCase{"h100_nvlink4.xml", 1, 300, 375, PathType::NVL},
                                           SearchCase{"h100_nvlink4.xml", 2, 280, 400, PathType::NVL},
                                           SearchCase{"pcie_4gpu_1nic.xml", 1, 8, 12.5, PathType::PHB},
                                           SearchCase{"pcie_4gpu_1nic.xml", 2, 8, 12.5, PathType::PHB},
                                           SearchCase{"two_socket.xml", 1, 6, 10.5, PathType::SYS},
                                           SearchCase{"two_socket.xml", 2, 2, 3.2, PathType::SYS},
                                           SearchCase{"cloud_skeleton.xml", 1, 8, 24.5, PathType::SYS},
                                           SearchCase{"messy.xml", 2, 10, 50, PathType::NVL}),
                         [](const auto& param) { return caseName(param.param); });

TEST(TopologySearch, HostOnlyHasNoGpuRings) {
  TopoReport r;
  ASSERT_TRUE(
      analyzeTopology(test::loadFixture("host_only.xml"), SearchSettings(), PathOptions(), AlgoProtoPolicy(), &r).ok());
  EXPECT_TRUE(r.rings.channels.empty());
  EXPECT_NE(r.rings.explanation.find("no GPU"), std::string::npos);
  EXPECT_TRUE(r.predictions.empty());
}

TEST(TopologySearch, ChannelCountFollowsBandwidth) {
  SearchSettings s;
  TopoReport nvlink, pcie;
  ASSERT_TRUE(analyzeTopology(test::loadFixture("dgx_a100.xml"), s, PathOptions(), AlgoProtoPolicy(), &nvlink).ok());
  ASSERT_TRUE(
      analyzeTopology(test::loadFixture("pcie_4gpu_1nic.xml"), s, PathOptions(), AlgoProtoPolicy(), &pcie).ok());
  EXPECT_GT(nvlink.rings.channels.size(), pcie.rings.channels.size());
  EXPECT_GT(nvlink.rings.totalBwGBs(), 10 * pcie.rings.totalBwGBs());
  // A lower channel limit is obeyed.
  s.maxChannels = 2;
  TopoReport limited;
  ASSERT_TRUE(analyzeTopology(test::loadFixture("dgx_a100.xml"), s, PathOptions(), AlgoProtoPolicy(), &limited).ok());
  EXPECT_LE(limited.rings.channels.size(), 2u);
}

TEST(TopologySearch, MultiNodeWithoutNicsExplains) {
  SearchSettings s;
  s.nNodes = 2;
  TopoGraph g;
  TopoBuilder b("inline");
  int cpu = -1, gpu = -1;
  ASSERT_TRUE(b.addCpu(CpuInfo(), 0, &cpu).ok());
  ASSERT_TRUE(b.addGpu(cpu, PciInfo{"0000:01:00.0"}, GpuInfo(), 0, &gpu).ok());
  ASSERT_TRUE(b.finish(&g).ok());
  TopoReport r;
  ASSERT_TRUE(analyzeTopology(g, s, PathOptions(), AlgoProtoPolicy(), &r).ok());
  EXPECT_TRUE(r.rings.channels.empty());
  EXPECT_NE(r.rings.explanation.find("no network port"), std::string::npos);
}

TEST(TopologySearch, BadSettingsAreErrors) {
  SearchSettings s;
  s.nNodes = 0;
  TopoReport r;
  EXPECT_FALSE(analyzeTopology(test::loadFixture("dgx_a100.xml"), s, PathOptions(), AlgoProtoPolicy(), &r).ok());
}

TEST(TopologySearch, NcclAlgoRestrictsThePrediction) {
  AlgoProtoPolicy policy;
  std::vector<std::string> warnings;
  ASSERT_TRUE(parseAlgoPolicy("tree", &policy, &warnings).ok());
  SearchSettings s;
  s.nNodes = 4;
  TopoReport r;
  ASSERT_TRUE(analyzeTopology(test::loadFixture("h100_nvlink4.xml"), s, PathOptions(), policy, &r).ok());
  for (const BusBwPrediction& p : r.predictions) EXPECT_EQ(p.choice.algo, Algorithm::Tree);
}

}  // namespace
}  // namespace braid
