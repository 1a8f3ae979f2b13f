// Loading NCCL-format topology files: the fixtures, messy real-world spellings, malformed
// input (every one an error naming the file and line), and the dump / load round trip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "topology/nccl_xml.h"
#include "topology/report.h"
#include "topology_fixture.h"

namespace braid {
namespace {

using test::fixturePath;
using test::hasNote;
using test::loadFixture;
using test::loadText;

struct Counts {
  const char* file;
  int cpus, gpus, nics, nets, switches;
  bool nvSwitch;
};

class FixtureCounts : public ::testing::TestWithParam<Counts> {};

TEST_P(FixtureCounts, LoadsWithTheExpectedNodes) {
  const Counts& c = GetParam();
  TopoGraph g = loadFixture(c.file);
  EXPECT_EQ(g.countOf(TopoNodeType::Cpu), c.cpus);
  EXPECT_EQ(g.countOf(TopoNodeType::Gpu), c.gpus);
  EXPECT_EQ(g.countOf(TopoNodeType::Nic), c.nics);
  EXPECT_EQ(g.countOf(TopoNodeType::Net), c.nets);
  EXPECT_EQ(g.countOf(TopoNodeType::Pci), c.switches);
  EXPECT_EQ(g.nvSwitch >= 0, c.nvSwitch);
}

// Dump, load the dump, dump again: the same text and the same links.
TEST_P(FixtureCounts, RoundTripGivesTheSameGraph) {
  TopoGraph g1 = loadFixture(GetParam().file);
  std::string text1 = dumpNcclTopology(g1);
  TopoGraph g2;
  Status s = loadText(text1, &g2);
  ASSERT_TRUE(s.ok()) << s.message() << "\n" << text1;
  EXPECT_EQ(text1, dumpNcclTopology(g2));
  g2.source = g1.source;
  EXPECT_EQ(graphLines(g1), graphLines(g2));
}

INSTANTIATE_TEST_SUITE_P(
    Topology, FixtureCounts,
    ::testing::Values(Counts{"dgx_a100.xml", 2, 8, 8, 8, 4, true}, Counts{"h100_nvlink4.xml", 2, 8, 8, 8, 8, true},
                      Counts{"pcie_4gpu_1nic.xml", 1, 4, 1, 1, 2, false},
                      Counts{"two_socket.xml", 2, 4, 1, 1, 0, false}, Counts{"host_only.xml", 2, 0, 2, 2, 0, false},
                      Counts{"cloud_skeleton.xml", 2, 4, 4, 4, 2, false}, Counts{"messy.xml", 2, 2, 3, 4, 1, true}),
    [](const auto& param) {
      std::string name = param.param.file;
      return name.substr(0, name.find('.'));
    });

TEST(TopologyXml, FileRoundTripThroughDisk) {
  TopoGraph g = loadFixture("dgx_a100.xml");
  std::string path = ::testing::TempDir() + "braid_topo_dump_" + std::to_string(getpid()) + ".xml";
  ASSERT_TRUE(writeNcclTopologyFile(g, path).ok());
  TopoGraph back;
  Status s = readTopologyFile(path, &back);
  std::remove(path.c_str());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(dumpNcclTopology(g), dumpNcclTopology(back));
}

TEST(TopologyXml, SkeletonGpusAndNicsComeFromClassCodes) {
  TopoGraph g = loadFixture("cloud_skeleton.xml");
  EXPECT_TRUE(hasNote(g, "skeleton topology: 4 GPU(s) and 4 NIC(s)")) << ::testing::PrintToString(g.notes);
  // Numbered in file order, named after their PCI address.
  EXPECT_EQ(g.nodes[static_cast<size_t>(test::gpuNode(g, 0))].pci.busId, "0001:00:00.0");
  EXPECT_GE(test::netNode(g, "pci-0101:00:00.0"), 0);
}

TEST(TopologyXml, MessyFileIsReadAsNcclWould) {
  TopoGraph g = loadFixture("messy.xml");
  EXPECT_TRUE(hasNote(g, "to itself ignored"));
  EXPECT_TRUE(hasNote(g, "0000:99:00.0 (not in this topology) ignored"));
  EXPECT_TRUE(hasNote(g, "link width of 0"));
  EXPECT_TRUE(hasNote(g, "link speed \"unknown\""));
  EXPECT_TRUE(hasNote(g, "<fan> not understood"));
  EXPECT_TRUE(hasNote(g, "ens1 has no speed"));
  // Two ports of one NIC, one GUID.
  int p1 = test::netNode(g, "mlx5_0", 1), p2 = test::netNode(g, "mlx5_0", 2);
  ASSERT_GE(p1, 0);
  ASSERT_GE(p2, 0);
  EXPECT_EQ(g.nicOf(p1), g.nicOf(p2));
  // Upper-case bus ids are lower-cased; "16 GT/s" x16 is Gen4's 24 GB/s.
  int nic = g.nicOf(p1);
  EXPECT_EQ(g.nodes[static_cast<size_t>(nic)].pci.busId, "0000:1a:00.0");
  bool found = false;
  for (int l : g.nodes[static_cast<size_t>(nic)].links) {
    const TopoLink& link = g.links[static_cast<size_t>(l)];
    if (link.type == TopoLinkType::Pci) {
      EXPECT_DOUBLE_EQ(link.bwGBs, 24.0);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // The NVLink without tclass to an invisible address reaches the NVSwitch: 18 x 20.6.
  TopoPaths paths(g);
  const TopoPath& p = paths.path(test::gpuNode(g, 0), test::gpuNode(g, 1));
  EXPECT_EQ(p.type, PathType::NVL);
  EXPECT_NEAR(p.bwGBs, 18 * 20.6, 1e-6);
}

struct BadCase {
  const char* name;
  std::string text;
  std::string expect;  // a part of the message
};

std::string wrap(const std::string& inner) {
  return "<system version=\"1\">\n<cpu numaid=\"0\">\n" + inner + "</cpu>\n</system>\n";
}

std::string gpu(const std::string& busId, const std::string& gpuAttrs, const std::string& pciAttrs = "") {
  return "<pci busid=\"" + busId + "\" class=\"0x030200\"" + pciAttrs + ">\n<gpu " + gpuAttrs + "/>\n</pci>\n";
}

std::string manyPci(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:00.0", i / 256, i % 256);
    s += std::string("<pci busid=\"") + bus + "\" class=\"0x060400\"><pci busid=\"f" + bus +
         "\" class=\"0x030200\"/></pci>\n";
  }
  return s;
}

std::string deep(int levels) {
  std::string open, close;
  for (int i = 0; i < levels; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "0000:%02x:00.0", i);
    open += std::string("<pci busid=\"") + bus + "\" class=\"0x060400\">\n";
    close += "</pci>\n";
  }
  return open + gpu("0000:ff:00.0", "dev=\"0\"") + close;
}

class Malformed : public ::testing::TestWithParam<BadCase> {};

TEST_P(Malformed, IsAClearErrorNamingFileAndLine) {
  TopoGraph g;
  Status s = loadText(GetParam().text, &g, "bad.xml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(GetParam().expect), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("bad.xml", 0), 0u) << s.message();
}

INSTANTIATE_TEST_SUITE_P(
    Topology, Malformed,
    ::testing::Values(
        BadCase{"Empty", "", "bad.xml"},
        BadCase{"Truncated", "<system version=\"1\">\n<cpu numaid=\"0\">\n<pci busid=\"0000:01", "bad.xml:3"},
        BadCase{"Garbage", std::string("\x01\x02garbage\xff", 11), "bad.xml:1"},
        BadCase{"UnclosedElement", "<system>\n<cpu>\n</system>\n", "bad.xml:3"},
        BadCase{"WrongRoot", "<graphs version=\"1\"/>\n", "expected <system>"},
        BadCase{"DevNotANumber", wrap(gpu("0000:01:00.0", "dev=\"abc\"")),
                "bad.xml:4: <gpu dev=\"abc\">: not a number"},
        BadCase{"NegativeSpeed",
                wrap("<pci busid=\"0000:01:00.0\" class=\"0x020700\">\n<nic>\n<net name=\"x\" "
                     "speed=\"-5\"/>\n</nic>\n</pci>\n"),
                "bad.xml:5: <net speed=\"-5\">: out of range"},
        BadCase{"AbsurdWidth", wrap(gpu("0000:01:00.0", "dev=\"0\"", " link_width=\"1000\"")), "bad.xml:3"},
        BadCase{
            "AbsurdNvlinkCount",
            wrap("<pci busid=\"0000:01:00.0\" class=\"0x030200\">\n<gpu dev=\"0\">\n<nvlink target=\"0000:02:00.0\" "
                 "count=\"100000\"/>\n</gpu>\n</pci>\n"),
            "bad.xml:5: <nvlink count=\"100000\">"},
        BadCase{"AbsurdNuma", "<system>\n<cpu numaid=\"99999999999999999999\"/>\n</system>\n", "bad.xml:2"},
        BadCase{"GpuTwiceSameBusId", wrap(gpu("0000:01:00.0", "dev=\"0\"") + gpu("0000:01:00.0", "dev=\"1\"")),
                "bad.xml:7: PCI bus id 0000:01:00.0 appears twice (first at line 4)"},
        BadCase{"GpuTwiceSameDev", wrap(gpu("0000:01:00.0", "dev=\"0\"") + gpu("0000:02:00.0", "dev=\"0\"")),
                "bad.xml:7: GPU dev 0 appears twice"},
        BadCase{"NumaTwice", "<system>\n<cpu numaid=\"0\"/>\n<cpu numaid=\"0\"/>\n</system>\n",
                "bad.xml:3: NUMA id 0 appears twice"},
        BadCase{"PciWithoutBusId", wrap("<pci class=\"0x060400\"/>\n"), "bad.xml:3: <pci> without a busid"},
        BadCase{"NvlinkWithoutTarget",
                wrap("<pci busid=\"0000:01:00.0\">\n<gpu dev=\"0\">\n<nvlink count=\"2\"/>\n</gpu>\n</pci>\n"),
                "bad.xml:5: <nvlink> without a target"},
        BadCase{"TenThousandNodes", wrap(manyPci(10000)), "more than 256"},
        BadCase{"TooDeep", wrap(deep(40)), "deeper than 32"}),
    [](const auto& param) { return std::string(param.param.name); });

TEST(TopologyXml, NumbersAndOddAttributeValues) {
  TopoGraph g;
  ASSERT_TRUE(loadText("<system version=\"1\">\n<cpu numaid=\"010\" familyid=\"0x6\" odd=\"a&#10;b&amp;c\" "
                       "x:gone=\"1\" xmlns:x=\"urn:x\"/>\n</system>\n",
                       &g)
                  .ok());
  EXPECT_EQ(g.nodes[0].cpu.numaId, 10);  // decimal, not octal
  EXPECT_EQ(g.nodes[0].cpu.familyId, 6);
  std::string dump = dumpNcclTopology(g);
  EXPECT_NE(dump.find("odd=\"a&#10;b&amp;c\""), std::string::npos) << dump;
  EXPECT_EQ(dump.find("gone"), std::string::npos) << dump;
  TopoGraph back;
  ASSERT_TRUE(loadText(dump, &back).ok());
  EXPECT_EQ(dumpNcclTopology(back), dump);
}

TEST(TopologyXml, MissingFileNamesThePath) {
  TopoGraph g;
  Status s = readTopologyFile("/nonexistent/braid/topo.xml", &g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ncclSystemError);
  EXPECT_NE(s.message().find("/nonexistent/braid/topo.xml"), std::string::npos);
}

TEST(TopologyXml, ExternalEntitiesAreNotLoaded) {
  std::string text =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE system [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n"
      "<system version=\"1\"><cpu numaid=\"0\" vendor=\"&x;\"/></system>\n";
  TopoGraph g;
  Status s = loadText(text, &g);
  if (s.ok()) {
    EXPECT_EQ(g.nodes[0].cpu.vendor.find("root"), std::string::npos);
  }
}

}  // namespace
}  // namespace braid
