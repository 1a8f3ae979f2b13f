// NCCL's graph XML (NCCL_GRAPH_FILE, NCCL_GRAPH_DUMP_FILE): a search's channels written
// and read back, both forms of device numbers, errors naming the line, and a forced graph
// used instead of the search.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/graph_xml.h"
#include "topology/search.h"
#include "topology_fixture.h"

namespace braid {
namespace {

using test::gpuNode;
using test::loadFixture;

Status loadGraphsText(const std::string& text, const TopoGraph& topo, std::vector<SearchGraph>* out,
                      std::vector<std::string>* notes = nullptr) {
  XmlElement root;
  BRAID_CHECK(parseXml(text, "graph.xml", &root));
  return loadNcclGraphs(root, "graph.xml", topo, out, notes);
}

std::vector<std::vector<int>> gpuOrders(const SearchGraph& g) {
  std::vector<std::vector<int>> out;
  for (const TopoChannel& ch : g.channels) out.push_back(ch.gpus);
  return out;
}

TEST(NcclGraphXml, SearchDumpReadsBackAsTheSameChannels) {
  for (int nodes : {1, 2}) {
    SCOPED_TRACE(nodes);
    TopoGraph topo = loadFixture("h100_nvlink4.xml");
    SearchSettings s;
    s.nNodes = nodes;
    TopoSearchResult r;
    ASSERT_TRUE(searchChannels(topo, s, &r).ok());
    std::string dump = dumpNcclGraphs(topo, r);
    EXPECT_NE(dump.find("<graphs version=\"1\">"), std::string::npos);
    EXPECT_NE(dump.find("pattern=\"4\""), std::string::npos);
    EXPECT_EQ(dump.find("<net ") != std::string::npos, nodes > 1) << dump;
    std::vector<SearchGraph> graphs;
    Status st = loadGraphsText(dump, topo, &graphs);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(graphs.size(), 2u);
    EXPECT_EQ(gpuOrders(graphs[0]), gpuOrders(r.ring));
    EXPECT_EQ(gpuOrders(graphs[1]), gpuOrders(r.tree));
    EXPECT_EQ(graphs[0].typeIntra, r.ring.typeIntra);
    EXPECT_FLOAT_EQ(static_cast<float>(graphs[0].bwIntra), static_cast<float>(r.ring.bwIntra));
    if (nodes > 1) {
      for (size_t c = 0; c < r.ring.channels.size(); ++c) {
        EXPECT_EQ(graphs[0].channels[c].netIn, r.ring.channels[c].netIn);
        EXPECT_EQ(graphs[0].channels[c].netOut, r.ring.channels[c].netOut);
      }
    }
    // Forced from its own dump, the result is the search's.
    SearchSettings forced = s;
    forced.forced = &graphs;
    TopoSearchResult again;
    ASSERT_TRUE(searchChannels(topo, forced, &again).ok());
    ASSERT_EQ(again.channels.size(), r.channels.size());
    for (int c = 0; c < static_cast<int>(r.channels.size()); ++c) {
      EXPECT_EQ(ringRanks(topo, again, c), ringRanks(topo, r, c));
    }
    EXPECT_TRUE(again.ring.fromFile);
  }
}

TEST(NcclGraphXml, DeviceNumbersInBothForms) {
  TopoGraph topo = loadFixture("dgx_a100.xml");
  // NCCL 2.19 and later: hexadecimal; earlier: decimal; 2.27: <gpu rank>.
  const char* text = R"(<graphs version="1">
  <graph id="0" pattern="4" crossnic="0" nchannels="3" speedintra="20" speedinter="20" latencyinter="0"
         typeintra="NVL" typeinter="PIX" samechannels="0">
    <channel><gpu dev="0x7"/><gpu dev="0x6"/><gpu dev="0x5"/><gpu dev="0x4"/><gpu dev="0x3"/><gpu dev="0x2"/><gpu dev="0x1"/><gpu dev="0"/></channel>
    <channel><gpu dev="7"/><gpu dev="6"/><gpu dev="5"/><gpu dev="4"/><gpu dev="3"/><gpu dev="2"/><gpu dev="1"/><gpu dev="0"/></channel>
    <channel><gpu rank="0"/><gpu rank="2"/><gpu rank="4"/><gpu rank="6"/><gpu rank="1"/><gpu rank="3"/><gpu rank="5"/><gpu rank="7"/></channel>
  </graph>
</graphs>)";
  std::vector<SearchGraph> graphs;
  Status st = loadGraphsText(text, topo, &graphs);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(graphs.size(), 1u);
  const SearchGraph& g = graphs[0];
  EXPECT_EQ(g.typeIntra, PathType::NVL);
  EXPECT_EQ(g.sameChannels, 0);
  ASSERT_EQ(g.channels.size(), 3u);
  EXPECT_EQ(g.channels[0].gpus, g.channels[1].gpus);
  EXPECT_EQ(g.channels[0].gpus.front(), gpuNode(topo, 7));
  EXPECT_EQ(g.channels[2].gpus[1], gpuNode(topo, 2));

  // Used instead of the search: rings from it, the trees still searched.
  SearchSettings s;
  s.forced = &graphs;
  TopoSearchResult r;
  ASSERT_TRUE(searchChannels(topo, s, &r).ok());
  ASSERT_EQ(r.ring.channels.size(), 3u);
  EXPECT_FALSE(r.tree.fromFile);
  EXPECT_EQ(ringRanks(topo, r, 0), (std::vector<int>{0, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(ringRanks(topo, r, 2), (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  // Dumped again, NCCL's form: hexadecimal.
  EXPECT_NE(dumpNcclGraphs(topo, r).find("<gpu dev=\"0x7\"/>"), std::string::npos);
}

TEST(NcclGraphXml, ErrorsNameTheLine) {
  TopoGraph topo = loadFixture("dgx_a100.xml");
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"<graph/>", "expected <graphs>"},
      {"<graphs>\n<graph id=\"0\" pattern=\"4\">\n<channel><gpu dev=\"8\"/></channel></graph></graphs>",
       "graph.xml:3: <gpu dev=\"8\">: no such GPU"},
      {"<graphs><graph id=\"0\" typeintra=\"FOO\"/></graphs>", "not a path type"},
      {"<graphs><graph id=\"0\" pattern=\"9\"/></graphs>", "out of range"},
      {"<graphs><graph id=\"0\"><channel><gpu dev=\"abc\"/></channel></graph></graphs>", "not a device number"},
      {"<graphs><graph id=\"0\"><channel><gpu rank=\"9\"/></channel></graph></graphs>", "not a rank"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    std::vector<SearchGraph> graphs;
    Status st = loadGraphsText(c.text, topo, &graphs);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.message), std::string::npos) << st.message();
  }
}

TEST(NcclGraphXml, ForcedGraphsAreChecked) {
  TopoGraph topo = loadFixture("dgx_a100.xml");
  std::vector<SearchGraph> graphs;
  std::vector<std::string> notes;
  // A GPU missing from a channel.
  ASSERT_TRUE(loadGraphsText(R"(<graphs><graph id="0" pattern="4" nchannels="2">
    <channel><gpu dev="0"/><gpu dev="1"/></channel></graph></graphs>)",
                             topo, &graphs, &notes)
                  .ok());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("lists 1 channel(s)"), std::string::npos) << notes[0];
  SearchSettings s;
  s.forced = &graphs;
  TopoSearchResult r;
  Status st = searchChannels(topo, s, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("does not list each of the topology's 8 GPU(s) once"), std::string::npos) << st.message();

  // Across nodes a channel needs its ports.
  ASSERT_TRUE(loadGraphsText(R"(<graphs><graph id="0" pattern="4"><channel><gpu dev="0"/><gpu dev="1"/><gpu dev="2"/>
    <gpu dev="3"/><gpu dev="4"/><gpu dev="5"/><gpu dev="6"/><gpu dev="7"/></channel></graph></graphs>)",
                             topo, &graphs)
                  .ok());
  s.nNodes = 2;
  st = searchChannels(topo, s, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no port of this topology"), std::string::npos) << st.message();
  s.nNodes = 1;
  ASSERT_TRUE(searchChannels(topo, s, &r).ok());
  EXPECT_EQ(ringRanks(topo, r, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(NcclGraphXml, CrossNicGraphRefusedWhenCrossNicIsOff) {
  TopoGraph topo = loadFixture("dgx_a100.xml");
  std::vector<SearchGraph> graphs;
  ASSERT_TRUE(loadGraphsText(R"(<graphs><graph id="0" pattern="4" crossnic="1"><channel><gpu dev="0"/><gpu dev="1"/>
    <gpu dev="2"/><gpu dev="3"/><gpu dev="4"/><gpu dev="5"/><gpu dev="6"/><gpu dev="7"/></channel></graph></graphs>)",
                             topo, &graphs)
                  .ok());
  SearchSettings s;
  s.forced = &graphs;
  s.crossNic = 0;
  TopoSearchResult r;
  ASSERT_TRUE(searchChannels(topo, s, &r).ok());
  EXPECT_FALSE(r.ring.fromFile);  // NCCL searches instead
  s.crossNic = 2;
  ASSERT_TRUE(searchChannels(topo, s, &r).ok());
  EXPECT_TRUE(r.ring.fromFile);
}

// The files Microsoft ships for Azure NC A100 v4 (Azure/azhpc-images, customizations/ncv4.sh):
// a VM topology (four GPUs on four AMD NUMA nodes, NVLink-bridged in pairs) and the graph
// file that goes with it. NCCL's search keeps every channel on one ring when an AMD CPU's
// SYS path is in it (search.cc: "except when going through AMD CPUs"), so it finds two
// copies of 0 1 2 3 at 6 GB/s; the shipped file gives 0 1 2 3 and 0 3 2 1 at 12, each using
// the socket links the other leaves idle. Braid searches as NCCL does and, given the file,
// uses it.
TEST(NcclGraphXml, CloudImageGraphFile) {
  TopoGraph topo = loadFixture("forms/azure_ncv4_vm.xml");
  TopoSearchResult searched;
  ASSERT_TRUE(searchChannels(topo, SearchSettings(), &searched).ok());
  ASSERT_EQ(searched.ring.channels.size(), 2u);
  EXPECT_FLOAT_EQ(static_cast<float>(searched.ring.bwIntra), 6.0f);
  EXPECT_EQ(ringRanks(topo, searched, 0), ringRanks(topo, searched, 1));

  std::vector<SearchGraph> graphs;
  std::vector<std::string> notes;
  Status st = readNcclGraphFile(test::fixturePath("graphs/azure_ncv4_graph.xml"), topo, &graphs, &notes);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(notes.empty());
  ASSERT_EQ(graphs.size(), 3u);  // rings, balanced trees, and graph 2 (trees), read and unused
  SearchSettings s;
  s.forced = &graphs;
  TopoSearchResult r;
  ASSERT_TRUE(searchChannels(topo, s, &r).ok());
  EXPECT_TRUE(r.ring.fromFile);
  EXPECT_TRUE(r.tree.fromFile);
  EXPECT_EQ(r.tree.pattern, 1);
  ASSERT_EQ(r.channels.size(), 4u);  // two rings, used twice
  EXPECT_EQ(ringRanks(topo, r, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ringRanks(topo, r, 1), (std::vector<int>{0, 3, 2, 1}));
  EXPECT_EQ(ringRanks(topo, r, 3), (std::vector<int>{0, 3, 2, 1}));
  // Tree channel 1 chains 1 0 3 2: rank 0's parent is 1, its child 3.
  std::vector<TopoTreeLinks> tree = treeLinks(topo, r, 1);
  EXPECT_EQ(tree[0].up, 1);
  EXPECT_EQ(tree[0].down, (std::vector<int>{3}));
}

}  // namespace
}  // namespace braid
