// Path classification (LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS NET) and bottleneck
// bandwidths on the fixtures, as NCCL would classify them.
#include <gtest/gtest.h>

#include "topology/nccl_xml.h"
#include "topology_fixture.h"

namespace braid {
namespace {

using test::gpuNetPath;
using test::gpuNode;
using test::gpuPath;
using test::loadFixture;
using test::loadText;
using test::netNode;

constexpr PathOptions kNoPxn{false};

TEST(TopologyPaths, DgxA100) {
  TopoGraph g = loadFixture("dgx_a100.xml");
  TopoPaths p(g, kNoPxn);
  EXPECT_EQ(p.path(gpuNode(g, 0), gpuNode(g, 0)).type, PathType::LOC);
  for (int peer = 1; peer < 8; ++peer) {
    const TopoPath& path = p.path(gpuNode(g, 0), gpuNode(g, peer));
    EXPECT_EQ(path.type, PathType::NVL) << peer;
    EXPECT_DOUBLE_EQ(path.bwGBs, 12 * 20.0) << peer;  // 12 NVLink 3 links through the NVSwitch
  }
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_0"), PathType::PIX);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_1"), PathType::PIX);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_2"), PathType::PHB);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_4"), PathType::SYS);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), netNode(g, "mlx5_0")).bwGBs, 24.0);  // Gen4 x16
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), netNode(g, "mlx5_4")).bwGBs, 16.0);  // AMD inter-socket
  // The path lists its links: GPU -> switch -> NIC -> port.
  EXPECT_EQ(p.path(gpuNode(g, 0), netNode(g, "mlx5_0")).links.size(), 3u);
}

TEST(TopologyPaths, DgxA100WithPxn) {
  TopoGraph g = loadFixture("dgx_a100.xml");
  TopoPaths p(g);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_0"), PathType::PIX);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_2"), PathType::PXN);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_7"), PathType::PXN);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), netNode(g, "mlx5_7")).bwGBs, 24.0);
}

TEST(TopologyPaths, H100) {
  TopoGraph g = loadFixture("h100_nvlink4.xml");
  TopoPaths p(g, kNoPxn);
  EXPECT_EQ(gpuPath(g, p, 0, 7), PathType::NVL);
  EXPECT_NEAR(p.path(gpuNode(g, 0), gpuNode(g, 7)).bwGBs, 18 * 20.6, 1e-9);
  EXPECT_EQ(gpuNetPath(g, p, 3, "mlx5_3"), PathType::PIX);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 3), netNode(g, "mlx5_3")).bwGBs, 48.0);  // Gen5 x16 < 400 Gb/s
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_1"), PathType::PHB);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_5"), PathType::SYS);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), netNode(g, "mlx5_5")).bwGBs, 22.0);  // Sapphire Rapids UPI
  TopoPaths pxn(g);
  EXPECT_EQ(gpuNetPath(g, pxn, 0, "mlx5_5"), PathType::PXN);
}

TEST(TopologyPaths, PcieOnly) {
  TopoGraph g = loadFixture("pcie_4gpu_1nic.xml");
  TopoPaths p(g);  // no NVLink: PXN cannot apply
  EXPECT_EQ(gpuPath(g, p, 0, 1), PathType::PIX);
  EXPECT_EQ(gpuPath(g, p, 2, 3), PathType::PIX);
  EXPECT_EQ(gpuPath(g, p, 0, 2), PathType::PHB);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), gpuNode(g, 2)).bwGBs, 12.0);  // Gen3 x16
  EXPECT_EQ(gpuNetPath(g, p, 1, "mlx5_0"), PathType::PIX);
  EXPECT_EQ(gpuNetPath(g, p, 3, "mlx5_0"), PathType::PHB);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 1), netNode(g, "mlx5_0")).bwGBs, 12.0);
}

TEST(TopologyPaths, TwoSockets) {
  TopoGraph g = loadFixture("two_socket.xml");
  TopoPaths p(g);
  EXPECT_EQ(gpuPath(g, p, 0, 1), PathType::PHB);
  EXPECT_EQ(gpuPath(g, p, 2, 3), PathType::PHB);
  EXPECT_EQ(gpuPath(g, p, 0, 2), PathType::SYS);
  EXPECT_EQ(gpuPath(g, p, 1, 3), PathType::SYS);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), gpuNode(g, 3)).bwGBs, 10.0);  // Skylake UPI
  EXPECT_EQ(gpuNetPath(g, p, 0, "eth0"), PathType::PHB);
  EXPECT_EQ(gpuNetPath(g, p, 2, "eth0"), PathType::SYS);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), netNode(g, "eth0")).bwGBs, 25000 / 8000.0);
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.cpuOf(gpuNode(g, 2)))].cpu.numaId, 1);
}

TEST(TopologyPaths, HostOnly) {
  TopoGraph g = loadFixture("host_only.xml");
  TopoPaths p(g);
  int a = netNode(g, "enp65s0f0"), b = netNode(g, "eth0");
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  EXPECT_EQ(p.path(a, b).type, PathType::PHB);
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.cpuOf(a))].cpu.numaId, 0);
}

// GPU 0 - GPU 1 - GPU 2 by direct NVLinks: 0 reaches 2 through 1 (NVB).
TEST(TopologyPaths, NvlinkThroughAGpuIsNvb) {
  std::string gpus;
  const char* links[3] = {"<nvlink target=\"0000:02:00.0\" count=\"4\" tclass=\"0x030200\"/>",
                          "<nvlink target=\"0000:01:00.0\" count=\"4\" tclass=\"0x030200\"/><nvlink "
                          "target=\"0000:03:00.0\" count=\"4\" tclass=\"0x030200\"/>",
                          "<nvlink target=\"0000:02:00.0\" count=\"4\" tclass=\"0x030200\"/>"};
  for (int i = 0; i < 3; ++i) {
    gpus += "<pci busid=\"0000:0" + std::to_string(i + 1) +
            ":00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" "
            "link_width=\"16\"><gpu dev=\"" +
            std::to_string(i) + "\" sm=\"80\">" + links[i] + "</gpu></pci>";
  }
  TopoGraph g;
  ASSERT_TRUE(loadText("<system version=\"1\"><cpu numaid=\"0\">" + gpus + "</cpu></system>", &g).ok());
  TopoPaths p(g);
  EXPECT_EQ(gpuPath(g, p, 0, 1), PathType::NVL);
  EXPECT_EQ(gpuPath(g, p, 0, 2), PathType::NVB);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), gpuNode(g, 2)).bwGBs, 80.0);
}

// A Grace Hopper-style GPU reaches its CPU over C2C, and a NIC on the CPU's PCIe as P2C.
// NVML gives the C2C bandwidth per link in MB/s, and so does NCCL's <c2c bw>.
TEST(TopologyPaths, C2cAndP2c) {
  TopoGraph g;
  ASSERT_TRUE(loadText("<system version=\"1\"><cpu numaid=\"0\" arch=\"arm64\">"
                       "<pci busid=\"0009:01:00.0\" class=\"0x030200\" link_speed=\"32 GT/s\" link_width=\"16\">"
                       "<gpu dev=\"0\" sm=\"90\"><c2c bw=\"45000\" count=\"10\"/></gpu></pci>"
                       "<pci busid=\"0000:01:00.0\" class=\"0x020700\" link_speed=\"32 GT/s\" link_width=\"16\">"
                       "<nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\"/></nic></pci>"
                       "</cpu></system>",
                       &g)
                  .ok());
  TopoPaths p(g);
  EXPECT_EQ(gpuNetPath(g, p, 0, "mlx5_0"), PathType::P2C);
  EXPECT_DOUBLE_EQ(p.path(gpuNode(g, 0), netNode(g, "mlx5_0")).bwGBs, 48.0);
  for (int l : g.nodes[static_cast<size_t>(gpuNode(g, 0))].links) {
    if (g.links[static_cast<size_t>(l)].type == TopoLinkType::C2c) {
      EXPECT_DOUBLE_EQ(g.links[static_cast<size_t>(l)].bwGBs, 450.0);
    }
  }
}

}  // namespace
}  // namespace braid
