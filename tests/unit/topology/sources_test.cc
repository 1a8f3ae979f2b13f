// Sources other than NCCL's XML: hwloc XML exports, a fake sysfs tree of network devices,
// and the live machine (whatever it is: the test only asks for a valid graph).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "topology/detect.h"
#include "topology/nccl_xml.h"
#include "topology/report.h"
#include "topology_fixture.h"

namespace braid {
namespace {

using test::gpuNode;
using test::netNode;

int gpuAt(const TopoGraph& g, const std::string& busId) {
  for (int n : g.gpus()) {
    if (g.nodes[static_cast<size_t>(n)].pci.busId == busId) return n;
  }
  return -1;
}

TEST(TopologyHwloc, ExportIsReadThroughHwloc) {
  TopoGraph g = test::loadFixture("hwloc_2socket.xml");
  EXPECT_EQ(g.countOf(TopoNodeType::Cpu), 2);
  EXPECT_EQ(g.countOf(TopoNodeType::Gpu), 4);
  EXPECT_EQ(g.countOf(TopoNodeType::Nic), 2);
  // One node per PCIe switch (its upstream port), none for root ports.
  EXPECT_EQ(g.countOf(TopoNodeType::Pci), 2);
  ASSERT_GE(netNode(g, "mlx5_0"), 0);  // OpenFabrics names before interface names
  ASSERT_GE(netNode(g, "mlx5_1"), 0);
  TopoPaths p(g);
  int underSwitch = gpuAt(g, "0000:13:00.0"), onRootPort = gpuAt(g, "0000:15:00.0"), other = gpuAt(g, "0000:93:00.0");
  EXPECT_EQ(p.path(underSwitch, netNode(g, "mlx5_0")).type, PathType::PIX);
  EXPECT_EQ(p.path(onRootPort, netNode(g, "mlx5_0")).type, PathType::PHB);
  EXPECT_EQ(p.path(underSwitch, other).type, PathType::SYS);
  EXPECT_DOUBLE_EQ(p.path(underSwitch, onRootPort).bwGBs, 24.0);  // hwloc's 31.5 GB/s: Gen4 x16
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.cpuOf(other))].cpu.numaId, 1);
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.cpuOf(other))].cpu.vendor, "GenuineIntel");
}

TEST(TopologyHwloc, DumpOfAnHwlocExportLoadsAsTheSameGraph) {
  TopoGraph g = test::loadFixture("hwloc_2socket.xml");
  std::string text = dumpNcclTopology(g);
  XmlElement root;
  ASSERT_TRUE(parseXml(text, "dump.xml", &root).ok());
  TopoGraph back;
  ASSERT_TRUE(loadNcclTopology(root, "dump.xml", &back).ok());
  EXPECT_EQ(text, dumpNcclTopology(back));
  // The same nodes and links; the dump lists CPUs with their devices, hwloc CPUs first.
  back.source = g.source;
  std::vector<std::string> a = graphLines(g), b = graphLines(back);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

std::string tempDir() {
  std::string dir = ::testing::TempDir() + "braid_sysfs_" + std::to_string(getpid());
  return dir;
}

void mkdirs(const std::string& path) {
  std::string sofar;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!sofar.empty()) mkdir(sofar.c_str(), 0755);
    }
    if (i < path.size()) sofar += path[i];
  }
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text << "\n";
}

TEST(TopologySysfs, PortsSpeedsAndPciAddresses) {
  std::string root = tempDir();
  mkdirs(root + "/devices/pci0000:00/0000:17:00.0");
  mkdirs(root + "/devices/pci0000:00/0000:00:05.0/virtio2");
  mkdirs(root + "/class/infiniband/mlx5_0/ports/1");
  mkdirs(root + "/class/infiniband/mlx5_0/ports/2");
  mkdirs(root + "/class/net/eth0");
  mkdirs(root + "/class/net/ib0");
  mkdirs(root + "/class/net/veth12");
  mkdirs(root + "/class/net/lo");
  ASSERT_EQ(symlink("../../../devices/pci0000:00/0000:17:00.0", (root + "/class/infiniband/mlx5_0/device").c_str()), 0);
  ASSERT_EQ(symlink("../../../devices/pci0000:00/0000:00:05.0/virtio2", (root + "/class/net/eth0/device").c_str()), 0);
  ASSERT_EQ(symlink("../../../devices/pci0000:00/0000:17:00.0", (root + "/class/net/ib0/device").c_str()), 0);
  write(root + "/class/infiniband/mlx5_0/node_guid", "a088:c203:00aa:0001");
  write(root + "/class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)");
  write(root + "/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand");
  write(root + "/class/infiniband/mlx5_0/ports/2/rate", "100 Gb/sec (2X HDR)");
  write(root + "/class/infiniband/mlx5_0/ports/2/link_layer", "Ethernet");
  write(root + "/class/net/eth0/speed", "25000");
  write(root + "/class/net/ib0/type", "32");
  write(root + "/class/net/veth12/speed", "10000");

  std::vector<SysfsPort> ports;
  ASSERT_TRUE(listSysfsPorts(root, &ports).ok());
  ASSERT_EQ(ports.size(), 5u);  // 2 InfiniBand ports, eth0, ib0, veth12 (lo is skipped)
  EXPECT_EQ(ports[0].name, "mlx5_0");
  EXPECT_EQ(ports[0].busId, "0000:17:00.0");
  EXPECT_EQ(ports[0].speedMbps, 200000);
  EXPECT_EQ(ports[0].linkLayer, "InfiniBand");
  EXPECT_EQ(ports[1].port, 2);
  EXPECT_EQ(ports[1].linkLayer, "Ethernet");  // RoCE
  EXPECT_EQ(ports[1].guid, ports[0].guid);
  EXPECT_EQ(ports[2].name, "eth0");
  EXPECT_EQ(ports[2].busId, "0000:00:05.0");
  EXPECT_EQ(ports[2].speedMbps, 25000);
  EXPECT_EQ(ports[3].linkLayer, "InfiniBand");  // IPoIB
  EXPECT_TRUE(ports[4].busId.empty());

  // A device with InfiniBand ports is described by them, not by its IPoIB interface.
  std::vector<NetInfo> nets = netsAtBusId(ports, "0000:17:00.0");
  ASSERT_EQ(nets.size(), 2u);
  EXPECT_EQ(nets[0].name, "mlx5_0");
  EXPECT_EQ(netsAtBusId(ports, "0000:00:05.0").at(0).name, "eth0");
  EXPECT_TRUE(netsAtBusId(ports, "0000:99:00.0").empty());

  // The live machine with this fake sysfs: a valid graph whatever the machine is.
  DetectSettings detect;
  detect.sysfsRoot = root;
  TopoGraph g;
  Status s = detectTopology(detect, &g);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_GE(g.countOf(TopoNodeType::Cpu), 1);
  EXPECT_EQ(system(("rm -rf '" + root + "'").c_str()), 0);
}

TEST(TopologySysfs, BusIdInPath) {
  EXPECT_EQ(pciBusIdInPath("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0/net/eth0"),
            "0000:03:00.0");
  EXPECT_EQ(pciBusIdInPath("/sys/devices/pci0000:00/0000:00:05.0/virtio2"), "0000:00:05.0");
  EXPECT_EQ(pciBusIdInPath("/sys/devices/virtual/net/veth1"), "");
  EXPECT_EQ(pciBusIdInPath("/x/0000:AB:00.1"), "0000:ab:00.1");
}

TEST(TopologyDetect, LiveMachineGivesAValidGraph) {
  TopoGraph g;
  Status s = detectTopology(DetectSettings(), &g);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GE(g.countOf(TopoNodeType::Cpu), 1);
  TopoReport r;
  EXPECT_TRUE(analyzeTopology(g, SearchSettings(), PathOptions(), AlgoProtoPolicy(), &r).ok());
  // What a live graph dumps, loads back.
  XmlElement root;
  ASSERT_TRUE(parseXml(dumpNcclTopology(g), "live.xml", &root).ok());
  TopoGraph back;
  EXPECT_TRUE(loadNcclTopology(root, "live.xml", &back).ok());
}

TEST(TopologyDetect, TopoFileWinsOverTheMachine) {
  DetectSettings detect;
  detect.topoFile = test::fixturePath("dgx_a100.xml");
  TopoGraph g;
  ASSERT_TRUE(detectTopology(detect, &g).ok());
  EXPECT_EQ(g.countOf(TopoNodeType::Gpu), 8);
  detect.topoFile = "/nonexistent.xml";
  EXPECT_FALSE(detectTopology(detect, &g).ok());
}

TEST(TopologyHwloc, BrokenExportIsAnError) {
  std::string path = ::testing::TempDir() + "braid_hwloc_bad_" + std::to_string(getpid()) + ".xml";
  write(path, "<topology version=\"2.0\">\n<object type=\"Nonsense\"/>\n</topology>");
  TopoGraph g;
  Status s = readTopologyFile(path, &g);
  std::remove(path.c_str());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
}

}  // namespace
}  // namespace braid
