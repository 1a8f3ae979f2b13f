// braid-topo: text and JSON output over the fixtures, --dump round trip, errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "run_command.h"
#include "text_assertions.h"

namespace braid::test {
namespace {

using test::contains;

std::string fixture(const std::string& name) { return std::string(BRAID_TOPO_FIXTURES) + "/" + name; }

CommandResult topo(std::vector<std::string> args) {
  args.insert(args.begin(), BRAID_TOPO_PATH);
  return runCommand(args, 60);
}

// Runs of spaces count as one: NCCL pads ranks in its channel lines ("Channel 00/02 :    0   1").
std::string squeezed(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}
bool containsWords(const std::string& text, const std::string& part) {
  return squeezed(text).find(squeezed(part)) != std::string::npos;
}

TEST(BraidTopo, PrintsGraphPathsChannelsAndPredictions) {
  CommandResult r = topo({"--xml", fixture("dgx_a100.xml"), "--nodes", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "8 GPUs (sm 80), 8 NICs (8 ports), 4 PCI switches, NVSwitch")) << r.out;
  EXPECT_TRUE(contains(r.out, "Paths (type/GB/s)"));
  EXPECT_TRUE(contains(r.out, "NVL/240"));
  // NCCL's GRAPH lines: 8 searched channels at 24 GB/s (a 200 Gb/s port each), channel 0
  // entering by NET/0 at GPU 0 and leaving from GPU 1, both beside mlx5_0 (rail-local).
  EXPECT_TRUE(contains(r.out, "Pattern 4, crossNic 0, nChannels 8, bw 24.000000/24.000000, type NVL/PIX")) << r.out;
  EXPECT_TRUE(contains(r.out, " 0 : NET/0 GPU/0 GPU/7 GPU/6 GPU/5 GPU/4 GPU/3 GPU/2 GPU/1 NET/0")) << r.out;
  // Each channel used twice (the two trees across nodes), NCCL's INIT form.
  EXPECT_TRUE(containsWords(r.out, "Channel 00/16 : 0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9")) << r.out;
  EXPECT_TRUE(contains(r.out, "[0] Trees [0] 1/8/-1->0->-1")) << r.out;
  EXPECT_TRUE(contains(r.out, "AllReduce    1 GiB"));
}

TEST(BraidTopo, PlacesAHostModeRank) {
  // Local rank 5 on socket 1 of the DGX: its socket's four NICs, starting one further.
  CommandResult r = topo({"--xml", fixture("dgx_a100.xml"), "--cpus", "50-51", "--local-rank", "5"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "Host mode: a rank on CPUs 50-51")) << r.out;
  EXPECT_TRUE(contains(r.out, "on NUMA 1 (CPUs 50-51): worker threads bound to CPUs 50-51")) << r.out;
  EXPECT_TRUE(contains(r.out, "NICs (local rank 5): mlx5_5:1, mlx5_6:1, mlx5_7:1, mlx5_4:1 (PHB/24.0 to NUMA 1)"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "not used: mlx5_0:1 SYS/16.0 to NUMA 1")) << r.out;
  // Across both sockets of the 2-socket box: threads unbound, its one NIC used.
  r = topo({"--xml", fixture("two_socket.xml"), "--cpus", "0-31"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "on NUMA 0 and 1 (its CPUs 0-31 span 2 nodes): worker threads left unbound")) << r.out;
  EXPECT_TRUE(contains(r.out, "NICs (local rank 0): eth0 (PHB/3.1 to NUMA 0)")) << r.out;
  r = topo({"--xml", fixture("two_socket.xml"), "--cpus", "3-1"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_TRUE(contains(r.err, "--cpus 3-1: expected a CPU list")) << r.err;
}

TEST(BraidTopo, JsonHasEveryPart) {
  CommandResult r = topo({"--xml", fixture("pcie_4gpu_1nic.xml"), "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  for (const char* key :
       {"\"nodes\"", "\"links\"", "\"paths\"", "\"search\"", "\"channels\"", "\"allreduce\"", "\"busbw_gbs\""}) {
    EXPECT_TRUE(contains(r.out, key)) << key;
  }
  EXPECT_EQ(r.out.front(), '{');
}

TEST(BraidTopo, DumpReloadsToTheSameOutput) {
  std::string dump = ::testing::TempDir() + "braid_topo_test_" + std::to_string(getpid()) + ".xml";
  CommandResult first = topo({"--xml", fixture("messy.xml"), "--dump", dump});
  ASSERT_EQ(first.exitCode, 0) << first.describe();
  CommandResult second = topo({"--xml", dump, "--dump", dump + ".2"});
  ASSERT_EQ(second.exitCode, 0) << second.describe();
  std::ifstream a(dump), b(dump + ".2");
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  EXPECT_EQ(sa.str(), sb.str());
  EXPECT_TRUE(contains(sa.str(), "<system version=\"1\">"));
  std::remove(dump.c_str());
  std::remove((dump + ".2").c_str());
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// --dump-graph writes NCCL's graph XML; --graph reads it back and prints the same channels.
TEST(BraidTopo, GraphDumpAndForcedGraph) {
  std::string dump = ::testing::TempDir() + "braid_topo_graph_" + std::to_string(getpid()) + ".xml";
  CommandResult first = topo({"--xml", fixture("dgx_a100.xml"), "--nodes", "2", "--dump-graph", dump});
  ASSERT_EQ(first.exitCode, 0) << first.describe();
  std::string xml = readAll(dump);
  EXPECT_TRUE(contains(xml, "<graphs version=\"1\">")) << xml;
  EXPECT_TRUE(contains(xml, "<graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"8\"")) << xml;
  EXPECT_TRUE(contains(xml, "<net dev=\"0\"/>")) << xml;
  CommandResult again = topo({"--xml", fixture("dgx_a100.xml"), "--nodes", "2", "--graph", dump});
  ASSERT_EQ(again.exitCode, 0) << again.describe();
  auto channels = [](const std::string& out) {
    size_t from = out.find("Channels for");
    return out.substr(from, out.find("Predicted") - from);
  };
  EXPECT_EQ(channels(again.out), channels(first.out));
  std::remove(dump.c_str());

  // A hand-written ring: one channel in reverse order, the trees still searched.
  std::string forced = ::testing::TempDir() + "braid_topo_forced_" + std::to_string(getpid()) + ".xml";
  {
    std::ofstream out(forced);
    out << "<graphs version=\"1\">\n<graph id=\"0\" pattern=\"4\" nchannels=\"1\">\n<channel><gpu dev=\"0\"/>"
           "<gpu dev=\"3\"/><gpu dev=\"2\"/><gpu dev=\"1\"/></channel>\n</graph>\n</graphs>\n";
  }
  CommandResult r = topo({"--xml", fixture("pcie_4gpu_1nic.xml"), "--graph", forced});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(containsWords(r.out, "Channel 00/02 : 0 3 2 1")) << r.out;
  // A GPU the topology lacks: an error naming the file and line.
  {
    std::ofstream out(forced);
    out << "<graphs>\n<graph id=\"0\">\n<channel><gpu dev=\"9\"/></channel>\n</graph>\n</graphs>\n";
  }
  r = topo({"--xml", fixture("pcie_4gpu_1nic.xml"), "--graph", forced});
  std::remove(forced.c_str());
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_TRUE(contains(r.err, forced + ":3: <gpu dev=\"9\">: no such GPU in the topology")) << r.err;
}

TEST(BraidTopo, CrossNicAndP2pLevel) {
  // NCCL_CROSS_NIC=0: every channel leaves a node by the port it entered by.
  CommandResult r = topo({"--xml", fixture("h100_nvlink4.xml"), "--nodes", "2", "--cross-nic", "0"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "Pattern 4, crossNic 0,")) << r.out;
  // NCCL_P2P_LEVEL=LOC: GPU pairs through the CPU, the ring's worst hop PHB.
  r = topo({"--xml", fixture("pcie_4gpu_1nic.xml"), "--p2p-level", "LOC"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "type PHB/PIX")) << r.out;
  EXPECT_EQ(topo({"--p2p-level", "FAR"}).exitCode, 2);
  EXPECT_EQ(topo({"--cross-nic", "3"}).exitCode, 2);
}

TEST(BraidTopo, HostOnlyMachine) {
  CommandResult r = topo({"--xml", fixture("host_only.xml")});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "0 GPUs"));
  EXPECT_TRUE(contains(r.out, "no GPU in the topology"));
}

TEST(BraidTopo, LiveMachineWorks) {
  CommandResult r = topo({});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "Topology from the live machine")) << r.out;
}

TEST(BraidTopo, MalformedFileIsAnErrorWithFileAndLine) {
  std::string bad = ::testing::TempDir() + "braid_topo_bad_" + std::to_string(getpid()) + ".xml";
  {
    std::ofstream out(bad);
    out << "<system version=\"1\">\n<cpu numaid=\"0\">\n<pci busid=\"0000:01:00.0\" link_width=\"x\"/>\n</cpu>\n"
           "</system>\n";
  }
  CommandResult r = topo({"--xml", bad});
  std::remove(bad.c_str());
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_TRUE(contains(r.err, bad + ":3: <pci link_width=\"x\">: not a number")) << r.err;
}

TEST(BraidTopo, BadOptions) {
  EXPECT_EQ(topo({"--nodes", "0"}).exitCode, 2);
  EXPECT_EQ(topo({"--bogus"}).exitCode, 2);
  EXPECT_EQ(topo({"--xml"}).exitCode, 2);
  CommandResult help = topo({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_TRUE(contains(help.out, "--nodes N"));
}

// The same lines in the INFO log of a communicator's init (NCCL_TOPO_FILE given).
TEST(TopologyAtInit, InfoLogShowsTopologyRingsAndPredictions) {
  // GRAPH: the search's lines, as NCCL prints them only for that subsystem.
  CommandResult r =
      runCommand({"env", "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,GRAPH", "NCCL_TOPO_FILE=" + fixture("dgx_a100.xml"),
                  BRAIDRUN_PATH, "-n", "2", BRAID_HELLO_PATH},
                 60);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::string all = r.out + r.err;
  EXPECT_TRUE(contains(all, "NCCL INFO Topology from " + fixture("dgx_a100.xml") + ": 2 CPUs, 8 GPUs")) << all;
  EXPECT_TRUE(contains(all, "NCCL INFO Pattern 4, crossNic 0, nChannels 12")) << all;
  EXPECT_TRUE(containsWords(all, "NCCL INFO Channel 00/24 : 0 1 2 3 4 5 6 7")) << all;
  EXPECT_TRUE(contains(all, "NCCL INFO [0] Trees [0] 1/-1/-1->0->-1")) << all;
  EXPECT_TRUE(contains(all, "predicted busBw")) << all;
}

TEST(TopologyAtInit, MalformedTopoFileFailsInitWithFileAndLine) {
  std::string bad = ::testing::TempDir() + "braid_topo_init_bad_" + std::to_string(getpid()) + ".xml";
  {
    std::ofstream out(bad);
    out << "<system>\n<cpu numaid=\"x\"/>\n</system>\n";
  }
  CommandResult r = runCommand({"env", "NCCL_TOPO_FILE=" + bad, BRAIDRUN_PATH, "-n", "2", BRAID_HELLO_PATH}, 60);
  std::remove(bad.c_str());
  EXPECT_NE(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out + r.err, "NCCL_TOPO_FILE: " + bad + ":2: <cpu numaid=\"x\">: not a number"))
      << r.describe();
}

TEST(TopologyAtInit, DumpFileIsWritten) {
  std::string dump = ::testing::TempDir() + "braid_topo_init_dump_" + std::to_string(getpid()) + ".xml";
  CommandResult r = runCommand({"env", "NCCL_TOPO_FILE=" + fixture("pcie_4gpu_1nic.xml"), "NCCL_TOPO_DUMP_FILE=" + dump,
                                BRAIDRUN_PATH, "-n", "2", BRAID_HELLO_PATH},
                               60);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::ifstream in(dump);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(dump.c_str());
  EXPECT_TRUE(contains(text.str(), "<gpu dev=\"3\" sm=\"75\""));
}

// NCCL_GRAPH_DUMP_FILE writes the search (by NCCL_GRAPH_DUMP_FILE_RANK, default 0), and
// NCCL_GRAPH_FILE forces it: the INIT log then shows the file's rings.
TEST(TopologyAtInit, GraphDumpAndGraphFile) {
  std::string dump = ::testing::TempDir() + "braid_graph_init_dump_" + std::to_string(getpid()) + ".xml";
  CommandResult r = runCommand({"env", "NCCL_TOPO_FILE=" + fixture("pcie_4gpu_1nic.xml"),
                                "NCCL_GRAPH_DUMP_FILE=" + dump, BRAIDRUN_PATH, "-n", "2", BRAID_HELLO_PATH},
                               60);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::string xml = readAll(dump);
  std::remove(dump.c_str());
  EXPECT_TRUE(contains(xml, "<graph id=\"0\" pattern=\"4\"")) << xml;

  std::string forced = ::testing::TempDir() + "braid_graph_init_forced_" + std::to_string(getpid()) + ".xml";
  {
    std::ofstream out(forced);
    out << "<graphs version=\"1\"><graph id=\"0\" pattern=\"4\"><channel><gpu dev=\"0\"/><gpu dev=\"2\"/>"
           "<gpu dev=\"1\"/><gpu dev=\"3\"/></channel></graph></graphs>\n";
  }
  r = runCommand({"env", "NCCL_DEBUG=INFO", "NCCL_TOPO_FILE=" + fixture("pcie_4gpu_1nic.xml"),
                  "NCCL_GRAPH_FILE=" + forced, BRAIDRUN_PATH, "-n", "2", BRAID_HELLO_PATH},
                 60);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(containsWords(r.out + r.err, "NCCL INFO Channel 00/02 : 0 2 1 3")) << r.describe();

  // A graph file naming a GPU the topology lacks fails the init, naming file and line.
  {
    std::ofstream out(forced);
    out << "<graphs>\n<graph id=\"0\">\n<channel><gpu dev=\"7\"/></channel></graph></graphs>\n";
  }
  r = runCommand({"env", "NCCL_TOPO_FILE=" + fixture("pcie_4gpu_1nic.xml"), "NCCL_GRAPH_FILE=" + forced, BRAIDRUN_PATH,
                  "-n", "2", BRAID_HELLO_PATH},
                 60);
  std::remove(forced.c_str());
  EXPECT_NE(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out + r.err, forced + ":3: <gpu dev=\"7\">: no such GPU in the topology")) << r.describe();
}

}  // namespace
}  // namespace braid::test
