// The attribute forms and quirks of real topology files (tests/fixtures/topology/forms, each
// file naming where the form comes from): every one loads, as NCCL reads it.
#include <gtest/gtest.h>

#include <string>

#include "topology/nccl_xml.h"
#include "topology/paths.h"
#include "topology/search_system.h"
#include "topology_fixture.h"

namespace braid {
namespace {

using test::gpuNode;
using test::hasNote;
using test::loadFixture;
using test::netNode;

// The bandwidth of the PCI link from `node` up to its parent.
double upLinkBw(const TopoGraph& g, int node) {
  for (int l : g.nodes[static_cast<size_t>(node)].links) {
    const TopoLink& link = g.links[static_cast<size_t>(l)];
    if (link.type == TopoLinkType::Pci) return link.bwGBs;
  }
  return -1;
}

TEST(TopologyForms, EveryFileOfTheCorpusLoadsAndRoundTrips) {
  for (const char* name :
       {"forms/nccl_dump_2_2x.xml", "forms/vm_hidden_links.xml", "forms/tunnel_under_each_cpu.xml",
        "forms/numbers_every_form.xml", "forms/old_kernel_speeds.xml", "forms/nics_merged_by_nccl.xml",
        "forms/power9_nvlink_cpu.xml", "forms/grace_hopper_c2c.xml", "forms/broadcom_two_level_switch.xml",
        "forms/newer_nccl_elements.xml", "forms/azure_ncv4_vm.xml"}) {
    SCOPED_TRACE(name);
    TopoGraph g = loadFixture(name);
    ASSERT_GT(g.countOf(TopoNodeType::Gpu), 0);
    std::string dump = dumpNcclTopology(g);
    XmlElement root;
    ASSERT_TRUE(parseXml(dump, "dump.xml", &root).ok());
    TopoGraph back;
    Status s = loadNcclTopology(root, "dump.xml", &back);
    ASSERT_TRUE(s.ok()) << s.message() << "\n" << dump;
    EXPECT_EQ(dump, dumpNcclTopology(back));
  }
}

TEST(TopologyForms, NcclDumpFractionsAndHex) {
  TopoGraph g = loadFixture("forms/nccl_dump_2_2x.xml");
  int port = netNode(g, "mlx5_0");
  ASSERT_GE(port, 0);
  EXPECT_DOUBLE_EQ(g.nodes[static_cast<size_t>(port)].net.latency, 0.0);
  EXPECT_EQ(g.nodes[static_cast<size_t>(port)].net.speedMbps, 400000);
  // NVLinks to four NVSwitches: one fabric node, 18 links of 20.6 GB/s.
  ASSERT_GE(g.nvSwitch, 0);
  TopoPaths p(g);
  EXPECT_EQ(p.path(gpuNode(g, 0), gpuNode(g, 1)).type, PathType::NVL);
  EXPECT_NEAR(p.path(gpuNode(g, 0), gpuNode(g, 1)).bwGBs, 18 * 20.6, 1e-9);
  // Written back as NCCL writes it.
  EXPECT_NE(dumpNcclTopology(g).find("latency=\"0.000000\""), std::string::npos);
}

TEST(TopologyForms, VmLinksReadAsNcclReadsThem) {
  TopoGraph g = loadFixture("forms/vm_hidden_links.xml");
  // "" and width 0: Gen3 per lane, x16 -> 12 GB/s; "Unknown" x16 -> 12 GB/s too.
  EXPECT_DOUBLE_EQ(upLinkBw(g, gpuNode(g, 0)), 12.0);
  EXPECT_DOUBLE_EQ(upLinkBw(g, gpuNode(g, 1)), 12.0);
  EXPECT_TRUE(hasNote(g, "link width of 0"));
  EXPECT_TRUE(hasNote(g, "link speed \"\" of 0001:00:00.0 is not one NCCL knows"));
  EXPECT_TRUE(hasNote(g, "link speed \"Unknown\""));
  // speed -1: 10 Gb/s, as NCCL counts it.
  int port = netNode(g, "mlx5_ib0");
  ASSERT_GE(port, 0);
  EXPECT_TRUE(hasNote(g, "mlx5_ib0 has no speed; counted as 10 Gb/s"));
  for (int l : g.nodes[static_cast<size_t>(port)].links) EXPECT_DOUBLE_EQ(g.links[static_cast<size_t>(l)].bwGBs, 1.25);
  // The invisible NVSwitch is one fabric node all GPUs reach.
  ASSERT_GE(g.nvSwitch, 0);
  TopoPaths p(g);
  EXPECT_EQ(p.path(gpuNode(g, 0), gpuNode(g, 1)).type, PathType::NVL);
}

TEST(TopologyForms, RepeatedNetworkDeviceIsDroppedWithANote) {
  TopoGraph g = loadFixture("forms/tunnel_under_each_cpu.xml");
  EXPECT_EQ(g.countOf(TopoNodeType::Net), 2);  // ens1 and one tunl0
  int tunnel = netNode(g, "tunl0");
  ASSERT_GE(tunnel, 0);
  // The first listing stays: under CPU 0.
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.cpuOf(tunnel))].cpu.numaId, 0);
  EXPECT_TRUE(hasNote(g, "network device tunl0 (dev 1, port 0) listed again under CPU 1 (first at line"))
      << ::testing::PrintToString(g.notes);
  EXPECT_TRUE(hasNote(g, "the NIC has no port left once repeated listings are dropped; dropped too"));
  EXPECT_EQ(g.countOf(TopoNodeType::Nic), 2);
}

TEST(TopologyForms, NumbersInEveryForm) {
  TopoGraph g = loadFixture("forms/numbers_every_form.xml");
  int gpu0 = gpuNode(g, 0), gpu1 = gpuNode(g, 1);
  ASSERT_GE(gpu0, 0);
  ASSERT_GE(gpu1, 0);
  EXPECT_EQ(g.nodes[static_cast<size_t>(gpu0)].pci.linkWidth, 16);           // "0x10"
  EXPECT_EQ(g.nodes[static_cast<size_t>(gpu1)].pci.linkWidth, 16);           // " 16 "
  EXPECT_EQ(g.nodes[static_cast<size_t>(gpu1)].gpu.sm, 70);                  // "70.0"
  EXPECT_EQ(g.nodes[static_cast<size_t>(gpu1)].gpu.gdr, 0);                  // "" is NCCL's 0
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.cpuOf(gpu0))].cpu.modelId, 0x55);  // "0x55"
  int port = netNode(g, "eth2");
  ASSERT_GE(port, 0);
  const NetInfo& net = g.nodes[static_cast<size_t>(port)].net;
  EXPECT_EQ(net.speedMbps, 25000);  // "25000.000000"
  EXPECT_DOUBLE_EQ(net.latency, 1e-3);
  EXPECT_EQ(net.dev, 0);  // dev="" counts as not given: numbered after the others
  EXPECT_TRUE(hasNote(g, "<net dev=\"\"> is empty; counted as not given"));
  // NVLink count "0x2": two V100 links, 40 GB/s.
  TopoPaths p(g);
  EXPECT_EQ(p.path(gpu0, gpu1).type, PathType::NVL);
  EXPECT_DOUBLE_EQ(p.path(gpu0, gpu1).bwGBs, 40.0);
}

TEST(TopologyForms, WhatNoToolWritesIsStillAnError) {
  for (const char* bad : {"abc", "12abc", "0x", "nan", "inf", "--1"}) {
    SCOPED_TRACE(bad);
    std::string text =
        std::string("<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" link_width=\"") + bad +
        "\"/></cpu></system>";
    XmlElement root;
    ASSERT_TRUE(parseXml(text, "bad.xml", &root).ok());
    TopoGraph g;
    Status s = loadNcclTopology(root, "bad.xml", &g);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("not a number"), std::string::npos) << s.message();
  }
  // A fraction is NCCL's whole part, with a note when something is lost.
  XmlElement root;
  ASSERT_TRUE(parseXml("<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" link_width=\"8.5\"/></cpu></system>",
                       "f.xml", &root)
                  .ok());
  TopoGraph g;
  ASSERT_TRUE(loadNcclTopology(root, "f.xml", &g).ok());
  EXPECT_TRUE(hasNote(g, "<pci link_width=\"8.5\"> is not a whole number; 8 used"));
}

TEST(TopologyForms, OldAndUnknownSpeeds) {
  TopoGraph g = loadFixture("forms/old_kernel_speeds.xml");
  EXPECT_DOUBLE_EQ(upLinkBw(g, gpuNode(g, 0)), 16 * 30 / 80.0);  // "5 GT/s"
  EXPECT_DOUBLE_EQ(upLinkBw(g, gpuNode(g, 1)), 12.0);            // "8 GT/s"
  EXPECT_DOUBLE_EQ(upLinkBw(g, gpuNode(g, 2)), 8 * 120 / 80.0);  // "16 GT/s" x8
  EXPECT_DOUBLE_EQ(upLinkBw(g, gpuNode(g, 3)), 12.0);            // "16GT/s": not NCCL's, Gen3
  EXPECT_TRUE(hasNote(g, "link speed \"16GT/s\" of 0000:82:00.0 is not one NCCL knows"));
}

TEST(TopologyForms, NicsAsNcclGroupsThem) {
  TopoGraph g = loadFixture("forms/nics_merged_by_nccl.xml");
  // Braid's graph keeps each <nic>; the search merges the functions of one card into one
  // NIC with one PCIe link, as NCCL does.
  EXPECT_EQ(g.countOf(TopoNodeType::Nic), 3);
  SearchSystemOptions o;
  o.interNode = true;
  SearchSystem s;
  ASSERT_TRUE(SearchSystem::build(g, o, &s).ok());
  EXPECT_EQ(s.count(SysKind::Nic), 2);
  EXPECT_EQ(s.count(SysKind::Net), 4);
  // The two ports of mlx5_2 share one GUID, so one asic.
  EXPECT_EQ(s.of(SysKind::Net, 2).asic, s.of(SysKind::Net, 3).asic);
  EXPECT_NE(s.of(SysKind::Net, 0).asic, s.of(SysKind::Net, 1).asic);
}

TEST(TopologyForms, Power9NvLinkToTheCpu) {
  TopoGraph g = loadFixture("forms/power9_nvlink_cpu.xml");
  int gpu = gpuNode(g, 0);
  bool toCpu = false;
  for (int l : g.nodes[static_cast<size_t>(gpu)].links) {
    const TopoLink& link = g.links[static_cast<size_t>(l)];
    if (link.type == TopoLinkType::NvLink && g.nodes[static_cast<size_t>(link.to)].type == TopoNodeType::Cpu) {
      toCpu = true;
      EXPECT_DOUBLE_EQ(link.bwGBs, 60.0);  // 3 V100 links
    }
  }
  EXPECT_TRUE(toCpu);
  EXPECT_LT(g.nvSwitch, 0);
}

TEST(TopologyForms, GraceHopperC2cInMegabytes) {
  TopoGraph g = loadFixture("forms/grace_hopper_c2c.xml");
  TopoPaths p(g);
  EXPECT_EQ(p.path(gpuNode(g, 0), netNode(g, "mlx5_0")).type, PathType::P2C);
  EXPECT_NE(dumpNcclTopology(g).find("<c2c bw=\"45000\" count=\"10\"/>"), std::string::npos);
}

TEST(TopologyForms, BroadcomSwitchLevelsAreOne) {
  TopoGraph g = loadFixture("forms/broadcom_two_level_switch.xml");
  TopoPaths p(g);
  EXPECT_EQ(p.path(gpuNode(g, 0), gpuNode(g, 1)).type, PathType::PIX);
  EXPECT_TRUE(hasNote(g, "counted as part of switch 0000:01:00.0 (one Broadcom PEX Gen4 chip)"));
  // The dump keeps both levels.
  std::string dump = dumpNcclTopology(g);
  EXPECT_NE(dump.find("0000:03:00.0"), std::string::npos);
  EXPECT_NE(dump.find("0000:0d:00.0"), std::string::npos);
}

TEST(TopologyForms, LaterElementsAreReadPast) {
  TopoGraph g = loadFixture("forms/newer_nccl_elements.xml");
  EXPECT_TRUE(hasNote(g, "<pcilink> not understood here; ignored"));
  EXPECT_TRUE(hasNote(g, "<gin> not understood here; ignored"));
  std::string dump = dumpNcclTopology(g);
  EXPECT_NE(dump.find("rail=\"0\""), std::string::npos);
  EXPECT_NE(dump.find("mlopart=\"-1\""), std::string::npos);
}

}  // namespace
}  // namespace braid
